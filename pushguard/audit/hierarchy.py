"""The resource hierarchy: IAM keys of assets, and each asset's ancestors.

IAM policies are inherited down the hierarchy (project, folders, organization:
https://cloud.google.com/iam/docs/resource-hierarchy-access-control), so the join needs every
asset's ancestors. Most exports carry them (``ancestors``); for those that do not,
:func:`hierarchy` follows the ``parent`` links of the projects and folders in the export, and
:func:`resources_of` fills them in.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pushguard.audit.schemas import FOLDER, ORGANIZATION, PROJECT, data_column

CRM = "//cloudresourcemanager.googleapis.com/"
MAX_HIERARCHY_DEPTH = 12
"""Folders nest at most 10 deep (https://cloud.google.com/resource-manager/docs/creating-managing-folders)."""

TREE_DDL = "key string, ancestors array<string>"
"""The schema of :func:`hierarchy`."""


def iam_key(name: Column) -> Column:
    """An asset's IAM key: ``projects/N``, ``folders/N``, ``organizations/N`` for containers, the
    full asset name otherwise."""
    return F.when(name.startswith(CRM), F.substring_index(name, CRM, -1)).otherwise(name)


def _container_key(parent: Column) -> Column:
    """The key of a ``parent`` that is a container's full name (else null)."""
    return F.when(parent.startswith(CRM), F.substring_index(parent, CRM, -1))


def hierarchy(assets: DataFrame) -> DataFrame:
    """``key`` -> ``ancestors`` (itself first) for every project, folder and organization in
    ``assets`` (``asset_type``, ``name``, ``parent``, ``ancestors`` are read): the export's
    ``ancestors``, or else the chain of ``parent`` links (:data:`TREE_DDL`).

    The links (one small row per container, not per line) are collected and followed on the
    driver, then broadcast: the hierarchy of an organization is at most a few hundred thousand
    containers, and a join per level would make the plan grow with the depth.
    """
    containers = assets.filter(F.col("asset_type").isin(PROJECT, FOLDER, ORGANIZATION))
    links = (
        containers.select(
            iam_key(F.col("name")).alias("key"),
            _container_key(F.col("parent")).alias("up"),
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
    return assets.sparkSession.createDataFrame(rows, TREE_DDL)


def resources_of(resources: DataFrame, tree: DataFrame | None, *asset_types: str) -> DataFrame:
    """The ``resources`` of ``asset_types``: ``asset_type``, ``name``, ``parent``, ``ancestors``
    and the typed data column of each type (:func:`~pushguard.audit.schemas.data_column`).

    ``ancestors`` are the export's, else, when ``tree`` (:func:`hierarchy`) is given, those of
    the asset's ``parent`` container; ``tree`` None: every asset has its ancestors. Lazy."""
    frame = resources.filter(F.col("asset_type").isin(*asset_types))
    ancestors = F.col("ancestors")
    if tree is not None:
        parents = tree.select(F.col("key").alias("parent_key"), F.col("ancestors").alias("derived"))
        frame = frame.withColumn("parent_key", _container_key(F.col("parent"))).join(
            F.broadcast(parents), on="parent_key", how="left"
        )
        ancestors = F.coalesce("ancestors", "derived")
    return frame.select(
        "asset_type",
        "name",
        "parent",
        ancestors.alias("ancestors"),
        *(data_column(kind) for kind in asset_types),
    )
