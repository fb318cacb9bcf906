"""Is a line exactly one JSON value of valid UTF-8? If not, the reason why, exactly.

Spark's JSON parser is lenient where the audit must not be: ``from_json`` reads the first value
of a line and ignores what follows (two objects on one line, trailing text), accepts ``NaN``,
``Infinity`` and ``INF`` by default (``allowNonNumericNumbers``), single-quoted strings by default
(``allowSingleQuotes``; https://spark.apache.org/docs/latest/sql-data-sources-json.html, "Data
Source Option"), and reads invalid UTF-8 with replacement characters. The audit turns both
options off and reads each line inside ``[`` ``]`` (:mod:`pushguard.audit.parse`), so a line that
is not exactly one object is never taken; the few lines Spark rejects are then checked here, in
plain Python on the executors, for the reason a person can act on (:func:`line_reason`). JSON
documents (a file that is one array) are parsed here whole (:func:`one_value`).

Nesting: Spark's parser (Jackson) refuses values nested deeper than 1,000 arrays and objects
(``StreamReadConstraints.DEFAULT_MAX_DEPTH``, FasterXML/jackson-core
``src/main/java/com/fasterxml/jackson/core/StreamReadConstraints.java``), and the audit's ``[``
``]`` around a line takes one level, so a line may be nested :data:`MAX_DEPTH` levels deep. The
depth is counted before Python's recursive parser runs, so no line or document can raise
``RecursionError``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

MAX_DEPTH = 999
"""The deepest nesting of arrays and objects a line may have (see the module docstring)."""

NOT_JSON = "not JSON"
INVALID_UTF8 = "invalid UTF-8"
CONCATENATED = "concatenated values"
TRAILING = "trailing data"
NON_FINITE = "non-finite number"
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"

LINE_REASONS = (INVALID_UTF8, CONCATENATED, TRAILING, NON_FINITE, TOO_DEEP, NOT_JSON)
"""The reasons a line is not exactly one JSON value of valid UTF-8."""

_WHITE = " \t\n\r"  # JSON's white space (RFC 8259, section 2); Python's json uses the same
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class NotOneValueError(ValueError):
    """The text is not exactly one JSON value; ``reason`` is one of :data:`LINE_REASONS`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _NonFiniteError(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NonFiniteError(name)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text``, outside strings (an
    unterminated string ends the count)."""
    level = deepest = 0
    for token in _TOKENS.finditer(text):
        mark = token.group()
        if mark in "[{":
            level += 1
            deepest = max(deepest, level)
        elif mark in "]}":
            level -= 1
    return deepest


@contextmanager
def _recursion_for(levels: int) -> Iterator[None]:
    """Python's json parser recurses once per level: room for ``levels`` of them."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, levels + 200))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def _decode(text: str, start: int) -> tuple[Any, int]:
    """One JSON value at ``start`` (no white space before it) and where it ends.

    Raises:
        NotOneValueError: ``text`` holds no JSON value there, or a non-finite number.
    """
    try:
        return _DECODER.raw_decode(text, start)
    except _NonFiniteError:
        raise NotOneValueError(NON_FINITE) from None
    except ValueError:
        raise NotOneValueError(NOT_JSON) from None


def _skip_white(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITE:
        at += 1
    return at


def _after(text: str, end: int) -> None:
    """Raise :class:`NotOneValueError` if anything but white space follows the value ending at
    ``end``: :data:`CONCATENATED` when it is another JSON value (after an optional comma),
    else :data:`TRAILING`."""
    rest = _skip_white(text, end)
    if rest == len(text):
        return
    if text[rest] == ",":
        rest = _skip_white(text, rest + 1)
    try:
        _decode(text, rest)
    except NotOneValueError:
        raise NotOneValueError(TRAILING) from None
    raise NotOneValueError(CONCATENATED)


def one_value(data: bytes, *, bom: bool = False) -> Any:
    """The one JSON value ``data`` holds (white space around it allowed; a leading UTF-8 byte
    order mark too when ``bom``).

    Raises:
        NotOneValueError: with the first reason that applies, in this order: :data:`INVALID_UTF8`,
            :data:`TOO_DEEP`, :data:`NOT_JSON` or :data:`NON_FINITE` (the first value),
            :data:`CONCATENATED` or :data:`TRAILING` (what follows it).
    """
    try:
        text = data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError:
        raise NotOneValueError(INVALID_UTF8) from None
    levels = depth(text)
    if levels > MAX_DEPTH:
        raise NotOneValueError(TOO_DEEP)
    with _recursion_for(levels):
        value, end = _decode(text, _skip_white(text, 0))
    _after(text, end)
    return value


def line_reason(data: bytes | bytearray | None) -> str | None:
    """Why the line ``data`` (its bytes, as read) is not exactly one JSON value of valid UTF-8
    (one of :data:`LINE_REASONS`), or None when it is. Runs on the executors, as a Spark UDF
    over the few lines Spark's parser did not take (:mod:`pushguard.audit.parse`)."""
    if data is None:
        return None
    try:
        one_value(bytes(data))
    except NotOneValueError as error:
        return error.reason
    return None
