"""Snapshots, not piles: which copy of each asset the audit evaluates when its inputs hold
several Cloud Asset Inventory exports.

What an export is (Cloud Asset Inventory's API and ``gcloud``):

- ``exportAssets`` takes a snapshot of the assets under **one parent** (an organization, a folder
  or a project) at **one read time** (``readTime``; "if not specified, the current time will be
  used"), of **one content type** (resource, IAM policy, access policy...), optionally of some
  asset types only (``assetTypes``); the operation's response says when the snapshot was taken
  (``ExportAssetsResponse.readTime``):
  https://cloud.google.com/asset-inventory/docs/reference/rest/v1/TopLevel/exportAssets
- it writes one Cloud Storage object (``GcsDestination.uri``, ``gcloud asset export
  --output-path``), or objects ``PREFIX/<asset type>/<shard>`` (``uriPrefix``,
  ``--output-path-prefix``), or a BigQuery table; a partitioned table gets the column
  ``readTime`` (partition key ``READ_TIME``: "the time when the snapshot is taken") or
  ``requestTime`` (``REQUEST_TIME``): https://cloud.google.com/sdk/gcloud/reference/asset/export,
  https://cloud.google.com/asset-inventory/docs/reference/rest/v1/TopLevel/exportAssets#partitionkey
- an exported line has no read time (only the asset's ``update_time``, the time of its last
  change): files in a folder do not say which export they came from, nor when.

So the audit is told, and decides by the rules below, never by a file or folder name:

1. **An export** (:func:`export_of`) is one file, or the ``PREFIX`` folder of a per-asset-type
   layout (``PREFIX/<service>/<Type>/<shard>``), or one BigQuery table. Its **read time** is the
   ``TIME`` of the ``--snapshot TIME=PATH`` whose ``PATH`` holds it, else the partition time of a
   partitioned table (its newest partition is read); else it has none.
2. **A snapshot** is the exports of one read time; an export without a time is a snapshot of its
   own, which cannot be ordered against any other.
3. **What an export covers**, for each content (``resource``, ``iam`` policy, service
   ``perimeter`` of an access-policy export): every asset it lists; and every asset of an asset
   type it lists at least once, under its **scope**: the deepest ancestor common to all its assets
   of that content. That is the parent it was taken from when it lists the parent's own asset
   (forseti's organization and project exports in tests/fixtures/cai/forseti do), else a
   narrower one, never a wider one: an export of one project never covers another project. An
   export in which an asset has no ``ancestors`` covers only what it lists. (Access policies are
   exported for a whole organization only: "The ACCESS_POLICY content type can only be exported
   at the organization level", https://cloud.google.com/asset-inventory/docs/export-cloud-storage.)
4. **The newest snapshot that covers an asset decides**: its copy is evaluated; when it does not
   list the asset (a subscription deleted since, an IAM policy removed, a perimeter deleted) no
   copy is (counted in ``not_in_newest_export_by_type``). The older copies are superseded.
5. **Copies in one snapshot**: the same content (a file given twice) gives one evaluated copy, the
   others superseded; different contents, the greatest ``update_time`` (the asset's last change).
6. **Ambiguous**: the newest covering snapshot cannot be told (an export without a time covers the
   asset, and so does another snapshot) and the copies differ, or some covering export does not
   list the asset; or two different copies in one snapshot have the same ``update_time``.
   Nothing is evaluated from a guess: :func:`ambiguous_examples` names them and the run exits 2
   before it publishes anything (give each export its read time with ``--snapshot``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from pushguard.audit.bigquery import is_bigquery, parse_input

RESOURCE, IAM, PERIMETER_CONTENT = "resource", "iam", "perimeter"
"""The contents an export can hold, each covered on its own (rule 3)."""

EVALUATED, SUPERSEDED, ABSENT, AMBIGUOUS = "evaluated", "superseded", "absent", "ambiguous"
"""What becomes of a copy (:func:`rank_copies`' ``fate``)."""

SOURCES_DDL = "source string, export string, export_time timestamp"
"""The lines' sources mapped to their export and its read time (:func:`sources_frame`)."""

MAX_LISTED = 10
"""How many ambiguous assets the error names."""

_SHARD = re.compile(r"^(?P<prefix>.+)/[^/]+\.(?:googleapis\.com|k8s\.io)/[^/]+/[^/]+$")
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$"
)


class SnapshotUsageError(ValueError):
    """A ``--snapshot`` value that is not ``TIME=PATH`` with an RFC 3339 time."""


