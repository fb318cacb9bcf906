"""Which exceptions of the policy config matched a finding of this run, and why the others did not.

An exception that matches nothing is not an error (the risk it accepted may be fixed), but it is
never silent: :func:`exception_use` lists each with its reason in ``summary.json``
(``exceptions.unused``), ``report.html`` and the summary line. It is matched exactly as the
evaluation matches (:func:`pushguard.audit.evaluate.exception_names` and
:meth:`pushguard.policy.settings.PackSettings.exceptions_for`), from one small collect: the
findings that carry an exception (at most a few per exception) and the export's subscriptions
whose ID an unmatched exception names. Without exceptions in the config, no Spark job runs.

Why an exception matched nothing, first reason that applies:

- its policy is ``disabled`` (nothing is evaluated);
- its policy is ``push-unmanaged`` or ``push-state-drift`` and no ``--stacks`` were given;
- it names a Pulumi URN or an Eventarc trigger (the audit reads subscriptions from Cloud Asset
  Inventory; the pack, ``pushguard preview`` and ``analyze`` match those);
- the subscription is Google-managed (:mod:`pushguard.rules.google_managed`): no rule judges it;
- no subscription of that name is in the export (deleted, or another organisation's);
- the subscription has no finding of the policy in this run (the risk may be gone: remove it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from pushguard.audit.evaluate import exception_names
from pushguard.audit.managed import STACK_RULES
from pushguard.audit.options import AuditOptions
from pushguard.audit.summary import ExceptionUse, UnusedException
from pushguard.policy.exceptions import PolicyException
from pushguard.policy.resources import resource_kind
from pushguard.policy.settings import PackSettings
from pushguard.rules import EnforcementLevel
from pushguard.rules.google_managed import GOOGLE_MANAGED

_NOT_MATCHED = {
    "urn": "a Pulumi URN: the audit names subscriptions by path (projects/P/subscriptions/S); "
    "the pack, pushguard preview and analyze match URNs",
    "trigger": "an Eventarc trigger: the audit reads subscriptions only; the pack, pushguard "
    "preview and analyze match triggers",
}
DISABLED = "the policy is disabled in the policy config: nothing of it is evaluated"
NEEDS_STACKS = "the policy needs --stacks, which were not given: nothing of it is evaluated"
GOOGLE_MANAGED_WHY = (
    "the subscription is Google-managed (created and configured by a Google product): no rule "
    "judges it"
)
NOT_IN_EXPORT = "no subscription of this name is in the export (deleted, or a typo)"
NO_FINDING = (
    "the subscription has no finding of this policy in this run: the risk may be gone (remove "
    "the exception)"
)


def exception_use(findings: DataFrame, facts: DataFrame, options: AuditOptions) -> ExceptionUse:
    """The policy config's exceptions against ``findings`` (rows of
    :data:`~pushguard.audit.schemas.FINDINGS_DDL`) and ``facts`` (the joined subscriptions),
    with ``options``' levels, settings and ``--stacks``. One ``collect`` of a few rows; none
    when the config has no exception."""
    given = [(rule, e) for rule, settings in options.settings.items() for e in settings.exceptions]
    if not given:
        return ExceptionUse()
    rows = _rows(findings, facts, {e.resource.rsplit("/", 1)[-1] for _, e in given})
    used: set[tuple[str, str]] = set()
    present: list[Row] = []
    for row in rows:
        if row["kind"] != EXCEPTED:
            present.append(row)
            continue
        settings = options.settings.get(row["rule_id"], PackSettings())
        for item in settings.exceptions_for(*_names(row)):
            used.add((row["rule_id"], item.resource))
    levels = options.rule_levels()
    unused = [
        UnusedException(
            policy=rule,
            resource=item.resource,
            expires=item.expires,
            why=_why(rule, item, options, levels, present),
        )
        for rule, item in given
        if (rule, item.resource) not in used
    ]
    return ExceptionUse(
        given=len(given),
        matched=len(given) - len(unused),
        unused=sorted(unused, key=lambda u: (u.policy, u.resource)),
    )


EXCEPTED, PRESENT = "excepted", "present"


def _names(row: Row) -> list[str]:
    return exception_names(row["asset_name"], row["project_id"], row["project_number"])


def _rows(findings: DataFrame, facts: DataFrame, ids: Iterable[str]) -> list[Row]:
    """``kind``, ``rule_id``, ``asset_name``, ``project_id``, ``project_number``: every finding
    that carries an exception (``excepted``), and every subscription of the export whose ID is in
    ``ids`` (``present``; ``google-managed`` for one Google manages, from its findings row);
    distinct, in one collect."""
    columns = ("asset_name", "project_id", "project_number")
    excepted = findings.filter(F.col("exception_state").isNotNull()).select(
        F.lit(EXCEPTED).alias("kind"), "rule_id", *columns
    )
    subscription_id = F.regexp_extract("asset_name", r"/subscriptions/([^/]+)$", 1)
    wanted = subscription_id.isin(*sorted(set(ids)))
    named = facts.filter(wanted).select(
        F.lit(PRESENT).alias("kind"), F.lit(None).cast("string").alias("rule_id"), *columns
    )
    managed = findings.filter(wanted & (F.col("status") == GOOGLE_MANAGED)).select(
        F.lit(GOOGLE_MANAGED).alias("kind"), F.lit(None).cast("string").alias("rule_id"), *columns
    )
    return excepted.unionByName(named).unionByName(managed).distinct().collect()


def _why(
    rule: str,
    item: PolicyException,
    options: AuditOptions,
    levels: Mapping[str, EnforcementLevel],
    present: list[Row],
) -> str:
    """Why ``item`` (an exception of ``rule``) matched nothing (see the module docstring)."""
    if levels.get(rule) is EnforcementLevel.DISABLED:
        return DISABLED
    if rule in {r.id for r in STACK_RULES} and not options.stacks:
        return NEEDS_STACKS
    kind = resource_kind(item.resource)
    if kind != "subscription":
        return _NOT_MATCHED[kind]
    settings = options.settings.get(rule, PackSettings())
    named = [row["kind"] for row in present if item in settings.exceptions_for(*_names(row))]
    if GOOGLE_MANAGED in named:
        return GOOGLE_MANAGED_WHY
    return NO_FINDING if named else NOT_IN_EXPORT


def exceptions_said(use: ExceptionUse) -> str:
    """The summary line's part about the policy config's exceptions: ``; exceptions: M of N
    matched a finding, U unused`` (empty when the config has none)."""
    if not use.given:
        return ""
    unused = len(use.unused)
    listed = " (listed in summary.json and report.html)" if unused else ""
    return (
        f"; exceptions: {use.matched:,} of {use.given:,} matched a finding, "
        f"{unused:,} unused{listed}"
    )
