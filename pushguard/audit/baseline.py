"""``pushguard audit --baseline PREVIOUS_OUT``: what changed since a previous audit.

The baseline is the ``--out`` folder of an earlier audit that completed (it holds
:data:`~pushguard.audit.publish.MARKER`) and whose rows carry ``finding_id``
(:mod:`pushguard.rules.identity`). After the run, before it is published:

- every row of ``findings.parquet`` and ``findings.jsonl`` gets ``change``: ``new`` (its
  ``finding_id`` is not in the baseline) or ``existing``;
- ``resolved.jsonl`` lists the baseline's violations and excepted findings whose ``finding_id``
  is gone (the baseline's rows as they were);
- ``summary.json`` gets ``baseline``: ``path``, ``new``, ``existing``, ``resolved`` (violations
  and excepted findings only; undecided rows are marked but not counted).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pushguard.audit.listing import report_rows
from pushguard.audit.outputs import OutputFolder
from pushguard.audit.publish import MARKER, OutputUsageError, local_path
from pushguard.audit.schemas import FINDINGS_COLUMNS
from pushguard.audit.summary import AuditSummary, BaselineCounts

COUNTED = ("violation", "excepted")
"""The statuses a baseline counts (new, existing, resolved)."""


class BaselineError(RuntimeError):
    """The baseline cannot be compared with (exit 2): the message says why."""


def check_baseline(baseline: str) -> None:
    """Before Spark starts: a local ``baseline`` is a completed audit's output folder.

    Raises:
        OutputUsageError: naming ``--baseline`` and what is wrong.
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


def _rows(frame: DataFrame) -> DataFrame:
    return frame.filter(F.col("status").isin(*COUNTED))


def compare(
    spark: SparkSession, out: OutputFolder, staging: str, baseline: str, summary: AuditSummary
) -> tuple[AuditSummary, list[dict[str, Any]]]:
    """Mark this run's rows in ``staging`` against ``baseline``, write ``resolved.jsonl`` and
    return ``summary`` with its ``baseline`` counts (the caller writes it) and the findings the
    report lists, new first (:func:`pushguard.audit.listing.report_rows`).

    Raises:
        BaselineError: the baseline's rows have no ``finding_id`` (an audit older than finding
            IDs).
    """
    previous = spark.read.parquet(f"{baseline.rstrip('/')}/findings.parquet")
    if "finding_id" not in previous.columns:
        raise BaselineError(
            f"--baseline {baseline}: its findings have no finding_id (written by a pushguard "
            "older than finding IDs); run the audit once without --baseline first"
        )
    current = spark.read.parquet(f"{staging}/findings.parquet")
    seen = previous.select("finding_id").distinct().withColumn("_seen", F.lit(True))
    marked = (
        current.join(seen, "finding_id", "left")
        .withColumn("change", F.when(F.col("_seen"), "existing").otherwise("new"))
        .select(*FINDINGS_COLUMNS, "change")
        .repartition(1)
        .sortWithinPartitions("asset_name", "rule_id", "message")
        .localCheckpoint(eager=True)  # read in full before the files it came from are replaced
    )
    resolved = (
        _rows(previous)
        .join(current.select("finding_id"), "finding_id", "left_anti")
        .select(*previous.columns)
        .repartition(1)
        .sortWithinPartitions("asset_name", "rule_id", "message")
        .localCheckpoint(eager=True)
    )
    out.single_file(marked, "parquet", "findings.parquet")
    out.single_file(marked, "json", "findings.jsonl")
    out.single_file(resolved, "json", "resolved.jsonl")
    changes = {
        row["change"]: row["count"] for row in _rows(marked).groupBy("change").count().collect()
    }
    counts = BaselineCounts(
        path=baseline,
        new=int(changes.get("new", 0)),
        existing=int(changes.get("existing", 0)),
        resolved=resolved.count(),
    )
    return summary.model_copy(update={"baseline": counts}), report_rows(marked)
