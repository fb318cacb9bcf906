"""What the asset copies' ranking costs, and what a one-snapshot fast path would save (issue 39).

The audit ranks every copy of every asset it uses (:func:`pushguard.audit.snapshots.rank_copies`:
the exports' coverage, the deciding snapshot per key, a window per key over the copies), so that
several exports can be audited together. When the inputs are **one snapshot** (every export of
one read time, or one export) and **no asset is listed twice**, every copy is evaluated and the
ranking decides nothing: its rules 4 to 6 need a second copy of a key or a second snapshot. This
bench prices that case on one warm ``local[*]`` session: the scanned lines of an export are
parsed and their copies held once (as the audit holds them), then each way is timed as the
query that computes the ranked copies (a checkpoint, as the audit keeps them) and the
ambiguity check the audit runs next, rounds alternated after a warm-up:

- **ranked, as the audit does**: :func:`~pushguard.audit.snapshots.rank_copies` with the
  export's sources;
- **one snapshot, fast path (prototype)**: one aggregation that tells whether any key has two
  copies (the guard: the fast path applies only when none has; it is part of the time), then
  the same columns without the ranking: ``export``/``export_time`` from the sources, ``snap``,
  ``fate`` evaluated, ``newest`` true. Checked here to give every copy the fate the ranking
  gives.

    python bench/audit_copies_bench.py /tmp/exports/export-1000000 --rounds 2

Prints one row per way: the median seconds, and whether the fast path's fates equal the
ranking's (it is a prototype: the audit does not take it).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from audit_bench import READ_TIME  # this folder's: a script's own folder is on sys.path
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark's convention)

from pushguard.audit.command import session
from pushguard.audit.job import _adaptive_partitions, _Persisted
from pushguard.audit.join import copies_of, split_assets
from pushguard.audit.parse import DEFAULT_MAX_LINE_BYTES, parse_lines
from pushguard.audit.read import discover, read_lines
from pushguard.audit.scan import Scan, assets_and_quarantine, stored_lines
from pushguard.audit.snapshots import (
    EVALUATED,
    _snapshot,
    ambiguous_examples,
    rank_copies,
    sources_frame,
)


def one_snapshot(copies: DataFrame, sources: DataFrame) -> DataFrame | None:
    """The ranked copies' columns without the ranking, or None when some key has two copies
    (then only the ranking can decide). The inputs must be one snapshot (the caller's to know,
    from the sources' read times)."""
    twice = copies.groupBy("kind", "key").count().filter(F.col("count") > 1).limit(1).collect()
    if twice:
        return None
    placed = copies.join(F.broadcast(sources), on="source", how="left").withColumn(
        "export", F.coalesce("export", "source")
    )
    return (
        placed.withColumn("snap", _snapshot())
        .withColumn("fate", F.lit(EVALUATED))
        .withColumn("newest", F.lit(True))
    )


def main() -> None:
    """Time the two ways ``--rounds`` times (after one warm-up) and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("export", help="a folder of newline-delimited export files")
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    spark = session(None)  # the audit's own session and settings
    spark.sparkContext.setLogLevel("ERROR")
    _adaptive_partitions(spark)
    path = str(Path(options.export))
    read_time = datetime.fromisoformat(READ_TIME.replace("Z", "+00:00"))
    inputs = discover(spark, [path], DEFAULT_MAX_LINE_BYTES, {path: read_time})
    stored = stored_lines(parse_lines(read_lines(spark, inputs), DEFAULT_MAX_LINE_BYTES)).cache()
    if Scan.of(stored).suspect:
        raise SystemExit("the export has suspect lines: this bench reads clean exports only")
    assets, _ = assets_and_quarantine(stored, None)
    held = _Persisted(spark).hold(copies_of(*split_assets(assets)))  # as the audit holds them
    sources = sources_frame(spark, inputs.sources, inputs.timed)

    def ranked() -> DataFrame:
        kept = rank_copies(held, sources).localCheckpoint(eager=True)
        ambiguous_examples(kept)
        return kept

    def fast() -> DataFrame:
        found = one_snapshot(held, sources)
        assert found is not None, "some key has two copies: the fast path does not apply"
        kept = found.localCheckpoint(eager=True)
        ambiguous_examples(kept)
        return kept

    ways: dict[str, Callable[[], DataFrame]] = {
        "ranked, as the audit does": ranked,
        "one snapshot, fast path (prototype)": fast,
    }
    results = {name: way() for name, way in ways.items()}  # warm-up
    fates = [
        frame.select("source", "block", "position", "kind", "fate", "newest", "snap", "export")
        for frame in results.values()
    ]
    same = fates[0].exceptAll(fates[1]).isEmpty() and fates[1].exceptAll(fates[0]).isEmpty()
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(options.rounds):
        for name, way in ways.items():
            started = time.perf_counter()
            way()
            times[name].append(time.perf_counter() - started)
    print(f"copies: {held.count():,}; the same fates, snapshots and exports: {same}")
    print("| way | median s |")
    print("|---|---|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.2f} |")
    spark.stop()


if __name__ == "__main__":
    main()
