"""Assets -> one row of joined facts per subscription, all in Spark.

Joins (all on small, asset-type-filtered tables; the big input is read once, in parse):

- the subscription's project number: its ``ancestors`` (``projects/N`` first), else its
  ``resource.parent``; its project ID from its asset name, or, when the name holds the project's
  number (``projects/123456789012/subscriptions/S``), from the export's project assets
  (:func:`project_ids`);
- the push-auth account by email -> its service-account asset and ancestors;
- the push endpoint's host -> the Cloud Run service or Cloud Function that serves it
  (:mod:`pushguard.audit.targets`);
- the dead-letter topic -> its topic asset;
- service perimeters that restrict ``pubsub.googleapis.com`` -> their member project numbers
  (:mod:`pushguard.audit.perimeters`);
- IAM bindings on each of those assets **and on their ancestors**, a custom role's with the
  permissions the export's role asset gives (:mod:`pushguard.audit.grants`).

Assets without ``ancestors`` (some exports) get them from the ``parent`` links of the projects
and folders in the export (:mod:`pushguard.audit.hierarchy`).

An asset listed more than once (several exports, or twice in one file) is evaluated in the copy
of the newest snapshot that covers it, and not at all when that snapshot no longer lists it
(:mod:`pushguard.audit.snapshots`: resources, IAM policies and service perimeters each on their
own); the other copies are counted as superseded (:meth:`AssetCopies.superseded`) or as gone
from the newest export (:meth:`AssetCopies.absent`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pushguard.audit.grants import custom_roles, grant_lists
from pushguard.audit.hierarchy import hierarchy, resources_of
from pushguard.audit.perimeters import perimeter_members
from pushguard.audit.schemas import (
    JOINED_SCHEMA,
    NEEDED_TYPES,
    ORGANIZATION,
    PERIMETER,
    PROJECT,
    RESOURCE_DATA,
    SERVICE_ACCOUNT,
    SUBSCRIPTION,
    TOPIC,
    data_column,
)
from pushguard.audit.snapshots import (
    ABSENT,
    IAM,
    PERIMETER_CONTENT,
    RESOURCE,
    SUPERSEDED,
    rank_copies,
)
from pushguard.audit.targets import TARGET_KINDS, push_targets, url_host

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
    """Every copy of the assets the audit uses, ranked
    (:func:`~pushguard.audit.snapshots.rank_copies`): the :data:`ASSET_COLUMNS` with ``kind``
    (``resource``, ``iam``, ``perimeter``), ``key``, ``export``, ``export_time``, ``fate`` and
    ``newest`` (the copy is evaluated)."""

    ranked: DataFrame

    def _kind(self, kind: str) -> DataFrame:
        return self.ranked.filter(F.col("kind") == kind)

    @property
    def resources(self) -> DataFrame:
        """Every copy of a resource, with ``newest`` (lazy)."""
        return self._kind(RESOURCE).select(*ASSET_COLUMNS, "newest")

    @property
    def policies(self) -> DataFrame:
        """Every copy of an IAM policy, with ``newest`` (lazy)."""
        return self._kind(IAM).select(*ASSET_COLUMNS, "newest")

    @property
    def perimeters(self) -> DataFrame:
        """The evaluated copy of each service perimeter, in its access-policy form or as a
        ``ServicePerimeter`` resource (lazy)."""
        resource_form = (F.col("kind") == RESOURCE) & (F.col("asset_type") == PERIMETER)
        return self.ranked.filter(
            F.col("newest") & ((F.col("kind") == PERIMETER_CONTENT) | resource_form)
        ).select(*ASSET_COLUMNS)

    def newest(self) -> tuple[DataFrame, DataFrame]:
        """The evaluated copy of each resource and of each IAM policy (lazy)."""
        return (
            self.resources.filter(F.col("newest")).drop("newest"),
            self.policies.filter(F.col("newest")).drop("newest"),
        )

    def _counted(self, fate: str) -> DataFrame:
        kind = F.when(F.col("kind") == PERIMETER_CONTENT, F.lit(PERIMETER)).otherwise(
            F.col("asset_type")
        )
        return self.ranked.filter(F.col("fate") == fate).withColumn("asset_type", kind)

    def superseded(self) -> DataFrame:
        """``asset_type``, ``copies``: per asset type, the copies (a resource, an IAM policy, a
        service perimeter of an access-policy export, counted as
        ``accesscontextmanager.googleapis.com/ServicePerimeter``) not evaluated because another
        copy of the same asset is (only types with some; lazy)."""
        return (
            self._counted(SUPERSEDED).groupBy("asset_type").agg(F.count(F.lit(1)).alias("copies"))
        )

    def absent(self) -> DataFrame:
        """``asset_type``, ``assets``: per asset type (as :meth:`superseded` counts them), the
        assets of older exports that the newest export covering them no longer lists (deleted
        since, an IAM policy removed, a perimeter deleted): none of their copies is evaluated
        (lazy)."""
        return (
            self._counted(ABSENT)
            .select("asset_type", "kind", "key")
            .distinct()
            .groupBy("asset_type")
            .agg(F.count(F.lit(1)).alias("assets"))
        )


def asset_copies(
    assets: DataFrame,
    keep: Callable[[DataFrame], DataFrame] = lambda frame: frame,
    sources: DataFrame | None = None,
    hold: Callable[[DataFrame], DataFrame] = lambda frame: frame,
) -> AssetCopies:
    """:func:`split_assets`, ranked by :func:`~pushguard.audit.snapshots.rank_copies` with the
    lines' ``sources`` (:data:`~pushguard.audit.snapshots.SOURCES_DDL`; None: each file is an
    export without a read time), passed through ``keep`` (the run persists it: the joins read it
    several times). The copies before their ranking pass through ``hold`` (the run computes
    them once: the ranking reads them in several stages at once)."""
    return AssetCopies(keep(rank_copies(hold(copies_of(*split_assets(assets))), sources)))


def _content(*columns: str) -> Column:
    """A copy's content, as the rules read it (its time left out): a digest of its JSON."""
    return F.sha2(F.to_json(F.struct(*columns)), 256)


