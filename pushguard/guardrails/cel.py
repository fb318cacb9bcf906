"""Writing CEL text safely: string literals for any value, RE2 patterns for literal text, and the
few building blocks every compiled condition uses.

CEL string literals (https://github.com/google/cel-spec/blob/master/doc/langdef.md, "String and
Bytes Values"): a double-quoted string in which ``\\`` and ``"`` are escaped with a backslash,
and control characters are written as ``\\xHH``/``\\uHHHH`` escapes, so a config value holding
quotes, backslashes or newlines (an exempt prefix, an exception's resource) becomes one literal
and never CEL syntax. ``matches()`` takes an RE2 pattern
(https://github.com/google/re2/wiki/Syntax); :func:`re2_literal` escapes every character RE2
gives a meaning to, so a config value is matched as text.

The field paths are those of the Pub/Sub ``Subscription`` REST resource
(:data:`~pushguard.guardrails.sources.SUBSCRIPTION_REST`): ``name``, ``topic``,
``pushConfig.pushEndpoint``, ``pushConfig.oidcToken.serviceAccountEmail``,
``pushConfig.oidcToken.audience``, ``enableExactlyOnceDelivery``. Every access is guarded with
``has()`` so that no subscription shape (a pull subscription, no ``oidcToken``, a resource
without ``name``) makes a condition fail with an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

_RE2_SPECIAL: Final = frozenset("\\.+*?()|[]{}^$")
"""The characters RE2 gives a meaning to outside a character class
(https://github.com/google/re2/wiki/Syntax); each is escaped with a backslash."""


def string(value: str) -> str:
    """``value`` as a double-quoted CEL string literal (quotes, backslashes and control
    characters escaped)."""
    out = ['"']
    for char in value:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code <= 0x9F or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def re2_literal(text: str) -> str:
    """An RE2 pattern that matches ``text`` itself: RE2's special characters escaped, control
    characters written as ``\\x{HH}``."""
    out = []
    for char in text:
        if ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{{{ord(char):02x}}}")
        elif char in _RE2_SPECIAL:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def matches(field: str, pattern: str) -> str:
    """``field.matches("pattern")`` with the pattern as a CEL literal."""
    return f"{field}.matches({string(pattern)})"


def any_of(parts: Iterable[str]) -> str:
    """``(a || b || ...)``; ``false`` for none."""
    listed = list(parts)
    if not listed:
        return "false"
    return listed[0] if len(listed) == 1 else "(" + " || ".join(listed) + ")"


def all_of(parts: Iterable[str]) -> str:
    """``a && b && ...``; ``true`` for none."""
    listed = [p for p in parts if p != "true"]
    return " && ".join(listed) if listed else "true"


def negate(part: str) -> str:
    """``!part`` for one call without spaces (``!x.matches("...")``), else ``!(part)``."""
    return f"!{part}" if " " not in part else f"!({part})"


R: Final = "resource"
PC: Final = f"{R}.pushConfig"
EP: Final = f"{PC}.pushEndpoint"
OIDC: Final = f"{PC}.oidcToken"
SA: Final = f"{OIDC}.serviceAccountEmail"
AUD: Final = f"{OIDC}.audience"

PUSH: Final = f'has({PC}) && has({EP}) && {EP} != ""'
"""The subscription pushes: a non-empty ``pushConfig.pushEndpoint`` (a pull subscription, and a
paused push subscription, have none: https://cloud.google.com/pubsub/docs/push#stop_and_resume_push_delivery)."""

HAS_ACCOUNT: Final = f'has({OIDC}) && has({SA}) && {SA} != ""'
"""A push-auth service account is set (only after :data:`PUSH`, which guards ``pushConfig``)."""

HAS_NAME: Final = f"has({R}.name)"
