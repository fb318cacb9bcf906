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

A file that cannot be read is listed with its reason (:attr:`Inputs.unreadable`) and left out,
and the other files are audited: a compressed file that cannot be decompressed (cut short,
corrupt: :mod:`pushguard.audit.compressed`), or one whose start cannot be opened. Lines are split
at ``LF`` only (JSON Lines' separator, https://jsonlines.org/; a ``CR`` before it is JSON white
space) and a line longer than ``--max-line-bytes`` never reaches memory whole
(:mod:`pushguard.audit.long_lines`).

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
from urllib.parse import unquote, urlsplit

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pushguard.audit.bigquery import BigQueryInputError, is_bigquery, parse_input, read_input
from pushguard.audit.causes import java_cause
from pushguard.audit.compressed import codec_of, measure, open_decompressed
from pushguard.audit.long_lines import line_options
from pushguard.audit.one_value import MAX_DEPTH, NotOneValueError, depth, one_value
from pushguard.audit.outputs import hadoop_path
from pushguard.audit.schemas import NEEDED_TYPES
from pushguard.audit.snapshots import ExportRef, export_of

LINE_SCHEMA = StructType(
    [
        StructField("source", StringType(), False),
        StructField("block", LongType(), False),
        StructField("position", LongType(), False),
        StructField("value", StringType(), True),
        StructField("read_error", StringType(), True),
    ]
)
"""A read line: ``source`` file, ``block`` (split start, bytes), ``position`` (increasing within a
block; an element index for JSON arrays), the text and ``read_error``: why a JSON document could
not be read (null for a line; the document's first characters are its text)."""


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


@dataclass(frozen=True)
class LineFile:
    """A newline-delimited file as listed: its ``name`` (Hadoop's path), its ``size`` after
    decompression and whether it is ``compressed``."""

    name: str
    size: int
    compressed: bool


@dataclass
class Inputs:
    """The files to read: newline-delimited, one JSON document each (``arrays``: an array of
    assets or one asset), the asset-type folders and the hidden or marker files skipped, the
    files that cannot be read (``unreadable``: name to reason); and the BigQuery tables, each as
    ``(source, lines)`` in :data:`LINE_SCHEMA`. ``line_files`` describes each newline-delimited
    file by :func:`file_key`."""

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
    unreadable: dict[str, str] = field(default_factory=dict)
    line_files: dict[str, LineFile] = field(default_factory=dict)


def file_key(uri: str) -> str:
    """One spelling of a file's URI, whether written as Spark's ``_metadata.file_path``
    (``file:/a%20b``) or Hadoop's ``Path.toUri()`` (``file:///a%20b``): ``scheme://authority`` and
    the decoded path."""
    parts = urlsplit(uri)
    return f"{parts.scheme}://{parts.netloc}{unquote(parts.path)}"


