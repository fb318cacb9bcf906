"""VPC Service Controls: the projects inside a service perimeter that restricts Pub/Sub.

Perimeters come in two forms (:data:`~pushguard.audit.schemas.SERVICE_PERIMETER`): the
access-policy export's ``service_perimeter`` (snake_case) and the
``accesscontextmanager.googleapis.com/ServicePerimeter`` resource (camelCase). A perimeter's
enforced configuration is its ``status``; its dry-run one, ``spec``, counts only when asked.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pushguard.audit.schemas import PERIMETER, data_column

PUBSUB_API = "pubsub.googleapis.com"


def perimeter_members(perimeters: DataFrame, include_dry_run: bool) -> DataFrame:
    """``project_number`` (distinct) of every project inside a perimeter that restricts Pub/Sub,
    with ``in_perimeter`` true and ``perimeter_names``, the sorted names of those perimeters
    (``accessPolicies/POLICY/servicePerimeters/NAME``; a perimeter without a name is left out of
    the list, never out of the membership). ``perimeters`` are parsed assets with a ``perimeter``
    column or the perimeter resource's data column; ``include_dry_run`` also reads ``spec``.
    Lazy."""
    perimeter = F.coalesce("perimeter", F.col(data_column(PERIMETER)))
    configs = [perimeter["status"]] + ([perimeter["spec"]] if include_dry_run else [])
    members: DataFrame | None = None
    for config in configs:
        restricted = F.concat(
            F.coalesce(config["restricted_services"], F.array()),
            F.coalesce(config["restrictedServices"], F.array()),
        )
        frame = perimeters.select(
            F.explode(F.when(F.array_contains(restricted, PUBSUB_API), config["resources"])).alias(
                "member"
            ),
            perimeter["name"].alias("perimeter_name"),
        )
        members = frame if members is None else members.unionByName(frame)
    assert members is not None  # the enforced configuration is always read
    return (
        members.select(
            F.regexp_extract("member", r"^projects/([0-9]+)$", 1).alias("project_number"),
            "perimeter_name",
        )
        .filter(F.col("project_number") != "")
        .groupBy("project_number")
        .agg(F.array_sort(F.collect_set("perimeter_name")).alias("perimeter_names"))
        .select("project_number", F.lit(True).alias("in_perimeter"), "perimeter_names")
    )
