"""Where the audit's scan stands against other ways of reading the same export (issue 21): one
``local[*]`` session with default settings, each read timed as one Spark job that touches every
line (``noop`` sink, or the scan's own count), warm-up first, rounds alternated.

- **baseline**: the issue's Spark parse baseline without its Parquet write:
  ``spark.read.schema("name string, asset_type string, resource struct<data string>").json``,
  subscriptions kept;
- **json identity**: Spark's JSON source with the audit's identity schema and the corrupt-record
  column (what a JSON-source read of the identity would cost);
- **text + from_json identity**: the text source and ``from_json`` with the same schema (how the
  audit reads the identity today);
- **audit lines**: the audit's text read alone (file, split, position, text:
  :func:`pushguard.audit.read.read_lines`);
- **+ identity and envelope**, **+ payloads**, **+ reasons**: the audit's parse, step by step
  (the identity of every line and the envelope of the needed types; their typed payloads; the
  quarantine reasons, blank lines and the wrong-type suspicion:
  :func:`pushguard.audit.parse.parse_lines`);
- **audit scan**: the audit's whole pass (:func:`pushguard.audit.parse.parse_lines`,
  :func:`pushguard.audit.scan.stored_lines`, :meth:`pushguard.audit.scan.Scan.of`): identity,
  envelope and payloads of the needed types, reasons, counts, and the kept lines.

    python bench/audit_read_bench.py /tmp/exports/export-1000000 --rounds 2

Prints one row per read: the median seconds and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark's convention)
from pyspark.sql.types import ArrayType, StringType, StructField, StructType

from pushguard.audit.parse import (
    DEFAULT_MAX_LINE_BYTES,
    _with_envelope,
    _with_payloads,
    parse_lines,
)
from pushguard.audit.read import discover, read_lines
from pushguard.audit.scan import Scan, stored_lines
from pushguard.audit.schemas import CORRUPT, IDENTITY, SUBSCRIPTION

BASELINE_SCHEMA = "name string, asset_type string, resource struct<data string>"


def reads(spark: SparkSession, path: str) -> dict[str, Callable[[], object]]:
    """The reads to time, each a function that runs one job over every line."""
    files = [str(p) for p in sorted(Path(path).iterdir()) if not p.name.startswith((".", "_"))]

    def baseline() -> object:
        frame = spark.read.schema(BASELINE_SCHEMA).json(files)
        frame.filter(F.col("asset_type") == SUBSCRIPTION).write.format("noop").mode(
            "overwrite"
        ).save()
        return None

    def json_identity() -> object:
        frame = spark.read.schema(IDENTITY).option("columnNameOfCorruptRecord", CORRUPT).json(files)
        frame.filter(F.col("asset_type") == SUBSCRIPTION).write.format("noop").mode(
            "overwrite"
        ).save()
        return None

    def text_identity() -> object:
        frame = spark.read.text(files).select(
            F.from_json("value", IDENTITY, {"columnNameOfCorruptRecord": CORRUPT}).alias("id")
        )
        frame.filter(F.col("id.asset_type") == SUBSCRIPTION).write.format("noop").mode(
            "overwrite"
        ).save()
        return None

    inputs = discover(spark, [path])
    prototypes = _prototypes(spark, files)

    def noop(frame: DataFrame) -> None:
        frame.write.format("noop").mode("overwrite").save()

    def steps() -> dict[str, Callable[[], object]]:
        limit = DEFAULT_MAX_LINE_BYTES
        return {
            "audit lines": lambda: noop(read_lines(spark, inputs)),
            "+ identity and envelope": lambda: noop(
                _with_envelope(read_lines(spark, inputs), limit)
            ),
            "+ payloads": lambda: noop(
                _with_payloads(_with_envelope(read_lines(spark, inputs), limit))
            ),
            "+ reasons": lambda: noop(parse_lines(read_lines(spark, inputs), limit)),
        }

    def audit_scan() -> object:
        lines = read_lines(spark, inputs)
        stored = stored_lines(parse_lines(lines)).localCheckpoint(eager=False)
        scan = Scan.of(stored)
        return scan.read

    return {
        "baseline": baseline,
        "json identity": json_identity,
        "text + from_json identity": text_identity,
        **steps(),
        "audit scan": audit_scan,
        **prototypes,
    }


_NONCE = "5f0c1e9a"
_WRAPPED = ArrayType(StructType([*IDENTITY.fields, StructField("_end", StringType())]))


def _prototypes(spark: SparkSession, files: list[str]) -> dict[str, Callable[[], object]]:
    """Issue 39's prototypes of the next step, each one job over every line (two for the
    JSON-source read, which still needs the text source's line counts):

    - **text: identity + end check, two parses**: how the audit tells "exactly one JSON
      object" today (``from_json`` of the line, then of ``[LINE,{end}]``:
      :func:`pushguard.audit.parse._ends_after_one_value`);
    - **text: identity + end check, one parse**: one ``from_json`` of ``[LINE,{"_end":NONCE}]``
      with an array of the identity schema plus ``_end`` (its cost only: it is not exact, a
      field of the wrong JSON type inside an array element, ``"ancestors":"x"``, reads as null
      instead of failing the record, as issue 39's note records);
    - **text: lines and blank lines per split**: the counts a JSON-source read still needs
      from the text source (blank lines leave no JSON-source row);
    - **JSON source identity + text counts**: the issue's proposed read, both jobs.
    """
    strict = {"allowNonNumericNumbers": "false", "allowSingleQuotes": "false"}
    options = {"columnNameOfCorruptRecord": CORRUPT, **strict}

    def noop(frame: DataFrame) -> None:
        frame.write.format("noop").mode("overwrite").save()

    def two_parses() -> object:
        text = spark.read.text(files)
        wrapped = F.concat(F.lit("["), F.col("value"), F.lit(f',{{"_end":"{_NONCE}"}}]'))
        end = F.from_json(wrapped, ArrayType(StructType([StructField("_end", StringType())])))
        noop(
            text.select(
                F.from_json("value", IDENTITY, options).alias("id"),
                ((F.size(end) == 2) & (end[1]["_end"] == _NONCE)).alias("one"),
            ).filter(F.col("one") & (F.col("id.asset_type") == SUBSCRIPTION))
        )
        return None

    def one_parse() -> object:
        text = spark.read.text(files)
        wrapped = F.concat(F.lit("["), F.col("value"), F.lit(f',{{"_end":"{_NONCE}"}}]'))
        both = F.from_json(wrapped, _WRAPPED, strict)
        noop(
            text.select(
                both[0].alias("id"),
                ((F.size(both) == 2) & (both[1]["_end"] == _NONCE)).alias("one"),
            ).filter(F.col("one") & (F.col("id.asset_type") == SUBSCRIPTION))
        )
        return None

    def counts() -> object:
        text = spark.read.options(lineSep="\n").text(files)
        return (
            text.groupBy(F.col("_metadata.file_path"), F.col("_metadata.file_block_start"))
            .agg(F.count(F.lit(1)), F.sum(F.col("value").rlike(r"^\s*$").cast("int")))
            .collect()
        )

    def json_read() -> object:
        frame = spark.read.schema(IDENTITY).options(mode="PERMISSIVE", **options).json(files)
        noop(frame.filter(F.col("asset_type") == SUBSCRIPTION))
        return counts()

    found = {
        "text: identity + end check, two parses": two_parses,
        "text: identity + end check, one parse": one_parse,
        "text: lines and blank lines per split": counts,
        "JSON source identity + text counts": json_read,
    }
    return found


def main() -> None:
    """Time each read ``--rounds`` times (after one warm-up of each) and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("export", help="a folder of newline-delimited export files")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", nargs="*", help="time only these reads (and the baseline)")
    options = parser.parse_args()
    spark = (
        SparkSession.builder.master("local[*]")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    timed = reads(spark, options.export)
    if options.only:
        timed = {k: v for k, v in timed.items() if k == "baseline" or k in options.only}
    for read in timed.values():
        read()  # warm-up: JIT, file listing, the Python worker
    times: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(options.rounds):
        for name, read in timed.items():
            started = time.perf_counter()
            read()
            times[name].append(time.perf_counter() - started)
    base = statistics.median(times["baseline"])
    print("| read | median s | / baseline |")
    print("|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {median / base:.2f}x |")
    spark.stop()


if __name__ == "__main__":
    main()
