"""The shape every rule shares: enforcement levels, a rule's metadata, its results, findings.

A rule is a pure function from :class:`~pushguard.rules.facts.SubscriptionFacts` to zero or more
:class:`Result` objects. No result means the subscription passes. Each enforcement point (component,
CrossGuard pack, offline preview, Spark audit) turns results into its own kind of report; the
:class:`Finding` here is the neutral form they all start from.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Literal, get_args

from pushguard._about import project_url
from pushguard.rules.facts import FactsKind, SubscriptionFacts
from pushguard.rules.identity import cause, finding_id

DOCS_BASE_URL = f"{project_url('Repository')}/blob/main/docs/rules.md"
"""Where each rule's documentation lives (``docs/rules.md`` in the repository of
``[project.urls]``); a rule's URL is this plus ``#<rule id>``."""


class EnforcementLevel(StrEnum):
    """How a violation is enforced, with Pulumi CrossGuard's names.

    ``mandatory`` fails a preview or update, ``advisory`` warns, ``disabled`` turns the rule off.
    Source: https://www.pulumi.com/docs/iac/using-pulumi/crossguard/core-concepts/#enforcement-level
    """

    ADVISORY = "advisory"
    MANDATORY = "mandatory"
    DISABLED = "disabled"


class Status(StrEnum):
    """What a result says: a definite violation, or that the rule could not decide."""

    VIOLATION = "violation"
    UNKNOWN = "unknown"
    """A fact the rule needs is not known (for example an unresolved Output at preview)."""


ResultField = Literal[
    "push_endpoint",
    "push_auth_account",
    "audience",
    "in_service_perimeter",
    "project_number",
    "exactly_once_delivery",
    "token_creator_grant",
    "target",
    "dead_letter",
]
"""What a result is about: a fact of :class:`~pushguard.rules.facts.SubscriptionFacts` (or
``token_creator_grant`` / ``target`` / ``dead_letter`` for the service agent's grant, the invoker
target and the dead-letter set-up)."""

COMPONENT_INPUTS: Mapping[ResultField, str] = MappingProxyType(
    {
        "push_endpoint": "push_endpoint",
        "push_auth_account": "push_auth_service_account_email",
        "audience": "audience",
        "in_service_perimeter": "in_service_perimeter",
        "project_number": "project_number",
        "token_creator_grant": "token_creator_grant",
        "target": "target",
        "dead_letter": "dead_letter",
    }
)
"""Each result field as the ``PushSubscription`` input it names (for the component's errors).
Every :data:`ResultField` has one (a test checks) except ``exactly_once_delivery``: the component
never enables exactly-once delivery, so no input of its can violate that rule."""

RESULT_FIELDS: tuple[ResultField, ...] = get_args(ResultField)


@dataclass(frozen=True)
class Result:
    """One thing a rule found on one subscription.

    ``message`` is for people and never contains a secret value; ``evidence`` holds the facts the
    verdict stands on (string keys and values), for reports and the audit's ``evidence`` column;
    ``field`` names the fact the result is about (:data:`COMPONENT_INPUTS` maps it to the
    component's input name).
    """

    status: Status
    message: str
    field: ResultField | None = None
    evidence: Mapping[str, str] = dataclasses.field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def violation(cls, message: str, field: ResultField | None = None, **evidence: str) -> Result:
        """A definite violation."""
        return cls(Status.VIOLATION, message, field, MappingProxyType(dict(evidence)))

    @classmethod
    def unknown(cls, message: str, field: ResultField | None = None, **evidence: str) -> Result:
        """The rule could not decide; ``message`` says which fact was missing."""
        return cls(Status.UNKNOWN, message, field, MappingProxyType(dict(evidence)))


Check = Callable[[SubscriptionFacts], Iterable[Result]]

ENFORCEMENT_POINTS: tuple[str, ...] = ("component", "pack", "preview", "analyze", "audit")
"""Where pushguard enforces rules: the ``PushSubscription`` component, the CrossGuard pack (under
the Pulumi CLI), ``pushguard preview``, ``pushguard analyze`` and ``pushguard audit``."""

AUDIT_WITH_STACKS: tuple[str, ...] = ("audit",)
"""The enforcement points of a rule that compares the stacks with what runs: only the audit, and
only with ``--stacks`` (the others never see the live side)."""


