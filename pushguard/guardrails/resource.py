"""What the subscription resource alone says, as the rules' facts, and a CEL expression's verdict
on it: the two sides the parity tests compare, and what ``audit --guardrails`` can reuse.

The resource is the Pub/Sub ``Subscription`` REST resource
(:data:`~pushguard.guardrails.sources.SUBSCRIPTION_REST`), as Cloud Asset Inventory exports it
in ``resource.data`` and as the custom constraints and SHA modules read it (``resource.X`` in CEL).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import celpy
from celpy.adapter import json_to_cel

from pushguard.policy.resources import path_project
from pushguard.rules.facts import SubscriptionFacts


def resource_facts(resource: Mapping[str, Any], name: str | None = None) -> SubscriptionFacts:
    """The facts the subscription resource decides: its name and project, topic, push endpoint,
    OIDC account and audience, exactly-once delivery. ``name`` (``projects/P/subscriptions/S``)
    is used when the resource has none (a Cloud Asset Inventory record without ``data.name``).
    Everything else (IAM, perimeters, the project number) is left unknown-as-absent: the
    compiler's settings are laid over these facts as the audit lays them
    (:meth:`~pushguard.policy.settings.PackSettings.apply`)."""
    path = str(resource.get("name") or name or "")
    push = resource.get("pushConfig") or {}
    token = push.get("oidcToken") or {}
    return SubscriptionFacts(
        resource=path,
        project_id=path_project(path),
        subscription_id=path.rpartition("/subscriptions/")[2] or None,
        topic=resource.get("topic") or None,
        push_endpoint=push.get("pushEndpoint") or None,
        push_auth_account=token.get("serviceAccountEmail") or None,
        audience=token.get("audience") or None,
        exactly_once_delivery=bool(resource.get("enableExactlyOnceDelivery")),
    )


@functools.lru_cache(maxsize=256)
def _program(expression: str) -> celpy.Runner:
    env = celpy.Environment()
    return env.program(env.compile(expression))


class NotBooleanError(TypeError):
    """The expression's value is not a boolean; ``kind`` is its CEL type's name."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(f"the expression gave {kind}, not a boolean")


def evaluate(expression: str, resource: Mapping[str, Any]) -> bool:
    """The expression's value over ``resource`` (bound as ``resource``), with cel-python: the one
    evaluation of the parity tests and of ``audit --guardrails``.

    Raises:
        celpy.CELEvalError: the expression errs on this resource (a field read without ``has()``).
        NotBooleanError: the expression's value is not a boolean.
    """
    value = _program(expression).evaluate({"resource": json_to_cel(dict(resource))})
    if not isinstance(value, celpy.celtypes.BoolType | bool):
        raise NotBooleanError(type(value).__name__)
    return bool(value)
