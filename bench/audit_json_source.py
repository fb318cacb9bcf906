"""What Spark's JSON data source gives for the lines the audit must quarantine, and whether its
rows map to the text source's lines (issue 39): the facts a JSON-source read of the audit rests
on, checked on this Spark, not assumed.

The audit reads lines through the text source (``_metadata.file_path``, ``file_block_start``,
``monotonically_increasing_id``: :func:`pushguard.audit.read.text_lines`). Issue 39 proposes to
read them through the JSON source instead, with the audit's identity schema
(:data:`pushguard.audit.schemas.IDENTITY`), ``mode=PERMISSIVE``, the corrupt-record column and
the strict options (:data:`pushguard.audit.parse._STRICT`), and to go back to the text source
only for the splits that hold quarantined lines, on the claim that *the n-th non-blank line of a
split is the n-th JSON-source row of it*. This script writes one file holding every kind of line
the audit tells apart (valid assets, blank and white-space lines, ``\\r\\n`` ends, a byte order
mark, invalid UTF-8, two values on a line, trailing data, ``NaN``, arrays, scalars, an identity
field of the wrong JSON type, a line deeper than Jackson's nesting limit), in every codec the
audit reads here (none, gzip, bzip2, deflate), split in several splits where the codec allows
it, and reads it both ways, with the same splits. It prints, per codec:

- for each kind of line, what the JSON source gives: how many rows, and whether they are
  corrupt (the corrupt-record column set);
- whether the claimed mapping holds: per split, the JSON source's rows against the text
  source's non-blank lines, in order, each JSON-source row compared with ``from_json`` of its
  text line (same schema and options);
- for each kind of line, whether each one-parse way tells "exactly one JSON object" as the two
  parses the audit made until issue 39's third pass did: the audit's own since then
  (:func:`pushguard.audit.parse._with_identity`), ``[LINE,{end}]`` with ``ancestors`` typed in
  the element (not exact), and ``try_parse_json`` (not exact: it takes the first value); and
  whether the audit's identity is the two-parse audit's, field for field.

    python bench/audit_json_source.py

Spark's JSON source: https://spark.apache.org/docs/latest/sql-data-sources-json.html ("Data
Source Option": ``mode``, ``columnNameOfCorruptRecord``, ``allowNonNumericNumbers``,
``allowSingleQuotes``, ``lineSep``).
"""

from __future__ import annotations

import bz2
import gzip
import tempfile
import zlib
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark's convention)
from pyspark.sql.types import ArrayType, StringType, StructField, StructType

from pushguard.audit.parse import _NONCE, _with_identity
from pushguard.audit.schemas import CORRUPT, IDENTITY

_STRICT = {"allowNonNumericNumbers": "false", "allowSingleQuotes": "false"}
_OPTIONS = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT, "lineSep": "\n", **_STRICT}
_SUB = '{"name":"//pubsub.googleapis.com/projects/p/subscriptions/s%d","asset_type":"t"}'

KINDS: list[tuple[str, bytes]] = [
    ("asset", (_SUB % 1).encode()),
    ("blank", b""),
    ("spaces", b"   \t "),
    ("carriage return only", b"\r"),
    ("asset, CRLF", (_SUB % 2).encode() + b"\r"),
    ("invalid UTF-8", b'{"name":"a\xff","asset_type":"t"}'),
    ("two values", b'{"name":"a","asset_type":"t"}{"name":"b"}'),
    ("trailing data", b'{"name":"a","asset_type":"t"} junk'),
    ("NaN", b'{"name":"a","asset_type":"t","x":NaN}'),
    ("single quotes", b"{'name':'a','asset_type':'t'}"),
    ("array of two objects", b'[{"name":"a","asset_type":"t"},{"name":"b","asset_type":"t"}]'),
    ("empty array", b"[]"),
    ("array of numbers", b"[1,2]"),
    ("number", b"42"),
    ("string", b'"text"'),
    ("null", b"null"),
    ("ancestors not an array", b'{"name":"a","asset_type":"t","ancestors":"x"}'),
    ("name an object", b'{"name":{"a":1},"asset_type":"t"}'),
    ("not JSON", b"this is not json"),
    ("cut short", b'{"name":"a","asset_'),
    ("nested 1200 deep", b'{"name":"a","x":' + b"[" * 1200 + b"]" * 1200 + b"}"),
    ("object then ]", b'{"name":"a","asset_type":"t"}] x'),
    ("two objects, comma", b'{"name":"a","asset_type":"t"},{"name":"b"}'),
    ("array of one object", b'[{"name":"a","asset_type":"t"}]'),
    ("update_time a number", b'{"name":"a","asset_type":"t","update_time":5}'),
    ("ancestors holding a number", b'{"name":"a","asset_type":"t","ancestors":[1,"x"]}'),
    ("duplicate key", b'{"name":"a","name":"b","asset_type":"t"}'),
    ("ancestors an object", b'{"name":"a","asset_type":"t","ancestors":{"x":1}}'),
    ("ancestors a number", b'{"name":"a","asset_type":"t","ancestors":5}'),
    ("ancestors null", b'{"name":"a","asset_type":"t","ancestors":null}'),
    ("ancestors empty", b'{"name":"a","asset_type":"t","ancestors":[]}'),
    ("ancestors nested", b'{"name":"a","asset_type":"t","ancestors":[["x"],{"y":1.50},null]}'),
    ("ancestors escaped", b'{"name":"a","asset_type":"t","ancestors":["\\u0041\\n","\\""]}'),
    ("end field in the line", b'{"name":"a","asset_type":"t","_pushguard_end":"x"}'),
    ("spaces around", b'  {"name":"a","asset_type":"t"} \t '),
    ("byte order mark", b'\xef\xbb\xbf{"name":"a","asset_type":"t"}'),
    ("asset, last", (_SUB % 3).encode()),
]
"""Each kind of line, as bytes without its ``\\n``."""