def copies_of(resources: DataFrame, policies: DataFrame, perimeters: DataFrame) -> DataFrame:
    """The three frames of :func:`split_assets` as one frame of copies for
    :func:`~pushguard.audit.snapshots.rank_copies`: ``kind``, ``key`` (asset type and name; a
    perimeter of an access-policy export by its own name, ``accessPolicies/P/servicePerimeters/
    S``: every perimeter of a policy is a line named after its organization), ``content``."""
    data = [data_column(kind) for kind in RESOURCE_DATA]
    named = F.concat_ws(" ", "asset_type", "name")
    access_form = perimeters.filter(F.col("perimeter").isNotNull())
    return (
        resources.select(
            "*",
            F.lit(RESOURCE).alias("kind"),
            named.alias("key"),
            _content("parent", "ancestors", *data).alias("content"),
        )
        .unionByName(
            policies.select(
                "*",
                F.lit(IAM).alias("kind"),
                named.alias("key"),
                _content("ancestors", "iam").alias("content"),
            )
        )
        .unionByName(
            access_form.select(
                "*",
                F.lit(PERIMETER_CONTENT).alias("kind"),
                F.coalesce(F.col("perimeter")["name"], named).alias("key"),
                _content("ancestors", "perimeter").alias("content"),
            )
        )
    )


def split_assets(assets: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame]:
    """The parsed assets the audit uses (``assets`` as :func:`subscription_facts` takes them):
    resources (a line with a typed ``resource.data``, or an organization's ``resource``), IAM
    policies (one line may carry a resource and its IAM policy) and perimeters (either form);
    each frame has the :data:`ASSET_COLUMNS`. Lazy."""
    parsed = assets.filter(
        F.col("reason").isNull()
        & (F.col("asset_type").isin(*NEEDED_TYPES) | F.col("perimeter").isNotNull())
    )
    has_data = F.lit(False)
    for kind in RESOURCE_DATA:
        has_data = has_data | F.col(data_column(kind)).isNotNull()
    organization = (F.col("asset_type") == ORGANIZATION) & F.col("has_resource")
    resources = parsed.filter(has_data | organization)
    policies = parsed.filter(F.col("iam").isNotNull())
    perimeters = parsed.filter(
        F.col("perimeter").isNotNull() | F.col(data_column(PERIMETER)).isNotNull()
    )
    return (
        resources.select(*ASSET_COLUMNS),
        policies.select(*ASSET_COLUMNS),
        perimeters.select(*ASSET_COLUMNS),
    )


def project_ids(resources: DataFrame) -> DataFrame:
    """``number_of_id``, ``id_of_number``: each project asset of the export (``resources``) by
    its number, from its asset name (exports name a project
    ``//cloudresourcemanager.googleapis.com/projects/PROJECT_NUMBER``:
    https://cloud.google.com/asset-inventory/docs/asset-names), and its ID (``resource.data``'s
    ``projectId``, https://cloud.google.com/resource-manager/reference/rest/v1/projects), each
    number once. Lazy."""
    number = F.regexp_extract(
        "name", r"^//cloudresourcemanager\.googleapis\.com/projects/([0-9]+)$", 1
    )
    project_id = F.col(data_column(PROJECT))["projectId"]
    return (
        resources.filter(F.col("asset_type") == PROJECT)
        .select(number.alias("number_of_id"), project_id.alias("id_of_number"))
        .filter((F.col("number_of_id") != "") & F.col("id_of_number").isNotNull())
        .dropDuplicates(["number_of_id"])
    )


def _subscriptions(resources: DataFrame, tree: DataFrame | None) -> DataFrame:
    """The subscriptions' own facts, and ``endpoint_host`` to find their push target. A
    subscription whose name holds its project's number gets the project's ID from the export's
    project assets (:func:`project_ids`; null when none is that project)."""
    data = F.col(data_column(SUBSCRIPTION))
    named = F.regexp_extract("name", r"/projects/([^/]+)/subscriptions/", 1)
    by_number = named.rlike(r"^[0-9]+$")
    number = F.coalesce(
        F.nullif(
            F.regexp_extract(F.try_element_at("ancestors", F.lit(1)), r"^projects/([0-9]+)$", 1),
            F.lit(""),
        ),
        F.nullif(F.regexp_extract("parent", r"/projects/([0-9]+)$", 1), F.lit("")),
        F.when(by_number, named),
    )
    ids = F.broadcast(project_ids(resources))
    subscriptions = resources_of(resources, tree, SUBSCRIPTION).join(
        ids, F.when(by_number, named) == F.col("number_of_id"), "left"
    )
    return subscriptions.select(
        F.col("name").alias("asset_name"),
        F.when(by_number, F.col("id_of_number")).otherwise(named).alias("project_id"),
        number.alias("project_number"),
        F.coalesce("ancestors", F.array()).alias("ancestors"),
        data["pushConfig"]["pushEndpoint"].alias("push_endpoint"),
        F.lower(data["pushConfig"]["oidcToken"]["serviceAccountEmail"]).alias("push_auth_account"),
        data["pushConfig"]["oidcToken"]["audience"].alias("audience"),
        data["topic"].alias("topic"),
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
    grants = grant_lists(facts, policies, custom_roles(resources))
    return facts.join(grants, on="asset_name", how="left").select(
        *(F.col(field.name).cast(field.dataType).alias(field.name) for field in JOINED_SCHEMA)
    )
