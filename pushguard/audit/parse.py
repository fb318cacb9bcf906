"""Lines -> assets: the envelope and the typed payloads, or a quarantine reason.

Every line read ends as exactly one row of the result, with ``reason`` null (parsed) or the
reason it was quarantined. That is what makes the accounting hold: parsed + quarantined = read.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pushguard.audit.schemas import (
    CORRUPT,
    ENVELOPE,
    IAM_POLICY,
    IAM_TYPES,
    IDENTITY,
    NEEDED_TYPES,
    RESOURCE_DATA,
    SERVICE_PERIMETER,
)

DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024
"""Lines longer than this are quarantined unparsed. CAI resources are far smaller: an IAM policy
is at most 64 KB (https://cloud.google.com/iam/quotas)."""

QUARANTINE_TEXT_CHARS = 2048
"""How much of a quarantined line is kept in ``quarantine/`` (the rest is cut)."""

_JSON_OPTIONS = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}


def data_column(asset_type: str) -> str:
    """The column holding the typed ``resource.data`` of ``asset_type``."""
    service, _, kind = asset_type.partition("/")
    return f"data_{kind.lower()}_{service.partition('.')[0]}"


def _not_a_string(value: Column) -> Column:
    """True when a string field read by ``from_json`` may hold a JSON number, boolean, array or
    object (which Spark turns into its JSON text): the cheap test on the text."""
    return value.rlike(r"^\s*[\[{]") | value.rlike(r"^(-?[0-9][0-9.eE+-]*|true|false)$")


def _json_type(line: Column, field: str) -> Column:
    """The JSON type of the top-level ``field`` of ``line`` (``STRING``, ``BIGINT``,
    ``ARRAY<...>``...), parsing the line again (only called on suspect lines)."""
    return F.schema_of_variant(F.try_variant_get(F.try_parse_json(line), f"$.{field}", "variant"))


_VARIANT = hasattr(F, "try_parse_json")
"""Spark 4's variant functions tell a JSON value's type; on Spark 3.5 the wrong-type check is
skipped (such a line is read as before, its value's JSON text as the string)."""


def _wrong_type(field: str) -> Column:
    if not _VARIANT:
        return F.lit(False)
    value = F.col(f"id.{field}")
    return F.when(
        value.isNotNull() & _not_a_string(value),
        _json_type(F.col("value"), field) != F.lit("STRING"),
    ).otherwise(F.lit(False))


def _typed(raw: Column, schema: object) -> Column:
    return F.from_json(raw, schema, _JSON_OPTIONS)  # type: ignore[arg-type]


def parse_assets(lines: DataFrame, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> DataFrame:
    """Parse each line; see the module docstring. Columns: ``source``, ``block``, ``position``,
    ``asset_type``, ``name``, ``ancestors``, ``parent``, ``reason``, ``text`` (quarantined lines
    only), one typed column per resource type (:func:`data_column`), ``iam`` and ``perimeter``."""
    too_long = F.octet_length("value") > max_line_bytes
    identity = F.when(~too_long, _typed(F.col("value"), IDENTITY))
    frame = lines.select("source", "block", "position", "value", identity.alias("id"))
    asset_type = F.coalesce(F.col("id.asset_type"), F.col("id.assetType"))
    # Only the lines of needed types get the full envelope (payloads copied out as text); the
    # others, most of an organisation's export, are only checked to be JSON and counted.
    needed = asset_type.isin(*NEEDED_TYPES) & F.col(f"id.{CORRUPT}").isNull()
    frame = frame.select(
        "source",
        "block",
        "position",
        "value",
        "id",
        F.when(needed, _typed(F.col("value"), ENVELOPE)).alias("env"),
        too_long.alias("too_long"),
        asset_type.alias("asset_type"),
    )
    data = F.col("env.resource.data")
    typed = {
        data_column(kind): F.when(
            (F.col("asset_type") == kind) & data.isNotNull(), _typed(data, schema)
        )
        for kind, schema in RESOURCE_DATA.items()
    }
    iam_raw = F.coalesce(F.col("env.iam_policy"), F.col("env.iamPolicy"))
    perimeter_raw = F.coalesce(F.col("env.service_perimeter"), F.col("env.servicePerimeter"))
    frame = frame.select(
        "*",
        *(column.alias(name) for name, column in typed.items()),
        F.when(
            F.col("asset_type").isin(*IAM_TYPES) & iam_raw.isNotNull(), _typed(iam_raw, IAM_POLICY)
        ).alias("iam"),
        F.when(perimeter_raw.isNotNull(), _typed(perimeter_raw, SERVICE_PERIMETER)).alias(
            "perimeter"
        ),
    )
    frame = frame.withColumn("reason", _reason(max_line_bytes, list(typed)))
    return frame.select(
        "source",
        "block",
        "position",
        "asset_type",
        F.col("id.name").alias("name"),
        F.col("env.ancestors").alias("ancestors"),
        F.col("env.resource.parent").alias("parent"),
        *typed,
        "iam",
        "perimeter",
        "reason",
        F.when(F.col("reason").isNotNull(), F.substring("value", 1, QUARANTINE_TEXT_CHARS)).alias(
            "text"
        ),
    )


def _reason(max_line_bytes: int, typed: list[str]) -> Column:
    corrupt_payload = F.lit(None).cast("string")
    for name in reversed(typed):
        corrupt_payload = F.when(
            F.col(f"{name}.{CORRUPT}").isNotNull(),
            F.lit("resource.data does not fit the schema of its asset type"),
        ).otherwise(corrupt_payload)
    return (
        F.when(F.col("too_long"), F.lit(f"line longer than {max_line_bytes} bytes"))
        .when(
            F.col("id").isNull()
            | F.col(f"id.{CORRUPT}").isNotNull()
            | F.col(f"env.{CORRUPT}").isNotNull(),
            F.when(F.get_json_object("value", "$").isNull(), F.lit("not JSON")).otherwise(
                F.lit("JSON that does not fit the Cloud Asset Inventory envelope")
            ),
        )
        .when(_wrong_type("asset_type"), F.lit("asset_type is not a JSON string"))
        .when(_wrong_type("assetType"), F.lit("assetType is not a JSON string"))
        .when(_wrong_type("name"), F.lit("name is not a JSON string"))
        .when(F.col("asset_type").isNull(), F.lit("no asset type (asset_type or assetType)"))
        .when(F.col("id.name").isNull(), F.lit("no asset name"))
        .when(
            F.col(f"iam.{CORRUPT}").isNotNull(),
            F.lit("iam_policy does not fit the IAM policy schema"),
        )
        .when(
            F.col(f"perimeter.{CORRUPT}").isNotNull(),
            F.lit("service_perimeter does not fit the service perimeter schema"),
        )
        .otherwise(corrupt_payload)
    )
