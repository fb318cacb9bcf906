"""``run_audit``: the whole audit, from export paths to the output folder.

One pass over the input (:class:`_Scan`): every line is parsed once
(:func:`~pushguard.audit.parse.parse_lines`) and persisted narrow: its place and type, plus the
payload only for the assets the audit uses and the text only for quarantined lines; the same job
counts lines per split, asset type and quarantine reason. The few lines whose string fields look
like other JSON types are checked exactly afterwards, on their own
(:func:`~pushguard.audit.parse.with_type_errors`). The joins read the persisted assets (no
hierarchy collect when the export carries ``ancestors``); the rules run once on the executors
(``mapInArrow``), their findings persisted before they are sorted and written; the summary and
the report come from one collect of small aggregates. Shuffle partitions are sized by adaptive
query execution on every master. What comes back to the driver does not grow with the lines:
counts per split, type and reason, and fixed-size aggregates.
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
from pushguard.audit.parse import (
    DEFAULT_MAX_LINE_BYTES,
    data_column,
    parse_lines,
    with_type_errors,
)
from pushguard.audit.progress import Progress
from pushguard.audit.read import Inputs, discover, read_lines
from pushguard.audit.report import render
from pushguard.audit.schemas import NEEDED_TYPES, RESOURCE_DATA
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


def run_audit(
    spark: SparkSession, options: AuditOptions, progress: Progress | None = None
) -> AuditResult:
    """Run the audit and write ``findings.parquet``, ``findings.jsonl``, ``quarantine/``,
    ``summary.json`` and ``report.html`` under ``options.out``. ``progress`` is told each phase
    (default: silent).

    Raises:
        InputError: an export path is missing or empty.
    """
    progress = progress or Progress()
    _adaptive_partitions(spark)
    clock = _Phases()
    progress.phase("reading")
    inputs = discover(spark, options.paths)
    lines = read_lines(spark, inputs)
    stored = _stored(parse_lines(lines, options.max_line_bytes)).persist(
        StorageLevel.MEMORY_AND_DISK
    )
    kept: list[DataFrame] = [stored]
    try:
        levels = {rule.id: options.levels.get(rule.id, rule.default_level) for rule in RULES}
        clock.done("discover")
        progress.phase("parsing")
        scan = _Scan.of(stored)  # the one pass over the input: parse, persist, count
        changes = None
        if scan.suspect:
            progress.phase("checking JSON types")
            changes = _type_changes(stored)
            kept.append(changes)
            scan.apply(changes)
        assets, quarantined = _assets(stored, changes)
        progress.phase("joining")
        facts = subscription_facts(
            assets, options.include_dry_run, derive_ancestors=scan.without_ancestors
        ).persist(StorageLevel.MEMORY_AND_DISK)
        kept.append(facts)
        clock.done("parse and join")
        progress.phase("evaluating")
        findings = facts.mapInArrow(arrow_evaluator(plan(levels, options.settings)), FINDINGS_DDL)
        findings = findings.persist(StorageLevel.MEMORY_AND_DISK)  # the rules run once
        kept.append(findings)
        # one partition, sorted: the findings are few (a few per subscription) and written as
        # one file; no range-partitioning sort (its sampling pass would be one more job)
        ordered = (
            findings.repartition(1)
            .sortWithinPartitions("asset_name", "rule_id", "message")
            .persist(StorageLevel.MEMORY_AND_DISK)
        )
        kept.append(ordered)
        out = OutputFolder(spark, options.out)
        progress.phase("writing findings")
        out.single_file(ordered, "parquet", "findings.parquet")
        out.single_file(ordered, "json", "findings.jsonl")
        clock.done("evaluate and write findings")
        progress.phase("writing quarantine")
        _write_quarantine(spark, quarantined, scan, out)
        clock.done("quarantine")
        progress.phase("summarising")
        summary, offenders = _summary_and_offenders(
            scan=scan, facts=facts, findings=findings, inputs=inputs, options=options
        )
        out.write_text("report.html", render(summary, offenders))
        clock.done("summary and report")
        summary = summary.model_copy(update={"timings_s": dict(clock.timings)})
        out.write_text("summary.json", summary.to_json())
        return AuditResult(summary)
    finally:
        for frame in reversed(kept):
            frame.unpersist()


_PAYLOAD = (
    "name",
    "ancestors",
    "parent",
    *(data_column(kind) for kind in RESOURCE_DATA),
    "iam",
    "perimeter",
)


def _stored(parsed: DataFrame) -> DataFrame:
    """What is kept of each line (:func:`~pushguard.audit.parse.parse_lines` rows): its
    place, its type, ``q`` (reason and text) when quarantined, ``asset`` (the payload columns)
    when it is an asset the audit uses, ``value`` when a wrong-type check must look at it again.
    Most lines keep only their place and type: three null columns."""
    reason = F.col("reason")
    used = reason.isNull() & (
        F.col("asset_type").isin(*NEEDED_TYPES) | F.col("perimeter").isNotNull()
    )
    return parsed.select(
        "source",
        "block",
        "position",
        "asset_type",
        F.when(reason.isNotNull(), F.struct("reason", "text")).alias("q"),
        F.when(used, F.struct(*_PAYLOAD)).alias("asset"),
        "value",
    )


@dataclass
class _Scan:
    """The counts of the pass over the input (small: one row per split, asset type and reason).

    ``blocks`` maps (source, block) to (lines in it, its first position); ``types`` counts the
    parsed lines per asset type; ``reasons`` the quarantined lines per reason; ``suspect`` the
    lines a wrong-type check must look at again; ``without_ancestors`` whether an asset the
    audit uses has no ``ancestors`` (then the hierarchy is derived from ``parent`` links).
    """

    blocks: dict[tuple[str, int], tuple[int, int]]
    types: dict[str, int]
    reasons: dict[str, int]
    suspect: int
    without_ancestors: bool

    @classmethod
    def of(cls, stored: DataFrame) -> _Scan:
        """Run the pass: one Spark job, which also fills the cache of ``stored``."""
        rows = (
            stored.groupBy(
                "source",
                "block",
                "asset_type",
                F.col("q.reason").alias("reason"),
                (F.col("asset").isNotNull() & F.col("asset.ancestors").isNull()).alias("bare"),
                F.col("value").isNotNull().alias("suspect"),
            )
            .agg(F.count(F.lit(1)).alias("n"), F.min("position").alias("first"))
            .collect()
        )
        scan = cls({}, {}, {}, 0, False)
        for row in rows:
            key = (row["source"], row["block"])
            lines, first = scan.blocks.get(key, (0, row["first"]))
            scan.blocks[key] = (lines + row["n"], min(first, row["first"]))
            scan.suspect += row["n"] if row["suspect"] else 0
            scan.without_ancestors |= bool(row["bare"])
            scan._count(row["asset_type"], row["reason"], row["n"])
        return scan

    def _count(self, asset_type: str | None, reason: str | None, n: int) -> None:
        if reason is None:
            self.types[asset_type or ""] = self.types.get(asset_type or "", 0) + n
        else:
            self.reasons[reason] = self.reasons.get(reason, 0) + n

    def apply(self, changes: DataFrame) -> None:
        """Move the lines whose reason the wrong-type check changed to their new reason."""
        rows = changes.groupBy("asset_type", "old_reason", "reason").count().collect()
        for row in rows:
            self._count(row["asset_type"], row["old_reason"], -row["count"])
            self._count(row["asset_type"], row["reason"], row["count"])
        self.types = {k: v for k, v in self.types.items() if v}
        self.reasons = {k: v for k, v in self.reasons.items() if v}

    @property
    def read(self) -> int:
        """Lines read."""
        return sum(lines for lines, _ in self.blocks.values())

    @property
    def quarantined(self) -> int:
        """Lines quarantined."""
        return sum(self.reasons.values())


def _type_changes(stored: DataFrame) -> DataFrame:
    """The suspect lines whose reason the exact wrong-type check changes (``old_reason`` ->
    ``reason``, ``text``), persisted: a few rows, computed on the suspect lines alone."""
    suspects = stored.filter(F.col("value").isNotNull()).select(
        "source",
        "block",
        "position",
        "asset_type",
        F.col("q.reason").alias("reason"),
        F.col("q.text").alias("text"),
        F.col("q.reason").alias("old_reason"),
        F.lit(True).alias("suspect"),
        "value",
    )
    checked = with_type_errors(suspects)
    return checked.filter(~checked["reason"].eqNullSafe(checked["old_reason"])).persist(
        StorageLevel.MEMORY_AND_DISK
    )


def _assets(stored: DataFrame, changes: DataFrame | None) -> tuple[DataFrame, DataFrame]:
    """The parsed assets the audit uses (columns as :func:`~pushguard.audit.parse.parse_assets`
    gives them) and the quarantined lines (``source``, ``block``, ``position``, ``reason``,
    ``text``), after the wrong-type changes."""
    assets = stored.filter(F.col("asset").isNotNull())
    quarantined = stored.filter(F.col("q").isNotNull()).select(
        "source", "block", "position", "q.reason", "q.text"
    )
    if changes is not None:
        changed = F.broadcast(changes.select("source", "block", "position"))
        assets = assets.join(changed, ["source", "block", "position"], "left_anti")
        quarantined = quarantined.join(changed, ["source", "block", "position"], "left_anti")
        quarantined = quarantined.unionByName(
            changes.filter(F.col("reason").isNotNull()).select(
                "source", "block", "position", "reason", "text"
            )
        )
    assets = assets.select(
        "source",
        "block",
        "position",
        "asset_type",
        *(F.col(f"asset.{name}").alias(name) for name in _PAYLOAD),
        F.lit(None).cast("string").alias("reason"),
    )
    return assets, quarantined


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


_ADAPTIVE = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "64m",
    "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
}
"""Shuffle partitions sized to the data, on every master: adaptive query execution coalesces
Spark's 200 shuffle partitions into partitions of about 64 MB (one for the small joins and
aggregates of the audit, more for a big export), instead of 200 tasks for a few kilobytes; also
inside the persisted frames (facts, findings), which Spark otherwise leaves at 200."""


def _adaptive_partitions(spark: SparkSession) -> None:
    """Set :data:`_ADAPTIVE` in the session, unless the application configured a key."""
    configured = spark.sparkContext.getConf()
    for key, value in _ADAPTIVE.items():
        if not configured.contains(key):
            spark.conf.set(key, value)


def _write_quarantine(
    spark: SparkSession, quarantined: DataFrame, scan: _Scan, out: OutputFolder
) -> None:
    """Every quarantined line with its file and line number, ordered; their count is the
    summary's ``quarantined``. The line is computed from the scan's per-split counts (a small
    table, broadcast): lines in earlier splits of the file, plus the distance from the first
    position of its split. No Spark job when nothing was quarantined."""
    out.reset("quarantine")
    if not scan.quarantined:
        out.write_text("quarantine/quarantined.jsonl", "")
        return
    before: list[tuple[str, int, int, int]] = []
    for source in sorted({source for source, _ in scan.blocks}):
        lines = 0
        for (name, block), (count, first) in sorted(scan.blocks.items()):
            if name == source:
                before.append((source, block, lines, first))
                lines += count
    blocks = spark.createDataFrame(
        before, "source string, block bigint, lines_before bigint, first_position bigint"
    )
    located = quarantined.join(F.broadcast(blocks), ["source", "block"]).select(
        F.regexp_replace("source", "^file:", "").alias("source"),
        (F.col("lines_before") + F.col("position") - F.col("first_position") + 1).alias("line"),
        "reason",
        "text",
    )
    out.single_file(
        located.repartition(1).sortWithinPartitions("source", "line"),
        "json",
        "quarantine/quarantined.jsonl",
    )


def _summary_and_offenders(
    *,
    scan: _Scan,
    facts: DataFrame,
    findings: DataFrame,
    inputs: Inputs,
    options: AuditOptions,
) -> tuple[AuditSummary, dict[str, list[dict[str, Any]]]]:
    """The summary (``timings_s`` empty: the run is not over) and the report's offenders, from
    one collect of small aggregates over the persisted facts and findings."""
    rows = _aggregates(facts, findings).collect()
    by_kind: dict[str, list[Any]] = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row)
    counts = by_kind.get("finding", [])
    violations = [r for r in counts if r["a"] == "violation"]
    by_rule: dict[str, int] = {}
    by_level: dict[str, int] = {}
    for r in violations:
        by_rule[r["c"]] = by_rule.get(r["c"], 0) + r["n"]
        by_level[r["b"]] = by_level.get(r["b"], 0) + r["n"]
    undecided = [r for r in counts if r["a"] == "unknown"]
    undecided_by_rule: dict[str, int] = {}
    for r in undecided:
        undecided_by_rule[r["c"]] = undecided_by_rule.get(r["c"], 0) + r["n"]
    subscriptions = by_kind["subscriptions"][0]
    read = scan.read
    summary = AuditSummary(
        inputs=InputCounts(
            paths=list(options.paths),
            files=len(inputs.ndjson) + len(inputs.arrays),
            json_array_files=len(inputs.arrays),
            asset_type_folders_skipped=inputs.skipped_types,
        ),
        lines=LineCounts(read=read, parsed=read - scan.quarantined, quarantined=scan.quarantined),
        quarantine_reasons=dict(sorted(scan.reasons.items())),
        assets_by_type=dict(sorted(scan.types.items())),
        subscriptions=SubscriptionCounts(
            evaluated=int(subscriptions["n"]), push=int(subscriptions["m"])
        ),
        findings=FindingCounts(
            violations=sum(by_rule.values()),
            violations_by_rule=dict(sorted(by_rule.items())),
            violations_by_level=dict(sorted(by_level.items())),
            undecided=sum(undecided_by_rule.values()),
            undecided_by_rule=dict(sorted(undecided_by_rule.items())),
        ),
        settings=AuditSettings(
            include_dry_run_perimeters=options.include_dry_run,
            max_line_bytes=options.max_line_bytes,
            levels={rule.id: options.levels.get(rule.id, rule.default_level) for rule in RULES},
        ),
        timings_s={},
    )

    def first_null(key: str | None) -> tuple[bool, str]:
        return (key is not None, key or "")

    projects = sorted(
        by_kind.get("project", []), key=lambda r: (-r["m"], -r["n"], first_null(r["a"]))
    )
    folders = sorted(by_kind.get("folder", []), key=lambda r: (-r["n"], first_null(r["a"])))
    worst = sorted(by_kind.get("worst", []), key=lambda r: (-r["m"], -r["n"], r["a"]))
    offenders = {
        "by_project": [
            {"key": r["a"], "violations": r["n"], "mandatory": r["m"]} for r in projects
        ],
        "by_folder": [{"key": r["a"], "violations": r["n"]} for r in folders],
        "worst": [
            {"asset_name": r["a"], "violations": r["n"], "mandatory": r["m"], "rules": r["rules"]}
            for r in worst
        ],
    }
    return summary, offenders


_TOP = 25


def _aggregates(facts: DataFrame, findings: DataFrame) -> DataFrame:
    """One frame of every aggregate the summary and the report need (``kind``, keys ``a``,
    ``b``, ``c``, counts ``n``, ``m``, ``rules``): findings by status, level and rule; the
    subscriptions and push subscriptions; the top projects, folders and subscriptions by
    violations. Each part is at most a few hundred rows; one ``collect`` runs them all."""

    def shape(frame: DataFrame, kind: str, **columns: Any) -> DataFrame:
        null = F.lit(None)
        return frame.select(
            F.lit(kind).alias("kind"),
            columns.get("a", null).cast("string").alias("a"),
            columns.get("b", null).cast("string").alias("b"),
            columns.get("c", null).cast("string").alias("c"),
            columns.get("n", F.lit(0)).cast("long").alias("n"),
            columns.get("m", F.lit(0)).cast("long").alias("m"),
            columns.get("rules", null).cast("array<string>").alias("rules"),
        )

    counts = findings.groupBy("status", "level", "rule_id").agg(F.count(F.lit(1)).alias("n"))
    is_push = F.col("push_endpoint").isNotNull() & (F.col("push_endpoint") != "")
    subscriptions = facts.agg(F.count(F.lit(1)).alias("n"), F.count(F.when(is_push, 1)).alias("m"))
    violations = findings.filter(F.col("status") == "violation")
    weight = F.sum(F.when(F.col("level") == "mandatory", 1).otherwise(0)).alias("mandatory")
    by_project = (
        violations.groupBy(F.coalesce("project_id", "project_number").alias("key"))
        .agg(F.count(F.lit(1)).alias("violations"), weight)
        .orderBy(F.desc("mandatory"), F.desc("violations"), "key")
        .limit(_TOP)
    )
    by_folder = (
        violations.select(
            F.explode(F.filter("ancestors", lambda a: a.startswith("folders/"))).alias("key")
        )
        .groupBy("key")
        .agg(F.count(F.lit(1)).alias("violations"))
        .orderBy(F.desc("violations"), "key")
        .limit(_TOP)
    )
    worst = (
        violations.groupBy("asset_name")
        .agg(
            F.count(F.lit(1)).alias("violations"),
            weight,
            F.array_sort(F.collect_set("rule_id")).alias("rules"),
        )
        .orderBy(F.desc("mandatory"), F.desc("violations"), "asset_name")
        .limit(_TOP)
    )
    parts = [
        shape(
            counts, "finding", a=F.col("status"), b=F.col("level"), c=F.col("rule_id"), n=F.col("n")
        ),
        shape(subscriptions, "subscriptions", n=F.col("n"), m=F.col("m")),
        shape(by_project, "project", a=F.col("key"), n=F.col("violations"), m=F.col("mandatory")),
        shape(by_folder, "folder", a=F.col("key"), n=F.col("violations")),
        shape(
            worst,
            "worst",
            a=F.col("asset_name"),
            n=F.col("violations"),
            m=F.col("mandatory"),
            rules=F.col("rules"),
        ),
    ]
    result = parts[0]
    for part in parts[1:]:
        result = result.unionByName(part)
    return result
