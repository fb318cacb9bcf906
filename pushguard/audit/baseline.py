"""``pushguard audit --baseline PREVIOUS_OUT``: what changed since a previous audit, comparing
like with like.

The baseline is the ``--out`` folder of an earlier audit that completed (it holds
:data:`~pushguard.audit.publish.MARKER`) and whose rows carry ``finding_id``
(:mod:`pushguard.rules.identity`). A baseline of another organisation or computed with other
policy settings is refused (:mod:`pushguard.audit.baseline_scope`) unless
``--accept-baseline-mismatch`` is given. After the run, before it is published:

- every row of ``findings.parquet`` and ``findings.jsonl`` gets ``change``: ``new`` (its
  ``finding_id`` is not in the baseline), ``existing``, or ``level-raised`` / ``level-lowered``
  (the baseline has it at another enforcement level: an advisory finding made mandatory is not
  "existing" to a gate on mandatory findings);
- a baseline finding (violation or excepted) whose ``finding_id`` is gone is **resolved** only
  when this run evaluated its asset and its rule and decided: it is listed in ``resolved.jsonl``
  (the baseline's rows as they were). Otherwise it is **not rechecked**, listed in
  ``not_rechecked.jsonl`` with its ``reason`` (:data:`REASONS`): its rule disabled, its rule
  needing ``--stacks`` not given, this run reading none of its rule's inputs, its asset's line
  quarantined, its asset not in the export (``evaluated.parquet`` of this run), or its rule
  undecided on it this time;
- ``summary.json`` gets ``baseline``: ``path``, ``new``, ``existing``, ``level_raised``,
  ``level_lowered``, ``resolved``, ``not_rechecked`` and per reason (violations and excepted
  findings only; undecided rows are marked but not counted), what differed and was accepted, and
  what the baseline does not record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from pushguard.audit.baseline_scope import (
    organization_differences,
    policy_differences,
    refusal,
)
from pushguard.audit.coverage import stacks_only
from pushguard.audit.job import EVALUATED
from pushguard.audit.listing import report_rows
from pushguard.audit.outputs import OutputFolder
from pushguard.audit.publish import MARKER, OutputUsageError, local_path
from pushguard.audit.quarantine import QUARANTINE_FILE
from pushguard.audit.schemas import FINDINGS_COLUMNS
from pushguard.audit.summary import AuditSummary, BaselineCounts
from pushguard.rules import EnforcementLevel

COUNTED = ("violation", "excepted")
"""The statuses a baseline counts (new, existing, resolved)."""

REASONS: dict[str, str] = {
    "rule-disabled": "its rule is disabled in this run's policy config",
    "rule-not-evaluated": "its rule is not one this pushguard evaluates",
    "stacks-not-given": "its rule needs --stacks, which this run was not given",
    "line-quarantined": "the line of its asset was quarantined in this run",
    "asset-not-in-export": "its asset is not in this run's export",
    "inputs-missing": "this run read none of what its rule needs (summary.json coverage.missing)",
    "undecided": "its rule could not decide on its asset in this run (status unknown)",
}
"""Why a baseline finding that is gone was not rechecked, in the order they are tried."""

_LEVEL_RANK = {EnforcementLevel.ADVISORY.value: 1, EnforcementLevel.MANDATORY.value: 2}
_FULL_NAME = r'"name"\s*:\s*"(//[^"]+)"'
"""A full resource name in a quarantined line's text (CAI asset names start with ``//``)."""


class BaselineError(RuntimeError):
    """The baseline cannot be compared with (exit 2): the message says why."""


