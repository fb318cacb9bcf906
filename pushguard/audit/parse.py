"""Lines -> assets: the envelope and the typed payloads, or a quarantine reason.

Every line read ends as exactly one row of the result, with ``reason`` null (parsed or blank)
or the reason it was quarantined, and ``blank`` true for a line of nothing but white space
(counted as blank, neither parsed nor quarantined). That is what makes the accounting hold:
parsed + quarantined + blank = read.

Two steps: :func:`parse_lines` reads every line (identity, envelope, payloads, the reasons but
wrong JSON types, and a cheap test for those); :func:`with_type_errors` checks the suspect lines
exactly (:mod:`pushguard.audit.json_types`). :func:`parse_assets` is both.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pushguard.audit.json_types import (
    VARIANT,
    iam_policy_text,
    identity_check,
    interpreted,
    payload_checks,
    perimeter_text,
    suspect_line,
)
from pushguard.audit.schemas import (
    CORRUPT,
    ENVELOPE,
    IAM_POLICY,
    IAM_TYPES,
    IDENTITY,
    NEEDED_TYPES,
    RESOURCE_DATA,
    SERVICE_PERIMETER,
    data_column,
)

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "NOT_ENVELOPE",
    "NOT_JSON",
    "QUARANTINE_TEXT_CHARS",
    "data_column",
    "parse_assets",
    "parse_lines",
    "with_type_errors",
]

DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024
"""Lines longer than this are quarantined unparsed. CAI resources are far smaller: an IAM policy
is at most 64 KB (https://cloud.google.com/iam/quotas)."""

QUARANTINE_TEXT_CHARS = 2048
"""How much of a quarantined line is kept in ``quarantine/`` (the rest is cut)."""

_JSON_OPTIONS = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}

TYPED_COLUMNS = tuple(data_column(kind) for kind in RESOURCE_DATA)
"""The typed ``resource.data`` columns, one per asset type of
:data:`~pushguard.audit.schemas.RESOURCE_DATA`, in its order."""


def _typed(raw: Column, schema: object) -> Column:
    return F.from_json(raw, schema, _JSON_OPTIONS)  # type: ignore[arg-type]


def _asset_type() -> Column:
    return F.coalesce(F.col("id.asset_type"), F.col("id.assetType"))


def _needed() -> Column:
    """The line is JSON with the identity schema and one of the asset types the audit reads."""
    return _asset_type().isin(*NEEDED_TYPES) & F.col(f"id.{CORRUPT}").isNull()


def _update_time() -> Column:
    """The asset's ``update_time`` (``updateTime``) as a timestamp (RFC 3339, as the Cloud
    Asset Inventory API writes it: https://cloud.google.com/asset-inventory/docs/reference/rest/v1/Asset);
    null when absent or not a time."""
    return F.coalesce(
        F.try_to_timestamp(F.col("id.update_time")), F.try_to_timestamp(F.col("id.updateTime"))
    )


def _blank() -> Column:
    """The line holds nothing but white space (tested only where it is not JSON; never
    null)."""
    not_json = F.col("id").isNull() | F.col(f"id.{CORRUPT}").isNotNull()
    return F.coalesce(not_json & F.col("value").rlike(r"^\s*$"), F.lit(False))


def _with_envelope(lines: DataFrame, max_line_bytes: int) -> DataFrame:
    """``source``, ``block``, ``position``, ``value``, ``id`` (the identity, null for a line too
    long), ``env`` (the rest of the envelope, payloads as text; only for the lines of needed
    types: the others, most of an organisation's export, are only checked to be JSON and
    counted), ``too_long``, ``asset_type``."""
    too_long = F.octet_length("value") > max_line_bytes
    identity = F.when(~too_long, _typed(F.col("value"), IDENTITY))
    frame = lines.select("source", "block", "position", "value", identity.alias("id"))
    return frame.select(
        "source",
        "block",
        "position",
        "value",
        "id",
        F.when(_needed(), _typed(F.col("value"), ENVELOPE)).alias("env"),
        too_long.alias("too_long"),
        _asset_type().alias("asset_type"),
    )


def _with_payloads(frame: DataFrame) -> DataFrame:
    """``frame`` (:func:`_with_envelope`) plus the typed payloads: :data:`TYPED_COLUMNS`,
    ``iam`` and ``perimeter`` (each null where the line has none)."""
    data = F.col("env.resource.data")
    typed = [
        F.when((F.col("asset_type") == kind) & data.isNotNull(), _typed(data, schema)).alias(
            data_column(kind)
        )
        for kind, schema in RESOURCE_DATA.items()
    ]
    iam_raw, perimeter_raw = iam_policy_text(), perimeter_text()
    return frame.select(
        "*",
        *typed,
        F.when(
            F.col("asset_type").isin(*IAM_TYPES) & iam_raw.isNotNull(), _typed(iam_raw, IAM_POLICY)
        ).alias("iam"),
        F.when(perimeter_raw.isNotNull(), _typed(perimeter_raw, SERVICE_PERIMETER)).alias(
            "perimeter"
        ),
    )


