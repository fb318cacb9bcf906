"""The policy-config file (``policy-config.json``), read and reconciled the way the Pulumi CLI does.

A config file (``pushguard preview|audit --policy-config``, the CLI's ``--policy-pack-config``)
maps a policy name, or ``all``, to an enforcement level (``"mandatory"``) or to an object with an
optional ``enforcementLevel`` and the policy's properties. The CLI builds each policy's config from
its schema's ``default`` values, then the pack's ``initialConfig``, then the file, and in each of
the last two applies ``all``'s level to every policy before the policies' own entries. It then
validates every policy's properties against its JSON schema (``type: object`` with the schema's
``properties`` and ``required``) before it calls ``Configure``.
Source: pulumi/pkg/resource/analyzer/config.go (``parsePolicyPackConfig``,
``ReconcilePolicyPackConfig``, ``applyConfig``, ``validatePolicyPackConfig``).

One decision every enforcement point shares: **settings under ``all`` are refused**. The CLI takes
only the enforcement level from ``all`` (``applyConfig``) and never validates nor hands its
properties to a policy, so a ``perimeterProjects`` under ``all`` would be silently ignored by
``pulumi preview``. The preview and the audit refuse such a file (exit 2, naming it), and the pack
refuses such a configuration in ``Configure``. Put settings under each policy that reads them.

Two differences from the CLI, both stricter: a policy name the pack does not have is an error (a
typo would otherwise switch nothing on), and ``remediate`` is accepted as a level only where the
pack supports it (pushguard's policies never remediate).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from pushguard.policy.settings import (
    PackConfigError,
    PackSettings,
    parse_settings,
    settings_json_schema,
)
from pushguard.rules import RULES, EnforcementLevel

ENFORCEMENT_LEVELS = ("advisory", "mandatory", "remediate", "disabled")
"""The levels the CLI accepts (``apitype.EnforcementLevel``)."""

ALL = "all"
"""The entry that sets the level of every policy."""

PROJECT_NUMBERS = "projectNumbers"
"""The entry that maps project IDs to numbers for every policy (``{"projectNumbers":
{"acme-orders": "123456789012"}}``): the pack declares a settings-only policy of this name, so
the CLI keeps the entry (it gives every name in the file to ``Configure``, and refuses one without
a valid enforcement level: ``applyConfig`` and ``analyzer.Configure`` in pulumi/pulumi's
pkg/resource/analyzer/config.go and sdk/go/common/resource/plugin/analyzer_plugin.go) and lays it
under every pushguard policy's ``projectNumbers`` (:func:`with_project_numbers`)."""


class PolicyConfigError(ValueError):
    """The policy config cannot be used. ``source`` is the file path (or what the config came
    from); ``problems`` lists each as ``"policy: what is wrong"``."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        listed = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(f"invalid policy config {source or '(inline)'}:\n{listed}")


@dataclass
class PolicyConfig:
    """One policy's config: enforcement level name (``None``: unchanged) and properties."""

    level: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PolicyInfo:
    """What a pack says about one policy (its part of ``GetAnalyzerInfo``): ``name``, default
    ``level`` name, and its config schema's ``properties`` and ``required`` (``schema`` ``None``:
    the policy takes no config)."""

    name: str
    level: str
    schema: Mapping[str, Any] | None = None
    required: tuple[str, ...] = ()

    def json_schema(self) -> dict[str, Any] | None:
        """The schema the CLI validates this policy's properties with (``convertSchema``)."""
        if self.schema is None:
            return None
        schema: dict[str, Any] = {"type": "object"}
        if self.schema:
            schema["properties"] = dict(self.schema)
        if self.required:
            schema["required"] = list(self.required)
        return schema


