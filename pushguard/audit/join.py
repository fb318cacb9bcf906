"""Assets -> one row of joined facts per subscription, all in Spark.

Joins (all on small, asset-type-filtered tables; the big input is read once, in parse):

- the subscription's project number: its ``ancestors`` (``projects/N`` first), else its
  ``resource.parent``; its project ID from its asset name;
- the push-auth account by email -> its service-account asset and ancestors;
- the push endpoint's host -> the Cloud Run service or Cloud Function that serves it
  (:mod:`pushguard.audit.targets`);
- the dead-letter topic -> its topic asset;
- service perimeters that restrict ``pubsub.googleapis.com`` -> their member project numbers
  (:mod:`pushguard.audit.perimeters`);
- IAM bindings on each of those assets **and on their ancestors** (:mod:`pushguard.audit.grants`).

Assets without ``ancestors`` (some exports) get them from the ``parent`` links of the projects
and folders in the export (:mod:`pushguard.audit.hierarchy`).

An asset listed more than once (two exports of different dates in one folder, or twice in one
file) is evaluated in its newest copy only: the greatest ``update_time`` (the time of the
asset's last change, https://cloud.google.com/asset-inventory/docs/reference/rest/v1/Asset),
ties and copies without a time broken by file and line (the first wins). The others are counted
as superseded (:meth:`AssetCopies.superseded`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pushguard.audit.grants import grant_lists
from pushguard.audit.hierarchy import hierarchy, resources_of
from pushguard.audit.perimeters import perimeter_members
from pushguard.audit.schemas import (
    JOINED_SCHEMA,
    NEEDED_TYPES,
    ORGANIZATION,
    PERIMETER,
    RESOURCE_DATA,
    SERVICE_ACCOUNT,
    SUBSCRIPTION,
    TOPIC,
    data_column,
)
from pushguard.audit.targets import TARGET_KINDS, push_targets, url_host

COPY_ORDER = ("update_time", "source", "block", "position")
"""Which copy of an asset wins: the newest ``update_time`` (copies without one last), then the
first by file, split and position in the split (that is, by line)."""


def _ranked_copies(frame: DataFrame) -> DataFrame:
    """``frame`` plus ``newest`` (bool): whether the row is the copy of its (name, asset type)
    that :data:`COPY_ORDER` puts first. The result does not depend on partitioning."""
    time, *place = COPY_ORDER
    order = [F.col(time).desc_nulls_last(), *(F.col(name).asc() for name in place)]
    rank = F.row_number().over(Window.partitionBy("name", "asset_type").orderBy(*order))
    return frame.withColumn("newest", rank == 1)


ASSET_COLUMNS = (
    "source",
    "block",
    "position",
    "asset_type",
    "name",
    "ancestors",
    "update_time",
    "parent",
    *(data_column(kind) for kind in RESOURCE_DATA),
    "iam",
    "perimeter",
)
"""What the joins read of a parsed asset (:func:`split_assets`)."""


@dataclass(frozen=True)
class AssetCopies:
    """The parsed assets the audit uses, split: resources and IAM policies (every copy, each
    with ``newest``: :func:`_ranked_copies`), and perimeters; each frame has the
    :data:`ASSET_COLUMNS` (resources and policies also ``newest``)."""

    resources: DataFrame
    policies: DataFrame
    perimeters: DataFrame

    def newest(self) -> tuple[DataFrame, DataFrame]:
        """The newest copy of each resource and of each IAM policy (lazy)."""
        return (
            self.resources.filter(F.col("newest")).drop("newest"),
            self.policies.filter(F.col("newest")).drop("newest"),
        )

    def superseded(self) -> DataFrame:
        """``asset_type``, ``copies``: per asset type, the copies (a resource or an IAM policy)
        that a newer copy of the same asset superseded (only types with some; lazy)."""
        old = self.resources.unionByName(self.policies).filter(~F.col("newest"))
        return old.groupBy("asset_type").agg(F.count(F.lit(1)).alias("copies"))


def asset_copies(
    assets: DataFrame, keep: Callable[[DataFrame], DataFrame] = lambda frame: frame
) -> AssetCopies:
    """:func:`split_assets` as :class:`AssetCopies`, each frame passed through ``keep`` (the
    run persists them: the joins read them several times)."""
    resources, policies, perimeters = (keep(frame) for frame in split_assets(assets))
    return AssetCopies(resources, policies, perimeters)


def split_assets(assets: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame]:
    """The parsed assets the audit uses (``assets`` as :func:`subscription_facts` takes them):
    resources, IAM policies (one line may carry a resource and its IAM policy), each copy ranked
    (``newest``), and perimeters; each frame has the :data:`ASSET_COLUMNS`. Lazy."""
    parsed = assets.filter(
        F.col("reason").isNull()
        & (F.col("asset_type").isin(*NEEDED_TYPES) | F.col("perimeter").isNotNull())
    )
    has_data = F.lit(False)
    for kind in RESOURCE_DATA:
        has_data = has_data | F.col(data_column(kind)).isNotNull()
    resources = parsed.filter(has_data | (F.col("asset_type") == ORGANIZATION))
    policies = parsed.filter(F.col("iam").isNotNull())
    perimeters = parsed.filter(
        F.col("perimeter").isNotNull() | F.col(data_column(PERIMETER)).isNotNull()
    )
    return (
        _ranked_copies(resources.select(*ASSET_COLUMNS)),
        _ranked_copies(policies.select(*ASSET_COLUMNS)),
        perimeters.select(*ASSET_COLUMNS),
    )


def _subscriptions(resources: DataFrame, tree: DataFrame | None) -> DataFrame:
    """The subscriptions' own facts, and ``endpoint_host`` to find their push target."""
    data = F.col(data_column(SUBSCRIPTION))
    number = F.coalesce(
        F.regexp_extract(F.element_at("ancestors", 1), r"^projects/([0-9]+)$", 1),
        F.regexp_extract("parent", r"/projects/([0-9]+)$", 1),
    )
    return resources_of(resources, tree, SUBSCRIPTION).select(
        F.col("name").alias("asset_name"),
        F.regexp_extract("name", r"/projects/([^/]+)/subscriptions/", 1).alias("project_id"),
        F.when(number != "", number).alias("project_number"),
        F.coalesce("ancestors", F.array()).alias("ancestors"),
        data["pushConfig"]["pushEndpoint"].alias("push_endpoint"),
        F.lower(data["pushConfig"]["oidcToken"]["serviceAccountEmail"]).alias("push_auth_account"),
        data["pushConfig"]["oidcToken"]["audience"].alias("audience"),
        F.coalesce(data["enableExactlyOnceDelivery"], F.lit(False)).alias("exactly_once_delivery"),
        data["deadLetterPolicy"]["deadLetterTopic"].alias("dead_letter_topic"),
        url_host(data["pushConfig"]["pushEndpoint"]).alias("endpoint_host"),
    )