def discover(
    spark: SparkSession,
    paths: list[str],
    max_line_bytes: int = DEFAULT_PROBE_BYTES,
    times: Mapping[str, datetime] | None = None,
) -> Inputs:
    """List the files under ``paths`` (files or folders, recursively), sorted, measure the
    compressed ones (:func:`pushguard.audit.compressed.measure`) and tell each readable file's
    shape (:func:`file_shape`, reading at most ``max_line_bytes`` of a first line); a file that
    cannot be decompressed or opened goes to :attr:`Inputs.unreadable` with its reason.
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
    found: dict[str, tuple[str, int, bool]] = {}  # name: (URI, length, compressed)
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
        listed: list[Any] = []
        _walk(fs, fs.getFileStatus(path), listed, inputs)
        if not listed:
            raise InputError(f"EXPORT_PATH {raw}: no files in it")
        for status in listed:
            compressed = codec_of(spark, status.getPath()) is not None
            uri = str(status.getPath().toUri().toString())
            name = status.getPath().toString()
            found[name] = (uri, int(status.getLen()), compressed)
            ref = ExportRef(export_of(name), times.get(raw))
            for spelling in (name, uri):  # as listed, and as Spark's text source writes it
                _place(inputs, spelling, ref)
    _shape_files(spark, found, inputs, max_line_bytes)
    inputs.skipped_types.sort()
    inputs.skipped_files.sort()
    return inputs


def _shape_files(
    spark: SparkSession,
    found: Mapping[str, tuple[str, int, bool]],
    inputs: Inputs,
    max_line_bytes: int,
) -> None:
    """Measure the compressed files of ``found`` (name: URI, length, compressed) and sort each
    readable one into ``inputs`` by its shape; the others go to :attr:`Inputs.unreadable`."""
    sizes = measure(spark, sorted(name for name, (_, _, gz) in found.items() if gz))
    for name in sorted(found):
        uri, size, compressed = found[name]
        measured = sizes.get(name, size)
        if isinstance(measured, str):
            inputs.unreadable[name] = measured
            continue
        try:
            shape = file_shape(spark, name, max_line_bytes)
        except Exception as error:  # the file cannot be opened or its start decompressed
            inputs.unreadable[name] = f"cannot be read: {java_cause(error)}"
            continue
        if shape == DOCUMENT:
            inputs.arrays.append(name)
        else:
            inputs.ndjson.append(name)
            inputs.line_files[file_key(uri)] = LineFile(name, measured, compressed)


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


def _walk(fs: Any, status: Any, found: list[Any], inputs: Inputs, type_prefix: str = "") -> None:
    name = status.getPath().getName()
    if not status.isDirectory():
        if name.startswith((".", "_")):  # Hadoop's hidden files (_SUCCESS, .crc)
            inputs.skipped_files.append(status.getPath().toString())
        else:
            found.append(status)
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
    codec Spark's text source picks by extension:
    :func:`pushguard.audit.compressed.open_decompressed`). Only the first line, and in one case
    the next non-blank one, are read:

    - a first non-blank character other than ``[`` or ``{``, or an empty file: lines;
    - a first line that is complete JSON: lines, unless it is an array and nothing but blanks
      follows it (an array written on one line: a document);
    - a first line that is not JSON on its own: a document when the next non-blank line is not
      JSON on its own either (``[`` then ``  {``: pretty-printed), else lines (a broken first
      line of a newline-delimited file, quarantined as a line);
    - a first line starting with ``[`` longer than ``max_line_bytes``: a document;
    - a first line nested deeper than :data:`~pushguard.audit.one_value.MAX_DEPTH` levels counts
      as one complete value that is not an array (lines: it is quarantined with that reason);
      nothing here parses it, so no depth raises ``RecursionError``.

    Raises:
        Exception: what Hadoop raises when the file cannot be opened or decompressed.
    """
    stream = open_decompressed(spark, name)
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
    """Whether ``line`` is one JSON value on its own, and the value (None when it is nested
    deeper than :data:`~pushguard.audit.one_value.MAX_DEPTH` levels: never parsed)."""
    if depth(line.decode("utf-8", "replace")) > MAX_DEPTH:
        return True, None
    try:
        return True, one_value(line)
    except NotOneValueError:
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


def read_lines(
    spark: SparkSession, inputs: Inputs, max_line_bytes: int = DEFAULT_PROBE_BYTES
) -> DataFrame:
    """One row per line or array element, shaped as :data:`LINE_SCHEMA`; no line longer than
    ``max_line_bytes`` is held whole (:func:`pushguard.audit.long_lines.line_options`)."""
    frames = []
    if inputs.ndjson:
        frames.append(text_lines(spark, inputs.ndjson, max_line_bytes))
    if inputs.arrays:
        whole = spark.read.format("text").option("wholetext", "true").load(inputs.arrays)
        documents = whole.select(F.col("_metadata.file_path"), F.col("value").cast("binary"))
        rows = documents.rdd.flatMap(_array_elements)
        frames.append(spark.createDataFrame(rows, LINE_SCHEMA))
    for _, lines in inputs.bigquery:
        frames.append(lines.withColumn("read_error", F.lit(None).cast("string")))
    if not frames:
        return spark.createDataFrame([], LINE_SCHEMA)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result.select(*LINE_SCHEMA.fieldNames())


def text_lines(spark: SparkSession, files: list[str], max_line_bytes: int) -> DataFrame:
    """The lines of newline-delimited ``files`` in :data:`LINE_SCHEMA` (the text source, split
    by Spark: ``block`` is the split's start)."""
    text = spark.read.format("text").options(**line_options(max_line_bytes)).load(files)
    return text.select(
        F.col("_metadata.file_path").alias("source"),
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("position"),
        F.col("value"),
        F.lit(None).cast("string").alias("read_error"),
    )


def _array_elements(row: Any) -> list[tuple[str, int, int, str, str | None]]:
    """Runs on an executor: the elements of one document (``row``: its file and bytes; an
    array, or one object as one element), each as compact JSON; a document that is not exactly
    one JSON value of valid UTF-8 is one row with its start and the reason
    (:func:`pushguard.audit.one_value.one_value`)."""
    source, data = str(row[0]), bytes(row[1])
    start = data[:4096].decode("utf-8", "replace")
    try:
        elements = one_value(data, bom=True)
    except NotOneValueError as error:
        return [(source, 0, 0, start, error.reason)]
    if isinstance(elements, dict):
        elements = [elements]
    if not isinstance(elements, list):  # one value, not an asset: quarantined as such
        return [(source, 0, 0, start, None)]
    return [
        (source, 0, n, json.dumps(e, separators=(",", ":")), None) for n, e in enumerate(elements)
    ]
