"""IAM grants per subscription: the bindings on each asset a rule looks at and on its ancestors.

For each joined subscription, four lists (:data:`~pushguard.audit.schemas.GRANT_FACTS`): the
grants on the push-auth service account, on the push target, on the dead-letter topic and on the
subscription itself, each with those inherited from the asset's project, folders and
organization (https://cloud.google.com/iam/docs/resource-hierarchy-access-control). A grant is
kept with the resource it is made on and its condition, if any, and a grant of a custom role the
export describes (an ``iam.googleapis.com/Role`` asset, named
``//iam.googleapis.com/projects/P/roles/R`` or ``//iam.googleapis.com/organizations/N/roles/R``
as the binding's role is ``projects/P/roles/R``;
https://cloud.google.com/asset-inventory/docs/asset-names) with the service-account permissions
it carries, which the grant rules judge it by.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pushguard.audit.hierarchy import iam_key
from pushguard.audit.schemas import GRANT_FACTS, ROLE, data_column
from pushguard.rules.iam import IMPERSONATION_PERMISSIONS

GRANT_SOURCES: dict[str, tuple[str, str]] = {
    "account_grants": ("account_asset", "account_ancestors"),
    "target_grants": ("target_asset", "target_ancestors"),
    "dead_letter_grants": ("topic_asset", "topic_ancestors"),
    "subscription_grants": ("asset_name", "ancestors"),
}
"""Per grant list, the facts' columns of the asset it is on and of that asset's ancestors."""


def bindings(policies: DataFrame) -> DataFrame:
    """One row per member of each binding of the IAM ``policies`` (``name``, ``iam``): ``key``
    (:func:`~pushguard.audit.hierarchy.iam_key`), ``role``, ``member``, ``condition`` (its
    title, else its expression; null when unconditional). Lazy."""
    return policies.select(
        iam_key(F.col("name")).alias("key"), F.explode("iam.bindings").alias("b")
    ).select(
        "key",
        F.col("b.role").alias("role"),
        F.explode(F.coalesce("b.members", F.array())).alias("member"),
        F.coalesce("b.condition.title", "b.condition.expression").alias("condition"),
    )


def wanted_keys(facts: DataFrame) -> DataFrame:
    """What each grant list of each subscription looks up: ``asset_name``, ``fact`` (the list)
    and ``key``, one row per IAM key (the asset's, then its ancestors'); none for an asset that
    is not in the export. One pass over ``facts`` (one ``explode`` of the lists, then of their
    keys), so the joins behind ``facts`` are planned once. Lazy."""
    lists = []
    for fact, (asset, ancestors) in GRANT_SOURCES.items():
        keys: Column = F.concat(
            F.array(iam_key(F.col(asset))), F.coalesce(F.col(ancestors), F.array())
        )
        entry = F.struct(F.lit(fact).alias("fact"), keys.alias("keys"))
        lists.append(F.when(F.col(asset).isNotNull(), entry))
    present = F.filter(F.array(*lists), lambda entry: entry.isNotNull())
    return facts.select("asset_name", F.explode(present).alias("wanted")).select(
        "asset_name", F.col("wanted.fact").alias("fact"), F.explode("wanted.keys").alias("key")
    )


def custom_roles(resources: DataFrame) -> DataFrame:
    """``role`` (``projects/P/roles/R`` or ``organizations/N/roles/R``), ``permissions``: each
    custom role of the export (``resources``: newest copies) with the permissions of
    :data:`~pushguard.rules.iam.IMPERSONATION_PERMISSIONS` it carries, sorted; none when it is
    deleted. Lazy."""
    data = F.col(data_column(ROLE))
    wanted = F.array(*(F.lit(p) for p in sorted(IMPERSONATION_PERMISSIONS)))
    included = F.coalesce(data["includedPermissions"], F.array().cast("array<string>"))
    carried = F.array_sort(F.array_intersect(included, wanted))
    deleted = F.coalesce(data["deleted"], F.lit(False))
    name = F.regexp_extract(
        "name", r"^//iam\.googleapis\.com/((?:projects|organizations)/[^/]+/roles/[^/]+)$", 1
    )
    return (
        resources.filter((F.col("asset_type") == ROLE) & data.isNotNull())
        .select(
            name.alias("role"),
            F.when(deleted, F.array().cast("array<string>"))
            .otherwise(carried)
            .alias("permissions"),
        )
        .filter(F.col("role") != "")
        .dropDuplicates(["role"])
    )


def _grant_list(fact: str, grant: Column) -> Column:
    """One grant list of a subscription, in its one aggregation: the sorted grants of the rows
    of ``fact`` (empty when nothing is granted there), null when no row is of ``fact`` (its
    asset is not in the export)."""
    of_fact = F.col("fact") == fact
    granted = F.collect_list(F.when(of_fact & F.col("role").isNotNull(), grant))
    return F.when(F.max(F.when(of_fact, F.lit(True))), F.array_sort(granted))


def grant_lists(facts: DataFrame, policies: DataFrame, roles: DataFrame | None = None) -> DataFrame:
    """``asset_name`` and the :data:`~pushguard.audit.schemas.GRANT_FACTS` columns: per
    subscription, sorted arrays of grant structs (``role``, ``member``, ``resource``,
    ``condition``, ``permissions``: of a custom role in ``roles``, :func:`custom_roles`); a list
    is null when its asset is not in the export, or the export holds no IAM policy at all (not
    collected), empty when nothing is granted there. Lazy."""
    grant = F.struct("role", "member", F.col("key").alias("resource"), "condition", "permissions")
    granted = bindings(policies)
    if roles is None:
        granted = granted.withColumn("permissions", F.lit(None).cast("array<string>"))
    else:
        granted = granted.join(F.broadcast(roles), on="role", how="left")
    lists = (
        wanted_keys(facts)
        .join(granted, on="key", how="left")
        .groupBy("asset_name")
        .agg(*(_grant_list(fact, grant).alias(fact) for fact in GRANT_FACTS))
    )
    # An export without any IAM policy (a resource-only export: --content-type=resource) says
    # nothing of grants: every list is then "not collected", never "nothing granted".
    present = F.broadcast(policies.select(F.lit(True).alias("iam_exported")).limit(1))
    return lists.join(present, on=F.lit(True), how="left").select(
        "asset_name",
        *(F.when(F.col("iam_exported"), F.col(fact)).alias(fact) for fact in GRANT_FACTS),
    )
