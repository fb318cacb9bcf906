"""``run_audit``: the whole audit, from export paths to the output folder.

One scan of the input: the parsed lines are persisted (only the columns the audit needs; the
payloads only for the asset types it reads), and the accounting, the quarantine and the joins
all read that. The evaluation runs on the executors (``mapInArrow``). What comes back to the
driver is small and does not grow with the input: the counts for ``summary.json`` and the
aggregates for ``report.html``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pushguard.audit.evaluate import FINDINGS_DDL, arrow_evaluator, plan
from pushguard.audit.join import subscription_facts
from pushguard.audit.outputs import OutputFolder
from pushguard.audit.parse import DEFAULT_MAX_LINE_BYTES, parse_assets
from pushguard.audit.read import Inputs, discover, line_numbers, read_lines
from pushguard.audit.report import render
from pushguard.audit.summary import (
    AuditSettings,
    AuditSummary,
    FindingCounts,
    InputCounts,
    LineCounts,
    SubscriptionCounts,
)
from pushguard.policy.settings import PackSettings
from pushguard.rules import RULES, EnforcementLevel

FAIL_ON = ("mandatory", "advisory", "never")
LOG = logging.getLogger("pushguard.audit")


@dataclass
class AuditOptions:
    """What to audit and how.

    Attributes:
        paths: export files or folders (local, ``file:``, ``gs://`` with the connector).
        out: the output folder, local or a URI (created; existing outputs in it are replaced).
        levels: enforcement level per rule ID (default: each rule's own).
        settings: pack settings per rule ID (from the policy config).
        include_dry_run: also count dry-run (``spec``) perimeters.
        max_line_bytes: longer lines are quarantined.
    """

    paths: list[str]
    out: str
    levels: Mapping[str, EnforcementLevel] = field(default_factory=dict)
    settings: Mapping[str, PackSettings] = field(default_factory=dict)
    include_dry_run: bool = False
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES


@dataclass
class AuditResult:
    """The summary (as written to ``summary.json``) and the exit code for ``fail_on``."""

    summary: AuditSummary

    def exit_code(self, fail_on: str = "mandatory") -> int:
        """1 when a violation is at or above ``fail_on``, else 0."""
        levels = {"mandatory": ("mandatory",), "advisory": ("mandatory", "advisory"), "never": ()}
        by_level = self.summary.findings.violations_by_level
        return int(any(by_level.get(level, 0) for level in levels[fail_on]))


def run_audit(spark: SparkSession, options: AuditOptions) -> AuditResult:
    """Run the audit and write ``findings.parquet``, ``findings.jsonl``, ``quarantine/``,
    ``summary.json`` and ``report.html`` under ``options.out``.

    Raises:
        InputError: an export path is missing or empty.
    """
    _local_shuffle_partitions(spark)
    clock = _Phases()
    inputs = discover(spark, options.paths)
    lines = read_lines(spark, inputs)
    assets = parse_assets(lines, options.max_line_bytes).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        levels = {rule.id: options.levels.get(rule.id, rule.default_level) for rule in RULES}
        clock.done("discover")
        facts = subscription_facts(assets, options.include_dry_run).persist(
            StorageLevel.MEMORY_AND_DISK
        )
        clock.done("parse and join")
        findings = facts.mapInArrow(arrow_evaluator(plan(levels, options.settings)), FINDINGS_DDL)
        findings = findings.orderBy("asset_name", "rule_id", "message").persist(
            StorageLevel.MEMORY_AND_DISK
        )
        out = OutputFolder(spark, options.out)
        out.single_file(findings, "parquet", "findings.parquet")
        out.single_file(findings, "json", "findings.jsonl")
        clock.done("evaluate and write findings")
        _write_quarantine(assets, out)
        clock.done("quarantine")
        summary = _summary(
            assets=assets, facts=facts, findings=findings, inputs=inputs, options=options
        )
        out.write_text("report.html", render(summary, _offenders(findings)))
        clock.done("summary and report")
        summary = summary.model_copy(update={"timings_s": dict(clock.timings)})
        out.write_text("summary.json", summary.to_json())
        facts.unpersist()
        findings.unpersist()
        return AuditResult(summary)
    finally:
        assets.unpersist()


class _Phases:
    """Wall time per phase, logged as it ends (``pushguard.audit`` logger) and kept for the
    summary."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._last = time.perf_counter()

    def done(self, phase: str) -> None:
        now = time.perf_counter()
        self.timings[phase] = round(now - self._last, 3)
        self._last = now
        LOG.info("%s: %.1f s", phase, self.timings[phase])


def _local_shuffle_partitions(spark: SparkSession) -> None:
    """In local mode, Spark's default of 200 shuffle partitions turns every small join into 200
    tasks on a few cores; use twice the cores instead, unless the user set a value."""
    context = spark.sparkContext
    if (
        (context.master or "").startswith("local")
        and not context.getConf().contains("spark.sql.shuffle.partitions")
        and spark.conf.get("spark.sql.shuffle.partitions") == "200"
    ):
        partitions = max(4, 2 * context.defaultParallelism)
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))


