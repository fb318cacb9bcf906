"""Subscription filters parsed with the grammar of Google's "Filter messages" page.

Source: https://cloud.google.com/pubsub/docs/subscription-message-filter (also served as
https://docs.cloud.google.com/pubsub/docs/filtering; read as last updated 2026-04-10). The page's
"Syntax to create a filter" says:

- a filter operates on attributes only; ``attributes:KEY`` matches a key, ``attributes.KEY =
  "VALUE"`` and ``attributes.KEY != "VALUE"`` match a key and a value; "An expression with an
  equality operator must begin with a key, and the equality operator must compare a key and a
  value" and "The value must be a string literal";
- "If a key contains characters other than hyphens, underscores, or alphanumeric characters, use
  a string literal" (``attributes."iana.org/language_tag" = "en"``); backslashes, quotation marks
  and non-printing characters are escaped *within a string literal* (Unicode, hexadecimal and
  octal escapes too), never outside one;
- ``AND``, ``NOT`` and ``OR`` "must be in uppercase letters"; "The NOT operator has the highest
  precedence. To combine the AND and OR operators, use parentheses and complete expressions";
  "You can also use the unary minus operator instead of the NOT operator";
- ``hasPrefix(attributes.KEY, "SUBSTRING")`` "is the only supported function in a filter";
- "The maximum length of a filter is 256 bytes" and "The filter is an immutable property of a
  subscription" (see :data:`~pushguard.components.spec.FILTER_MAX_BYTES`).

The grammar below is that syntax, parsed by the ``lark`` library (LALR); whitespace between
tokens is ignored. Messages never repeat the filter (it may carry values a team keeps private):
they give the character position and what is allowed there.
"""

from __future__ import annotations

import functools
from typing import Final

from lark import Lark, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

FILTER_PAGE: Final = "https://cloud.google.com/pubsub/docs/subscription-message-filter"

GRAMMAR: Final = r"""
?start: expression

// AND and OR are never mixed at one level: "use parentheses and complete expressions".
?expression: unary
           | unary ("AND" unary)+  -> conjunction
           | unary ("OR" unary)+   -> disjunction

// NOT (or a unary minus) binds tightest.
?unary: "NOT" unary           -> negation
      | "-" unary             -> negation
      | "(" expression ")"
      | condition

condition: "attributes" ":" key                                  -> has_key
         | "attributes" "." key EQUALITY STRING                  -> compare
         | "hasPrefix" "(" "attributes" "." key "," STRING ")"   -> has_prefix

key: BARE_KEY | STRING

EQUALITY: "=" | "!="
BARE_KEY: /[\w-]+/
// Escapes only inside a literal; a raw control character must be escaped.
STRING: /"(?:[^"\\\x00-\x1f\x7f]|\\.)*"/

%import common.WS
%ignore WS
"""

_SYNTAX: Final = (
    'a filter is conditions attributes:KEY, attributes.KEY = "VALUE", attributes.KEY != "VALUE" '
    'or hasPrefix(attributes.KEY, "PREFIX"), joined by AND or OR (parentheses around a part '
    "to mix them) and negated by NOT or -; a KEY other than letters, digits, - and _ is a "
    f'"quoted" string ({FILTER_PAGE})'
)
_CONDITION_START: Final = frozenset({"ATTRIBUTES", "HASPREFIX", "NOT", "MINUS", "LPAR"})


@functools.cache
def _parser() -> Lark:
    return Lark(GRAMMAR, parser="lalr")


def filter_problem(text: str) -> str | None:
    """Why ``text`` is not a Pub/Sub filter, or ``None`` when it is one (``""`` is no filter:
    "If empty, then no messages are filtered out", ``Subscription.filter`` in
    https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions).

    The message names the character position and what the syntax allows there, never the
    filter's text.
    """
    if not text.strip():
        return None if text == "" else f"is blank; leave it unset for no filter ({_SYNTAX})"
    try:
        _parser().parse(text)
    except UnexpectedInput as error:
        return f"is not a Pub/Sub filter: {_hint(text, error)} ({_SYNTAX})"
    return None


def _word_at(text: str, position: int) -> str:
    """The run of key characters starting at ``position`` (for the hints only, never echoed)."""
    end = position
    while end < len(text) and (text[end].isalnum() or text[end] in "_-"):
        end += 1
    return text[position:end]


def _hint(text: str, error: UnexpectedInput) -> str:
    """What went wrong at the error's position, in the words of Google's page."""
    position = error.pos_in_stream or 0
    where = f"at character {position + 1}"
    word = _word_at(text, position)
    if isinstance(error, UnexpectedCharacters):
        if text[position] == "\\":
            return f"{where}, an escape sequence outside a string literal: quote the key"
        return f"{where}, a character the filter syntax does not allow there"
    if not isinstance(error, UnexpectedToken):  # pragma: no cover - end of input is a token
        return where
    token, expected = error.token.type, set(error.expected)
    if token == "$END":
        return f"{where}, the filter ends before its condition does"
    if word in ("and", "or", "not"):
        return f"{where}, a lower-case operator: AND, OR and NOT are upper case"
    if word == "IN":
        return f"{where}, IN, which the filter syntax lacks: join comparisons with OR"
    if token in ("AND", "OR") and token not in expected:
        return f"{where}, AND and OR at one level: put parentheses around one side"
    if expected == {"STRING"}:
        return f'{where}, a value that is not a string literal: write it in double quotes ("...")'
    if expected & _CONDITION_START and token == "STRING":
        return f"{where}, a value where a condition starts: begin with attributes.KEY"
    if expected & _CONDITION_START and token == "BARE_KEY":
        if text[position + len(word) :].lstrip().startswith("("):
            return f"{where}, a function other than hasPrefix, the only one supported"
        return (
            f"{where}, a name that is not an attribute: attribute KEY is written attributes.KEY "
            "(or attributes:KEY to test that it is present)"
        )
    return f"{where}, something the filter syntax does not allow there"
