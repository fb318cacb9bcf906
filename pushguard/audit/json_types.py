"""Wrong JSON types in the string fields the audit reads, found without slowing every line.

Spark reads a JSON number, boolean, array or object into a string field as its JSON text, so
``"pushEndpoint": 5`` would pass as the endpoint ``"5"``. Each string field of a schema is a
leaf (:func:`string_leaves`); every line gets a cheap test (a regular expression over the leaves'
values or over the payload's JSON text) that may only flag it as **suspect**, and only the
suspect lines are parsed again as variants and checked exactly (:class:`TypeCheck`). Needs Spark
4's variant functions (:data:`VARIANT`); on Spark 3.5 the check is skipped.

The line's columns it reads: ``id`` (the identity, :data:`~pushguard.audit.schemas.IDENTITY`),
``env`` (the envelope, :data:`~pushguard.audit.schemas.ENVELOPE`), ``asset_type`` and, on suspect
lines, ``json`` (the line as a variant).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, DataType, StringType, StructField, StructType

from pushguard.audit.schemas import (
    CORRUPT,
    IAM_POLICY,
    IDENTITY,
    RESOURCE_DATA,
    SERVICE_PERIMETER,
)

_NON_STRING_TEXT = r"^(?:[\[{]|(?:-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false)$)"
"""What Spark makes of a JSON number, boolean, array or object read into a string field: its JSON
text. A JSON string can look the same (``"123"``), so a match only makes the line suspect."""

VARIANT = hasattr(F, "try_parse_json")
"""Spark 4's variant functions tell a JSON value's type; on Spark 3.5 the wrong-type check is
skipped (such a line is read as before, its value's JSON text as the string)."""

_Check = Callable[[Column], Column]


@dataclass(frozen=True)
class StringLeaf:
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


def string_leaves(data_type: DataType, label: str) -> list[StringLeaf]:
    """Every string field in ``data_type`` (recursively, through structs and arrays). Booleans,
    structs and arrays need no such check: Spark already fails a line where they have another
    JSON type; a string field takes any JSON value as its text."""
    if isinstance(data_type, StringType):
        return [StringLeaf(label, _same, 0, _not_json_string)]
    if isinstance(data_type, ArrayType):
        return [
            StringLeaf(leaf.label, leaf.values, leaf.arrays + 1, _variant_elements_of(leaf.wrong))
            for leaf in string_leaves(data_type.elementType, f"{label}[]")
        ]
    if isinstance(data_type, StructType):
        return [
            StringLeaf(
                leaf.label,
                _field_of(field.name, leaf.values),
                leaf.arrays,
                _variant_field_of(field.name, leaf.wrong),
            )
            for field in data_type.fields
            if field.name != CORRUPT
            for leaf in string_leaves(field.dataType, f"{label}.{field.name}".lstrip("."))
        ]
    return []


def _suspect(parsed: Column, leaves: list[StringLeaf]) -> Column:
    """Cheap, on every line: one of the leaves' values looks like the JSON text of a non-string
    (one regular expression over all of them). Never null."""
    values = F.concat_ws("\n", *(leaf.text(parsed) for leaf in leaves))
    return F.coalesce(values.rlike("(?m)" + _NON_STRING_TEXT), F.lit(False))


@dataclass(frozen=True)
class TypeCheck:
    """Wrong JSON types in one JSON value of a line: ``suspect`` is a cheap test on every line
    (true where a string field may hold another JSON type), ``json`` the value as a variant (only
    parsed on suspect lines) and ``leaves`` its string fields, each tested exactly."""

    suspect: Column
    json: Column
    leaves: list[StringLeaf]
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


def identity_check() -> TypeCheck:
    """The identity of every line: the type first, then the name, then the others."""
    leaves = sorted(
        string_leaves(IDENTITY, ""),
        key=lambda leaf: (
            _IDENTITY_ORDER.index(leaf.label)
            if leaf.label in _IDENTITY_ORDER
            else len(_IDENTITY_ORDER)
        ),
    )
    return TypeCheck(_suspect(F.col("id"), leaves), F.col("json"), leaves)


def suspect_text(leaves: list[StringLeaf]) -> str:
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


def payload_checks() -> list[TypeCheck]:
    """The lines of needed types: ``resource.parent`` and each payload, field by field as its
    schema declares it, first searched for suspect values in its JSON text as the envelope
    read it (:func:`suspect_text`)."""
    line = F.col("json")

    def at(path: str) -> Column:
        return F.try_variant_get(line, f"$.{path}", "variant")

    def search(text: Column, leaves: list[StringLeaf]) -> Column:
        return F.coalesce(text.rlike(suspect_text(leaves)), F.lit(False))

    parent = string_leaves(_PARENT, "resource")
    checks = [TypeCheck(_suspect(F.col("env.resource"), parent), at("resource"), parent)]
    data = F.col("env.resource.data")
    for kind, schema in RESOURCE_DATA.items():
        leaves = string_leaves(schema, "resource.data")
        if leaves:
            is_kind = F.col("asset_type") == kind
            checks.append(
                TypeCheck(is_kind & search(data, leaves), at("resource.data"), leaves, is_kind)
            )
    for raw, spellings, schema in (
        (iam_policy_text(), ("iam_policy", "iamPolicy"), IAM_POLICY),
        (perimeter_text(), ("service_perimeter", "servicePerimeter"), SERVICE_PERIMETER),
    ):
        leaves = string_leaves(schema, spellings[0])
        snake = at(spellings[0])
        json = F.coalesce(F.when(~F.is_variant_null(snake), snake), at(spellings[1]))
        checks.append(TypeCheck(search(raw, leaves), json, leaves))
    return checks


_PARENT = StructType([StructField("parent", StringType())])


def iam_policy_text() -> Column:
    """The line's IAM policy as the envelope read it (raw JSON text), in either spelling."""
    return F.coalesce(F.col("env.iam_policy"), F.col("env.iamPolicy"))


def perimeter_text() -> Column:
    """The line's service perimeter as the envelope read it (raw JSON text), in either
    spelling."""
    return F.coalesce(F.col("env.service_perimeter"), F.col("env.servicePerimeter"))


def interpreted(column: Column) -> Column:
    """``column``, evaluated by Spark's interpreter when reached, not compiled into the code
    that runs on every line: a lambda function is interpreted, and its body with it. The exact
    type checks are a large expression that only a few suspect lines reach; compiled, they make
    the generated method too large for the JIT, and every line pays for it."""
    return F.element_at(F.transform(F.array(F.lit(0)), lambda _: column), 1)


def suspect_line() -> Column:
    """The cheap test of every line: true where a string field of its identity or of a payload
    the audit reads may hold another JSON type (never null; always false without
    :data:`VARIANT`)."""
    if not VARIANT:
        return F.lit(False)
    suspect = identity_check().suspect
    for check in payload_checks():
        suspect = suspect | check.suspect
    return suspect