_BOM = b"\xef\xbb\xbf"


CODECS = {
    "none": ("json", lambda data: data),
    "gzip": ("json.gz", gzip.compress),
    "bzip2": ("json.bz2", bz2.compress),
    "deflate": ("json.deflate", zlib.compress),
}
"""Codec -> (extension, compress). Hadoop picks the codec by extension; bzip2 and uncompressed
files are split, the others read whole."""


def _place(frame: DataFrame) -> DataFrame:
    return frame.select(
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("position"),
        "*",
    )


def kinds_read(spark: SparkSession, path: str) -> dict[str, tuple[int, int]]:
    """Per kind: (rows, corrupt rows) the JSON source gives for one line of it alone."""
    found: dict[str, tuple[int, int]] = {}
    folder = Path(path)
    for n, (kind, line) in enumerate(KINDS):
        one = folder / f"kind-{n}.json"
        one.write_bytes(line + b"\n")
        rows = spark.read.schema(IDENTITY).options(**_OPTIONS).json(str(one)).collect()
        found[kind] = (len(rows), sum(1 for r in rows if r[CORRUPT] is not None))
    return found


def mapping(spark: SparkSession, path: str) -> tuple[int, int, int, list[str]]:
    """Per split of ``path``: the JSON source's rows against ``from_json`` of the text source's
    non-blank lines (the audit's blank: white space only), in order. Returns (splits, rows
    compared, splits whose row and line counts differ, the first rows that differ: a JSON-source
    row that is corrupt where ``from_json`` of the decoded line is not, invalid UTF-8, is not
    counted as a difference of place)."""
    json_rows = _place(spark.read.schema(IDENTITY).options(**_OPTIONS).json(path)).collect()
    text = _place(spark.read.options(lineSep="\n").text(path))
    text = text.filter(~F.col("value").rlike(r"^\s*$"))  # the audit's blank line
    parsed = text.select(
        "block", "position", F.from_json("value", IDENTITY, _OPTIONS).alias("id"), "value"
    ).collect()
    by_split: dict[int, tuple[list[Any], list[Any]]] = {}
    for row in json_rows:
        by_split.setdefault(row["block"], ([], []))[0].append(row)
    for row in parsed:
        by_split.setdefault(row["block"], ([], []))[1].append(row)
    problems: list[str] = []
    compared = uneven = 0
    for block, (rows, lines) in sorted(by_split.items()):
        rows.sort(key=lambda r: r["position"])
        lines.sort(key=lambda r: r["position"])
        uneven += len(rows) != len(lines)
        for row, line in zip(rows, lines, strict=False):
            compared += 1
            mine = {k: row[k] for k in IDENTITY.fieldNames()}
            theirs = line["id"].asDict() if line["id"] is not None else None
            if mine != theirs and not (mine[CORRUPT] and "\ufffd" in line["value"]):
                problems.append(f"split {block}: {mine['name']!r} vs {line['value'][:40]!r}")
    return len(by_split), compared, uneven, problems