@dataclass(frozen=True)
class ExportRef:
    """One export (rule 1): its ``name`` (a file, a per-asset-type ``PREFIX`` folder, a
    ``bigquery:`` table) and its read ``time`` (UTC; None when not known)."""

    name: str
    time: datetime | None = None


def parse_time(text: str) -> datetime:
    """An RFC 3339 time with its offset (``2026-11-01T00:00:00Z``, ``...+02:00``; fractions of a
    second up to nanoseconds, kept to the microsecond) as an aware UTC datetime.

    Raises:
        ValueError: not such a time (a date alone, no offset, an impossible date)."""
    found = _RFC3339.match(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is not an RFC 3339 time with an offset (2026-11-01T00:00:00Z)")
    year, month, day, hour, minute, second, fraction, offset = found.groups()
    micro = int((fraction or "0").ljust(9, "0")[:6])
    zone = "+00:00" if offset in ("Z", "z") else offset
    stamp = datetime.fromisoformat(
        f"{year}-{month}-{day}T{hour}:{minute}:{second}.{micro:06d}{zone}"
    )
    return stamp.astimezone(UTC)


def parse_snapshot(value: str) -> tuple[datetime, str]:
    """``--snapshot TIME=PATH`` -> ``(time, path)``: ``TIME`` is the export's read time
    (``ExportAssetsResponse.readTime``, or the ``--snapshot-time`` given to ``gcloud asset
    export``), ``PATH`` a file, a folder or a ``bigquery:`` table.

    Raises:
        SnapshotUsageError: no ``=``, an empty path, or a time that is not RFC 3339."""
    time_text, sep, path = value.partition("=")
    if not sep or not path:
        raise SnapshotUsageError(
            f"--snapshot {value!r}: give TIME=PATH, the export's read time and its path "
            "(2026-11-01T00:00:00Z=cai/2026-11-01/)"
        )
    try:
        return parse_time(time_text), path
    except ValueError as error:
        raise SnapshotUsageError(f"--snapshot {value!r}: {error}") from None


def snapshot_times(paths: list[str], snapshots: list[str]) -> dict[str, datetime]:
    """The ``--snapshot TIME=PATH`` values as ``{PATH: TIME}`` (UTC), in the order given;
    ``paths`` are the other inputs (EXPORT_PATH, ``--input``); a ``bigquery:`` path is checked as
    ``--input`` is.

    Raises:
        SnapshotUsageError: a value is not ``TIME=PATH`` with an RFC 3339 time, or a path is
            given twice (again with ``--snapshot``, or also in ``paths``).
        BigQueryInputError: a ``bigquery:`` path is not a table reference.
    """
    times: dict[str, datetime] = {}
    for value in snapshots:
        time, path = parse_snapshot(value)
        if path in times or path in paths:
            raise SnapshotUsageError(
                f"--snapshot {value!r}: {path} is given twice; give each export once, with its "
                "read time"
            )
        if is_bigquery(path):
            parse_input(path, "--snapshot")
        times[path] = time
    return times


def export_of(name: str) -> str:
    """The export a file belongs to (rule 1): the ``PREFIX`` of ``PREFIX/<service>/<Type>/
    <shard>`` (a per-asset-type export), else the file itself."""
    found = _SHARD.match(name)
    return found["prefix"] if found else name


def sources_frame(
    spark: SparkSession, sources: Mapping[str, ExportRef], timed: list[DataFrame]
) -> DataFrame:
    """The :data:`SOURCES_DDL` table: each spelling of a line's ``source`` with its export and
    read time, plus the ``timed`` rows (lazy: a partitioned table's time is read with it).
    Without ``timed`` rows it is a local table, one row per source already (no shuffle to
    deduplicate it: one job less under every plan that joins it)."""
    rows = [(source, ref.name, ref.time) for source, ref in sorted(sources.items())]
    frame = spark.createDataFrame(rows, SOURCES_DDL)
    if not timed:
        return frame
    for extra in timed:
        frame = frame.unionByName(extra)
    return frame.dropDuplicates(["source"])


def _snapshot() -> Column:
    """A snapshot's identity (rule 2): its time, or its export when it has none."""
    micros = F.lpad(F.unix_micros("export_time").cast("string"), 20, "0")  # sorts as time
    return F.when(F.col("export_time").isNotNull(), F.concat(F.lit("t:"), micros)).otherwise(
        F.concat(F.lit("u:"), F.col("export"))
    )


def _common_ancestors(column: str) -> Column:
    """The ancestors every copy of a group has (empty when one has none)."""
    lists = F.collect_list(F.coalesce(F.col(column), F.array().cast("array<string>")))
    return F.aggregate(lists, F.element_at(lists, 1), F.array_intersect)


def coverage(copies: DataFrame) -> DataFrame:
    """Per export and content (rule 3): ``snap``, ``export_time``, ``kind``, ``export``,
    ``scope`` (null: it covers only what it lists) and ``types`` (the asset types it lists).
    ``copies`` have ``export``, ``snap``, ``export_time``, ``kind``, ``asset_type``,
    ``ancestors``. Small: one row per export and content. Lazy."""
    keys = ["export", "kind"]
    exports = copies.groupBy("snap", "export_time", *keys).agg(
        F.count(F.lit(1)).alias("n"),
        F.count(F.when(F.size("ancestors") > 0, 1)).alias("placed"),
        F.array_sort(F.collect_set("asset_type")).alias("types"),
    )
    nodes = (
        copies.filter(F.size("ancestors") > 0)
        .select(*keys, F.posexplode(F.reverse("ancestors")).alias("depth", "node"))
        .groupBy(*keys, "depth", "node")
        .agg(F.count(F.lit(1)).alias("holding"))
    )
    common = (
        nodes.join(exports.select(*keys, "n", "placed"), on=keys)
        .filter((F.col("holding") == F.col("n")) & (F.col("placed") == F.col("n")))
        .withColumn("rank", F.row_number().over(Window.partitionBy(*keys).orderBy(F.desc("depth"))))
        .filter(F.col("rank") == 1)
        .select(*keys, F.col("node").alias("scope"))
    )
    return exports.join(common, on=keys, how="left").select(
        "snap", "export_time", *keys, "scope", "types"
    )


def _winners(placed: DataFrame) -> DataFrame:
    """Per content and key: ``listing`` (the snapshots that list it), ``winner`` (the snapshot
    that decides, rule 4; null when it cannot be told, rule 6). Lazy."""
    cover = coverage(placed).select("kind", "scope", "types", F.col("snap").alias("by"))
    keyed = placed.groupBy("kind", "key").agg(
        F.first("asset_type").alias("key_type"),
        _common_ancestors("ancestors").alias("key_ancestors"),
        # the distinct contents as a set, not countDistinct: one aggregation, no second
        # shuffle by content (a copy's content is a digest, never null; a key has few copies)
        F.size(F.collect_set("content")).alias("contents"),
        F.collect_set("snap").alias("listing"),
    )
    # an equi-join on each of the key's ancestors: a key meets only the exports scoped above it
    scoped = (
        keyed.select("kind", "key", "key_type", F.explode("key_ancestors").alias("scope"))
        .join(F.broadcast(cover.filter(F.col("scope").isNotNull())), on=["kind", "scope"])
        .filter(F.array_contains("types", F.col("key_type")))
        .groupBy("kind", "key")
        .agg(F.collect_set("by").alias("scoped"))
    )
    covering = F.array_union("listing", F.coalesce("scoped", F.array().cast("array<string>")))
    dated = F.filter("covering", lambda s: s.startswith("t:"))
    settled = F.size("covering") == F.size(dated)
    same_everywhere = (F.size("covering") == F.size("listing")) & (F.col("contents") == 1)
    winner = (
        F.when(F.size("covering") == 1, F.element_at("covering", 1))
        .when(settled, F.array_max(dated))
        .when(same_everywhere, F.coalesce(F.array_max(dated), F.array_min("covering")))
    )
    return (
        keyed.join(scoped, on=["kind", "key"], how="left")
        .withColumn("covering", covering)
        .select("kind", "key", "listing", "covering", winner.alias("winner"))
    )


def rank_copies(copies: DataFrame, sources: DataFrame | None = None) -> DataFrame:
    """``copies`` (``kind``, ``key``, ``content``, ``asset_type``, ``ancestors``,
    ``update_time``, ``source``, ``block``, ``position`` and any payload) with ``export``,
    ``export_time``, ``fate`` (:data:`EVALUATED`, :data:`SUPERSEDED`, :data:`ABSENT`,
    :data:`AMBIGUOUS`), ``newest`` (evaluated) and ``snap`` (its snapshot), by the module's
    rules. ``sources`` (:data:`SOURCES_DDL`; None: each source is an
    export without a time). The result does not depend on partitioning nor on names. Lazy."""
    if sources is None:
        placed = copies.withColumn("export", F.col("source")).withColumn(
            "export_time", F.lit(None).cast("timestamp")
        )
    else:
        placed = copies.join(F.broadcast(sources), on="source", how="left").withColumn(
            "export", F.coalesce("export", "source")
        )
    placed = placed.withColumn("snap", _snapshot())
    ranked = placed.join(_winners(placed), on=["kind", "key"])
    in_winner = F.col("snap") == F.col("winner")
    per_key = Window.partitionBy("kind", "key")
    latest = F.max(F.when(in_winner, F.col("update_time"))).over(per_key)
    top = in_winner & F.col("update_time").eqNullSafe(latest)
    tied = F.size(F.collect_set(F.when(top, F.col("content"))).over(per_key)) > 1
    first = F.row_number().over(
        per_key.orderBy(
            in_winner.desc(),
            F.col("update_time").desc_nulls_last(),
            "content",
            "source",
            "block",
            "position",
        )
    )
    fate = (
        F.when(F.col("winner").isNull() | tied, F.lit(AMBIGUOUS))
        .when(~F.array_contains("listing", F.col("winner")), F.lit(ABSENT))
        .when(first == 1, F.lit(EVALUATED))
        .otherwise(F.lit(SUPERSEDED))
    )
    return (
        ranked.withColumn("fate", fate)
        .withColumn("newest", F.col("fate") == EVALUATED)
        .drop("listing", "covering", "winner")
    )


def ambiguous_examples(ranked: DataFrame) -> tuple[list[dict[str, Any]], int]:
    """The first :data:`MAX_LISTED` ambiguous assets of :func:`rank_copies` (by content and
    key: ``kind``, ``key``, ``exports``, sorted) and how many there are (0: none; one small job,
    a second only when some are).
    """
    ambiguous = (
        ranked.filter(F.col("fate") == AMBIGUOUS)
        .groupBy("kind", "key")
        .agg(F.array_sort(F.collect_set("export")).alias("exports"))
    )
    first = [row.asDict() for row in ambiguous.orderBy("kind", "key").limit(MAX_LISTED).collect()]
    if not first:
        return [], 0
    return first, len(first) if len(first) < MAX_LISTED else ambiguous.count()


def ambiguity_message(examples: list[dict[str, Any]], count: int) -> str:
    """The run's error for ambiguous assets: each named with the exports that hold or cover
    it, and how to give the exports' read times."""
    listed = "; ".join(f"{e['key']} ({e['kind']}) in {', '.join(e['exports'])}" for e in examples)
    more = f"; and {count - len(examples)} more" if count > len(examples) else ""
    return (
        f"{count} asset(s) are in several exports whose order the audit cannot tell (an export "
        f"without a read time, or two different copies with the same update_time in one "
        f"snapshot): {listed}{more}. Give each export with its read time, --snapshot "
        "TIME=PATH (the readTime of `gcloud asset operations describe`, or the --snapshot-time "
        "given to `gcloud asset export`), or audit one export at a time"
    )


def shown_time(value: datetime | None) -> str | None:
    """A read time as ``summary.json`` shows it: RFC 3339 in UTC (``...Z``), or None. Spark
    gives a naive datetime in the session's time zone (the local one), an aware one is kept."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def snapshot_frame(ranked: DataFrame, absent: DataFrame) -> DataFrame:
    """What ``summary.json``'s ``snapshots`` says, as rows to collect (with the summary's other
    aggregates: :func:`~pushguard.audit.aggregates.aggregates_frame`): per export its read
    time and, per content, its scope (:func:`coverage`), and the assets no longer in the
    newest export that covers them, per type (``absent``: ``asset_type``, ``assets``): columns
    ``export``, ``export_time``, ``kind``, ``scope``, ``asset_type``, ``assets``. Lazy."""
    text, stamp, count = (F.lit(None).cast(t) for t in ("string", "timestamp", "long"))
    exports = coverage(ranked).select(
        "export", "export_time", "kind", "scope", text.alias("asset_type"), count.alias("assets")
    )
    gone = absent.select(
        text.alias("export"),
        stamp.alias("export_time"),
        text.alias("kind"),
        text.alias("scope"),
        "asset_type",
        F.col("assets").cast("long"),
    )
    return exports.unionByName(gone)


def snapshot_rows(rows: list[Any]) -> tuple[list[Any], dict[str, int]]:
    """The collected rows of :func:`snapshot_frame` as the exports' rows (sorted by export and
    content) and the absent assets per type (sorted by type)."""
    listed = sorted(
        (r for r in rows if r["export"] is not None),
        key=lambda r: (r["export"], r["kind"]),
    )
    counts = {r["asset_type"]: r["assets"] for r in rows if r["export"] is None}
    return listed, dict(sorted(counts.items()))