def parse_policy_config(raw: Any, source: str = "") -> dict[str, PolicyConfig]:
    """Parse a config file's content (``source`` names it in errors).

    Raises:
        PolicyConfigError: not an object; an entry that is neither a level nor an object; a level
            that is not one of :data:`ENFORCEMENT_LEVELS`; settings under ``all``.
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
        if name == ALL and properties:
            problems.append(all_settings_problem(properties))
            continue
        if name == PROJECT_NUMBERS:
            problems += [f"{name}: {problem}" for problem in project_number_problems(properties)]
        parsed[str(name)] = PolicyConfig(level, properties)
    if problems:
        raise PolicyConfigError(source, problems)
    return parsed


def all_settings_problem(properties: Iterable[str]) -> str:
    """The message for settings under ``all`` (see the module docstring), naming them."""
    names = ", ".join(sorted(properties))
    return (
        f"{ALL}: settings ({names}) cannot go under {ALL!r}: Pulumi applies only the "
        f"enforcementLevel of {ALL!r} and would silently drop them; put them under each policy "
        "that reads them (docs/rules.md lists which)"
    )


def load_policy_config(path: Path) -> dict[str, PolicyConfig]:
    """Read and parse a config file; an empty file is an empty config.

    Raises:
        PolicyConfigError: the file cannot be read, is not JSON, or is malformed; the message
            names ``path``.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise PolicyConfigError(str(path), [f"cannot be read ({error.strerror})"]) from None
    except UnicodeDecodeError:
        raise PolicyConfigError(str(path), ["not UTF-8 text"]) from None
    if not text.strip():
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise PolicyConfigError(str(path), [f"not JSON: {error}"]) from None
    return parse_policy_config(raw, str(path))


def _apply(result: dict[str, PolicyConfig], given: Mapping[str, PolicyConfig]) -> None:
    everything = given.get(ALL)
    if everything is not None and everything.level:
        for config in result.values():
            config.level = everything.level
    for name, config in given.items():
        if name == ALL or name not in result:
            continue
        if config.level:
            result[name].level = config.level
        result[name].properties.update(config.properties)


def reconcile_unvalidated(
    policies: Sequence[PolicyInfo],
    config: Mapping[str, PolicyConfig],
    initial: Mapping[str, PolicyConfig] | None = None,
) -> dict[str, PolicyConfig]:
    """:func:`reconcile` without the checks (names the pack lacks are dropped)."""
    result: dict[str, PolicyConfig] = {}
    for policy in policies:
        defaults = {
            key: spec["default"]
            for key, spec in (policy.schema or {}).items()
            if isinstance(spec, Mapping) and "default" in spec
        }
        result[policy.name] = PolicyConfig(policy.level, defaults)
    _apply(result, initial or {})
    _apply(result, config)
    return result


def reconcile(
    policies: Sequence[PolicyInfo],
    config: Mapping[str, PolicyConfig],
    initial: Mapping[str, PolicyConfig] | None = None,
    source: str = "",
    pack: str = "pushguard",
) -> dict[str, PolicyConfig]:
    """Each policy's effective config: schema defaults, the pack's ``initial`` config, then
    ``config`` (the file), as the CLI reconciles them (``source`` names the file and ``pack``
    the pack in errors).

    Raises:
        PolicyConfigError: a policy's properties fail its schema (every failure listed, each
            naming the policy and the property), ``config`` names a policy the pack lacks, or
            puts settings under ``all``.
    """
    result = reconcile_unvalidated(policies, config, initial)
    problems = [
        f"{name}: not a policy of pack {pack!r}; its policies: {', '.join(sorted(result))}"
        for name in config
        if name != ALL and name not in result
    ]
    everything = config.get(ALL)
    if everything is not None and everything.properties:
        problems.append(all_settings_problem(everything.properties))
    for policy in policies:
        schema = policy.json_schema()
        if schema is None:
            continue
        validator = jsonschema.Draft7Validator(schema)
        for error in sorted(validator.iter_errors(result[policy.name].properties), key=str):
            where = ".".join(str(part) for part in error.absolute_path)
            problems.append(f"{policy.name}: {where + ': ' if where else ''}{error.message}")
    if problems:
        raise PolicyConfigError(source, problems)
    return result


def pushguard_policies() -> list[PolicyInfo]:
    """pushguard's own pack described as the CLI sees it: one policy per rule, named by the rule
    ID, at the rule's default level, with the :class:`PackSettings` schema (the pack declares
    exactly this; a test checks it against the served ``GetAnalyzerInfo``)."""
    schema = settings_json_schema()
    return [
        *(PolicyInfo(rule.id, rule.default_level.value, schema) for rule in RULES),
        PolicyInfo(PROJECT_NUMBERS, "advisory"),
    ]


