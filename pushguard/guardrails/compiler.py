"""The compiler: the rule set and one policy config to constraints, policies, SHA modules and
their coverage (:func:`compile_guardrails`).

The policy config is applied as every enforcement point applies it
(:func:`pushguard.policy.config_file.load_rule_config`): a rule at ``disabled`` is left out (and
listed as such); its level decides the policy (only ``mandatory`` rules are enforced with
``enforce``) and the SHA severity; ``exemptEndpointPrefixes`` enter the endpoint rule's condition;
``perimeterProjects`` (by either name, through ``projectNumbers``) scope the perimeter rule; each
exception that names a subscription path (by either of its project's names) is let through by the
condition, and one already expired is refused (its expiry cannot be enforced by Google: the
description says so).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

from pushguard.guardrails import cel, limits
from pushguard.guardrails.conditions import in_projects
from pushguard.guardrails.managed import google_managed
from pushguard.guardrails.model import (
    Constraint,
    Coverage,
    GuardrailError,
    Guardrails,
    PolicyFile,
    ShaModule,
    Status,
)
from pushguard.guardrails.registry import ENTRIES, Entry
from pushguard.guardrails.subset import check_expression
from pushguard.guardrails.text import constraint_description, module_description
from pushguard.policy.config_file import RuleConfig
from pushguard.policy.exceptions import utc_today
from pushguard.policy.resources import resource_kind
from pushguard.policy.settings import PackSettings
from pushguard.rules import RULES, EnforcementLevel, Rule

RESOURCE_TYPE = "pubsub.googleapis.com/Subscription"
"""The resource type of every constraint and module (supported: the Pub/Sub page "Use custom
organization policies")."""

_TAG_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?")

SEVERITY = {"critical": "CRITICAL", "high": "HIGH", "medium": "MEDIUM", "low": "LOW"}


@dataclass(frozen=True)
class Options:
    """How to compile: ``method_types`` (``create`` or ``create-update``), ``enforce`` (mandatory
    rules get an enforced ``spec``; everything else stays in dry run), ``perimeter_tag``
    (``(KEY, VALUE)``: the perimeter rule's policy applies where the tag is, at the organisation;
    ``None``: one policy per perimeter project), ``today`` (the day exceptions are judged on,
    default today in UTC)."""

    method_types: str = "create-update"
    enforce: bool = False
    perimeter_tag: tuple[str, str] | None = None
    today: date | None = None


def constraint_id(rule: Rule) -> str:
    """``custom.pushguard`` and the rule ID in camel case (``push-auth-oidc`` ->
    ``custom.pushguardPushAuthOidc``): letters and digits only, as the name must be."""
    return limits.CONSTRAINT_PREFIX + "pushguard" + "".join(w.title() for w in rule.id.split("-"))


def _excepted(rule: Rule, settings: PackSettings, today: date) -> list[str]:
    """The subscription paths (both project names) the rule's active exceptions name.

    Raises:
        GuardrailError: an exception already expired on ``today``.
    """
    names: list[str] = []
    for index, exception in enumerate(settings.exceptions):
        if not exception.active(today):
            raise GuardrailError(
                f"{rule.id}.exceptions[{index}].expires",
                f"{exception.expires} is before {today.isoformat()}: the exception has expired; "
                "remove it or give a later date (Google cannot end an exception by itself, so "
                "none is compiled that has already ended)",
            )
        if resource_kind(exception.resource) == "subscription":
            names += settings.resource_names(exception.resource)
    return list(dict.fromkeys(names))


def _condition(entry: Entry, settings: PackSettings, excepted: list[str]) -> str:
    """The rule's condition, then ``!(has(resource.name) && (managed forms || exceptions))``."""
    assert entry.build is not None
    also: tuple[str, ...] = ()
    if excepted:
        names = "|".join(cel.re2_literal(n) for n in excepted)
        also = (cel.matches("resource.name", f"^({names})$"),)
    if not (entry.cloud_build or entry.cloud_functions or also):
        return entry.build(settings)
    let_through = google_managed(
        cloud_build=entry.cloud_build,
        cloud_functions=entry.cloud_functions,
        without_account=entry.without_account,
        also=also,
    )
    return cel.all_of([entry.build(settings), cel.negate(let_through)])


def _perimeter_projects(settings: PackSettings) -> list[str]:
    """Every name (ID and number, as ``projectNumbers`` knows them) of the perimeter projects."""
    names: list[str] = []
    for ref in settings.perimeter_projects:
        known = settings.resolve(ref)
        names += [n for n in (known.id, known.number, ref.removeprefix("projects/")) if n]
    return list(dict.fromkeys(names))


def _policies(
    rule: Rule, cid: str, org: str, *, enforced: bool, settings: PackSettings, options: Options
) -> list[PolicyFile]:
    """The policies that attach the constraint: one at the organisation, or for the perimeter
    rule one per perimeter project (or one at the organisation conditioned on the tag)."""
    if not ENTRIES[rule.id].perimeter:
        return [
            PolicyFile(rule.id, f"organizations/{org}/policies/{cid}", cid, enforced, None, cid)
        ]
    if options.perimeter_tag is not None:
        key, value = options.perimeter_tag
        tag = f"resource.matchTag({cel.string(f'{org}/{key}')}, {cel.string(value)})"
        return [PolicyFile(rule.id, f"organizations/{org}/policies/{cid}", cid, enforced, tag, cid)]
    refs = [ref.removeprefix("projects/") for ref in settings.perimeter_projects]
    return [
        PolicyFile(rule.id, f"projects/{ref}/policies/{cid}", cid, enforced, None, f"{cid}--{ref}")
        for ref in dict.fromkeys(refs)
    ]


def _severity(rule: Rule, level: EnforcementLevel) -> str:
    """A mandatory rule's findings carry the rule's severity; an advisory rule's are ``LOW``."""
    return SEVERITY[rule.severity] if level is EnforcementLevel.MANDATORY else "LOW"


@dataclass
class _Out:
    constraints: list[Constraint]
    policies: list[PolicyFile]
    modules: list[ShaModule]
    coverage: list[Coverage]


def _compile_rule(rule: Rule, config: RuleConfig, org: str, options: Options, out: _Out) -> None:
    """Compile one rule into ``out`` (see :func:`compile_guardrails`)."""
    level, settings, entry = config.levels[rule.id], config.settings[rule.id], ENTRIES[rule.id]
    today = options.today or utc_today()
    excepted = _excepted(rule, settings, today)  # an expired exception is refused even if unused
    if level is EnforcementLevel.DISABLED:
        reason = "disabled in the policy config (enforcementLevel: disabled)"
        out.coverage += [
            Coverage(rule.id, t, Status.NOT_COMPILED, reason) for t in ("constraint", "sha")
        ]
        return
    if entry.build is None:
        out.coverage += [
            Coverage(rule.id, t, entry.status, entry.reason) for t in ("constraint", "sha")
        ]
        return
    condition = _condition(entry, settings, excepted)
    cid = constraint_id(rule)
    limits.check_constraint_id(cid)
    check_expression(condition, "constraint", f"{rule.id}: condition")
    limits.check_length(f"{rule.id}: condition", condition, limits.CONDITION_MAX)
    enforced = options.enforce and level is EnforcementLevel.MANDATORY
    policies = _policies(rule, cid, org, enforced=enforced, settings=settings, options=options)
    description = constraint_description(rule, level, entry, settings, policies)
    limits.check_length(f"{rule.id}: description", description, limits.DESCRIPTION_MAX)
    display = f"pushguard {rule.id}: {rule.title}"
    limits.check_length(f"{rule.id}: displayName", display, limits.DISPLAY_NAME_MAX)
    out.constraints.append(
        Constraint(
            rule.id,
            f"organizations/{org}/customConstraints/{cid}",
            cid,
            (RESOURCE_TYPE,),
            limits.METHOD_TYPES[options.method_types],
            condition,
            "DENY",
            display,
            description,
        )
    )
    out.policies += policies
    reason = entry.reason if policies else _unattached(entry.reason)
    out.coverage.append(Coverage(rule.id, "constraint", entry.status, reason))
    _compile_module(rule, level, entry=entry, settings=settings, condition=condition, out=out)


def _unattached(reason: str) -> str:
    return (
        f"{reason}; no perimeterProjects in the config and no --perimeter-tag: the constraint "
        "is written but no policy attaches it"
    )


def _compile_module(
    rule: Rule,
    level: EnforcementLevel,
    *,
    entry: Entry,
    settings: PackSettings,
    condition: str,
    out: _Out,
) -> None:
    """The SHA module of a compiled rule (a perimeter rule's predicate names the projects)."""
    expression = condition
    if entry.perimeter:
        projects = _perimeter_projects(settings)
        if not projects:
            reason = (
                "no perimeterProjects in the config: a SHA predicate can only name the projects "
                "(a tag, as --perimeter-tag, is not a field of the subscription)"
            )
            out.coverage.append(Coverage(rule.id, "sha", Status.NOT_COMPILED, reason))
            return
        expression = cel.all_of([in_projects(projects), condition])
    check_expression(expression, "sha", f"{rule.id}: predicate.expression")
    severity = _severity(rule, level)
    limits.check_sha((RESOURCE_TYPE,), severity)
    out.modules.append(
        ShaModule(
            rule.id,
            "pushguard_" + rule.id.replace("-", "_"),
            expression,
            (RESOURCE_TYPE,),
            severity,
            module_description(rule, level, entry, settings),
            rule.remediation,
        )
    )
    out.coverage.append(Coverage(rule.id, "sha", entry.status, entry.reason))


def compile_guardrails(
    config: RuleConfig, organization: str, options: Options | None = None
) -> Guardrails:
    """Compile every rule of :data:`~pushguard.rules.RULES` under ``config`` for ``organization``.

    ``config``: the reconciled policy config
    (:func:`pushguard.policy.config_file.load_rule_config`); ``organization``: the organization
    ID (``123456789012`` or ``organizations/123456789012``); ``options``: :class:`Options`.

    Returns:
        :class:`~pushguard.guardrails.model.Guardrails`: the constraints, policies and SHA
        modules in rule order, and the coverage of every rule on both targets.

    Raises:
        GuardrailError: a malformed organization ID or ``--perimeter-tag``, an unknown method-type
            set, an expired exception, or a generated value over a documented limit or outside
            the documented CEL subset (naming the field and what is allowed).
    """
    options = options or Options()
    org = limits.check_organization(organization)
    if options.method_types not in limits.METHOD_TYPES:
        raise GuardrailError("--method-types", f"one of {', '.join(limits.METHOD_TYPES)}")
    _check_tag(options.perimeter_tag)
    out = _Out([], [], [], [])
    for rule in RULES:
        _compile_rule(rule, config, org, options, out)
    return Guardrails(
        org, tuple(out.constraints), tuple(out.policies), tuple(out.modules), tuple(out.coverage)
    )


def _check_tag(tag: tuple[str, str] | None) -> None:
    """``--perimeter-tag KEY=VALUE``: the key's and the value's short names. ``matchTag`` takes
    the key's namespaced name, "with the organization ID and a slash (/) as a prefix"
    (:data:`~pushguard.guardrails.sources.POLICY_RULE_REST`), which the compiler writes; this check
    (pushguard's own: 1 to 63 letters and digits, with ``-``, ``_`` or ``.`` inside) keeps quotes,
    slashes and spaces out of the names."""
    if tag is None:
        return
    for part, what in zip(tag, ("KEY", "VALUE"), strict=True):
        if not _TAG_PART.fullmatch(part):
            raise GuardrailError(
                "--perimeter-tag",
                f"{what} {part!r} must be 1 to 63 characters: letters and digits, with -, _ or . "
                "inside (KEY=VALUE, the tag key's short name and the value's)",
            )


def iter_coverage(guardrails: Guardrails) -> Iterator[tuple[str, Coverage, Coverage]]:
    """``(rule ID, constraint coverage, sha coverage)`` in rule order."""
    by = {(c.rule_id, c.target): c for c in guardrails.coverage}
    for rule in RULES:
        yield rule.id, by[(rule.id, "constraint")], by[(rule.id, "sha")]
