"""Lines -> assets: the envelope and the typed payloads, or a quarantine reason.

Every line read ends as exactly one row of the result, with ``reason`` null (parsed or blank)
or the reason it was quarantined, and ``blank`` true for a line of nothing but white space
(counted as blank, neither parsed nor quarantined). That is what makes the accounting hold:
parsed + quarantined + blank = read.

Two steps: :func:`parse_lines` reads every line (identity, envelope, payloads, the reasons but
wrong JSON types, and a cheap test for those); :func:`with_type_errors` checks the suspect lines
exactly (:mod:`pushguard.audit.json_types`). :func:`parse_assets` is both.

**Exactly one JSON value of valid UTF-8 per line.** Spark's parser is lenient where the audit
must not be (:mod:`pushguard.audit.one_value`): the JSON options turn off ``NaN``/``Infinity``
and single quotes, :func:`_valid_utf8` rejects invalid UTF-8 (Spark would read it with
replacement characters), and :func:`_with_identity` rejects a line with anything after its
first value (Spark reads the first and ignores the rest), in the same parse that reads the
identity. A line that is not exactly one
object is held back with the provisional reason :data:`NOT_JSON`; :func:`with_type_errors` then
gives it its exact reason (:func:`pushguard.audit.one_value.line_reason`, in Python, on those few
lines only): ``concatenated values``, ``trailing data``, ``non-finite number``, ``nested deeper
than 999 levels``, ``not JSON``, or, for one JSON value that is not an object of the envelope,
:data:`NOT_ENVELOPE`.
"""

from __future__ import annotations

import secrets

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, StringType, StructField, StructType

from pushguard.audit.json_types import (
    VARIANT,
    iam_policy_text,
    identity_check,
    interpreted,
    payload_checks,
    perimeter_text,
    suspect_line,
)
from pushguard.audit.one_value import INVALID_UTF8, LINE_REASONS, NOT_JSON, line_reason
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

_STRICT = {"allowNonNumericNumbers": "false", "allowSingleQuotes": "false"}
"""JSON as written: no ``NaN``/``Infinity``/``INF`` and no single-quoted strings, which Spark
accepts by default (https://spark.apache.org/docs/latest/sql-data-sources-json.html, "Data
Source Option": ``allowNonNumericNumbers`` and ``allowSingleQuotes`` default to true)."""

_JSON_OPTIONS = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT, **_STRICT}

_END = "_pushguard_end"
_NONCE = secrets.token_hex(16)
"""A value no line can hold but by chance (128 random bits, new in each process), for
:func:`_with_identity`."""

TYPED_COLUMNS = tuple(data_column(kind) for kind in RESOURCE_DATA)
"""The typed ``resource.data`` columns, one per asset type of
:data:`~pushguard.audit.schemas.RESOURCE_DATA`, in its order."""


def _typed(raw: Column | str, schema: object) -> Column:
    return F.from_json(raw, schema, _JSON_OPTIONS)  # type: ignore[arg-type]


def _asset_type() -> Column:
    return F.coalesce(F.col("id.asset_type"), F.col("id.assetType"))


def _needed() -> Column:
    """The line is one JSON object with the identity schema and one of the asset types the audit
    reads."""
    return _asset_type().isin(*NEEDED_TYPES) & F.col("one")


def _valid_utf8(value: Column) -> Column:
    """The line's bytes are valid UTF-8 (Spark 4's ``is_valid_utf8``; on Spark 3.5, the bytes
    equal their decoding encoded again, which replaces invalid sequences)."""
    if hasattr(F, "is_valid_utf8"):
        return F.is_valid_utf8(value)
    return value.cast("binary") == F.encode(value, "UTF-8")


def _valid_text(value: Column) -> Column:
    """``value`` with invalid UTF-8 replaced (U+FFFD), for the quarantine's text."""
    if hasattr(F, "make_valid_utf8"):
        return F.make_valid_utf8(value)
    return F.decode(F.encode(value, "UTF-8"), "UTF-8")


_ONCE_SCHEMA = ArrayType(
    StructType(
        [
            *(
                StructField(f.name, StringType()) if f.name == "ancestors" else f
                for f in IDENTITY.fields
                if f.name != CORRUPT
            ),
            StructField(_END, StringType()),
        ]
    )
)
"""``[LINE,{"_pushguard_end":NONCE}]``: the identity's fields with ``ancestors`` as its JSON
text, and the end field."""


