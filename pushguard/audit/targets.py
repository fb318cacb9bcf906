"""Push endpoint host -> the Cloud Run service or Cloud Function that serves it.

The service's URLs, per asset type: a Cloud Run service's v2 ``uri`` and ``urls``, v1 (Knative)
``status.url`` and ``status.address.url``; a 1st-gen function's ``httpsTrigger.url``; a 2nd-gen
function's ``serviceConfig.uri``. Each becomes a :class:`~pushguard.rules.facts.TargetKind`
(:data:`TARGET_KINDS`) and the asset whose IAM policy holds the invoker grant.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pushguard.audit.schemas import FUNCTION_V1, FUNCTION_V2, RUN_SERVICE, data_column
from pushguard.rules.facts import TargetKind

TARGET_KINDS: dict[str, TargetKind] = {
    RUN_SERVICE: TargetKind.CLOUD_RUN,
    FUNCTION_V1: TargetKind.CLOUD_FUNCTION_V1,
    # A 2nd-gen function is a Cloud Run service underneath: its invoker grant is
    # roles/run.invoker on that service (serviceConfig.service, the target asset below), the
    # same check as for a Cloud Run service (pushguard.rules.iam.INVOKER maps both kinds to
    # run.invoker). The audit has always reported it as cloud-run, as the pack does; kept so.
    FUNCTION_V2: TargetKind.CLOUD_RUN,
}
"""The target kind of each asset type that can serve a push endpoint; every such type is listed
(no default), and only these types are read as targets."""

TARGET_COLUMNS = ("endpoint_host", "target_asset", "target_kind", "target_name", "target_ancestors")
"""The columns of :func:`push_targets`."""


def url_host(url: Column) -> Column:
    """The lower-case host of an absolute URL (``scheme://host...``), else ``""``."""
    return F.lower(F.regexp_extract(url, r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:@]+)", 1))


def _target_kind() -> Column:
    """:data:`TARGET_KINDS` as a column: one explicit case per asset type."""
    cases = list(TARGET_KINDS.items())
    asset_type, kind = cases[0]
    column = F.when(F.col("asset_type") == asset_type, F.lit(kind.value))
    for asset_type, kind in cases[1:]:
        column = column.when(F.col("asset_type") == asset_type, F.lit(kind.value))
    return column


def _urls() -> Column:
    """Every URL a target asset serves (nulls included)."""
    run = F.col(data_column(RUN_SERVICE))
    fn1 = F.col(data_column(FUNCTION_V1))
    fn2 = F.col(data_column(FUNCTION_V2))
    return (
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


def _invoker_asset() -> Column:
    """The asset whose IAM policy holds the invoker grant: a 2nd-gen function's Cloud Run
    service when it names one, else the asset itself."""
    service = F.col(data_column(FUNCTION_V2))["serviceConfig"]["service"]
    return F.when(
        (F.col("asset_type") == FUNCTION_V2) & service.isNotNull(),
        F.concat(F.lit("//run.googleapis.com/"), service),
    ).otherwise(F.col("name"))


def push_targets(services: DataFrame) -> DataFrame:
    """``endpoint_host`` -> the service behind it: :data:`TARGET_COLUMNS` (``target_asset``
    whose IAM policy holds the invoker grant, ``target_kind``, ``target_name``,
    ``target_ancestors``), one row per host (the least target asset when several serve it).

    ``services`` are resources (``asset_type``, ``name``, ``ancestors`` and the data columns of
    the :data:`TARGET_KINDS` types); rows of other types are left out. Lazy."""
    urls = services.filter(F.col("asset_type").isin(*TARGET_KINDS)).select(
        F.explode(F.array_distinct(F.filter(_urls(), lambda u: u.isNotNull()))).alias("url"),
        _target_kind().alias("target_kind"),
        F.regexp_extract("name", r"/(?:services|functions)/([^/]+)$", 1).alias("target_name"),
        _invoker_asset().alias("target_asset"),
        F.col("ancestors").alias("target_ancestors"),
    )
    target = F.struct("target_asset", "target_kind", "target_name", "target_ancestors")
    return (
        urls.withColumn("endpoint_host", url_host(F.col("url")))
        .filter(F.col("endpoint_host") != "")
        .groupBy("endpoint_host")
        .agg(F.min(target).alias("target"))
        .select(
            "endpoint_host",
            *(F.col(f"target.{name}").alias(name) for name in TARGET_COLUMNS[1:]),
        )
    )
