"""Cloud Asset Inventory exports in BigQuery, read as the lines of a newline-delimited export.

``gcloud asset export --bigquery-table=... --bigquery-dataset=...`` writes one table per content
type; with ``--per-asset-type`` it writes one table per asset type, named after the table given
plus the asset type, every character that is not a letter or a digit turned into ``_``
(``cai_pubsub_googleapis_com_Subscription`` for ``--bigquery-table=cai``). The schemas are
documented in "Export asset metadata to BigQuery"
(https://cloud.google.com/asset-inventory/docs/export-bigquery) and in the API's
``BigQueryDestination`` (https://cloud.google.com/asset-inventory/docs/reference/rest/v1/TopLevel/exportAssets#bigquerydestination):

- one table per content type (the default): ``name``, ``asset_type``, the content type's record
  (``resource``, ``iam_policy``, ``org_policy``, ``access_policy`` / ``access_level`` /
  ``service_perimeter``, ``os_inventory``, ``related_assets``...), ``ancestors`` (REPEATED
  STRING) and ``update_time`` (TIMESTAMP). ``resource.data`` is a **STRING holding the JSON** of
  the resource (:mod:`pushguard.audit.bigquery_tables`);
- per asset type, content type ``resource``: ``resource.data`` is a **RECORD** with the fields of
  that asset type, and the column names are camelCase (``assetType``, ``updateTime``,
  ``resource.discoveryName``), as the documentation's "Casing" section says; other content types
  keep snake_case;
- partitioned tables (``--partition-key``) add the TIMESTAMP column ``readTime``
  (``READ_TIME``) or ``requestTime`` (``REQUEST_TIME``); they keep one snapshot per export, so
  only the newest is read, and its time is the export's read time
  (:mod:`pushguard.audit.snapshots`).

The spark-bigquery-connector (https://github.com/GoogleCloudDataproc/spark-bigquery-connector)
gives a TIMESTAMP as ``TimestampType``, a REPEATED field as ``ArrayType`` and a RECORD as
``StructType``. :func:`export_lines` turns such a DataFrame into the audit's lines
(:data:`pushguard.audit.read.LINE_SCHEMA`), each row the JSON text its asset would have in a
newline-delimited export, so :mod:`pushguard.audit.parse` reads both alike. Only
:func:`load_table` talks to BigQuery; the connector is not bundled (Dataproc images have it; see
:data:`CONNECTOR_MISSING`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from pushguard.audit.bigquery_json import asset_json, latest_snapshot, snapshot_time

PREFIX = "bigquery:"
"""How an input names a BigQuery table: ``bigquery:PROJECT.DATASET.TABLE``."""

ALLOWED = (
    "bigquery:PROJECT.DATASET.TABLE (a table of a Cloud Asset Inventory export to BigQuery) or "
    "bigquery:PROJECT.DATASET.PREFIX* (the tables of an export with --per-asset-type: PREFIX "
    "followed by the asset type)"
)
"""What ``--input`` accepts, for error messages."""

CONNECTOR_MISSING = (
    "reading BigQuery needs the spark-bigquery-connector, which is not on Spark's classpath: "
    "add the connector built for your Spark version, e.g. spark-submit --packages "
    "com.google.cloud.spark:spark-4.0-bigquery:VERSION (or spark-4.1-bigquery, "
    "spark-3.5-bigquery; versions at "
    "https://github.com/GoogleCloudDataproc/spark-bigquery-connector/releases), or --jars with "
    "its jar; Dataproc images include it"
)
"""The message when ``format("bigquery")`` is not found."""

# A project ID (lower case, digits, hyphens; starts with a letter), optionally domain-scoped
# (example.com:my-project); a dataset (letters, digits, underscores); a table (letters, digits,
# underscores, hyphens), or a table prefix ending in '*'.
_TABLE = re.compile(
    r"^(?P<project>(?:[a-z0-9][a-z0-9.-]*:)?[a-z][a-z0-9-]*)"
    r"\.(?P<dataset>[A-Za-z0-9_]{1,1024})"
    r"\.(?P<table>[A-Za-z0-9_-]{1,1024})(?P<prefix>\*)?$"
)
_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")


class BigQueryInputError(ValueError):
    """An ``--input`` value that is not a BigQuery table reference (the message says what is
    allowed), or a table that cannot be read."""


@dataclass(frozen=True)
class BigQueryInput:
    """A parsed ``bigquery:`` input: one table, or the per-asset-type tables of an export.

    Attributes:
        project: the project ID (``my-project`` or ``example.com:my-project``).
        dataset: the dataset ID.
        table: the table, or the prefix of the per-asset-type tables.
        per_asset_type: the input ended in ``*``: ``table`` is a prefix.
    """

    project: str
    dataset: str
    table: str
    per_asset_type: bool = False

    @property
    def spec(self) -> str:
        """The input as written: ``bigquery:P.D.T`` or ``bigquery:P.D.PREFIX*``."""
        return f"{PREFIX}{self.project}.{self.dataset}.{self.table}" + (
            "*" if self.per_asset_type else ""
        )

    def tables(self, asset_types: Iterable[str]) -> list[str]:
        """The full table names to read (``PROJECT.DATASET.TABLE``), sorted: the table itself,
        or for a prefix one table per asset type in ``asset_types`` (see
        :func:`per_asset_type_table`)."""
        base = f"{self.project}.{self.dataset}."
        if not self.per_asset_type:
            return [base + self.table]
        return sorted(base + per_asset_type_table(self.table, kind) for kind in asset_types)


def is_bigquery(value: str) -> bool:
    """Whether an input names BigQuery (starts with ``bigquery:``)."""
    return value.startswith(PREFIX)


def parse_input(value: str, option: str = "--input") -> BigQueryInput:
    """Parse ``bigquery:PROJECT.DATASET.TABLE`` or ``bigquery:PROJECT.DATASET.PREFIX*``.

    Raises:
        BigQueryInputError: anything else, naming ``option``, the value and what is allowed.
    """
    found = _TABLE.match(value[len(PREFIX) :]) if is_bigquery(value) else None
    if found is None:
        raise BigQueryInputError(f"{option} {value!r}: not a BigQuery table; use {ALLOWED}")
    return BigQueryInput(
        project=found["project"],
        dataset=found["dataset"],
        table=found["table"],
        per_asset_type=bool(found["prefix"]),
    )


def per_asset_type_table(prefix: str, asset_type: str) -> str:
    """The per-asset-type table of ``asset_type``: ``prefix`` followed by the asset type with
    every character that is not a letter or digit replaced by ``_``
    (``cai_`` + ``pubsub.googleapis.com/Subscription`` ->
    ``cai_pubsub_googleapis_com_Subscription``), as documented for
    ``BigQueryDestination.separate_tables_per_asset_type``:
    https://cloud.google.com/asset-inventory/docs/reference/rest/v1/TopLevel/exportAssets#bigquerydestination

    Export with ``--bigquery-table=cai`` and read ``bigquery:P.D.cai_*``: the API joins the
    table and the type with ``_``, which the prefix carries."""
    return prefix + _NOT_ALPHANUMERIC.sub("_", asset_type)


def export_lines(
    frame: DataFrame, source: str, asset_types: Iterable[str] | None = None
) -> DataFrame:
    """An export table (as the spark-bigquery-connector reads it) as the audit's lines.

    Args:
        frame: one table of a Cloud Asset Inventory export to BigQuery, any content type, single
            table or per asset type (see the module docstring); partitioned tables are cut to
            their newest snapshot
            (:func:`~pushguard.audit.bigquery_json.latest_snapshot`).
        source: what the lines' ``source`` says (``bigquery:PROJECT.DATASET.TABLE``).
        asset_types: when given, only the rows of these types are read, and the rows without
            a type (quarantined) and with a service perimeter (:func:`needed_rows`).

    Returns:
        A DataFrame in :data:`pushguard.audit.read.LINE_SCHEMA` but ``read_error`` (which
        :func:`~pushguard.audit.read.read_lines` adds): ``source``, ``block`` (the
        partition, so that a quarantined row's "line" is its position in the read), ``position``
        (increasing within a block) and ``value``, the asset's JSON
        (:func:`~pushguard.audit.bigquery_json.asset_json`).

    Raises:
        BigQueryInputError: the table has no ``name`` column (not an asset export).
    """
    if "name" not in frame.columns:
        raise BigQueryInputError(
            f"{source}: not a Cloud Asset Inventory export table (no 'name' column; columns: "
            f"{', '.join(frame.columns[:12])})"
        )
    frame = latest_snapshot(frame)
    if asset_types is not None:
        frame = frame.filter(needed_rows(frame, asset_types))
    return frame.select(
        F.lit(source).alias("source"),
        F.spark_partition_id().cast("long").alias("block"),
        F.monotonically_increasing_id().alias("position"),
        asset_json(frame).alias("value"),
    )


def needed_rows(frame: DataFrame, asset_types: Iterable[str]) -> Column:
    """The rows the audit needs of an export table: its asset type (``asset_type``, or
    ``assetType`` in a per-asset-type table) is one of ``asset_types``, or missing (the row is
    quarantined: nothing is dropped unseen), or the row holds a ``service_perimeter`` (an
    access-policy table).

    The spark-bigquery-connector pushes this filter into the BigQuery Storage Read API's row
    restriction (``IN``, ``IS NULL`` and ``IS NOT NULL`` are among the filters it pushes down:
    https://github.com/GoogleCloudDataproc/spark-bigquery-connector#filtering), so the rows of
    the other types, most of an organisation's inventory, never leave BigQuery. It follows that
    the summary's ``lines`` counts for a BigQuery input are those of the rows read: the needed
    types only."""
    kind = next((c for c in ("asset_type", "assetType") if c in frame.columns), None)
    if kind is None:  # no type column: every row is quarantined as typeless
        return F.lit(True)
    needed = F.col(kind).isNull() | F.col(kind).isin(*sorted(asset_types))
    if "service_perimeter" in frame.columns:
        needed = needed | F.col("service_perimeter").isNotNull()
    return needed


Loader = Callable[[SparkSession, str], "DataFrame | None"]
"""Loads one table by its full name, or returns None when it does not exist."""

_NOT_FOUND = re.compile(r"Table \S+ (was )?not found|Not found: Table", re.IGNORECASE)
_NO_CONNECTOR = re.compile(
    r"DATA_SOURCE_NOT_FOUND|Failed to find (the )?data source: bigquery", re.IGNORECASE
)


def load_table(spark: SparkSession, table: str) -> DataFrame | None:
    """``spark.read.format("bigquery").option("table", table).load()``: the table through the
    spark-bigquery-connector (the schema is read now, the rows when the audit scans them), or
    None when the connector says it does not exist (``Table P.D.T not found``, from
    ``BigQueryRelationProviderBase.createRelationInternal`` in the connector's source).

    Raises:
        BigQueryInputError: the connector is not on the classpath (:data:`CONNECTOR_MISSING`).
    """
    try:
        return spark.read.format("bigquery").option("table", table).load()
    except Exception as error:
        text = str(error)
        if _NO_CONNECTOR.search(text):
            raise BigQueryInputError(CONNECTOR_MISSING) from None
        if _NOT_FOUND.search(text):
            return None
        raise


def read_input(
    spark: SparkSession,
    source: BigQueryInput,
    asset_types: Iterable[str],
    load: Loader | None = None,
) -> list[tuple[str, DataFrame, DataFrame | None]]:
    """The tables of one ``bigquery:`` input, each as ``(source, lines, time)``
    (:func:`export_lines`; ``time``: :func:`~pushguard.audit.bigquery_json.snapshot_time`).

    For a per-asset-type prefix only the tables of ``asset_types`` are looked up; those that do
    not exist (no asset of that type in the export) are left out.

    Raises:
        BigQueryInputError: a named table does not exist, no per-asset-type table exists for the
            prefix, or the connector is missing.
    """
    load = load or load_table
    found = []
    for table in source.tables(asset_types):
        frame = load(spark, table)
        if frame is None:
            if not source.per_asset_type:
                raise BigQueryInputError(f"{source.spec}: the table does not exist")
            continue
        name = f"{PREFIX}{table}"
        found.append((name, export_lines(frame, name, asset_types), snapshot_time(frame, name)))
    if not found:
        raise BigQueryInputError(
            f"{source.spec}: no table {source.project}.{source.dataset}.{source.table}<asset "
            "type> exists for the asset types the audit reads"
        )
    return found