def _accounts(resources: DataFrame, tree: DataFrame | None) -> DataFrame:
    """``push_auth_account`` (e-mail, lower case) -> ``account_asset``, ``account_ancestors``."""
    return (
        resources_of(resources, tree, SERVICE_ACCOUNT)
        .select(
            F.lower(F.col(data_column(SERVICE_ACCOUNT))["email"]).alias("push_auth_account"),
            F.col("name").alias("account_asset"),
            F.col("ancestors").alias("account_ancestors"),
        )
        .dropDuplicates(["push_auth_account"])
    )


def _topics(resources: DataFrame, tree: DataFrame | None) -> DataFrame:
    """``dead_letter_topic`` (``projects/P/topics/T``) -> ``topic_asset``, ``topic_ancestors``."""
    return resources_of(resources, tree, TOPIC).select(
        F.regexp_extract("name", r"^//pubsub\.googleapis\.com/(.*)$", 1).alias("dead_letter_topic"),
        F.col("name").alias("topic_asset"),
        F.col("ancestors").alias("topic_ancestors"),
    )


def subscription_facts(
    assets: DataFrame | AssetCopies,
    include_dry_run: bool = False,
    *,
    derive_ancestors: bool = True,
) -> DataFrame:
    """One row per subscription (its newest copy), with exactly the columns and types of
    :data:`~pushguard.audit.schemas.JOINED_SCHEMA` (what :mod:`pushguard.audit.evaluate` reads).

    ``assets`` are :func:`~pushguard.audit.parse.parse_assets` rows (``source``, ``block``,
    ``position``, ``asset_type``, ``name``, ``ancestors``, ``update_time``, ``parent``, the
    typed payloads, ``reason``), or their :func:`asset_copies`. ``derive_ancestors=False`` says
    that every parsed asset of a needed type has ``ancestors``: the hierarchy is then not built
    (no collect to the driver); the result is the same. Lazy but for that collect.
    """
    copies = assets if isinstance(assets, AssetCopies) else asset_copies(assets)
    (resources, policies), perimeters = copies.newest(), copies.perimeters
    tree = F.broadcast(hierarchy(resources)) if derive_ancestors else None
    facts = (
        _subscriptions(resources, tree)
        .join(F.broadcast(_accounts(resources, tree)), on="push_auth_account", how="left")
        .join(
            F.broadcast(push_targets(resources_of(resources, tree, *TARGET_KINDS))),
            on="endpoint_host",
            how="left",
        )
        .join(F.broadcast(_topics(resources, tree)), on="dead_letter_topic", how="left")
        .join(
            F.broadcast(perimeter_members(perimeters, include_dry_run)),
            on="project_number",
            how="left",
        )
        .withColumn("in_service_perimeter", F.coalesce("in_perimeter", F.lit(False)))
        .withColumn(
            "service_perimeters", F.coalesce("perimeter_names", F.array().cast("array<string>"))
        )
    )
    return facts.join(grant_lists(facts, policies), on="asset_name", how="left").select(
        *(F.col(field.name).cast(field.dataType).alias(field.name) for field in JOINED_SCHEMA)
    )
