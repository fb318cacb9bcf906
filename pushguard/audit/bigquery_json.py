"""One row of a Cloud Asset Inventory export table -> the JSON text of its asset, as a
newline-delimited export line has it (:func:`asset_json`).

The row's columns become the asset's members (nulls left out); ``resource.data``, a STRING
holding the resource's JSON in the one-table-per-content-type form and a RECORD in the
per-asset-type form, is embedded as JSON either way. Partitioned tables are cut to their newest
snapshot (:func:`latest_snapshot`).
"""

from __future__ import annotations

import json

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, StringType, StructField, StructType

PARTITION_COLUMNS = ("requestTime", "readTime", "request_time", "read_time")
"""The columns a partitioned export adds (not part of an asset)."""

_DATA_SENTINEL = "\u0000pushguard:resource.data\u0000"
"""Stands for ``resource.data`` in the envelope's JSON until the data's own text replaces it."""


SNAPSHOT_COLUMNS = ("readTime", "read_time", "requestTime", "request_time")
"""The columns a partitioned export table has, one per export: ``readTime`` with the partition
key ``READ_TIME`` ("the time when the snapshot is taken"), ``requestTime`` with ``REQUEST_TIME``
(https://cloud.google.com/asset-inventory/docs/reference/rest/v1/TopLevel/exportAssets#partitionkey);
the first present is the table's snapshot column."""


def snapshot_column(frame: DataFrame) -> str | None:
    """The column that tells a partitioned table's exports apart (:data:`SNAPSHOT_COLUMNS`), or
    None for a table of one export."""
    return next((c for c in SNAPSHOT_COLUMNS if c in frame.columns), None)


def latest_snapshot(frame: DataFrame) -> DataFrame:
    """The rows of the newest export in a partitioned table (the greatest ``readTime``, else
    ``requestTime``), or ``frame`` unchanged when it has no such column."""
    column = snapshot_column(frame)
    if column is None:
        return frame
    newest = frame.agg(F.max(column).alias(column))
    return frame.join(F.broadcast(newest), on=column, how="left_semi")


def snapshot_time(frame: DataFrame, source: str) -> DataFrame | None:
    """``source``, ``export`` (the table), ``export_time`` (its newest export's time, the one
    :func:`latest_snapshot` keeps), one row (lazy); None for a table without a snapshot
    column."""
    column = snapshot_column(frame)
    if column is None:
        return None
    return frame.agg(
        F.lit(source).alias("source"),
        F.lit(source).alias("export"),
        F.max(F.col(column).cast("timestamp")).alias("export_time"),
    )


def _asset_columns(frame: DataFrame) -> list[Column]:
    """The columns of an asset, as its JSON object's members; ``resource.data`` given as a
    string is replaced by a placeholder; empty ``ancestors`` (a REPEATED field is never null) are
    left out, as a line without them would be."""
    columns = []
    for field in frame.schema.fields:
        name = field.name
        if name in PARTITION_COLUMNS:
            continue
        column = F.col(f"`{name}`")
        if name == "ancestors" and isinstance(field.dataType, ArrayType):
            column = F.when(F.size(column) > 0, column)
        elif name == "resource" and _data_is_text(field):
            # data that is not JSON stays a JSON string: the line is still JSON, and the audit
            # quarantines it as data that does not fit its asset type
            data = column["data"]
            column = column.withField(
                "data", F.when(_valid_json(data), F.lit(_DATA_SENTINEL)).otherwise(data)
            )
        columns.append(column.alias(name))
    return columns


def _data_is_text(field: StructField) -> bool:
    record = field.dataType
    return isinstance(record, StructType) and any(
        f.name == "data" and isinstance(f.dataType, StringType) for f in record.fields
    )


def _valid_json(text: Column) -> Column:
    return text.isNotNull() & F.get_json_object(text, "$").isNotNull()


def asset_json(frame: DataFrame) -> Column:
    """Each row of an export table as the JSON text of its asset, as a newline-delimited export
    line has it: the row's columns as members (nulls left out), ``resource.data`` embedded as
    JSON (from the text of the single-table form, or the record of the per-asset-type form)."""
    text = F.to_json(F.struct(*_asset_columns(frame)))
    if "resource" not in frame.columns or not _data_is_text(frame.schema["resource"]):
        return text
    data = F.col("resource.data")
    return F.when(
        _valid_json(data), F.replace(text, F.lit(json.dumps(_DATA_SENTINEL)), data)
    ).otherwise(text)
