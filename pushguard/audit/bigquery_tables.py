"""The tables of a Cloud Asset Inventory export to BigQuery, as Spark types.

As the spark-bigquery-connector reads them (a TIMESTAMP as ``TimestampType``, a REPEATED field as
``ArrayType``, a RECORD as ``StructType``), per content type of the default one-table-per-content-
type export: :data:`RESOURCE_TABLE`, :data:`IAM_POLICY_TABLE`, :data:`ACCESS_POLICY_TABLE`
("Export asset metadata to BigQuery",
https://cloud.google.com/asset-inventory/docs/export-bigquery). The audit reads any table through
its own schema (:mod:`pushguard.audit.bigquery_json`); these are the documented shapes, for the
tests and the docs.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)


def _resource_record(data: StructField) -> StructType:
    return StructType(
        [
            StructField("version", StringType()),
            StructField("discovery_document_uri", StringType()),
            StructField("discovery_name", StringType()),
            StructField("resource_url", StringType()),
            StructField("parent", StringType()),
            data,
            StructField("location", StringType()),
        ]
    )


def _envelope(*content: StructField) -> StructType:
    return StructType(
        [
            StructField("name", StringType()),
            StructField("asset_type", StringType()),
            *content,
            StructField("ancestors", ArrayType(StringType(), containsNull=False)),
            StructField("update_time", TimestampType()),
        ]
    )


RESOURCE_TABLE = _envelope(
    StructField("resource", _resource_record(StructField("data", StringType())))
)
"""The table of a ``--content-type=resource`` export, as Spark types: ``resource.data`` is the
resource's JSON as a STRING."""

_CONDITION = StructType(
    [StructField(name, StringType()) for name in ("expression", "title", "description", "location")]
)

IAM_POLICY_TABLE = _envelope(
    StructField(
        "iam_policy",
        StructType(
            [
                StructField("etag", StringType()),
                StructField(
                    "bindings",
                    ArrayType(
                        StructType(
                            [
                                StructField("role", StringType()),
                                StructField("members", ArrayType(StringType(), False)),
                                StructField("condition", _CONDITION),
                            ]
                        ),
                        False,
                    ),
                ),
            ]
        ),
    )
)
"""The table of a ``--content-type=iam-policy`` export, as Spark types."""

_PERIMETER_CONFIG = StructType(
    [
        StructField("resources", ArrayType(StringType(), False)),
        StructField("access_levels", ArrayType(StringType(), False)),
        StructField("restricted_services", ArrayType(StringType(), False)),
        StructField(
            "vpc_accessible_services",
            StructType(
                [
                    StructField("enable_restriction", BooleanType()),
                    StructField("allowed_services", ArrayType(StringType(), False)),
                ]
            ),
        ),
    ]
)

ACCESS_POLICY_TABLE = _envelope(
    StructField(
        "access_policy",
        StructType([StructField(name, StringType()) for name in ("name", "parent", "title")]),
    ),
    StructField(
        "access_level",
        StructType([StructField(name, StringType()) for name in ("name", "title", "description")]),
    ),
    StructField(
        "service_perimeter",
        StructType(
            [
                *(StructField(n, StringType()) for n in ("name", "title", "description")),
                StructField("perimeter_type", StringType()),
                StructField("status", _PERIMETER_CONFIG),
                StructField("spec", _PERIMETER_CONFIG),
                StructField("use_explicit_dry_run_spec", BooleanType()),
            ]
        ),
    ),
)
"""The table of a ``--content-type=access-policy`` export, as Spark types (the records as far as
the audit reads them; any other field the table has is passed through)."""
