"""Assets -> one row of joined facts per subscription, all in Spark.

Joins (all on small, asset-type-filtered tables; the big input is read once, in parse):

- the subscription's project number: its ``ancestors`` (``projects/N`` first), else its
  ``resource.parent``; its project ID from its asset name;
- the push-auth account by email -> its service-account asset and ancestors;
- the push endpoint's host -> the Cloud Run service (v2 ``uri``/``urls``, v1 ``status.url``) or
  Cloud Function (1st gen ``httpsTrigger.url``; 2nd gen ``serviceConfig.uri``, whose invoker is
  its Cloud Run service ``serviceConfig.service``) that serves it;
- the dead-letter topic -> its topic asset;
- service perimeters that restrict ``pubsub.googleapis.com`` -> their member project numbers;
- IAM bindings on each of those assets **and on their ancestors** (project, folders,
  organization), since IAM policies are inherited down the hierarchy
  (https://cloud.google.com/iam/docs/resource-hierarchy-access-control). A grant is kept with the
  resource it is made on and its condition, if any.

Assets without ``ancestors`` (some exports) get them from the ``parent`` links of the projects
and folders in the export.
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pushguard.audit.parse import data_column
from pushguard.audit.schemas import (
    FOLDER,
    FUNCTION_V1,
    FUNCTION_V2,
    GRANT_FACTS,
    JOINED_SCHEMA,
    NEEDED_TYPES,
    ORGANIZATION,
    PERIMETER,
    PROJECT,
    RESOURCE_DATA,
    RUN_SERVICE,
    SERVICE_ACCOUNT,
    SUBSCRIPTION,
    TOPIC,
)

CRM = "//cloudresourcemanager.googleapis.com/"
PUBSUB_API = "pubsub.googleapis.com"
MAX_HIERARCHY_DEPTH = 12
"""Folders nest at most 10 deep (https://cloud.google.com/resource-manager/docs/creating-managing-folders)."""


def _key(name: Column) -> Column:
    """An asset's IAM key: ``projects/N``, ``folders/N``, ``organizations/N`` for containers, the
    full asset name otherwise."""
    return F.when(name.startswith(CRM), F.substring_index(name, CRM, -1)).otherwise(name)


def _url_host(url: Column) -> Column:
    return F.lower(F.regexp_extract(url, r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:@]+)", 1))


def _first_per_name(frame: DataFrame) -> DataFrame:
    """One row per (name, asset type): an asset listed in several files is kept once (the first
    by file and position), so the result does not depend on partitioning."""
    first = F.min(F.struct("source", "position")).over(Window.partitionBy("name", "asset_type"))
    return (
        frame.withColumn("first", first)
        .filter(F.struct("source", "position") == F.col("first"))
        .drop("first")
    )


def split_assets(assets: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame]:
    """The parsed assets the audit uses: resources, IAM policies and perimeters (one line may
    carry a resource and its IAM policy), each once per asset."""
    parsed = assets.filter(
        F.col("reason").isNull()
        & (F.col("asset_type").isin(*NEEDED_TYPES) | F.col("perimeter").isNotNull())
    )
    has_data = F.lit(False)
    for kind in RESOURCE_DATA:
        has_data = has_data | F.col(data_column(kind)).isNotNull()
    resources = _first_per_name(parsed.filter(has_data | (F.col("asset_type") == ORGANIZATION)))
    policies = _first_per_name(parsed.filter(F.col("iam").isNotNull()))
    perimeters = parsed.filter(
        F.col("perimeter").isNotNull() | F.col(data_column(PERIMETER)).isNotNull()
    )
    return resources, policies, perimeters


def hierarchy(assets: DataFrame) -> DataFrame:
    """``key`` -> ``ancestors`` (itself first) for every project, folder and organization: the
    export's ``ancestors``, or else the chain of ``parent`` links.

    The links (one small row per container, not per line) are collected and followed on the
    driver, then broadcast: the hierarchy of an organization is at most a few hundred thousand
    containers, and a join per level would make the plan grow with the depth.
    """
    containers = assets.filter(F.col("asset_type").isin(PROJECT, FOLDER, ORGANIZATION))
    links = (
        containers.select(
            _key(F.col("name")).alias("key"),
            F.when(F.col("parent").startswith(CRM), F.substring_index("parent", CRM, -1)).alias(
                "up"
            ),
            F.col("ancestors"),
        )
        .dropDuplicates(["key"])
        .collect()
    )
    up = {row["key"]: row["up"] for row in links}
    rows = []
    for row in links:
        path = list(row["ancestors"] or [])
        if not path:
            node: str | None = row["key"]
            while node and node not in path and len(path) <= MAX_HIERARCHY_DEPTH:
                path.append(node)
                node = up.get(node)
        rows.append((row["key"], path))
    spark = assets.sparkSession
    return spark.createDataFrame(rows, "key string, ancestors array<string>")


def _with_ancestors(frame: DataFrame, tree: DataFrame | None) -> DataFrame:
    """Fill ``ancestors`` from the hierarchy where the export has none (``parent`` is a
    container's full name); ``tree`` None: every asset has its ancestors."""
    if tree is None:
        return frame
    parent_key = F.when(F.col("parent").startswith(CRM), F.substring_index("parent", CRM, -1))
    tree = tree.select(F.col("key").alias("parent_key"), F.col("ancestors").alias("derived"))
    return (
        frame.withColumn("parent_key", parent_key)
        .join(F.broadcast(tree), "parent_key", "left")
        .withColumn("ancestors", F.coalesce("ancestors", "derived"))
        .drop("parent_key", "derived")
    )


def subscription_facts(
    assets: DataFrame, include_dry_run: bool = False, *, derive_ancestors: bool = True
) -> DataFrame:
    """One row per subscription, with exactly the columns and types of
    :data:`~pushguard.audit.schemas.JOINED_SCHEMA` (what :mod:`pushguard.audit.evaluate` reads).

    ``assets`` are :func:`~pushguard.audit.parse.parse_assets` rows (``source``, ``position``,
    ``asset_type``, ``name``, ``ancestors``, ``parent``, the typed payloads, ``reason``).
    ``derive_ancestors=False`` says that every parsed asset of a needed type has ``ancestors``:
    the hierarchy is then not built (no collect to the driver); the result is the same. Lazy.
    """
    resources, policies, perimeters = (
        frame.persist(StorageLevel.MEMORY_AND_DISK) for frame in split_assets(assets)
    )
    tree = F.broadcast(hierarchy(resources)) if derive_ancestors else None

    sub_data = F.col(data_column(SUBSCRIPTION))
    subs = (
        _with_ancestors(resources.filter(F.col("asset_type") == SUBSCRIPTION), tree)
        .select(
            F.col("name").alias("asset_name"),
            F.regexp_extract("name", r"/projects/([^/]+)/subscriptions/", 1).alias("project_id"),
            F.coalesce(
                F.regexp_extract(F.element_at("ancestors", 1), r"^projects/([0-9]+)$", 1),
                F.regexp_extract("parent", r"/projects/([0-9]+)$", 1),
            ).alias("project_number"),
            F.coalesce("ancestors", F.array()).alias("ancestors"),
            sub_data["pushConfig"]["pushEndpoint"].alias("push_endpoint"),
            F.lower(sub_data["pushConfig"]["oidcToken"]["serviceAccountEmail"]).alias(
                "push_auth_account"
            ),
            sub_data["pushConfig"]["oidcToken"]["audience"].alias("audience"),
            F.coalesce(sub_data["enableExactlyOnceDelivery"], F.lit(False)).alias(
                "exactly_once_delivery"
            ),
            sub_data["deadLetterPolicy"]["deadLetterTopic"].alias("dead_letter_topic"),
        )
        .withColumn(
            "project_number", F.when(F.col("project_number") != "", F.col("project_number"))
        )
    )

    accounts = (
        _with_ancestors(resources.filter(F.col("asset_type") == SERVICE_ACCOUNT), tree)
        .select(
            F.lower(F.col(data_column(SERVICE_ACCOUNT))["email"]).alias("push_auth_account"),
            F.col("name").alias("account_asset"),
            F.col("ancestors").alias("account_ancestors"),
        )
        .dropDuplicates(["push_auth_account"])
    )

    services = _services(_with_ancestors(resources, tree))
    topics = _with_ancestors(resources.filter(F.col("asset_type") == TOPIC), tree).select(
        F.regexp_extract("name", r"^//pubsub\.googleapis\.com/(.*)$", 1).alias("dead_letter_topic"),
        F.col("name").alias("topic_asset"),
        F.col("ancestors").alias("topic_ancestors"),
    )
    members = _perimeter_members(perimeters, include_dry_run)

    facts = (
        subs.withColumn("endpoint_host", _url_host(F.col("push_endpoint")))
        .join(F.broadcast(accounts), "push_auth_account", "left")
        .join(F.broadcast(services), "endpoint_host", "left")
        .join(F.broadcast(topics), "dead_letter_topic", "left")
        .join(F.broadcast(members), "project_number", "left")
        .withColumn("in_service_perimeter", F.coalesce("in_perimeter", F.lit(False)))
        .drop("in_perimeter")
    )
    return _attach_grants(facts, policies).select(
        *(F.col(field.name).cast(field.dataType).alias(field.name) for field in JOINED_SCHEMA)
    )


def _services(resources: DataFrame) -> DataFrame:
    """``endpoint_host`` -> the service behind it (``target_kind``, ``target_name``,
    ``target_asset`` whose IAM policy holds the invoker grant, ``target_ancestors``)."""
    run = F.col(data_column(RUN_SERVICE))
    fn1 = F.col(data_column(FUNCTION_V1))
    fn2 = F.col(data_column(FUNCTION_V2))
    urls = (
        F.when(
            F.col("asset_type") == RUN_SERVICE,
            F.concat(
                F.array(run["uri"], run["status"]["url"], run["status"]["address"]["url"]),
                F.coalesce(run["urls"], F.array()),
            ),
        )
        .when(F.col("asset_type") == FUNCTION_V1, F.array(fn1["httpsTrigger"]["url"]))
        .when(F.col("asset_type") == FUNCTION_V2, F.array(fn2["serviceConfig"]["uri"]))
    )
    run_of_function = F.concat(F.lit("//run.googleapis.com/"), fn2["serviceConfig"]["service"])
    frame = resources.filter(
        F.col("asset_type").isin(RUN_SERVICE, FUNCTION_V1, FUNCTION_V2)
    ).select(
        F.explode(F.array_distinct(F.filter(urls, lambda u: u.isNotNull()))).alias("url"),
        F.when(F.col("asset_type") == FUNCTION_V1, "cloud-function-v1")
        .otherwise("cloud-run")
        .alias("target_kind"),
        F.regexp_extract("name", r"/(?:services|functions)/([^/]+)$", 1).alias("target_name"),
        F.when(
            (F.col("asset_type") == FUNCTION_V2) & fn2["serviceConfig"]["service"].isNotNull(),
            run_of_function,
        )
        .otherwise(F.col("name"))
        .alias("target_asset"),
        F.col("ancestors").alias("target_ancestors"),
    )
    return (
        frame.withColumn("endpoint_host", _url_host(F.col("url")))
        .filter(F.col("endpoint_host") != "")
        .groupBy("endpoint_host")
        .agg(
            F.min(F.struct("target_asset", "target_kind", "target_name", "target_ancestors")).alias(
                "t"
            )
        )
        .select("endpoint_host", "t.*")
    )


def _perimeter_members(perimeters: DataFrame, include_dry_run: bool) -> DataFrame:
    """Project numbers inside a perimeter that restricts Pub/Sub (``in_perimeter`` true)."""
    from_resource = F.col(data_column(PERIMETER))
    perimeter = F.coalesce("perimeter", from_resource)
    configs = [perimeter["status"]] + ([perimeter["spec"]] if include_dry_run else [])
    rows = None
    for config in configs:
        restricted = F.concat(
            F.coalesce(config["restricted_services"], F.array()),
            F.coalesce(config["restrictedServices"], F.array()),
        )
        frame = perimeters.select(
            F.explode(F.when(F.array_contains(restricted, PUBSUB_API), config["resources"])).alias(
                "member"
            )
        )
        rows = frame if rows is None else rows.unionByName(frame)
    assert rows is not None
    return (
        rows.select(F.regexp_extract("member", r"^projects/([0-9]+)$", 1).alias("project_number"))
        .filter(F.col("project_number") != "")
        .distinct()
        .withColumn("in_perimeter", F.lit(True))
    )


def _attach_grants(facts: DataFrame, policies: DataFrame) -> DataFrame:
    """Add the four grant lists; null where the asset is not in the export (not collected)."""
    bindings = policies.select(
        _key(F.col("name")).alias("key"), F.explode("iam.bindings").alias("b")
    ).select(
        "key",
        F.col("b.role").alias("role"),
        F.explode(F.coalesce("b.members", F.array())).alias("member"),
        F.coalesce("b.condition.title", "b.condition.expression").alias("condition"),
    )
    requests = {
        "account_grants": (F.col("account_asset"), F.col("account_ancestors")),
        "target_grants": (F.col("target_asset"), F.col("target_ancestors")),
        "dead_letter_grants": (F.col("topic_asset"), F.col("topic_ancestors")),
        "subscription_grants": (F.col("asset_name"), F.col("ancestors")),
    }
    wanted = None
    for fact, (asset, ancestors) in requests.items():
        frame = facts.filter(asset.isNotNull()).select(
            "asset_name",
            F.lit(fact).alias("fact"),
            F.explode(F.concat(F.array(_key(asset)), F.coalesce(ancestors, F.array()))).alias(
                "key"
            ),
        )
        wanted = frame if wanted is None else wanted.unionByName(frame)
    assert wanted is not None
    grant = F.struct("role", "member", F.col("key").alias("resource"), "condition")
    lists = (
        wanted.join(bindings, "key", "left")
        .groupBy("asset_name", "fact")
        .agg(F.array_sort(F.collect_list(F.when(F.col("role").isNotNull(), grant))).alias("grants"))
        .groupBy("asset_name")
        .pivot("fact", list(GRANT_FACTS))
        .agg(F.first("grants"))
    )
    return facts.join(lists, "asset_name", "left")