def _with_identity(lines: DataFrame, readable: Column) -> DataFrame:
    """``lines`` plus ``id`` (the line's :data:`~pushguard.audit.schemas.IDENTITY`, null where
    not ``readable``) and ``one`` (the line is exactly one JSON object of that schema; never
    null), from one parse of every line.

    Spark's ``from_json`` reads a line's first value and ignores what follows it (apache/spark's
    ``JacksonParser.parse`` stops after the root value; the streaming parser itself allows
    several roots: FasterXML/jackson-core issue 1323; NVIDIA/cudf issue 14226 lists the inputs
    Spark reads as one record). So the line is read inside ``[LINE,{"_pushguard_end":NONCE}]``,
    an array of objects with the identity's fields and that one: exactly two elements, the
    second holding :data:`_NONCE`, means the line's value ended where the line does. A line that
    closes the array itself (``{...}] x``) leaves fewer elements, one that holds two values
    (``{...},{...}``) more, and text after the value makes the array invalid.

    Inside an array element a field of the wrong JSON type reads as null instead of making the
    record corrupt (issue 39's note, ``bench/audit_json_source.py``); of the identity's fields
    only ``ancestors`` has a type a JSON value can miss (the others are strings, which any value
    converts to), so it is read as its JSON text and converted on its own: a short parse of the
    ancestors alone. The identity of a line that is not exactly one such object is read as
    before, from the line alone (the same partial fields, for the few lines held back or
    quarantined). Three projections, so that each parse runs once per line."""
    wrapped = F.concat(F.lit("["), F.col("value"), F.lit(f',{{"{_END}":"{_NONCE}"}}]'))
    both = F.when(readable, F.from_json(wrapped, _ONCE_SCHEMA, _STRICT))
    first = F.col("_both")[0]
    frame = lines.select("*", both.alias("_both")).select(
        "*", F.from_json(first["ancestors"], ArrayType(StringType()), _STRICT).alias("_ancestors")
    )
    one = (
        (F.size("_both") == 2)
        & first.isNotNull()
        & (F.col("_both")[1][_END] == F.lit(_NONCE))
        & (first["ancestors"].isNull() | F.col("_ancestors").isNotNull())
    )
    frame = frame.select("*", F.coalesce(one, F.lit(False)).alias("one"))
    fields = [
        (F.col("_ancestors") if f.name == "ancestors" else first[f.name]).alias(f.name)
        for f in IDENTITY.fields
        if f.name != CORRUPT
    ]
    identity = F.struct(*fields, F.lit(None).cast("string").alias(CORRUPT))
    from_line = F.when(readable, _typed("value", IDENTITY))
    return frame.select("*", F.when(F.col("one"), identity).otherwise(from_line).alias("id")).drop(
        "_both", "_ancestors"
    )


def _update_time() -> Column:
    """The asset's ``update_time`` (``updateTime``) as a timestamp (RFC 3339, as the Cloud
    Asset Inventory API writes it: https://cloud.google.com/asset-inventory/docs/reference/rest/v1/Asset);
    null when absent or not a time."""
    return F.coalesce(
        F.try_to_timestamp(F.col("id.update_time")), F.try_to_timestamp(F.col("id.updateTime"))
    )


def _blank() -> Column:
    """The line holds nothing but white space (tested only where it is not one JSON object;
    never null)."""
    return F.coalesce(~F.col("one") & F.col("value").rlike(r"^\s*$"), F.lit(False))


