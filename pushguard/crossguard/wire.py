"""Reading Pulumi's wire form of resource properties without tripping over it.

Resource properties reach a policy pack as a ``google.protobuf.Struct`` in Pulumi's wire form:
camelCase keys, unknown values at preview as sentinel strings (one per type, for example
``04da6b54-80e4-46f7-96ec-b56ff0331ba9`` for a string), secrets as envelopes
``{"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": ...}``
(https://github.com/pulumi/pulumi/blob/master/sdk/go/common/resource/properties.go). Anything may
also be missing, or have a shape the provider would reject. The helpers here never raise on such
input: they return :data:`UNKNOWN`, ``None``, or a :class:`WireShapeError` to report.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from pulumi_policy.deserialize import (
    SPECIAL_SECRET_SIG,
    SPECIAL_SIG_KEY,
    serialize_properties,
)
from pulumi_policy.proxy import (
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
)

from pushguard.rules.unknown_text import UnknownText
from pushguard.state.deployment_manager import ConfigError, parse_config

UNKNOWN_SENTINELS: Final = frozenset(
    {
        UNKNOWN_STRING_VALUE,
        UNKNOWN_BOOLEAN_VALUE,
        UNKNOWN_NUMBER_VALUE,
        UNKNOWN_ARRAY_VALUE,
        UNKNOWN_OBJECT_VALUE,
        UNKNOWN_ASSET_VALUE,
        UNKNOWN_ARCHIVE_VALUE,
    }
)
"""The strings Pulumi sends for a value that is not known yet (at preview): pulumi-policy's
``UNKNOWN_*_VALUE``, the engine's ``Unknown*Value`` (``sdk/go/common/resource/plugin/rpc.go`` in
github.com/pulumi/pulumi)."""

UNKNOWN_PARTS: Final = UnknownText(UNKNOWN_SENTINELS)
"""Finds :data:`UNKNOWN_SENTINELS` and fragments of them inside strings
(:mod:`pushguard.rules.unknown_text`)."""

SIG_KEY: Final[str] = SPECIAL_SIG_KEY
"""The key that marks a wire-form object as a special value (pulumi-policy's)."""
SECRET_SIG: Final[str] = SPECIAL_SECRET_SIG
"""``SIG_KEY``'s value in a secret envelope ``{SIG_KEY: SECRET_SIG, "value": ...}``."""


class Unknown:
    """The type of :data:`UNKNOWN`, the marker for a value that is not known yet."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = Unknown()


class WireShapeError(ValueError):
    """A property has a shape pushguard cannot read (``path`` in dotted camelCase, ``expected``
    in words); reported as a diagnostic, never raised out of a policy."""

    def __init__(self, path: str, expected: str, got: object) -> None:
        self.path = path
        self.expected = expected
        self.got_type = _json_type(got)
        super().__init__(f"{path} must be {expected}, not {self.got_type}")


def _json_type(value: object) -> str:
    """A value's type in JSON's words (protobuf sends every number as a double)."""
    if is_unknown(value):
        return "an unknown value"
    for kind, words in ((bool, "a boolean"), (int | float, "a number"), (str, "a string")):
        if isinstance(value, kind):
            return words
    if isinstance(value, Mapping):
        return "an object"
    return "a list" if isinstance(value, Sequence) else type(value).__name__


def is_unknown(value: object) -> bool:
    """True for :data:`UNKNOWN` and for Pulumi's unknown sentinel strings."""
    return value is UNKNOWN or (isinstance(value, str) and value in UNKNOWN_SENTINELS)


def holds_unknown(value: object) -> bool:
    """:func:`is_unknown`, or a string that holds an unknown sentinel or a fragment of one
    (:data:`UNKNOWN_PARTS`): what a program built from a plain value an offline preview does not
    know (a ``secure:`` config value, a plain data source's computed output,
    :data:`pushguard.preview.mocks.UNKNOWN_TEXT`), whole or cut (``s[:12]``). The engine never
    sends such a string, and the text around the sentinel is not the value the cloud would give,
    so the pack reads it as unknown (:func:`get`); what is known of it is
    :func:`known_prefix`."""
    if is_unknown(value):
        return True
    return isinstance(value, str) and UNKNOWN_PARTS.holds(value)


def known_prefix(value: object) -> str:
    """The text of ``value`` before its first unknown part: ``"http://"`` of
    ``"http://" + SENTINEL + "/push"``; ``""`` for a wholly unknown value, :data:`UNKNOWN`, a
    value that is not a string and a string that holds nothing unknown. What a rule may still
    judge of a value :func:`holds_unknown` (a push endpoint's scheme)."""
    if not isinstance(value, str) or is_unknown(value):
        return ""
    return UNKNOWN_PARTS.known_prefix(value) or ""


def plain(props: Any) -> Any:
    """Pulumi-policy's proxied props as plain dicts and lists, unknown sentinels kept.

    Reading through pulumi-policy's proxy raises on an unknown value and turns it into an advisory
    "can't run policy during preview"; pushguard reads the plain form and decides per rule.
    """
    return serialize_properties(props) if isinstance(props, Mapping) else props


def get(props: Mapping[str, Any], path: str) -> Any:
    """The value at dotted ``path`` (``pushConfig.oidcToken.audience``), :data:`UNKNOWN` if it or
    an enclosing object is not known yet, ``None`` if absent.

    Pulumi sends a single nested object either as an object or as a one-element list (Terraform
    bridged blocks); both are read. Raises :class:`WireShapeError` when an enclosing value is
    neither an object nor absent.
    """
    current = get_raw(props, path)
    return UNKNOWN if holds_unknown(current) else current


def get_raw(props: Mapping[str, Any], path: str) -> Any:
    """:func:`get`, but a string that holds an unknown sentinel as it is (for
    :func:`known_prefix`); :data:`UNKNOWN` when an enclosing object is not known yet.

    Raises:
        WireShapeError: as :func:`get`.
    """
    current: Any = props
    walked: list[str] = []
    for key in path.split("."):
        if current is None:
            return None
        if is_unknown(current):
            return UNKNOWN
        if isinstance(current, Sequence) and not isinstance(current, str) and len(current) <= 1:
            current = current[0] if current else None
            if current is None:
                return None
            if is_unknown(current):
                return UNKNOWN
        if not isinstance(current, Mapping):
            raise WireShapeError(".".join(walked) or "properties", "an object", current)
        walked.append(key)
        current = current.get(key)
    return current


def get_str(props: Mapping[str, Any], path: str) -> str | Unknown | None:
    """A string property: the string, :data:`UNKNOWN`, or ``None`` when absent or empty.

    Raises :class:`WireShapeError` for any other type.
    """
    value = get(props, path)
    if value is None or value is UNKNOWN:
        return value
    if not isinstance(value, str):
        raise WireShapeError(path, "a string", value)
    return value or None


def get_bool(props: Mapping[str, Any], path: str) -> bool | Unknown | None:
    """A boolean property: the bool, :data:`UNKNOWN`, or ``None``. Raises
    :class:`WireShapeError` for any other type."""
    value = get(props, path)
    if value is None or value is UNKNOWN:
        return value
    if not isinstance(value, bool):
        raise WireShapeError(path, "a boolean", value)
    return value


def get_str_list(props: Mapping[str, Any], path: str) -> tuple[str | Unknown, ...] | Unknown:
    """A list of strings (absent: empty); elements may be :data:`UNKNOWN`. Raises
    :class:`WireShapeError` for any other shape."""
    value = get(props, path)
    if value is None:
        return ()
    if isinstance(value, Unknown):
        return UNKNOWN
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise WireShapeError(path, "a list of strings", value)
    items: list[str | Unknown] = []
    for item in value:
        if holds_unknown(item):
            items.append(UNKNOWN)
        elif isinstance(item, str):
            items.append(item)
        else:
            raise WireShapeError(f"{path}[]", "a string", item)
    return tuple(items)


def secret_strings(wire: Any) -> Iterator[str]:
    """Every string inside a secret envelope of a wire-form value (a ``Struct`` as a dict), for
    scrubbing messages. Non-secret values are not returned. A secret string that is a YAML (or
    JSON) mapping, a Deployment Manager configuration held as a secret for one, gives its
    strings too: the pack reads values out of it, and each is as secret as the whole."""
    if isinstance(wire, Mapping):
        if wire.get(SIG_KEY) == SECRET_SIG:
            yield from _strings(wire.get("value"))
            return
        for item in wire.values():
            yield from secret_strings(item)
    elif isinstance(wire, list):
        for item in wire:
            yield from secret_strings(item)


def _strings(value: Any, nested: bool = False) -> Iterator[str]:
    if isinstance(value, str):
        yield value
        if not nested and ":" in value:
            try:
                document = parse_config(value)
            except ConfigError:
                return
            yield from _strings(document, nested=True)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item, nested)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, nested)