@dataclass(frozen=True)
class Rule:
    """A rule: stable ``id`` (a public contract), one-line ``title``, default enforcement level,
    remediation text, and the ``check`` function. The rationale is the docstring of the module
    that defines the rule (see :attr:`description`).
    """

    id: str
    title: str
    default_level: EnforcementLevel
    remediation: str
    check: Check
    severity: str = "high"
    """Severity for reports (``low``, ``medium``, ``high``, ``critical``), as CrossGuard uses it."""
    enforcement_points: tuple[str, ...] = ENFORCEMENT_POINTS
    """Where the rule is applicable (of :data:`ENFORCEMENT_POINTS`); elsewhere it is registered
    (its policy name and config keys work everywhere) but never decides, and says so: the pack's
    policy description, ``pushguard rules`` and the rule reference name where it applies."""
    kinds: tuple[FactsKind, ...] = ("subscription",)
    """What the rule judges (:data:`~pushguard.rules.facts.FactsKind`): push subscriptions, and
    for the rules that judge what an Eventarc trigger sets (its HTTP endpoint, its service
    account), Eventarc triggers too. Facts of another kind are not the rule's: it neither passes
    nor fails them, and no enforcement point lists them as not checked by it."""

    def applies_to(self, facts: SubscriptionFacts) -> bool:
        """True when the rule judges facts of ``facts.kind`` (:attr:`kinds`)."""
        return facts.kind in self.kinds

    @property
    def applies_everywhere(self) -> bool:
        """True when every enforcement point runs the rule."""
        return set(self.enforcement_points) >= set(ENFORCEMENT_POINTS)

    @property
    def where(self) -> str:
        """Where the rule applies, in words (``everywhere``, or ``audit --stacks only``)."""
        if self.applies_everywhere:
            return "everywhere"
        if self.enforcement_points == AUDIT_WITH_STACKS:
            return "audit --stacks only"
        return ", ".join(self.enforcement_points) + " only"

    @property
    def description(self) -> str:
        """The rule's rationale: the docstring of the module its check function lives in."""
        module = inspect.getmodule(self.check)
        return inspect.cleandoc(module.__doc__ or self.title) if module else self.title

    @property
    def url(self) -> str:
        """Documentation URL of the rule."""
        return f"{DOCS_BASE_URL}#{self.id}"


@dataclass(frozen=True)
class Finding:
    """A rule result bound to its rule, the resource it is about and the enforcement level in force.

    ``resource`` is whatever names the subscription at the enforcement point: a Pulumi URN, a
    Cloud Asset Inventory asset name, or the component's resource name.
    """

    rule_id: str
    level: EnforcementLevel
    status: Status
    resource: str
    message: str
    remediation: str
    field: ResultField | None = None
    evidence: Mapping[str, str] = dataclasses.field(default_factory=lambda: MappingProxyType({}))

    @property
    def finding_id(self) -> str:
        """The finding's stable ID (:func:`pushguard.rules.identity.finding_id` of the
        resource, the rule ID and the cause: field and evidence, never the message)."""
        return finding_id(self.resource, self.rule_id, cause(self.field, self.evidence))

    @property
    def is_violation(self) -> bool:
        """True for a definite violation, False for an undecided (unknown) result."""
        return self.status is Status.VIOLATION


def evaluate_rules(
    rules: Iterable[Rule],
    facts: SubscriptionFacts,
    levels: Mapping[str, EnforcementLevel] | None = None,
) -> list[Finding]:
    """Run ``rules`` over one subscription's facts and return the findings in rule order.

    ``levels`` overrides a rule's default enforcement level by rule ID; rules at ``disabled`` are
    not run, nor are rules that do not judge facts of this kind (:meth:`Rule.applies_to`). Never
    raises for any facts a :class:`SubscriptionFacts` can hold.
    """
    overrides = levels or {}
    findings: list[Finding] = []
    for rule in rules:
        level = overrides.get(rule.id, rule.default_level)
        if level is EnforcementLevel.DISABLED or not rule.applies_to(facts):
            continue
        for result in rule.check(facts):
            findings.append(
                Finding(
                    rule_id=rule.id,
                    level=level,
                    status=result.status,
                    resource=facts.resource,
                    message=result.message,
                    remediation=rule.remediation,
                    field=result.field,
                    evidence=result.evidence,
                )
            )
    return findings
