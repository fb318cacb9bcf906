"""``run_audit``: the whole audit, from export paths to the output folder.

One pass over the input (:class:`~pushguard.audit.scan.Scan`): every line is parsed once
(:func:`~pushguard.audit.parse.parse_lines`) and kept narrow
(:func:`~pushguard.audit.scan.stored_lines`); the same job counts lines per split, asset type and
quarantine reason. The few lines whose string fields look like other JSON types are checked
exactly afterwards, on their own (:func:`~pushguard.audit.scan.type_changes`). The joins read the
kept assets (no hierarchy collect when the export carries ``ancestors``); the rules run once on
the executors (``mapInArrow``), their findings kept before they are sorted and written;
the summary and the report come from one collect of small aggregates
(:mod:`pushguard.audit.aggregates`). Shuffle partitions are sized by adaptive query execution on
every master. Every frame read more than once is kept as a checkpoint (:class:`_Persisted`),
so later plans start from its partitions, not from its lineage. What comes back to the driver
does not grow with the lines: counts per split, type and reason, and fixed-size aggregates.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from pushguard.audit.aggregates import collect_aggregates, coverage_counts
from pushguard.audit.evaluate import arrow_evaluator, plan
from pushguard.audit.exception_use import exception_use
from pushguard.audit.guardrails.counts import GuardrailsSummary
from pushguard.audit.join import AssetCopies, asset_copies, subscription_facts
from pushguard.audit.listing import report_rows
from pushguard.audit.long_lines import left_out
from pushguard.audit.managed import managed_rows, stack_findings, stacks_counts
from pushguard.audit.options import FAIL_ON, AuditOptions, AuditResult
from pushguard.audit.outputs import OutputFolder
from pushguard.audit.parse import parse_lines
from pushguard.audit.progress import Progress
from pushguard.audit.quarantine import write_quarantine
from pushguard.audit.read import InputError, Inputs, discover, file_key, read_lines
from pushguard.audit.report import render
from pushguard.audit.scan import (
    LeaveOut,
    Scan,
    assets_and_quarantine,
    stored_lines,
    type_changes,
)
from pushguard.audit.schemas import FINDINGS_COLUMNS, FINDINGS_DDL
from pushguard.audit.snapshots import (
    ambiguity_message,
    ambiguous_examples,
    shown_time,
    snapshot_frame,
    snapshot_rows,
    sources_frame,
)
from pushguard.audit.stacks import (
    RecordCounts,
    check_records,
    read_records,
    state_files,
    used_records,
)
from pushguard.audit.summarise import offenders, summarise
from pushguard.audit.summary import ExportRead, SnapshotCounts

__all__ = ["FAIL_ON", "AuditOptions", "AuditResult", "run_audit"]

LOG = logging.getLogger("pushguard.audit")


class _Persisted:
    """The frames a run keeps, each a checkpoint that cuts its lineage (but the scanned lines:
    :meth:`cache`), released in reverse order when the run ends.

    A kept frame is read again by later queries. Persisting it (``persist``) would keep its whole
    logical plan under every later query: the parse's large expressions and the joins were
    analysed, optimised and matched against the cache again for each of them (about 10 s of
    driver time per run, whatever the export's size). A checkpoint
    (https://spark.apache.org/docs/latest/api/python/reference/pyspark.sql/api/pyspark.sql.DataFrame.localCheckpoint.html)
    replaces the plan with its computed partitions, so later plans start from a leaf.

    Where the partitions are kept: in the executors' block managers (memory, then disk: a local
    checkpoint), unless the application set a checkpoint folder (``spark.checkpoint.dir``, or
    ``SparkContext.setCheckpointDir``): then in that folder (a reliable checkpoint), which
    survives the loss of an executor (preemptible workers) at the cost of writing it. A local
    checkpoint whose executor is lost fails the run (exit 2); it is never recomputed wrongly.
    """

    def __init__(self, spark: SparkSession) -> None:
        self._context = spark.sparkContext._jsc.sc()
        self._jvm = spark.sparkContext._jvm
        self._reliable = self._context.getCheckpointDir().isDefined()
        self._checkpoints: list[DataFrame] = []
        self._cached: list[DataFrame] = []

    def keep(self, frame: DataFrame, eager: bool = False) -> DataFrame:
        """``frame`` as a checkpoint (lazy: filled by the first job that reads it, with adaptive
        query execution its shuffles and broadcasts run now; ``eager``: computed now, one job),
        remembered for :meth:`release`."""
        if self._reliable:
            kept = frame.checkpoint(eager=eager)
        else:
            # memory, then disk: RDD.localCheckpoint's default (Spark 3.5 and 4)
            kept = frame.localCheckpoint(eager=eager)
        self._checkpoints.append(kept)
        return kept

    def hold(self, frame: DataFrame) -> DataFrame:
        """``frame`` as a checkpoint computed now (one job), in one partition per core, for a
        frame that several stages of the next query read at once.

        Adaptive execution runs a query's independent stages as concurrent jobs; a frame kept
        lazily (:meth:`keep`) under them was computed by each (the asset copies: six stages,
        each digesting every copy, bench/RESULTS.md, issue 39's third pass). The copies are a
        union of three forms of the scanned lines, so three times the input's splits in
        partitions, most nearly empty: they are coalesced (no shuffle) to Spark's default
        parallelism, "the total number of cores on all executor nodes or 2, whichever is
        larger" (``spark.default.parallelism``,
        https://spark.apache.org/docs/latest/configuration.html#execution-behavior)."""
        parallelism = self._context.defaultParallelism()
        return self.keep(frame.coalesce(parallelism), eager=True)

    def cache(self, frame: DataFrame) -> DataFrame:
        """``frame`` persisted in Spark's columnar cache (memory, then disk; lazy), for the one
        frame as large as the input: the scanned lines. Compressed by column, it takes a
        fraction of a checkpoint's rows (10⁷ lines: a checkpoint of them took the JVM to
        9.7 GiB); its lineage stays, so only the few frames planned over it see its plan."""
        cached = frame.persist(StorageLevel.MEMORY_AND_DISK)
        self._cached.append(cached)
        return cached

    def release(self) -> None:
        """Drop the blocks of every kept and cached frame, the last kept first, and delete the
        files of the reliable checkpoints (:meth:`_delete`).

        Through ``SparkContext.unpersistRDD``, as Spark's own cleaner does: ``RDD.unpersist``
        would log a warning per local checkpoint that its lineage cannot be recomputed, which
        is the point of it."""
        context = self._context
        for frame in reversed(self._checkpoints):
            rdd = frame._jdf.queryExecution().logical().rdd()
            context.unpersistRDD(rdd.id(), False)
            if self._reliable:
                self._delete(rdd.getCheckpointFile())
        for frame in reversed(self._cached):
            frame.unpersist()

    def _delete(self, checkpoint_file: Any) -> None:
        """Delete a reliable checkpoint's folder (a Scala ``Option[String]``; nothing when the
        frame was never computed): it holds the inventory's rows as they were read, secrets and
        endpoint tokens unredacted, so nothing of it outlives the run."""
        if checkpoint_file.isDefined():
            jvm: Any = self._jvm
            path = jvm.org.apache.hadoop.fs.Path(checkpoint_file.get())
            path.getFileSystem(self._context.hadoopConfiguration()).delete(path, True)


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


def run_audit(
    spark: SparkSession, options: AuditOptions, progress: Progress | None = None
) -> AuditResult:
    """Run the audit and write ``findings.parquet``, ``findings.jsonl``, ``evaluated.parquet``,
    ``quarantine/``, ``summary.json`` and ``report.html`` (and ``guardrails.jsonl`` with
    ``options.guardrails``) under ``options.out``. ``progress`` is
    told each phase (default: silent).

    Raises:
        InputError: an export path is missing or empty, or a BigQuery input cannot be read.
        OSError: the output folder cannot be created.
    """
    progress = progress or Progress()
    _adaptive_partitions(spark)
    clock = _Phases()
    progress.phase("reading")
    inputs = discover(spark, options.paths, options.max_line_bytes, options.snapshot_times)
    lines = read_lines(spark, inputs)
    persisted = _Persisted(spark)
    try:
        stacks = _stacks(spark, options, persisted, progress)  # --stacks: read first, fail fast
        stored = persisted.cache(stored_lines(parse_lines(lines, options.max_line_bytes)))
        clock.done("discover")
        scan, assets, quarantined = _scan(
            stored, persisted, progress, _leave_out(inputs, options.max_line_bytes)
        )
        progress.phase("joining")
        sources = sources_frame(spark, inputs.sources, inputs.timed)
        copies = asset_copies(assets, persisted.keep, sources, hold=persisted.hold)
        _unambiguous(copies)
        facts = persisted.keep(
            subscription_facts(
                copies, options.include_dry_run, derive_ancestors=scan.without_ancestors
            )
        )
        managed = None
        if stacks is not None:  # --stacks: the match and its findings, beside the rules'
            managed = persisted.keep(managed_rows(stacks[0], facts, copies))
        clock.done("parse and join")
        findings, ordered = _evaluate(facts, options, persisted, progress, managed)
        out = OutputFolder(spark, options.out)
        progress.phase("writing findings")
        out.single_file(ordered, "parquet", "findings.parquet")
        out.single_file(ordered, "json", "findings.jsonl")
        write_evaluated(facts, out)
        clock.done("evaluate and write findings")
        guardrails = _guardrails(
            options,
            copies=copies,
            facts=facts,
            out=out,
            persisted=persisted,
            progress=progress,
            clock=clock,
        )
        progress.phase("writing quarantine")
        write_quarantine(spark, quarantined, scan, out)
        clock.done("quarantine")
        return _summarise(
            scan=scan,
            copies=copies,
            facts=facts,
            findings=findings,
            inputs=inputs,
            options=options,
            out=out,
            clock=clock,
            progress=progress,
            stacks=(managed, stacks[1]) if managed is not None and stacks is not None else None,
            guardrails=guardrails,
        )
    finally:
        persisted.release()


EVALUATED = "evaluated.parquet"
"""The subscriptions the rules ran on (``asset_name``, sorted): what a later run compared with
this one as its ``--baseline`` (:mod:`pushguard.audit.baseline`) needs to tell a finding fixed
from one not rechecked."""


def write_evaluated(facts: DataFrame, out: OutputFolder) -> None:
    """Write :data:`EVALUATED` from the joined ``facts`` (one row per subscription; a
    checkpoint already computed: one task reads its partitions, no shuffle)."""
    names = facts.select("asset_name").coalesce(1).sortWithinPartitions("asset_name")
    out.single_file(names, "parquet", EVALUATED)


def _guardrails(
    options: AuditOptions,
    *,
    copies: AssetCopies,
    facts: DataFrame,
    out: OutputFolder,
    persisted: _Persisted,
    progress: Progress,
    clock: _Phases,
) -> GuardrailsSummary | None:
    """``--guardrails``: the custom constraints over the subscriptions, ``guardrails.jsonl``
    written (:mod:`pushguard.audit.guardrails.spark`); ``None`` without it."""
    if options.guardrails is None:
        return None
    progress.phase("evaluating guardrails")
    # the guardrails extra (celpy) is imported only when asked for
    from pushguard.audit.guardrails.spark import write_guardrails  # noqa: PLC0415

    summary = write_guardrails(options.guardrails, copies, facts, out, persisted.keep)
    clock.done("guardrails")
    return summary


def _scan(
    stored: DataFrame, persisted: _Persisted, progress: Progress, leave_out: LeaveOut
) -> tuple[Scan, DataFrame, DataFrame]:
    """The pass over the input, the files it leaves out (``leave_out``), the exact checks of
    its suspect lines (persisted), and the assets and quarantined lines after them
    (:func:`~pushguard.audit.scan.assets_and_quarantine`)."""
    progress.phase("parsing")
    scan = Scan.of(stored, leave_out)  # the one pass over the input: parse, persist, count
    if scan.left_out:
        stored = stored.filter(~F.col("source").isin(*sorted(scan.left_out)))
    changes = None
    if scan.suspect:
        progress.phase("checking JSON types")
        changes = persisted.keep(type_changes(stored))
        scan.apply(changes)
    assets, quarantined = assets_and_quarantine(stored, changes)
    return scan, assets, quarantined


def _unambiguous(copies: AssetCopies) -> None:
    """Stop before anything is evaluated when the newest copy of some asset cannot be told
    (:mod:`pushguard.audit.snapshots`, rule 6).

    Raises:
        InputError: naming the first ambiguous assets and their exports."""
    examples, count = ambiguous_examples(copies.ranked)
    if count:
        named = [
            {**e, "exports": [x.removeprefix("file:") for x in e["exports"]]} for e in examples
        ]
        raise InputError(ambiguity_message(named, count))


def _leave_out(inputs: Inputs, max_line_bytes: int) -> LeaveOut:
    """The newline-delimited files to leave out after the scan, each recorded in
    ``inputs.unreadable`` with its reason (:func:`pushguard.audit.long_lines.left_out`)."""

    def decide(read_bytes: Mapping[str, int], too_long: set[str]) -> set[str]:
        keyed: dict[str, int] = {}
        for source, count in read_bytes.items():
            keyed[file_key(source)] = keyed.get(file_key(source), 0) + count
        long_keys = {file_key(source) for source in too_long}
        reasons = left_out(inputs.line_files, keyed, long_keys, max_line_bytes)
        for key, reason in reasons.items():
            name = inputs.line_files[key].name
            inputs.unreadable[name] = reason
            inputs.ndjson.remove(name)
        return {source for source in read_bytes if file_key(source) in reasons}

    return decide


def _stacks(
    spark: SparkSession, options: AuditOptions, persisted: _Persisted, progress: Progress
) -> tuple[DataFrame, RecordCounts] | None:
    """``--stacks``: the states' records (persisted) and their counts, or ``None`` without
    ``--stacks``.

    Raises:
        StacksInputError: a path or a state cannot be read (:mod:`pushguard.audit.stacks`)."""
    if not options.stacks:
        return None
    progress.phase("reading stacks")
    files = state_files(options.stacks)
    records = read_records(spark, files, persisted.keep)
    counts = check_records(records, files)
    return used_records(records, counts.choice.used), counts


def _evaluate(
    facts: DataFrame,
    options: AuditOptions,
    persisted: _Persisted,
    progress: Progress,
    managed: DataFrame | None = None,
) -> tuple[DataFrame, DataFrame]:
    """The findings of the rules over ``facts`` (:data:`~pushguard.audit.schemas.FINDINGS_DDL`,
    persisted: the rules run once), with those of ``--stacks`` over ``managed``
    (:mod:`pushguard.audit.managed`), and the same rows ordered in one partition for writing
    (persisted too)."""
    progress.phase("evaluating")
    evaluator = arrow_evaluator(plan(options.rule_levels(), options.settings), options.run_time)
    found = facts.mapInArrow(evaluator, FINDINGS_DDL)
    if managed is not None:
        found = found.unionByName(stack_findings(managed, options))
    findings = persisted.keep(found)
    # one partition, sorted: the findings are few (a few per subscription) and written as
    # one file; no range-partitioning sort (its sampling pass would be one more job)
    ordered = persisted.keep(
        findings.repartition(1)
        .sortWithinPartitions("asset_name", "rule_id", "message")
        .select(*FINDINGS_COLUMNS)
    )
    return findings, ordered


def _summarise(
    *,
    scan: Scan,
    copies: AssetCopies,
    facts: DataFrame,
    findings: DataFrame,
    inputs: Inputs,
    options: AuditOptions,
    out: OutputFolder,
    clock: _Phases,
    progress: Progress,
    stacks: tuple[DataFrame, RecordCounts] | None = None,
    guardrails: GuardrailsSummary | None = None,
) -> AuditResult:
    """Write ``report.html`` and ``summary.json`` (with the timings) from one collect of the
    aggregates over the persisted ``facts``, ``findings`` and asset ``copies``, and the
    ``guardrails`` counts when given."""
    progress.phase("summarising")
    resources, policies = copies.newest()
    read = coverage_counts(resources, policies, copies.perimeters, facts)
    snapshots = snapshot_frame(copies.ranked, copies.absent())
    aggregates = collect_aggregates(facts, findings, copies.superseded(), read, snapshots)
    summary = summarise(scan=scan, aggregates=aggregates, inputs=inputs, options=options)
    summary = summary.model_copy(update={"snapshots": _snapshot_counts(aggregates.snapshots)})
    summary = summary.model_copy(update={"exceptions": exception_use(findings, facts, options)})
    if stacks is not None:
        summary = summary.model_copy(
            update={"stacks": stacks_counts(*stacks[:1], findings, stacks[1])}
        )
    summary = summary.model_copy(update={"guardrails": guardrails})
    tables = offenders(aggregates)
    out.write_text("report.html", render(summary, tables, report_rows(findings)))
    clock.done("summary and report")
    summary = summary.model_copy(update={"timings_s": dict(clock.timings)})
    out.write_text("summary.json", summary.to_json())
    return AuditResult(summary, tables)


def _snapshot_counts(collected: list[Row]) -> SnapshotCounts:
    """``summary.json``'s ``snapshots``, from the rows of
    :func:`~pushguard.audit.snapshots.snapshot_frame` collected with the aggregates."""
    rows, absent = snapshot_rows(collected)
    exports: dict[str, ExportRead] = {}
    for row in rows:
        name = row["export"].removeprefix("file:")
        read_time = shown_time(row["export_time"])
        known = exports.get(name) or ExportRead(export=name, read_time=read_time)
        scopes = {**known.scopes, row["kind"]: row["scope"]}
        exports[name] = known.model_copy(update={"scopes": scopes})
    return SnapshotCounts(exports=list(exports.values()), not_in_newest_export_by_type=absent)


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
