"""``quarantine/quarantined.jsonl``: every quarantined line with its file and line number.

A line's number is computed from the scan's per-split counts (:class:`~pushguard.audit.scan.Scan`,
a small table, broadcast): the lines in earlier splits of its file, plus its distance from the
first position of its split. No sort of the whole input, and no Spark job at all when nothing was
quarantined.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pushguard.audit.outputs import OutputFolder
from pushguard.audit.scan import Scan

QUARANTINE_FILE = "quarantine/quarantined.jsonl"
"""Where the quarantined lines go, under the output folder."""

_BLOCKS_DDL = "source string, block bigint, lines_before bigint, first_position bigint"


def split_offsets(scan: Scan) -> list[tuple[str, int, int, int]]:
    """``(source, block, lines_before, first_position)`` for every split of the input, files in
    order and splits in order within their file: ``lines_before`` counts the lines of the file's
    earlier splits."""
    offsets: list[tuple[str, int, int, int]] = []
    for source in sorted({source for source, _ in scan.blocks}):
        lines = 0
        for (name, block), (count, first) in sorted(scan.blocks.items()):
            if name == source:
                offsets.append((source, block, lines, first))
                lines += count
    return offsets


def located(spark: SparkSession, quarantined: DataFrame, scan: Scan) -> DataFrame:
    """The quarantined lines (:data:`~pushguard.audit.scan.QUARANTINE_COLUMNS`) as they are
    written: ``source`` (without ``file:``), ``line`` (1-based, within its file), ``reason`` and
    ``text``. Lazy."""
    blocks = spark.createDataFrame(split_offsets(scan), _BLOCKS_DDL)
    line = F.col("lines_before") + F.col("position") - F.col("first_position") + 1
    return quarantined.join(F.broadcast(blocks), on=["source", "block"], how="inner").select(
        F.regexp_replace("source", "^file:", "").alias("source"),
        line.alias("line"),
        "reason",
        "text",
    )


def write_quarantine(
    spark: SparkSession, quarantined: DataFrame, scan: Scan, out: OutputFolder
) -> None:
    """Replace ``quarantine/`` in ``out`` with :data:`QUARANTINE_FILE`: the :func:`located`
    lines ordered by file and line (their count is the summary's ``quarantined``), or an empty
    file when the scan quarantined nothing (then no Spark job runs).

    Raises:
        Exception: what Spark or Hadoop raise when the output folder cannot be written.
    """
    out.reset("quarantine")
    if not scan.quarantined:
        out.write_text(QUARANTINE_FILE, "")
        return
    lines = located(spark, quarantined, scan)
    out.single_file(
        lines.repartition(1).sortWithinPartitions("source", "line"), "json", QUARANTINE_FILE
    )