def _table(spark: SparkSession, work: str, repeat: int) -> None:
    """The mapping per codec, with and without the array lines."""
    print(
        "\n| codec | lines | splits | rows compared | splits with uneven counts | first rows "
        "out of place |"
    )
    print("|---|---|---|---|---|---|")
    for arrays in (True, False):
        kinds = [k for k in KINDS if arrays or not k[1].startswith(b"[")]
        data = _BOM + b"\n".join(line for _ in range(repeat) for _, line in kinds) + b"\n"
        for codec, (extension, compress) in CODECS.items():
            path = Path(work) / f"export-{arrays}.{extension}"
            path.write_bytes(compress(data))
            splits, compared, uneven, problems = mapping(spark, str(path))
            shown = "; ".join(problems[:2]) or "none"
            label = "all kinds" if arrays else "all but arrays"
            print(f"| {codec} | {label} | {splits} | {compared} | {uneven} | {shown} |")


def _two_parses(value: Column) -> Column:
    """How the audit told "exactly one JSON object" before issue 39's third pass: ``from_json``
    of the line with the identity schema, then of ``[LINE,{"_pushguard_end":NONCE}]`` as an
    array of objects with that one field (exactly two elements, the second the nonce)."""
    identity = F.from_json(value, IDENTITY, _OPTIONS)
    wrapped = F.concat(F.lit("["), value, F.lit(f',{{"_pushguard_end":"{_NONCE}"}}]'))
    end = F.from_json(wrapped, ArrayType(StructType([StructField("_pushguard_end", StringType())])))
    ends = (F.size(end) == 2) & (end[1]["_pushguard_end"] == _NONCE)
    return F.coalesce(identity.isNotNull() & identity[CORRUPT].isNull() & ends, F.lit(False))


def one_parse(spark: SparkSession) -> dict[str, tuple[Any, ...]]:
    """Per kind of line: whether it is exactly one JSON object of the identity schema as the
    audit told it with two parses (:func:`_two_parses`), and as each one-parse way tells it:
    the audit's own (:func:`pushguard.audit.parse._with_identity`: the identity's fields and
    the end field from ``[LINE,{end}]``, ``ancestors`` as text converted on its own), the same
    without that conversion (``ancestors`` typed in the array element: not exact), and
    ``try_parse_json`` (Spark 4: what it accepts as one JSON object); and whether the audit's
    identity equals the identity the two-parse audit read (``from_json`` of the line)."""
    lines = spark.createDataFrame([(k, bytearray(v)) for k, v in KINDS], "kind string, b binary")
    frame = lines.select("kind", F.col("b").cast("string").alias("value"))
    end = StructField("_pushguard_end", StringType())
    wrapped = F.concat(F.lit("["), F.col("value"), F.lit(f',{{"{end.name}":"{_NONCE}"}}]'))
    both = F.from_json(wrapped, ArrayType(StructType([*IDENTITY.fields, end])), _OPTIONS)
    typed = (
        (F.size(both) == 2)
        & both[0].isNotNull()
        & both[0][CORRUPT].isNull()
        & both[0][end.name].isNull()
        & (both[1][end.name] == _NONCE)
    )
    variant = F.lit(None)
    if hasattr(F, "try_parse_json"):
        variant = F.schema_of_variant(F.try_parse_json("value")).startswith("OBJECT")
    audit = _with_identity(frame, F.lit(True))
    rows = audit.select(
        "kind",
        _two_parses(F.col("value")),
        "one",
        F.coalesce(typed, F.lit(False)),
        F.coalesce(variant, F.lit(False)),
        F.col("id").eqNullSafe(F.from_json("value", IDENTITY, _OPTIONS)),
    ).collect()
    return {row[0]: tuple(row[1:]) for row in rows}


def main() -> None:
    """Write the file in each codec, read it both ways, print what each kind gives and whether
    the mapping holds."""
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.files.maxPartitionBytes", "4096")  # several splits per file
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory(prefix="pushguard-json-source-") as work:
        print("| line | JSON source rows (corrupt) |")
        print("|---|---|")
        for kind, (rows, corrupt) in kinds_read(spark, work).items():
            print(f"| {kind} | {rows} ({corrupt}) |")
        _table(spark, work, 40)
    print(
        "\n| line | one JSON object: two parses | the audit: one parse | one parse, ancestors "
        "typed | try_parse_json | the same identity |"
    )
    print("|---|---|---|---|---|---|")
    for kind, (two, *once, same) in one_parse(spark).items():
        shown = [f"{v}{' (differs)' if v != two else ''}" for v in once]
        print(f"| {kind} | {two} | {' | '.join(shown)} | {same} |")
    spark.stop()


if __name__ == "__main__":
    main()
