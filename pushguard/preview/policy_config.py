"""Policy pack configuration, reconciled and validated the way the Pulumi CLI does it.

A config file (``--policy-config``, the CLI's ``--policy-pack-config``) maps a policy name, or
``all``, to an enforcement level (``"mandatory"``) or an object with an optional
``enforcementLevel`` and the policy's properties. The CLI builds each policy's config from its
schema's ``default`` values, then the pack's ``initialConfig``, then the file (``all`` first),
and validates every policy's properties against its JSON schema (``type: object`` with the
schema's ``properties`` and ``required``) before it calls ``Configure``.
Source: pulumi/pkg/resource/analyzer/config.go (``ReconcilePolicyPackConfig``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from google.protobuf import json_format

ENFORCEMENT_LEVELS = ("advisory", "mandatory", "remediate", "disabled")


class PolicyConfigError(ValueError):
    """The policy config cannot be used; ``problems`` lists each as ``"policy: what is wrong"``."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        listed = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(f"invalid policy config {source}:\n{listed}")


@dataclass
class PolicyConfig:
    """One policy's config: enforcement level name (``None``: unchanged) and properties."""

    level: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)


def parse_policy_config(raw: Any, source: str = "") -> dict[str, PolicyConfig]:
    """Parse a config file's content, as the CLI does.

    Raises:
        PolicyConfigError: not an object, or an entry that is neither a level nor an object, or
            a level that is not one of :data:`ENFORCEMENT_LEVELS`.
    """
    if not isinstance(raw, Mapping):
        raise PolicyConfigError(source, ["the config must be a JSON object"])
    parsed: dict[str, PolicyConfig] = {}
    problems = []
    for name, given in raw.items():
        value = {"enforcementLevel": given} if isinstance(given, str) else given
        if not isinstance(value, Mapping):
            problems.append(f"{name}: must be an enforcement level or an object, not {value!r}")
            continue
        properties = {k: v for k, v in value.items() if k != "enforcementLevel"}
        level = value.get("enforcementLevel")
        if level is not None and level not in ENFORCEMENT_LEVELS:
            allowed = ", ".join(ENFORCEMENT_LEVELS)
            problems.append(f"{name}: enforcementLevel {level!r} is not one of {allowed}")
            continue
        parsed[str(name)] = PolicyConfig(level, properties)
    if problems:
        raise PolicyConfigError(source, problems)
    return parsed


def load_policy_config(path: Path) -> dict[str, PolicyConfig]:
    """Read and parse a config file; an empty file is an empty config.

    Raises:
        PolicyConfigError: the file cannot be read, is not JSON, or is malformed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise PolicyConfigError(str(path), [f"cannot be read ({error.strerror})"]) from None
    if not text.strip():
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise PolicyConfigError(str(path), [f"not JSON: {error}"]) from None
    return parse_policy_config(raw, str(path))


def _apply(result: dict[str, PolicyConfig], given: Mapping[str, PolicyConfig]) -> None:
    everything = given.get("all")
    if everything is not None and everything.level:
        for config in result.values():
            config.level = everything.level
    for name, config in given.items():
        if name == "all" or name not in result:
            continue
        if config.level:
            result[name].level = config.level
        result[name].properties.update(config.properties)


def _schema(policy: Any) -> dict[str, Any] | None:
    if not policy.HasField("configSchema"):
        return None
    properties = json_format.MessageToDict(policy.configSchema.properties)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if policy.configSchema.required:
        schema["required"] = list(policy.configSchema.required)
    return schema


def reconcile_unvalidated(
    info: Any, config: Mapping[str, PolicyConfig], levels: Mapping[int, str]
) -> dict[str, PolicyConfig]:
    """:func:`reconcile` without the schema check (unknown policy names are dropped)."""
    result: dict[str, PolicyConfig] = {}
    for policy in info.policies:
        schema = _schema(policy) or {}
        defaults = {
            key: spec["default"]
            for key, spec in schema.get("properties", {}).items()
            if isinstance(spec, Mapping) and "default" in spec
        }
        result[policy.name] = PolicyConfig(levels.get(policy.enforcementLevel), defaults)
    initial = {
        name: PolicyConfig(
            levels.get(value.enforcementLevel) if value.enforcementLevel else None,
            json_format.MessageToDict(value.properties),
        )
        for name, value in info.initialConfig.items()
    }
    _apply(result, initial)
    _apply(result, config)
    return result


def reconcile(
    info: Any, config: Mapping[str, PolicyConfig], levels: Mapping[int, str], source: str = ""
) -> dict[str, PolicyConfig]:
    """Each policy's effective config: schema defaults, the pack's ``initialConfig``, then
    ``config``; ``info`` is the pack's ``AnalyzerInfo``, ``levels`` maps the protocol's enum to
    level names.

    Raises:
        PolicyConfigError: a policy's properties fail its schema (every failure listed, each
            naming the policy and the property), or ``config`` names a policy the pack lacks.
    """
    result = reconcile_unvalidated(info, config, levels)
    problems = [
        f"{name}: not a policy of pack {info.name!r}"
        for name in config
        if name != "all" and name not in result
    ]
    for policy in info.policies:
        schema = _schema(policy)
        if schema is None:
            continue
        validator = jsonschema.Draft7Validator(schema)
        for error in sorted(validator.iter_errors(result[policy.name].properties), key=str):
            where = ".".join(str(part) for part in error.absolute_path)
            problems.append(f"{policy.name}: {where + ': ' if where else ''}{error.message}")
    if problems:
        raise PolicyConfigError(source, problems)
    return result