def _with_envelope(lines: DataFrame, max_line_bytes: int) -> DataFrame:
    """``source``, ``block``, ``position``, ``value``, ``read_error``, ``id`` (the identity,
    null for a line too long or not valid UTF-8), ``one`` (the line is exactly one JSON object
    that fits the identity: never null), ``env`` (the rest of the envelope, payloads as text;
    only for the lines of needed types: the others, most of an organisation's export, are only
    checked to be JSON and counted), ``too_long``, ``utf8`` (valid UTF-8), ``asset_type``."""
    too_long = F.octet_length("value") > max_line_bytes
    utf8 = _valid_utf8(F.col("value"))
    checked = lines.select(
        "source",
        "block",
        "position",
        "value",
        "read_error",
        too_long.alias("too_long"),
        utf8.alias("utf8"),
    )
    readable = ~F.col("too_long") & F.col("utf8") & F.col("read_error").isNull()
    frame = _with_identity(checked, readable)
    return frame.select(
        "source",
        "block",
        "position",
        "value",
        "read_error",
        "id",
        "one",
        F.when(_needed(), _typed(F.col("value"), ENVELOPE)).alias("env"),
        "too_long",
        "utf8",
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
    (:data:`~pushguard.audit.read.LINE_SCHEMA` rows): all but the exact checks of the few
    lines that need them. Returns its columns plus ``blank`` (the line is white space only: no
    reason, no type), ``suspect`` (a string field may hold another JSON type:
    :func:`with_type_errors` decides) and ``value`` (the line, kept on suspect lines and on the
    lines that are not exactly one JSON object, whose exact reason :func:`with_type_errors`
    gives) and ``length`` (the line's bytes, for :mod:`pushguard.audit.long_lines`).

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
        F.when(F.col("reason").isNotNull(), _text_of("value")).alias("text"),
        "blank",
        "suspect",
        F.when(F.col("suspect") | _held_back(), F.col("value")).alias("value"),
        F.octet_length("value").alias("length"),
    )


def _held_back() -> Column:
    """A line of the input (not a document's) that is not exactly one JSON object: its exact
    reason is :func:`with_type_errors`'."""
    return (F.col("reason") == NOT_JSON) & F.col("read_error").isNull()


def _text_of(value: str) -> Column:
    """What ``quarantine/`` keeps of a line: its first :data:`QUARANTINE_TEXT_CHARS`
    characters, invalid UTF-8 replaced."""
    return _valid_text(F.substring(value, 1, QUARANTINE_TEXT_CHARS))


def with_type_errors(parsed: DataFrame) -> DataFrame:
    """The second step of :func:`parse_assets`: on :func:`parse_lines` rows (``asset_type``,
    ``reason``, ``suspect``, ``value`` are read), the exact checks of the lines that need them.
    A line held back as :data:`NOT_JSON` gets its exact reason (:func:`_exact_line_reason`);
    the suspect lines are parsed again as variants: a wrong JSON type in the identity comes
    before the other reasons but those of the line itself, one in a field the audit reads after
    all others. Returns the same rows with ``reason`` and ``text`` updated, without
    ``suspect`` and ``value``.

    Separate from :func:`parse_lines` so that a caller can run it on those lines alone: the
    checks are a large expression (and a Python function), which would slow down the code run
    on every line.
    """
    dropped = ("suspect", "value", "reason", "text", "blank", "length")
    columns = [c for c in parsed.columns if c not in dropped]
    frame = parsed.select("*", _exact_line_reason().alias("line_reason"))
    if VARIANT:
        identity = identity_check()
        payloads = payload_checks()
        frame = frame.select(
            "*", F.when(F.col("suspect"), F.try_parse_json("value")).alias("json")
        ).select(
            "*",
            interpreted(identity.wrong_field()).alias("identity_wrong"),
            interpreted(F.coalesce(*(c.wrong_field() for c in payloads))).alias("payload_wrong"),
        )
        early = F.col("reason").isin(*_EARLY_REASONS) | F.col("reason").startswith("line longer")
        typed = (
            F.when(early, F.col("reason"))
            .when(F.col("identity_wrong").isNotNull(), F.col("identity_wrong"))
            .otherwise(F.coalesce("reason", "payload_wrong"))
        )
    else:
        typed = F.col("reason")
    reason = F.coalesce(F.col("line_reason"), typed)
    frame = frame.withColumn("new_reason", reason)
    return frame.select(
        *columns,
        F.col("new_reason").alias("reason"),
        F.coalesce("text", F.when(F.col("new_reason").isNotNull(), _text_of("value"))).alias(
            "text"
        ),
    )


def _exact_line_reason() -> Column:
    """For a line held back as :data:`NOT_JSON`, the exact reason: one of
    :data:`pushguard.audit.one_value.LINE_REASONS` (:func:`~pushguard.audit.one_value.line_reason`,
    a Python function on its bytes), or :data:`NOT_ENVELOPE` when it is one JSON value after all
    (an array, a number, an object whose identity fields have the wrong JSON types); null on
    other lines."""
    exact = F.udf(line_reason, StringType(), useArrow=False)
    held_back = (F.col("reason") == NOT_JSON) & F.col("value").isNotNull()
    found = exact(F.when(held_back, F.col("value").cast("binary")))
    return F.when(held_back, F.coalesce(found, F.lit(NOT_ENVELOPE)))


def parse_assets(lines: DataFrame, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> DataFrame:
    """Parse each line (:data:`~pushguard.audit.read.LINE_SCHEMA` rows); see the module
    docstring: :func:`with_type_errors` of :func:`parse_lines`, one row per line (lazy)."""
    return with_type_errors(parse_lines(lines, max_line_bytes))


NOT_ENVELOPE = "JSON that does not fit the Cloud Asset Inventory envelope"
_EARLY_REASONS = (*LINE_REASONS, NOT_ENVELOPE)


def _reason(max_line_bytes: int, typed: list[str]) -> Column:
    """The quarantine reason of a line (null when it parsed), the first that applies: a JSON
    document that could not be read (its ``read_error``), too long, not valid UTF-8, not
    exactly one JSON object (:data:`NOT_JSON` until :func:`with_type_errors` gives the exact
    reason), not the envelope, no type or name, a payload that does not fit its schema. The
    wrong JSON types are :func:`with_type_errors`'."""
    reason = (
        F.when(F.col("read_error").isNotNull(), F.col("read_error"))
        .when(F.col("too_long"), F.lit(f"line longer than {max_line_bytes} bytes"))
        .when(~F.col("utf8"), F.lit(INVALID_UTF8))
        .when(~F.col("one"), F.lit(NOT_JSON))
        .when(F.col(f"env.{CORRUPT}").isNotNull(), F.lit(NOT_ENVELOPE))
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
