"""Finding the export files and reading them into one row per line, with its source and position.

Two file shapes are read:

- **newline-delimited JSON** (Cloud Asset Inventory exports to Cloud Storage): read by Spark's
  text source, split across tasks; each row keeps its file (``_metadata.file_path``), the start of
  its split (``_metadata.file_block_start``) and a monotonically increasing ID, from which a
  quarantined line's line number is computed (:func:`pushguard.audit.quarantine.located`);
- **JSON arrays** (API dumps, ``gcloud asset list --format=json``): read whole, one row per
  element; its "line" is the element's position (1-based).

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
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pushguard.audit.bigquery import BigQueryInputError, is_bigquery, parse_input, read_input
from pushguard.audit.outputs import hadoop_path
from pushguard.audit.schemas import NEEDED_TYPES

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


class InputError(ValueError):
    """An export path does not exist or holds no files, or a BigQuery input cannot be read (bad
    reference, no such table, no connector)."""


@dataclass
class Inputs:
    """The files to read: newline-delimited, JSON arrays, and asset-type folders skipped; and
    the BigQuery tables, each as ``(source, lines)`` in :data:`LINE_SCHEMA`."""

    ndjson: list[str] = field(default_factory=list)
    arrays: list[str] = field(default_factory=list)
    skipped_types: list[str] = field(default_factory=list)
    bigquery: list[tuple[str, DataFrame]] = field(default_factory=list)


def discover(spark: SparkSession, paths: list[str]) -> Inputs:
    """List the files under ``paths`` (files or folders, recursively), sorted; ``bigquery:``
    inputs are looked up through the connector (:func:`pushguard.audit.bigquery.read_input`).

    Raises:
        InputError: a path does not exist, or nothing readable is found under it; a BigQuery
            input is malformed, its table does not exist, or the connector is missing.
    """
    inputs = Inputs()
    for raw in paths:
        if is_bigquery(raw):
            try:
                inputs.bigquery += read_input(spark, parse_input(raw), NEEDED_TYPES)
            except BigQueryInputError as error:
                raise InputError(str(error)) from None
            continue
        fs, path = hadoop_path(spark, raw)
        if not fs.exists(path):
            raise InputError(f"EXPORT_PATH {raw}: does not exist")
        found: list[str] = []
        _walk(fs, fs.getFileStatus(path), found, inputs.skipped_types)
        if not found:
            raise InputError(f"EXPORT_PATH {raw}: no files in it")
        for name in sorted(found):
            is_array = _is_json_array(fs, hadoop_path(spark, name)[1])
            (inputs.arrays if is_array else inputs.ndjson).append(name)
    inputs.skipped_types.sort()
    return inputs


def _walk(
    fs: Any, status: Any, found: list[str], skipped: list[str], type_prefix: str = ""
) -> None:
    name = status.getPath().getName()
    if not status.isDirectory():
        if not name.startswith((".", "_")):  # Hadoop's hidden files (_SUCCESS, .crc)
            found.append(status.getPath().toString())
        return
    if type_prefix:  # inside <service>.googleapis.com/: name is the type
        asset_type = f"{type_prefix}/{name}"
        if asset_type not in NEEDED_TYPES:
            skipped.append(asset_type)
            return
    next_prefix = name if _is_service_folder(name) and not type_prefix else ""
    for child in fs.listStatus(status.getPath()):
        _walk(fs, child, found, skipped, next_prefix)


def _is_service_folder(name: str) -> bool:
    return name.endswith((".googleapis.com", ".k8s.io")) or name == "k8s.io"


def _is_json_array(fs: Any, path: Any) -> bool:
    """Whether the file's first non-blank byte (after a UTF-8 byte-order mark) is ``[``."""
    stream = fs.open(path)
    try:
        for _ in range(4096):
            byte = stream.read()
            if byte < 0:
                return False
            if byte not in _BLANK_BYTES:
                return bool(byte == ord("["))
    finally:
        stream.close()
    return False


_BLANK_BYTES = frozenset(b" \t\r\n\xef\xbb\xbf")


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
    source, text = item
    try:
        elements = json.loads(text)
    except ValueError:
        return [(source, 0, 0, text[:4096])]  # quarantined as a whole: not JSON
    if not isinstance(elements, list):
        return [(source, 0, 0, text[:4096])]
    return [(source, 0, n, json.dumps(e, separators=(",", ":"))) for n, e in enumerate(elements)]