def _write_quarantine(assets: DataFrame, out: OutputFolder) -> None:
    """Every line with a reason, located; their count is the summary's ``quarantined``."""
    bad = assets.filter(F.col("reason").isNotNull())
    located = line_numbers(bad, assets).select(
        F.regexp_replace("source", "^file:", "").alias("source"), "line", "reason", "text"
    )
    out.reset("quarantine")
    out.single_file(located.orderBy("source", "line"), "json", "quarantine/quarantined.jsonl")


def _summary(
    *,
    assets: DataFrame,
    facts: DataFrame,
    findings: DataFrame,
    inputs: Inputs,
    options: AuditOptions,
) -> AuditSummary:
    """The counts, from small aggregates; ``timings_s`` stays empty (the run is not over)."""
    counts = (
        assets.groupBy(F.col("reason").isNull().alias("parsed"), "asset_type", "reason")
        .count()
        .collect()
    )
    read = sum(row["count"] for row in counts)
    parsed = sum(row["count"] for row in counts if row["parsed"])
    by_type: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for row in counts:
        if row["parsed"]:
            by_type[row["asset_type"]] = by_type.get(row["asset_type"], 0) + row["count"]
        else:
            reasons[row["reason"]] = reasons.get(row["reason"], 0) + row["count"]
    rows = findings.groupBy("status", "level", "rule_id").count().collect()
    violations = [r for r in rows if r["status"] == "violation"]
    by_rule: dict[str, int] = {}
    by_level: dict[str, int] = {}
    for r in violations:
        by_rule[r["rule_id"]] = by_rule.get(r["rule_id"], 0) + r["count"]
        by_level[r["level"]] = by_level.get(r["level"], 0) + r["count"]
    is_push = F.col("push_endpoint").isNotNull() & (F.col("push_endpoint") != "")
    subscriptions = facts.agg(
        F.count(F.lit(1)).alias("evaluated"), F.count(F.when(is_push, 1)).alias("push")
    ).first()
    assert subscriptions is not None  # a global aggregate always has one row
    return AuditSummary(
        inputs=InputCounts(
            paths=list(options.paths),
            files=len(inputs.ndjson) + len(inputs.arrays),
            json_array_files=len(inputs.arrays),
            asset_type_folders_skipped=inputs.skipped_types,
        ),
        lines=LineCounts(read=read, parsed=parsed, quarantined=read - parsed),
        quarantine_reasons=dict(sorted(reasons.items())),
        assets_by_type=dict(sorted(by_type.items())),
        subscriptions=SubscriptionCounts(
            evaluated=int(subscriptions["evaluated"]), push=int(subscriptions["push"])
        ),
        findings=FindingCounts(
            violations=sum(by_rule.values()),
            violations_by_rule=dict(sorted(by_rule.items())),
            violations_by_level=dict(sorted(by_level.items())),
            undecided=sum(r["count"] for r in rows if r["status"] == "unknown"),
            undecided_by_rule=dict(
                sorted((r["rule_id"], r["count"]) for r in rows if r["status"] == "unknown")
            ),
        ),
        settings=AuditSettings(
            include_dry_run_perimeters=options.include_dry_run,
            max_line_bytes=options.max_line_bytes,
            levels={rule.id: options.levels.get(rule.id, rule.default_level) for rule in RULES},
        ),
        timings_s={},
    )


def _offenders(findings: DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Small aggregates for the report: by project, by folder and the worst subscriptions."""
    violations = findings.filter(F.col("status") == "violation")
    weight = F.sum(F.when(F.col("level") == "mandatory", 1).otherwise(0)).alias("mandatory")
    by_project = (
        violations.groupBy(F.coalesce("project_id", "project_number").alias("key"))
        .agg(F.count(F.lit(1)).alias("violations"), weight)
        .orderBy(F.desc("mandatory"), F.desc("violations"), "key")
        .limit(25)
    )
    folders = violations.select(
        F.explode(F.filter("ancestors", lambda a: a.startswith("folders/"))).alias("key")
    )
    by_folder = (
        folders.groupBy("key")
        .agg(F.count(F.lit(1)).alias("violations"))
        .orderBy(F.desc("violations"), "key")
        .limit(25)
    )
    worst = (
        violations.groupBy("asset_name")
        .agg(
            F.count(F.lit(1)).alias("violations"),
            weight,
            F.array_sort(F.collect_set("rule_id")).alias("rules"),
        )
        .orderBy(F.desc("mandatory"), F.desc("violations"), "asset_name")
        .limit(25)
    )
    return {
        "by_project": [r.asDict() for r in by_project.collect()],
        "by_folder": [r.asDict() for r in by_folder.collect()],
        "worst": [r.asDict() for r in worst.collect()],
    }