_ABSENT: Final = object()


def record_secrets(inputs: Any, outputs: Any) -> set[str]:
    """The secret strings of one resource: every string inside a secret envelope of its
    ``inputs``, and every string inside a secret envelope of its ``outputs`` but those the
    inputs hold, plain (outside any envelope), at the same place. The engine marks a whole
    top-level output secret when any part of its input was (a ``pushConfig`` whose endpoint is a
    secret), so a plain input inside it, an ``audience``, stays what the program declared it."""
    found = set(secret_strings(inputs))
    found.update(_unshared(outputs, inputs, inside=False))
    return found


def _unshared(output: Any, declared: Any, *, inside: bool) -> Iterator[str]:
    """The strings of ``output`` inside a secret envelope (``inside``: already in one) that
    ``declared`` (the inputs' value at the same place, or ``_ABSENT``) does not hold plain."""
    if isinstance(output, Mapping):
        if output.get(SIG_KEY) == SECRET_SIG:
            yield from _unshared(output.get("value"), declared, inside=True)
            return
        plain = isinstance(declared, Mapping) and declared.get(SIG_KEY) != SECRET_SIG
        for key, item in output.items():
            twin = declared.get(key, _ABSENT) if plain else _ABSENT
            yield from _unshared(item, twin, inside=inside)
    elif isinstance(output, list):
        twins = declared if isinstance(declared, list) else []
        for index, item in enumerate(output):
            twin = twins[index] if index < len(twins) else _ABSENT
            yield from _unshared(item, twin, inside=inside)
    elif inside and isinstance(output, str) and output != declared:
        yield output
