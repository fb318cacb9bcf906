"""Pulumi states for ``pushguard audit --stacks``, in the shapes Pulumi writes them.

The shapes are Pulumi's ``apitype`` types, as tests/analyze/exports.py builds them from a preview
(https://github.com/pulumi/pulumi/blob/master/sdk/go/common/apitype/core.go): a ``pulumi stack
export`` file ``{"version": 3, "deployment": {"manifest", "secrets_providers", "resources"}}``,
a self-managed backend's checkpoint ``{"version": 3, "checkpoint": {"stack":
"organization/project/stack", "latest": DEPLOYMENT}}`` under ``.pulumi/stacks/PROJECT/STACK.json``
(gzipped with ``PULUMI_SELF_MANAGED_STATE_GZIP``), version 4 with an output value
(``OUTPUT_VALUE_SIG``) for a value computed from another resource, and the version 2 form
(no ``propertyDependencies``). Each stack has its stack resource, the default provider and its
subscriptions; a ``PushSubscription`` component's subscription is its child (``parent`` and the
qualified type ``pushguard:index:PushSubscription$gcp:pubsub/subscription:Subscription`` in its
URN). The subscription's outputs are pulumi-gcp's (``id`` ``projects/P/subscriptions/S``,
``project``, ``name``, ``pushConfig``) or another route's (Google Cloud Native's REST ``name``,
the bridged Terraform provider's, Config Connector's ``metadata``/``spec``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from pushguard.state.document import OUTPUT_VALUE_SIG
from tests.analyze.exports import PROVIDER_VERSION, SIG, TIME, encrypted, shown

COMPONENT = "pushguard:index:PushSubscription"
GCP = "gcp:pubsub/subscription:Subscription"


def urn(stack: str, project: str, qualified_type: str, name: str) -> str:
    return f"urn:pulumi:{stack}::{project}::{qualified_type}::{name}"


def push_config(
    endpoint: str | None,
    account: Any = None,
    audience: Any = None,
    *,
    no_wrapper: bool = False,
    attributes: dict[str, str] | None = None,
) -> dict[str, Any]:
    """pulumi-gcp's ``pushConfig`` output (an empty object for a pull subscription)."""
    if endpoint is None:
        return {}
    config: dict[str, Any] = {"pushEndpoint": endpoint, "attributes": attributes or {}}
    if account is not None:
        token: Any = {"serviceAccountEmail": account, "audience": audience or ""}
        config["oidcToken"] = token
    if no_wrapper:
        config["noWrapper"] = {"writeMetadata": True}
    return config


class Stack:
    """One stack's resources, written as an export or a checkpoint; ``time`` is its
    deployment's ``manifest.time`` (when the update that wrote it ran)."""

    def __init__(self, project: str, stack: str, time: str = TIME) -> None:
        self.project, self.stack, self.time = project, stack, time
        self.stack_urn = urn(stack, project, "pulumi:pulumi:Stack", f"{project}-{stack}")
        provider_urn = urn(stack, project, "pulumi:providers:gcp", "default_10_2_0")
        self.provider = f"{provider_urn}::0c5a7c7e-3c2b-4c55-9d5c-1f0ad7c0e9a1"
        self.resources: list[dict[str, Any]] = [
            {"urn": self.stack_urn, "custom": False, "type": "pulumi:pulumi:Stack", "outputs": {}},
            {
                "urn": provider_urn,
                "custom": True,
                "id": self.provider.rsplit("::", 1)[1],
                "type": "pulumi:providers:gcp",
                "inputs": {"project": "acme-orders", "version": PROVIDER_VERSION},
                "outputs": {"project": "acme-orders", "version": PROVIDER_VERSION},
                "parent": self.stack_urn,
            },
        ]

    def resource(
        self,
        resource_type: str,
        name: str,
        outputs: dict[str, Any],
        *,
        resource_id: str = "",
        parent: str | None = None,
        qualified: str | None = None,
    ) -> str:
        the_urn = urn(self.stack, self.project, qualified or resource_type, name)
        self.resources.append(
            {
                "urn": the_urn,
                "custom": True,
                "id": resource_id,
                "type": resource_type,
                "inputs": {k: v for k, v in outputs.items() if k != "id"},
                "outputs": outputs,
                "parent": parent or self.stack_urn,
                "provider": self.provider,
                "propertyDependencies": {},
                "created": TIME,
                "modified": TIME,
            }
        )
        return the_urn

    def subscription(
        self, project: str, name: str, config: dict[str, Any], *, parent: str | None = None
    ) -> str:
        """A pulumi-gcp subscription (a component's child when ``parent`` is the component)."""
        path = f"projects/{project}/subscriptions/{name}"
        outputs = {
            "id": path,
            "name": name,
            "project": project,
            "topic": f"projects/{project}/topics/orders",
            "ackDeadlineSeconds": 10,
            "pushConfig": config,
        }
        qualified = f"{COMPONENT}${GCP}" if parent else None
        return self.resource(
            GCP, name, outputs, resource_id=path, parent=parent, qualified=qualified
        )

    def component(self, name: str) -> str:
        the_urn = urn(self.stack, self.project, COMPONENT, name)
        self.resources.append(
            {"urn": the_urn, "custom": False, "type": COMPONENT, "parent": self.stack_urn}
        )
        return the_urn

    def deployment(self) -> dict[str, Any]:
        return {
            "manifest": {"time": self.time, "magic": "", "version": "v3.205.0"},
            "secrets_providers": {"type": "passphrase", "state": {"salt": "v1:abc"}},
            "resources": self.resources,
        }

    def export(self, version: int = 3) -> dict[str, Any]:
        document: dict[str, Any] = {"version": version, "deployment": self.deployment()}
        if version == 4:
            document["features"] = ["refBeforeResource"]
        if version < 3:
            for resource in self.resources:
                resource.pop("propertyDependencies", None)
        return document

    def checkpoint(self, organization: str) -> dict[str, Any]:
        return {
            "version": 3,
            "checkpoint": {
                "stack": f"{organization}/{self.project}/{self.stack}",
                "latest": self.deployment(),
            },
        }


def output_value(value: Any) -> dict[str, Any]:
    """A version 4 output value (``resource.OutputValueSig``) whose value is known."""
    return {SIG: OUTPUT_VALUE_SIG, "value": value, "dependencies": []}


def write(path: Path, document: Any, *, gzipped: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=4)
    if gzipped:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


__all__ = ["Stack", "encrypted", "output_value", "push_config", "shown", "write"]
