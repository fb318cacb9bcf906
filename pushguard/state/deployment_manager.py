"""Deployment Manager configurations as plain data: the subscription types and the YAML reader
that the pack's route (:mod:`pushguard.crossguard.routes.deployment_manager`) and the audit's
stack reading (:mod:`pushguard.state.subscriptions`, which names the deployment types) share.

pulumi-gcp's ``gcp:deploymentmanager/deployment:Deployment`` and the bridged Terraform
providers' ``DeploymentManagerDeployment`` (the ``google_deployment_manager_deployment`` schema)
hold the configuration in ``target.config.content``, "the full YAML contents of your
configuration file" (https://www.pulumi.com/registry/packages/gcp/api-docs/deploymentmanager/deployment/);
a configuration is a YAML mapping whose ``resources`` each have a ``name``, a ``type`` and
``properties`` (https://cloud.google.com/deployment-manager/docs/configuration/syntax-reference).
A Pub/Sub subscription is ``pubsub.v1.subscription`` or the type provider's
``gcp-types/pubsub-v1:projects.subscriptions``, whose properties are the Pub/Sub v1 REST
``Subscription``: ``subscription`` (the ID), ``name`` (``projects/P/subscriptions/ID``),
``pushConfig``... (https://cloud.google.com/deployment-manager/docs/configuration/supported-resource-types;
GoogleCloudPlatform/cloud-foundation-toolkit ``dm/templates/pubsub/pubsub.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

import yaml

SUBSCRIPTION_KINDS: Final = (
    "pubsub.v1.subscription",
    "gcp-types/pubsub-v1:projects.subscriptions",
)
"""The Deployment Manager types of a Pub/Sub subscription read as one."""

MAX_VALUES: Final = 100_000
MAX_DEPTH: Final = 64


class ConfigError(ValueError):
    """A configuration that cannot be read (the message says why, as a clause about "its
    target.config.content")."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that repeats a key: PyYAML keeps the last
    value, and nothing Google publishes says which one Deployment Manager keeps, so a
    configuration with two ``pushConfig`` keys cannot be judged."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)  # merge keys (<<) first, as PyYAML does
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, str | int | float | bool) and key in seen:
                    raise ConfigError(
                        f"its target.config.content repeats the key {key!r} in one mapping "
                        f"(line {key_node.start_mark.line + 1})"
                    )
                seen.add(key)
        return super().construct_mapping(node, deep)


@lru_cache(maxsize=128)
def parse_config(content: str) -> Mapping[str, Any]:
    """``content`` (a configuration's YAML) as plain data: mappings with string keys, lists,
    strings, numbers, booleans and ``None`` (dates as ISO text). Cached, so treat it as read
    only.

    Raises:
        ConfigError: it does not parse, is not a mapping, or is nested or aliased beyond what a
            configuration needs (a cycle, more than :data:`MAX_VALUES` values or
            :data:`MAX_DEPTH` levels once aliases are followed).
    """
    try:
        document = yaml.load(content, Loader=_UniqueKeyLoader)  # a SafeLoader
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(f"its target.config.content is not valid YAML{where}") from None
    if document is None:
        return {}
    if not isinstance(document, Mapping):
        raise ConfigError("its target.config.content is not a YAML mapping with resources")
    plain = _plain(document, [0], 0, frozenset())
    assert isinstance(plain, dict)
    return plain


def _plain(value: Any, budget: list[int], depth: int, path: frozenset[int]) -> Any:
    budget[0] += 1
    if budget[0] > MAX_VALUES or depth > MAX_DEPTH or id(value) in path:
        raise ConfigError(
            "its target.config.content nests or repeats values (YAML aliases) beyond what a "
            "configuration holds"
        )
    if isinstance(value, Mapping):
        inner = path | {id(value)}
        return {str(k): _plain(v, budget, depth + 1, inner) for k, v in value.items()}
    if isinstance(value, list):
        inner = path | {id(value)}
        return [_plain(v, budget, depth + 1, inner) for v in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def is_template(kind: str) -> bool:
    """Whether a resource ``type`` is a template (``.jinja``, ``.py``) or a composite type
    (``PROJECT/composite:NAME``): Deployment Manager expands it into resources of its own
    (https://cloud.google.com/deployment-manager/docs/fundamentals#templates,
    https://cloud.google.com/deployment-manager/docs/configuration/templates/create-composite-types)."""
    return kind.lower().endswith((".jinja", ".py")) or "/composite:" in kind


def imports_of(document: Mapping[str, Any]) -> list[str]:
    """The names (else paths) of the files a configuration's ``imports`` lists."""
    listed = document.get("imports")
    entries = listed if isinstance(listed, list) else [listed] if listed else []
    return [str(e.get("name") or e.get("path")) if isinstance(e, Mapping) else "?" for e in entries]