def project_number_problems(numbers: Mapping[str, Any]) -> list[str]:
    """What is wrong with a :data:`PROJECT_NUMBERS` map (project ID -> number), each as
    ``"KEY: what is allowed"``; empty when it is valid."""
    try:
        parse_settings(PROJECT_NUMBERS, {"projectNumbers": dict(numbers)})
    except PackConfigError as error:
        return [f"{where.removeprefix('projectNumbers.')}: {msg}" for where, msg in error.problems]
    return []


def every_project_number(
    top: Mapping[str, Any], policies: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """The one project ID -> number map: the top-level :data:`PROJECT_NUMBERS` with every
    policy's own ``projectNumbers`` added (a number said under one policy is read by all).

    Raises:
        ValueError: two entries give one project different numbers (naming both and where).
    """
    merged = dict(top)
    where = dict.fromkeys(top, f"the top-level {PROJECT_NUMBERS}")
    for policy, properties in sorted(policies.items()):
        own = properties.get("projectNumbers") if policy != PROJECT_NUMBERS else None
        if not isinstance(own, Mapping):
            continue
        for project, number in own.items():
            if project in merged and str(merged[project]) != str(number):
                raise ValueError(
                    f"{policy}: projectNumbers gives {project} the number {number!r}, but "
                    f"{where[project]} gives {merged[project]!r}; say each project's number once, "
                    f"in the top-level {PROJECT_NUMBERS}"
                )
            merged.setdefault(project, number)
            where.setdefault(project, f"{policy}'s projectNumbers")
    return merged


def with_project_numbers(
    properties: Mapping[str, Any], numbers: Mapping[str, Any]
) -> dict[str, Any]:
    """One policy's ``properties`` with ``numbers`` (:func:`every_project_number`, which has
    already read and checked the policy's own map) as its ``projectNumbers``. A ``projectNumbers``
    that is not a map is left for the policy's settings check to refuse."""
    own = properties.get("projectNumbers")
    if not numbers or (own is not None and not isinstance(own, Mapping)):
        return dict(properties)
    return {**properties, "projectNumbers": dict(numbers)}


@dataclass(frozen=True)
class RuleConfig:
    """Each rule's enforcement level and settings, from one reconciled config."""

    levels: Mapping[str, EnforcementLevel]
    settings: Mapping[str, PackSettings]


def rule_config(resolved: Mapping[str, PolicyConfig], source: str = "") -> RuleConfig:
    """Levels and :class:`PackSettings` per rule from a reconciled config (:func:`reconcile`).

    Raises:
        PolicyConfigError: a level pushguard's rules do not have (``remediate``), or settings
            that fail :class:`PackSettings` (naming the policy and the field).
    """
    levels: dict[str, EnforcementLevel] = {}
    settings: dict[str, PackSettings] = {}
    allowed = {level.value for level in EnforcementLevel}
    top = resolved.get(PROJECT_NUMBERS, PolicyConfig()).properties
    problems = [f"{PROJECT_NUMBERS}: {p}" for p in project_number_problems(top)]
    try:
        numbers = every_project_number(
            top, {name: entry.properties for name, entry in resolved.items()}
        )
    except ValueError as error:
        raise PolicyConfigError(source, [str(error)]) from None
    for rule in RULES:
        entry = resolved.get(rule.id, PolicyConfig())
        level = entry.level or rule.default_level.value
        if level not in allowed:
            problems.append(
                f"{rule.id}: enforcementLevel {level!r} is not one of "
                f"{', '.join(sorted(allowed))} (pushguard never remediates)"
            )
            continue
        levels[rule.id] = EnforcementLevel(level)
        try:
            properties = with_project_numbers(entry.properties, numbers)
            settings[rule.id] = parse_settings(rule.id, properties)
        except PackConfigError as error:
            problems += [f"{rule.id}: {where}: {message}" for where, message in error.problems]
    if problems:
        raise PolicyConfigError(source, problems)
    return RuleConfig(levels, settings)


def load_rule_config(path: Path | None) -> RuleConfig:
    """The levels and settings of pushguard's rules from a config file (``None``: the defaults),
    reconciled as the CLI would for pushguard's pack: what the audit evaluates with.

    Raises:
        PolicyConfigError: see :func:`load_policy_config`, :func:`reconcile`, :func:`rule_config`.
    """
    config = load_policy_config(path) if path is not None else {}
    source = str(path) if path is not None else ""
    return rule_config(reconcile(pushguard_policies(), config, source=source), source)