def read_local_summary(baseline: str) -> dict[str, Any] | None:
    """The parsed ``summary.json`` of a local ``baseline`` folder; ``None`` for a URI or when the
    file is missing or not JSON (then nothing can be compared before Spark starts)."""
    path = local_path(baseline)
    if path is None:
        return None
    try:
        data = json.loads((Path(path) / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check_baseline(
    baseline: str,
    *,
    policy_settings: dict[str, dict[str, str]] | None = None,
    include_dry_run: bool = False,
    accept_mismatch: bool = False,
) -> None:
    """Before Spark starts: a local ``baseline`` is a completed audit's output folder, computed
    with the same policy settings (``policy_settings``, :func:`~pushguard.audit.baseline_scope.
    settings_digests` of this run's config) unless ``accept_mismatch``. Its organisations are
    compared after the run, when this run's are known (:func:`compare`).

    Raises:
        OutputUsageError: naming ``--baseline`` and what is wrong or what differs.
    """
    path = local_path(baseline)
    if path is None:
        return
    if not path.is_dir():
        raise OutputUsageError(f"--baseline {baseline}: is not a folder")
    if not (path / MARKER).is_file() or not (path / "findings.parquet").is_file():
        raise OutputUsageError(
            f"--baseline {baseline}: is not a completed audit (no {MARKER} or findings.parquet: "
            "give the --out folder of an audit that completed)"
        )
    previous = read_local_summary(baseline)
    if previous is None or policy_settings is None or accept_mismatch:
        return
    differences, _ = policy_differences(previous, policy_settings, include_dry_run)
    if differences:
        raise OutputUsageError(refusal(baseline, differences))


def _summary(spark: SparkSession, baseline: str) -> dict[str, Any]:
    """The baseline's ``summary.json``, parsed (``{}`` when it has none)."""
    local = read_local_summary(baseline)
    if local is not None or local_path(baseline) is not None:
        return local or {}
    try:
        row = spark.read.text(f"{baseline.rstrip('/')}/summary.json", wholetext=True).first()
    except Exception:  # no summary.json: an audit older than it; nothing to compare with
        return {}
    data = json.loads(row[0]) if row is not None else {}
    return data if isinstance(data, dict) else {}


def scope(
    previous: dict[str, Any], summary: AuditSummary, baseline: str, accept_mismatch: bool
) -> tuple[list[str], list[str]]:
    """``(accepted differences, unverified facts)`` between the baseline's ``summary.json`` and
    this run's summary.

    Raises:
        BaselineError: the organisations or the policy settings differ and ``accept_mismatch``
            is false (:func:`~pushguard.audit.baseline_scope.refusal`).
    """
    settings = summary.settings
    organizations, unknown_organizations = organization_differences(
        previous, summary.coverage.organizations
    )
    policies, unknown_policies = policy_differences(
        previous, settings.policy_settings, settings.include_dry_run_perimeters
    )
    differences = organizations + policies
    if differences and not accept_mismatch:
        raise BaselineError(refusal(baseline, differences))
    return differences, unknown_organizations + unknown_policies


def _rows(frame: DataFrame) -> DataFrame:
    return frame.filter(F.col("status").isin(*COUNTED))


def _one_file(frame: DataFrame) -> DataFrame:
    """``frame`` in one sorted partition, read in full now (its source files are replaced)."""
    return (
        frame.repartition(1)
        .sortWithinPartitions("asset_name", "rule_id", "message")
        .localCheckpoint(eager=True)
    )


def _rank(level: Column) -> Column:
    rank = F.lit(0)
    for name, value in _LEVEL_RANK.items():
        rank = F.when(level == name, value).otherwise(rank)
    return rank


def marked(current: DataFrame, previous: DataFrame) -> DataFrame:
    """This run's rows with ``change``: ``new``, ``existing``, ``level-raised`` or
    ``level-lowered`` against the ``previous`` rows' levels. Lazy."""
    before = previous.select("finding_id", F.col("level").alias("_before")).dropDuplicates(
        ["finding_id"]
    )
    now, then = _rank(F.col("level")), _rank(F.col("_before"))
    change = (
        F.when(F.col("_before").isNull(), "new")
        .when(now > then, "level-raised")
        .when(now < then, "level-lowered")
        .otherwise("existing")
    )
    return (
        current.join(before, "finding_id", "left")
        .withColumn("change", change)
        .select(*FINDINGS_COLUMNS, "change")
    )


def _flag(frame: DataFrame, name: str) -> DataFrame:
    return frame.distinct().withColumn(name, F.lit(True))


def _quarantined_names(spark: SparkSession, staging: str, summary: AuditSummary) -> DataFrame:
    """``asset_name`` of every full resource name in this run's quarantined lines' text."""
    if not summary.lines.quarantined:
        return spark.createDataFrame([], "asset_name string")
    lines = spark.read.schema("text string").json(f"{staging}/{QUARANTINE_FILE}")
    names = F.explode(F.regexp_extract_all("text", F.lit(_FULL_NAME), F.lit(1)))
    return lines.select(names.alias("asset_name"))


def _isin(column: Column, values: list[str]) -> Column:
    return column.isin(*values) if values else F.lit(False)


def reason(summary: AuditSummary) -> Column:
    """The :data:`REASONS` key of a gone baseline row (with the ``_evaluated``,
    ``_quarantined`` and ``_undecided`` flags of :func:`classified`), null when resolved."""
    levels = summary.settings.levels
    known = list(levels)
    disabled = [r for r, level in levels.items() if level is EnforcementLevel.DISABLED]
    no_stacks = [r for r in known if stacks_only(r)] if not summary.stacks.checked else []
    blind = sorted({r for rules in summary.coverage.missing.values() for r in rules})
    rule, evaluated = F.col("rule_id"), F.col("_evaluated").isNotNull()
    return (
        F.when(_isin(rule, disabled), "rule-disabled")
        .when(~_isin(rule, known), "rule-not-evaluated")
        .when(_isin(rule, no_stacks), "stacks-not-given")
        .when(~evaluated & F.col("_quarantined").isNotNull(), "line-quarantined")
        .when(~evaluated, "asset-not-in-export")
        .when(_isin(rule, blind), "inputs-missing")
        .when(F.col("_undecided").isNotNull(), "undecided")
    )


def classified(
    spark: SparkSession,
    gone: DataFrame,
    current: DataFrame,
    staging: str,
    summary: AuditSummary,
) -> DataFrame:
    """The ``gone`` baseline rows with ``reason`` (:func:`reason`; null: resolved), from this
    run's evaluated subscriptions (:data:`~pushguard.audit.job.EVALUATED`), quarantined lines
    and undecided findings in ``staging``. Lazy."""
    evaluated = _flag(spark.read.parquet(f"{staging}/{EVALUATED}"), "_evaluated")
    quarantined = _flag(_quarantined_names(spark, staging, summary), "_quarantined")
    undecided = _flag(
        current.filter(F.col("status") == "unknown").select("asset_name", "rule_id"), "_undecided"
    )
    return (
        gone.join(F.broadcast(evaluated), "asset_name", "left")
        .join(quarantined, "asset_name", "left")
        .join(undecided, ["asset_name", "rule_id"], "left")
        .withColumn("reason", reason(summary))
        .select(*gone.columns, "reason")
    )


def compare(
    spark: SparkSession,
    out: OutputFolder,
    staging: str,
    baseline: str,
    summary: AuditSummary,
    *,
    accept_mismatch: bool = False,
) -> tuple[AuditSummary, list[dict[str, Any]]]:
    """Mark this run's rows in ``staging`` against ``baseline``, write ``resolved.jsonl`` and
    ``not_rechecked.jsonl`` and return ``summary`` with its ``baseline`` counts (the caller
    writes it) and the findings the report lists, new and raised first
    (:func:`pushguard.audit.listing.report_rows`).

    Raises:
        BaselineError: the baseline's rows have no ``finding_id`` (an audit older than finding
            IDs), or it is of another organisation or policy config (:func:`scope`).
    """
    accepted, unverified = scope(_summary(spark, baseline), summary, baseline, accept_mismatch)
    previous = spark.read.parquet(f"{baseline.rstrip('/')}/findings.parquet")
    if "finding_id" not in previous.columns:
        raise BaselineError(
            f"--baseline {baseline}: its findings have no finding_id (written by a pushguard "
            "older than finding IDs); run the audit once without --baseline first"
        )
    current = spark.read.parquet(f"{staging}/findings.parquet")
    rows = _one_file(marked(current, previous))
    gone = _rows(previous).join(current.select("finding_id"), "finding_id", "left_anti")
    judged = classified(spark, gone, current, staging, summary).localCheckpoint(eager=True)
    resolved = _one_file(judged.filter(F.col("reason").isNull()).select(*previous.columns))
    not_rechecked = _one_file(judged.filter(F.col("reason").isNotNull()))
    out.single_file(rows, "parquet", "findings.parquet")
    out.single_file(rows, "json", "findings.jsonl")
    out.single_file(resolved, "json", "resolved.jsonl")
    out.single_file(not_rechecked, "json", "not_rechecked.jsonl")
    counts = _counts(rows, resolved.count(), not_rechecked)
    counts = counts.model_copy(
        update={"path": baseline, "mismatch_accepted": accepted, "unverified": unverified}
    )
    return summary.model_copy(update={"baseline": counts}), report_rows(rows)


def _counts(rows: DataFrame, resolved: int, not_rechecked: DataFrame) -> BaselineCounts:
    """The counts of ``summary.json``'s ``baseline`` (``path`` left empty)."""
    changes = {r["change"]: r["count"] for r in _rows(rows).groupBy("change").count().collect()}
    reasons = {r["reason"]: r["count"] for r in not_rechecked.groupBy("reason").count().collect()}
    return BaselineCounts(
        path="",
        new=int(changes.get("new", 0)),
        existing=int(changes.get("existing", 0)),
        level_raised=int(changes.get("level-raised", 0)),
        level_lowered=int(changes.get("level-lowered", 0)),
        resolved=resolved,
        not_rechecked=sum(reasons.values()),
        not_rechecked_by_reason={k: int(reasons[k]) for k in REASONS if k in reasons},
    )
