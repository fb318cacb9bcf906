"""Lines -> assets: the envelope and the typed payloads, or a quarantine reason.

Every line read ends as exactly one row of the result, with ``reason`` null (parsed) or the
reason it was quarantined. That is what makes the accounting hold: parsed + quarantined = read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, StringType, StructField, StructType

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


_NON_STRING_TEXT = r"^(?:[\[{]|(?:-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false)$)"
"""What Spark makes of a JSON number, boolean, array or object read into a string field: its JSON
text. A JSON string can look the same (``"123"``), so a match only makes the line suspect."""

_VARIANT = hasattr(F, "try_parse_json")
"""Spark 4's variant functions tell a JSON value's type; on Spark 3.5 the wrong-type check is
skipped (such a line is read as before, its value's JSON text as the string)."""

_Check = Callable[[Column], Column]


@dataclass(frozen=True)
class _StringLeaf:
    """A string field, or the elements of an array of strings, in a parsed JSON value.

    ``label`` is its path (``iam_policy.bindings[].members[]``); ``values`` takes the parsed
    column to the leaf's value, or, below ``arrays`` levels of arrays, to an array of its values
    (Spark takes a struct field of an array of structs element by element); ``wrong`` tests the
    JSON value itself (a variant) exactly: true when the leaf is not a JSON string.
    """

    def text(self, parsed: Column) -> Column:
        """The leaf's values in ``parsed``, one per line of the result (no lambda functions:
        they would run interpreted on every line)."""
        values = self.values(parsed)
        if not self.arrays:
            return values
        for _ in range(self.arrays - 1):
            values = F.flatten(values)
        return F.concat_ws("\n", values)

    label: str
    values: _Check
    arrays: int
    wrong: _Check


def _not_json_string(value: Column) -> Column:
    return value.isNotNull() & ~F.schema_of_variant(value).isin("STRING", "VOID")


def _variant_field_of(name: str, check: _Check) -> _Check:
    return lambda variant: check(F.try_variant_get(variant, f"$.{name}", "variant"))


def _variant_elements_of(check: _Check) -> _Check:
    return lambda variant: F.exists(F.try_variant_get(variant, "$", "array<variant>"), check)


def _field_of(name: str, inner: _Check) -> _Check:
    return lambda column: inner(column[name])


def _same(column: Column) -> Column:
    return column


def _string_leaves(data_type: DataType, label: str) -> list[_StringLeaf]:
    """Every string field in ``data_type`` (recursively, through structs and arrays). Booleans,
    structs and arrays need no such check: Spark already fails a line where they have another
    JSON type; a string field takes any JSON value as its text."""
    if isinstance(data_type, StringType):
        return [_StringLeaf(label, _same, 0, _not_json_string)]
    if isinstance(data_type, ArrayType):
        return [
            _StringLeaf(leaf.label, leaf.values, leaf.arrays + 1, _variant_elements_of(leaf.wrong))
            for leaf in _string_leaves(data_type.elementType, f"{label}[]")
        ]
    if isinstance(data_type, StructType):
        return [
            _StringLeaf(
                leaf.label,
                _field_of(field.name, leaf.values),
                leaf.arrays,
                _variant_field_of(field.name, leaf.wrong),
            )
            for field in data_type.fields
            if field.name != CORRUPT
            for leaf in _string_leaves(field.dataType, f"{label}.{field.name}".lstrip("."))
        ]
    return []


def _suspect(parsed: Column, leaves: list[_StringLeaf]) -> Column:
    """Cheap, on every line: one of the leaves' values looks like the JSON text of a non-string
    (one regular expression over all of them). Never null."""
    values = F.concat_ws("\n", *(leaf.text(parsed) for leaf in leaves))
    return F.coalesce(values.rlike("(?m)" + _NON_STRING_TEXT), F.lit(False))


@dataclass(frozen=True)
class _TypeCheck:
    """Wrong JSON types in one JSON value of a line: ``suspect`` is a cheap test on every line
    (true where a string field may hold another JSON type), ``json`` the value as a variant (only
    parsed on suspect lines) and ``leaves`` its string fields, each tested exactly."""

    suspect: Column
    json: Column
    leaves: list[_StringLeaf]
    applies: Column | None = None

    def wrong_field(self) -> Column:
        """The quarantine reason naming the first leaf with a wrong JSON type, else null (only
        where ``applies``: a payload's schema is its asset type's)."""
        reason = F.lit(None).cast("string")
        for leaf in reversed(self.leaves):
            reason = F.when(
                F.coalesce(leaf.wrong(self.json), F.lit(False)),
                F.lit(f"{leaf.label} is not a JSON string"),
            ).otherwise(reason)
        return reason if self.applies is None else F.when(self.applies, reason)


_IDENTITY_ORDER = ("asset_type", "assetType", "name")


def _identity_check() -> _TypeCheck:
    """The identity of every line: the type first, then the name, then the others."""
    leaves = sorted(
        _string_leaves(IDENTITY, ""),
        key=lambda leaf: (
            _IDENTITY_ORDER.index(leaf.label)
            if leaf.label in _IDENTITY_ORDER
            else len(_IDENTITY_ORDER)
        ),
    )
    return _TypeCheck(_suspect(F.col("id"), leaves), F.col("json"), leaves)


def _suspect_text(leaves: list[_StringLeaf]) -> str:
    """A regular expression over a payload's JSON text: the key of one of the leaves followed
    by a value that is not a string (scalar leaves) or by an array with a non-string in it
    (array leaves). It may match where nothing is wrong (the same key elsewhere, a null); it
    never misses a wrong type. One search of the text is cheaper than extracting each value."""
    keys = {leaf.label.removesuffix("[]").rsplit(".", 1)[-1].removesuffix("[]") for leaf in leaves}
    arrays = sorted(
        {
            leaf.label.removesuffix("[]").rsplit(".", 1)[-1]
            for leaf in leaves
            if leaf.label.endswith("]")
        }
    )
    scalars = sorted(keys - set(arrays))
    string = r'"(?:[^"\\]|\\.)*"'
    patterns = []
    if scalars:
        patterns.append(rf'"(?:{"|".join(scalars)})"\s*:\s*[^"\sn]')
    if arrays:
        patterns.append(
            rf'"(?:{"|".join(arrays)})"\s*:\s*(?:[^\[\sn]|\[\s*(?:{string}\s*,\s*)*[^"\s\]])'
        )
    return "|".join(patterns)


def _payload_checks() -> list[_TypeCheck]:
    """The lines of needed types: ``resource.parent`` and each payload, field by field as its
    schema declares it, first searched for suspect values in its JSON text as the envelope
    read it (:func:`_suspect_text`)."""
    line = F.col("json")

    def at(path: str) -> Column:
        return F.try_variant_get(line, f"$.{path}", "variant")

    def search(text: Column, leaves: list[_StringLeaf]) -> Column:
        return F.coalesce(text.rlike(_suspect_text(leaves)), F.lit(False))

    parent = _string_leaves(_PARENT, "resource")
    checks = [_TypeCheck(_suspect(F.col("env.resource"), parent), at("resource"), parent)]
    data = F.col("env.resource.data")
    for kind, schema in RESOURCE_DATA.items():
        leaves = _string_leaves(schema, "resource.data")
        if leaves:
            is_kind = F.col("asset_type") == kind
            checks.append(
                _TypeCheck(is_kind & search(data, leaves), at("resource.data"), leaves, is_kind)
            )
    for raw, spellings, schema in (
        (_iam_raw(), ("iam_policy", "iamPolicy"), IAM_POLICY),
        (_perimeter_raw(), ("service_perimeter", "servicePerimeter"), SERVICE_PERIMETER),
    ):
        leaves = _string_leaves(schema, spellings[0])
        snake = at(spellings[0])
        json = F.coalesce(F.when(~F.is_variant_null(snake), snake), at(spellings[1]))
        checks.append(_TypeCheck(search(raw, leaves), json, leaves))
    return checks


_PARENT = StructType([StructField("parent", StringType())])


def _iam_raw() -> Column:
    return F.coalesce(F.col("env.iam_policy"), F.col("env.iamPolicy"))


def _perimeter_raw() -> Column:
    return F.coalesce(F.col("env.service_perimeter"), F.col("env.servicePerimeter"))


def _interpreted(column: Column) -> Column:
    """``column``, evaluated by Spark's interpreter when reached, not compiled into the code
    that runs on every line: a lambda function is interpreted, and its body with it. The exact
    type checks are a large expression that only a few suspect lines reach; compiled, they make
    the generated method too large for the JIT, and every line pays for it."""
    return F.element_at(F.transform(F.array(F.lit(0)), lambda _: column), 1)


def _typed(raw: Column, schema: object) -> Column:
    return F.from_json(raw, schema, _JSON_OPTIONS)  # type: ignore[arg-type]


def parse_lines(lines: DataFrame, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> DataFrame:
    """The first step of :func:`parse_assets`, the one that reads every line: all but the exact
    wrong-type checks. Returns its columns plus ``suspect`` (a string field may hold another JSON
    type: :func:`with_type_errors` decides) and ``value`` (the line, kept on suspect lines only).

    :func:`parse_assets` returns one row per line with the columns ``source``, ``block``,
    ``position``, ``asset_type``, ``name``, ``ancestors``, ``parent``, one typed column per type
    (:func:`data_column`), ``iam`` and ``perimeter`` (null but for the lines of needed types),
    ``reason`` (null when parsed) and ``text`` (the first :data:`QUARANTINE_TEXT_CHARS`
    characters of a quarantined line, else null). Lazy: nothing runs until an action.
    """
    too_long = F.octet_length("value") > max_line_bytes
    identity = F.when(~too_long, _typed(F.col("value"), IDENTITY))
    frame = lines.select("source", "block", "position", "value", identity.alias("id"))
    asset_type = F.coalesce(F.col("id.asset_type"), F.col("id.assetType"))
    # Only the lines of needed types get the rest of the envelope (payloads copied out as text);
    # the others, most of an organisation's export, are only checked to be JSON and counted.
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
    iam_raw, perimeter_raw = _iam_raw(), _perimeter_raw()
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
    suspect = F.lit(False)
    if _VARIANT:
        suspect = _identity_check().suspect
        for check in _payload_checks():
            suspect = suspect | check.suspect
    frame = frame.select("*", suspect.alias("suspect"))
    frame = frame.withColumn("reason", _reason(max_line_bytes, list(typed)))
    return frame.select(
        "source",
        "block",
        "position",
        "asset_type",
        F.col("id.name").alias("name"),
        F.when(needed, F.col("id.ancestors")).alias("ancestors"),
        F.col("env.resource.parent").alias("parent"),
        *typed,
        "iam",
        "perimeter",
        "reason",
        F.when(F.col("reason").isNotNull(), F.substring("value", 1, QUARANTINE_TEXT_CHARS)).alias(
            "text"
        ),
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
    columns = [c for c in parsed.columns if c not in ("suspect", "value", "reason", "text")]
    if not _VARIANT:
        return parsed.drop("suspect", "value")
    identity = _identity_check()
    payloads = _payload_checks()
    frame = parsed.select(
        "*", F.when(F.col("suspect"), F.try_parse_json("value")).alias("json")
    ).select(
        "*",
        _interpreted(identity.wrong_field()).alias("identity_wrong"),
        _interpreted(F.coalesce(*(c.wrong_field() for c in payloads))).alias("payload_wrong"),
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
