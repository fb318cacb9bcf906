"""The rules over the joined facts, in Arrow batches on the executors (``mapInArrow``).

Each batch of joined subscription rows (:func:`pushguard.audit.join.subscription_facts`) becomes
:class:`~pushguard.rules.facts.SubscriptionFacts` and goes through :func:`pushguard.rules.evaluate`:
the same rule modules the policy pack runs, never a copy. Every finding (violations, and results a
rule could not decide, ``status`` ``unknown``) is one output row, in the schema
:data:`~pushguard.audit.schemas.FINDINGS_DDL` (as Arrow: :data:`ARROW_FINDINGS`); a
Google-managed subscription (:mod:`pushguard.rules.google_managed`) is one row of status
``google-managed`` instead of any rule's findings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import pyarrow as pa

from pushguard.audit.arrow import arrow_schema
from pushguard.audit.schemas import FINDINGS_DDL
from pushguard.policy.exceptions import Excepted, utc_today
from pushguard.policy.resources import project_variants
from pushguard.policy.settings import PackSettings
from pushguard.rules import RULES, EnforcementLevel, Finding
from pushguard.rules.base import Rule, evaluate_rules
from pushguard.rules.endpoint import is_google_serving_endpoint
from pushguard.rules.facts import EXTERNAL_TARGET, IamGrant, InvokerTarget, SubscriptionFacts
from pushguard.rules.google_managed import GOOGLE_MANAGED, GoogleManaged, google_managed
from pushguard.rules.identity import cause, finding_id

ARROW_FINDINGS = arrow_schema(FINDINGS_DDL)
"""The Arrow form of :data:`~pushguard.audit.schemas.FINDINGS_DDL`: the schema of the batches
:func:`arrow_evaluator` yields."""


_RULE_ORDER = {rule.id: n for n, rule in enumerate(RULES)}


@dataclass(frozen=True)
class RuleGroup:
    """Rules that share one set of settings, with their enforcement levels."""

    settings: PackSettings
    rules: tuple[Rule, ...]
    levels: Mapping[str, EnforcementLevel]


def plan(
    levels: Mapping[str, EnforcementLevel], settings: Mapping[str, PackSettings]
) -> list[RuleGroup]:
    """Group the rules by their settings, so facts are built once per distinct settings."""
    groups: dict[str, RuleGroup] = {}
    for rule in RULES:
        rule_settings = settings.get(rule.id, PackSettings())
        key = rule_settings.model_dump_json()
        group = groups.get(key)
        rules = (*group.rules, rule) if group else (rule,)
        groups[key] = RuleGroup(rule_settings, rules, levels)
    return list(groups.values())


def _grants(rows: list[dict[str, Any]] | None) -> tuple[IamGrant, ...] | None:
    if rows is None:
        return None
    return tuple(IamGrant(**row) for row in rows)


def facts_from_row(row: Mapping[str, Any]) -> SubscriptionFacts:
    """One joined row (:data:`pushguard.audit.schemas.JOINED_COLUMNS`) -> facts, as the export
    states them; :meth:`~pushguard.policy.settings.PackSettings.apply` lays the policy config
    over them. Grants are ``None`` where the join could not collect them; a subscription without
    a dead-letter topic has no dead-letter grants to check (``()``)."""
    endpoint = row["push_endpoint"]
    target: InvokerTarget | None = None
    if row["target_kind"]:
        target = InvokerTarget(
            kind=row["target_kind"],
            name=row["target_name"] or "",
            grants=_grants(row["target_grants"]),
        )
    elif endpoint and not is_google_serving_endpoint(endpoint):
        target = EXTERNAL_TARGET
    return SubscriptionFacts(
        resource=row["asset_name"],
        project_id=row["project_id"] or None,
        project_number=row["project_number"] or None,
        subscription_id=subscription_id(row["asset_name"]),
        topic=row.get("topic"),
        push_endpoint=endpoint,
        push_auth_account=row["push_auth_account"],
        audience=row["audience"],
        exactly_once_delivery=bool(row["exactly_once_delivery"]),
        dead_letter_topic=row["dead_letter_topic"],
        in_service_perimeter=bool(row["in_service_perimeter"]),
        service_perimeters=tuple(row.get("service_perimeters") or ()),
        push_auth_account_grants=_grants(row["account_grants"]),
        invoker_target=target,
        dead_letter_topic_grants=_grants(row["dead_letter_grants"])
        if row["dead_letter_topic"]
        else (),
        subscription_grants=_grants(row["subscription_grants"]),
    )


def subscription_id(asset_name: str) -> str | None:
    """``S`` of a subscription's asset name ``//pubsub.googleapis.com/projects/P/subscriptions/S``
    (``None`` for any other name)."""
    head, found, tail = asset_name.rpartition("/subscriptions/")
    return tail if found and head.startswith("//pubsub.googleapis.com/projects/") else None


def findings_for(row: Mapping[str, Any], groups: list[RuleGroup]) -> list[Finding]:
    """All findings for one joined subscription row."""
    return [finding for finding, _ in excepted_findings(row, groups)]


def excepted_findings(
    row: Mapping[str, Any],
    groups: list[RuleGroup],
    today: date | None = None,
    facts_of: Callable[[Mapping[str, Any]], SubscriptionFacts] = facts_from_row,
) -> list[tuple[Finding, Excepted | None]]:
    """All findings for one joined subscription row, each violation with the exception of its
    policy that names the subscription (:mod:`pushguard.policy.exceptions`, judged on ``today``,
    default today in UTC), in rule order. ``facts_of`` turns the row into facts (default
    :func:`facts_from_row`; ``--stacks`` rows: :func:`pushguard.audit.managed.facts_of_row`).
    An exception names the subscription by its path with either of its project's names
    (:func:`exception_names`)."""
    return _excepted(facts_of(row), groups, today or utc_today())


def _excepted(
    facts: SubscriptionFacts, groups: list[RuleGroup], day: date
) -> list[tuple[Finding, Excepted | None]]:
    found: list[tuple[Finding, Excepted | None]] = []
    for group in groups:
        for finding in evaluate_rules(group.rules, group.settings.apply(facts), group.levels):
            names = exception_names(finding.resource, facts.project_id, facts.project_number)
            excepted = (
                group.settings.exception_for(*names, today=day) if finding.is_violation else None
            )
            found.append((finding, excepted))
    return sorted(found, key=lambda pair: _RULE_ORDER[pair[0].rule_id])


def exception_names(asset_name: str, *projects: str | None) -> list[str]:
    """The names an exception may give the subscription ``asset_name``: its path, and the path
    with each of ``projects`` (its project's ID and number, as the export gives them:
    ``projects/NUMBER/subscriptions/S``; a project is named by its ID or number:
    https://cloud.google.com/resource-manager/docs/creating-managing-projects#identifying_projects)."""
    return project_variants(asset_name, projects)


def google_managed_row(
    row: Mapping[str, Any], managed: GoogleManaged, run_time: str = ""
) -> dict[str, Any]:
    """The one findings row of a Google-managed subscription
    (:mod:`pushguard.rules.google_managed`): status ``google-managed``, no rule and no level,
    the message naming the product and what it serves, the recognition as ``evidence``
    (``product``, ``trigger`` or ``function``, ``region``), and a ``finding_id`` of its own."""
    evidence = managed.evidence()
    return {
        "asset_name": row["asset_name"],
        "project_id": row["project_id"] or None,
        "project_number": row["project_number"],
        "ancestors": row["ancestors"],
        "rule_id": None,
        "level": None,
        "status": GOOGLE_MANAGED,
        "message": f"Google-managed: {managed.describe()}.",
        "remediation": None,
        "field": None,
        "evidence": sorted(evidence.items()),
        "finding_id": finding_id(row["asset_name"], GOOGLE_MANAGED, cause(None, evidence)),
        "exception_state": None,
        "exception_reason": None,
        "exception_expires": None,
        "run_time": run_time or None,
    }


def arrow_evaluator(
    groups: list[RuleGroup],
    run_time: str = "",
    facts_of: Callable[[Mapping[str, Any]], SubscriptionFacts] = facts_from_row,
    *,
    report_google_managed: bool = True,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function for ``DataFrame.mapInArrow(f, FINDINGS_DDL)``: Arrow batches of joined rows
    (:data:`~pushguard.audit.schemas.JOINED_SCHEMA`) in, batches of findings
    (:data:`ARROW_FINDINGS`, the columns of :data:`~pushguard.audit.schemas.FINDINGS_DDL`)
    out, each row with ``run_time`` (the run's start, UTC). A Google-managed subscription gets
    no rule's finding, and one :func:`google_managed_row` when ``report_google_managed`` (the
    rules' pass; ``--stacks`` evaluates the same subscriptions again and leaves it out). Raises
    nothing of its own; a row that does not fit :class:`SubscriptionFacts` fails the task (the
    join's schema rules that out)."""

    today = utc_today()  # on the driver: one day for the whole run

    def evaluate(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            out: list[dict[str, Any]] = []
            for row in batch.to_pylist():
                facts = facts_of(row)
                managed = google_managed(facts)
                if managed is not None:
                    if report_google_managed:
                        out.append(google_managed_row(row, managed, run_time))
                    continue
                for finding, excepted in _excepted(facts, groups, today):
                    active = excepted is not None and excepted.active
                    out.append(
                        {
                            "asset_name": row["asset_name"],
                            "project_id": row["project_id"] or None,
                            "project_number": row["project_number"],
                            "ancestors": row["ancestors"],
                            "rule_id": finding.rule_id,
                            "level": finding.level.value,
                            "status": "excepted" if active else finding.status.value,
                            "message": finding.message,
                            "remediation": finding.remediation,
                            "field": finding.field,
                            "evidence": sorted(finding.evidence.items()),
                            "finding_id": finding.finding_id,
                            "exception_state": excepted.state if excepted else None,
                            "exception_reason": excepted.reason if excepted else None,
                            "exception_expires": excepted.expires if excepted else None,
                            "run_time": run_time or None,
                        }
                    )
            yield pa.RecordBatch.from_pylist(out, schema=ARROW_FINDINGS)

    return evaluate