def parse_lines(lines: DataFrame, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> DataFrame:
    """The first step of :func:`parse_assets`, the one that reads every line
    (:data:`~pushguard.audit.read.LINE_SCHEMA` rows): all but the exact wrong-type checks.
    Returns its columns plus ``blank`` (the line is white space only: no reason, no type),
    ``suspect`` (a string field may hold another JSON type: :func:`with_type_errors` decides)
    and ``value`` (the line, kept on suspect lines only).

    :func:`parse_assets` returns one row per line with the columns ``source``, ``block``,
    ``position``, ``asset_type``, ``name``, ``ancestors``, ``update_time`` (a timestamp; these
    two null but for the lines of needed types), ``parent``, ``has_resource`` (the line carries
    a ``resource``: an organization's resource line, not its IAM or access policy), one typed
    column per type
    (:data:`TYPED_COLUMNS`), ``iam`` and ``perimeter`` (null but for the lines of needed types),
    ``reason`` (null when parsed or blank) and ``text`` (the first
    :data:`QUARANTINE_TEXT_CHARS` characters of a quarantined line, else null). Lazy: nothing
    runs until an action.
    """
    frame = _with_payloads(_with_envelope(lines, max_line_bytes))
    frame = frame.select("*", suspect_line().alias("suspect"), _blank().alias("blank"))
    frame = frame.withColumn(
        "reason", F.when(~F.col("blank"), _reason(max_line_bytes, list(TYPED_COLUMNS)))
    )
    return frame.select(
        "source",
        "block",
        "position",
        "asset_type",
        F.col("id.name").alias("name"),
        F.when(_needed(), F.col("id.ancestors")).alias("ancestors"),
        F.when(_needed(), _update_time()).alias("update_time"),
        F.col("env.resource.parent").alias("parent"),
        F.coalesce(F.col("env.resource").isNotNull(), F.lit(False)).alias("has_resource"),
        *TYPED_COLUMNS,
        "iam",
        "perimeter",
        "reason",
        F.when(F.col("reason").isNotNull(), F.substring("value", 1, QUARANTINE_TEXT_CHARS)).alias(
            "text"
        ),
        "blank",
        "suspect",
        F.when(F.col("suspect"), F.col("value")).alias("value"),
    )


def with_type_errors(parsed: DataFrame) -> DataFrame:
    """The second step of :func:`parse_assets`: on :func:`parse_lines` rows (``asset_type``,
    ``reason``, ``suspect``, ``value`` are read), the exact checks of the suspect lines, which
    parse them again as variants. A wrong JSON type in the identity comes before the other
    reasons but a line too long or not JSON; one in a field the audit reads comes after all
    others. Returns the same rows with ``reason`` and ``text`` updated, without ``suspect`` and
    ``value``.

    Separate from :func:`parse_lines` so that a caller can run it on the suspect lines alone:
    the checks are a large expression, which would slow down the code run on every line.
    """
    columns = [
        c for c in parsed.columns if c not in ("suspect", "value", "reason", "text", "blank")
    ]
    if not VARIANT:
        return parsed.drop("suspect", "value", "blank")
    identity = identity_check()
    payloads = payload_checks()
    frame = parsed.select(
        "*", F.when(F.col("suspect"), F.try_parse_json("value")).alias("json")
    ).select(
        "*",
        interpreted(identity.wrong_field()).alias("identity_wrong"),
        interpreted(F.coalesce(*(c.wrong_field() for c in payloads))).alias("payload_wrong"),
    )
    early = F.col("reason").isin(*_EARLY_REASONS) | F.col("reason").startswith("line longer")
    reason = (
        F.when(early, F.col("reason"))
        .when(F.col("identity_wrong").isNotNull(), F.col("identity_wrong"))
        .otherwise(F.coalesce("reason", "payload_wrong"))
    )
    frame = frame.withColumn("new_reason", reason)
    return frame.select(
        *columns,
        F.col("new_reason").alias("reason"),
        F.coalesce(
            "text",
            F.when(F.col("new_reason").isNotNull(), F.substring("value", 1, QUARANTINE_TEXT_CHARS)),
        ).alias("text"),
    )


def parse_assets(lines: DataFrame, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> DataFrame:
    """Parse each line (:data:`~pushguard.audit.read.LINE_SCHEMA` rows); see the module
    docstring: :func:`with_type_errors` of :func:`parse_lines`, one row per line (lazy)."""
    return with_type_errors(parse_lines(lines, max_line_bytes))


NOT_JSON = "not JSON"
NOT_ENVELOPE = "JSON that does not fit the Cloud Asset Inventory envelope"
_EARLY_REASONS = (NOT_JSON, NOT_ENVELOPE)


def _reason(max_line_bytes: int, typed: list[str]) -> Column:
    """The quarantine reason of a line (null when it parsed), the first that applies: too long,
    not JSON or not the envelope, no type or name, a payload that does not fit its schema. The
    wrong JSON types are :func:`with_type_errors`'."""
    reason = (
        F.when(F.col("too_long"), F.lit(f"line longer than {max_line_bytes} bytes"))
        .when(
            F.col("id").isNull()
            | F.col(f"id.{CORRUPT}").isNotNull()
            | F.col(f"env.{CORRUPT}").isNotNull(),
            F.when(F.get_json_object("value", "$").isNull(), F.lit(NOT_JSON)).otherwise(
                F.lit(NOT_ENVELOPE)
            ),
        )
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
    )
    for name in typed:
        reason = reason.when(
            F.col(f"{name}.{CORRUPT}").isNotNull(),
            F.lit("resource.data does not fit the schema of its asset type"),
        )
    return reason
