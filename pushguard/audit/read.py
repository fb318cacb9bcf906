"""Finding the export files and reading them into one row per line, with its source and position.

Two file shapes are read, each after decompression (Hadoop's codecs, chosen by the file's
extension: ``.gz``, ``.bz2``, ``.deflate``, ``.zst``, ``.lz4``...):

- **newline-delimited JSON** (Cloud Asset Inventory exports to Cloud Storage): read by Spark's
  text source, split across tasks; every line is its own matter, whatever line 1 holds; each row
  keeps its file (``_metadata.file_path``), the start of its split (``_metadata.file_block_start``)
  and a monotonically increasing ID, from which a quarantined line's line number is computed
  (:func:`pushguard.audit.quarantine.located`);
- **one JSON document** per file (API dumps, ``gcloud asset list --format=json``: an array of
  assets, or one pretty-printed asset): read whole on an executor, one row per element; its "line"
  is the element's position (1-based). :func:`file_shape` tells the two apart from the file's
  first lines (:data:`DOCUMENT`).

Hidden and marker files (names starting with ``.`` or ``_``: ``_SUCCESS``, ``.crc``), which
Hadoop and Spark skip, are skipped too and listed (:attr:`Inputs.skipped_files`).

In the per-asset-type layout (``PREFIX/<service>.googleapis.com/<Type>/<shard>``, Cloud Storage
exports with ``per_asset_type``), only the folders of :data:`~pushguard.audit.schemas.NEEDED_TYPES`
are listed and read; the others are reported as skipped.

Paths go through Hadoop's ``FileSystem``, so ``gs://`` works wherever the Cloud Storage connector
is on Spark's classpath.

An input written ``bigquery:PROJECT.DATASET.TABLE`` (or ``bigquery:PROJECT.DATASET.PREFIX*`` for an
export with ``--per-asset-type``) is a CAI export to BigQuery, read through the
spark-bigquery-connector and turned into the same lines (:mod:`pushguard.audit.bigquery`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pushguard.audit.bigquery import BigQueryInputError, is_bigquery, parse_input, read_input
from pushguard.audit.outputs import hadoop_path
from pushguard.audit.schemas import NEEDED_TYPES
from pushguard.audit.snapshots import ExportRef, export_of

LINE_SCHEMA = StructType(
    [
        StructField("source", StringType(), False),
        StructField("block", LongType(), False),
        StructField("position", LongType(), False),
        StructField("value", StringType(), True),
    ]
)
"""A read line: ``source`` file, ``block`` (split start, bytes), ``position`` (increasing within a
block; an element index for JSON arrays) and the text."""


DOCUMENT = "document"
"""A file that is one JSON document: an array of assets (``gcloud asset list --format=json``,
pretty-printed or on one line) or one pretty-printed asset."""

LINES = "lines"
"""A newline-delimited JSON file: one asset per line (Cloud Asset Inventory exports)."""

DEFAULT_PROBE_BYTES = 4 * 1024 * 1024
"""How much of a first line :func:`file_shape` reads at most (the audit passes
``--max-line-bytes``)."""

_CHUNK = 64 * 1024
_BLANK = b" \t\r\n\f"
_BOM = b"\xef\xbb\xbf"


class InputError(ValueError):
    """An export path does not exist or holds no files, or a BigQuery input cannot be read (bad
    reference, no such table, no connector)."""


@dataclass
class Inputs:
    """The files to read: newline-delimited, one JSON document each (``arrays``: an array of
    assets or one asset), the asset-type folders and the hidden or marker files skipped; and the
    BigQuery tables, each as ``(source, lines)`` in :data:`LINE_SCHEMA`."""

    ndjson: list[str] = field(default_factory=list)
    arrays: list[str] = field(default_factory=list)
    skipped_types: list[str] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)
    bigquery: list[tuple[str, DataFrame]] = field(default_factory=list)
    sources: dict[str, ExportRef] = field(default_factory=dict)
    """Each spelling of a line's ``source`` (the file's name as listed, and as Spark's text
    source writes it: URL-encoded) -> its export and read time
    (:mod:`pushguard.audit.snapshots`)."""
    timed: list[DataFrame] = field(default_factory=list)
    """Rows of :data:`~pushguard.audit.snapshots.SOURCES_DDL` for the BigQuery tables (their
    read time is read with them)."""


def discover(
    spark: SparkSession,
    paths: list[str],
    max_line_bytes: int = DEFAULT_PROBE_BYTES,
    times: Mapping[str, datetime] | None = None,
) -> Inputs:
    """List the files under ``paths`` (files or folders, recursively), sorted, and tell each
    file's shape (:func:`file_shape`, reading at most ``max_line_bytes`` of a first line);
    ``bigquery:`` inputs are looked up through the connector
    (:func:`pushguard.audit.bigquery.read_input`). Each file and table is mapped to its export
    and read time (:attr:`Inputs.sources`): ``times`` gives the read time of the paths given
    with ``--snapshot``.

    Raises:
        InputError: a path does not exist, or nothing readable is found under it; a BigQuery
            input is malformed, its table does not exist, or the connector is missing; a file
            is under two paths given different read times.
    """
    inputs = Inputs()
    times = times or {}
    for raw in paths:
        if is_bigquery(raw):
            try:
                tables = read_input(spark, parse_input(raw), NEEDED_TYPES)
            except BigQueryInputError as error:
                raise InputError(str(error)) from None
            inputs.bigquery += [(source, lines) for source, lines, _ in tables]
            for source, _, time in tables:
                _place(inputs, source, ExportRef(source, times.get(raw)), time)
            continue
        fs, path = hadoop_path(spark, raw)
        if not fs.exists(path):
            raise InputError(f"EXPORT_PATH {raw}: does not exist")
        found: list[str] = []
        _walk(fs, fs.getFileStatus(path), found, inputs)
        if not found:
            raise InputError(f"EXPORT_PATH {raw}: no files in it")
        for name in sorted(found):
            shape = file_shape(spark, name, max_line_bytes)
            (inputs.arrays if shape == DOCUMENT else inputs.ndjson).append(name)
            ref = ExportRef(export_of(name), times.get(raw))
            for spelling in (name, str(hadoop_path(spark, name)[1].toUri().toString())):
                _place(inputs, spelling, ref)
    inputs.skipped_types.sort()
    inputs.skipped_files.sort()
    return inputs


def _place(inputs: Inputs, source: str, ref: ExportRef, timed: DataFrame | None = None) -> None:
    """Record ``source``'s export (``timed``: a table's read time, read with it, unless
    ``--snapshot`` gave one).

    Raises:
        InputError: the source is already placed with another read time."""
    if timed is not None and ref.time is None:
        inputs.timed.append(timed)
        return
    known = inputs.sources.get(source)
    if known is not None and known.time != ref.time:
        raise InputError(
            f"{source}: given twice with different read times ({known.time} and {ref.time}); "
            "give each export once"
        )
    inputs.sources[source] = ref


def _walk(fs: Any, status: Any, found: list[str], inputs: Inputs, type_prefix: str = "") -> None:
    name = status.getPath().getName()
    if not status.isDirectory():
        if name.startswith((".", "_")):  # Hadoop's hidden files (_SUCCESS, .crc)
            inputs.skipped_files.append(status.getPath().toString())
        else:
            found.append(status.getPath().toString())
        return
    if type_prefix:  # inside <service>.googleapis.com/: name is the type
        asset_type = f"{type_prefix}/{name}"
        if asset_type not in NEEDED_TYPES:
            inputs.skipped_types.append(asset_type)
            return
    next_prefix = name if _is_service_folder(name) and not type_prefix else ""
    for child in fs.listStatus(status.getPath()):
        _walk(fs, child, found, inputs, next_prefix)


def _is_service_folder(name: str) -> bool:
    return name.endswith((".googleapis.com", ".k8s.io")) or name == "k8s.io"


def file_shape(spark: SparkSession, name: str, max_line_bytes: int = DEFAULT_PROBE_BYTES) -> str:
    """:data:`DOCUMENT` or :data:`LINES`, from the start of the file after decompression (the
    codec Hadoop picks by extension, as Spark's sources do when they read it: ``.gz``, ``.bz2``,
    ``.zst``...). Only the first line, and in one case the next non-blank one, are read:

    - a first non-blank character other than ``[`` or ``{``, or an empty file: lines;
    - a first line that is complete JSON: lines, unless it is an array and nothing but blanks
      follows it (an array written on one line: a document);
    - a first line that is not JSON on its own: a document when the next non-blank line is not
      JSON on its own either (``[`` then ``  {``: pretty-printed), else lines (a broken first
      line of a newline-delimited file, quarantined as a line);
    - a first line starting with ``[`` longer than ``max_line_bytes``: a document.

    Raises:
        Exception: what Hadoop raises when the file cannot be opened or decompressed.
    """
    fs, path = hadoop_path(spark, name)
    jvm: Any = spark.sparkContext._jvm
    codec = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(
        spark.sparkContext._jsc.hadoopConfiguration()
    ).getCodec(path)
    raw = fs.open(path)
    stream = codec.createInputStream(raw) if codec is not None else raw
    try:
        return _shape(_Reader(stream), max_line_bytes)
    finally:
        stream.close()


class _Reader:
    """Bytes of a Java ``InputStream`` (py4j), read in chunks."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._buffer = b""
        self._end = False

    def line(self, limit: int) -> tuple[bytes, bool]:
        """The next line without its end (at most ``limit`` bytes), and whether it ended
        within the limit (or at the end of the file)."""
        while b"\n" not in self._buffer and not self._end and len(self._buffer) <= limit:
            self._fill()
        cut = self._buffer.find(b"\n")
        if cut < 0:
            if self._end and len(self._buffer) <= limit:
                line, self._buffer = self._buffer, b""
                return line, True
            return self._buffer[:limit], False
        line, self._buffer = self._buffer[:cut], self._buffer[cut + 1 :]
        return line, cut <= limit

    def next_non_blank(self, limit: int) -> tuple[bytes, bool] | None:
        """The next line that is not blank (as :meth:`line`), or None at the end of the file
        (or after ``limit`` blank bytes)."""
        skipped = 0
        while skipped <= limit:
            if not self._buffer.strip(_BLANK):
                skipped += len(self._buffer)
                self._buffer = b""
                if self._end:
                    return None
                self._fill()
                continue
            self._buffer = self._buffer.lstrip(_BLANK)
            return self.line(limit)
        return None

    def _fill(self) -> None:
        chunk = bytes(self._stream.readNBytes(_CHUNK))
        self._end = len(chunk) < _CHUNK
        self._buffer += chunk


def _is_json(line: bytes) -> tuple[bool, Any]:
    try:
        return True, json.loads(line)
    except ValueError:
        return False, None


def _shape(reader: _Reader, limit: int) -> str:
    first = reader.next_non_blank(limit)
    if first is None:
        return LINES
    text, complete = first
    text = text.removeprefix(_BOM).lstrip(_BLANK)
    if not text.startswith((b"[", b"{")):
        return LINES
    if not complete:
        return DOCUMENT if text.startswith(b"[") else LINES
    parsed, value = _is_json(text)
    if parsed:
        return (
            DOCUMENT if isinstance(value, list) and reader.next_non_blank(limit) is None else LINES
        )
    second = reader.next_non_blank(limit)
    if second is None:
        return LINES
    second_text, second_complete = second
    if second_complete and _is_json(second_text)[0]:
        return LINES
    return DOCUMENT


def read_lines(spark: SparkSession, inputs: Inputs) -> DataFrame:
    """One row per line or array element, shaped as :data:`LINE_SCHEMA`."""
    frames = []
    if inputs.ndjson:
        text = spark.read.format("text").load(inputs.ndjson)
        frames.append(
            text.select(
                F.col("_metadata.file_path").alias("source"),
                F.col("_metadata.file_block_start").alias("block"),
                F.monotonically_increasing_id().alias("position"),
                F.col("value"),
            )
        )
    if inputs.arrays:
        rows = spark.sparkContext.wholeTextFiles(",".join(inputs.arrays)).flatMap(_array_elements)
        frames.append(spark.createDataFrame(rows, LINE_SCHEMA))
    frames += [lines for _, lines in inputs.bigquery]
    if not frames:
        return spark.createDataFrame([], LINE_SCHEMA)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result.select(*LINE_SCHEMA.fieldNames())


def _array_elements(item: tuple[str, str]) -> list[tuple[str, int, int, str]]:
    """Runs on an executor: the elements of one document (an array; one object is one element),
    each as compact JSON; a document that is not JSON is one line, quarantined (its start)."""
    source, text = item
    try:
        elements = json.loads(text)
    except ValueError:
        return [(source, 0, 0, text[:4096])]  # quarantined as a whole: not JSON
    if isinstance(elements, dict):
        elements = [elements]
    if not isinstance(elements, list):
        return [(source, 0, 0, text[:4096])]
    return [(source, 0, n, json.dumps(e, separators=(",", ":"))) for n, e in enumerate(elements)]
