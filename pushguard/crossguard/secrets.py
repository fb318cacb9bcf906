"""Keeping secret values out of policy messages.

pulumi-policy unwraps secret envelopes before a validator sees the properties, so a validator
cannot tell a secret from a plain value. pushguard's server (:mod:`pushguard.crossguard.server`)
records the secret strings of each request before pulumi-policy unwraps them (in its
:class:`~pushguard.crossguard.scope.RequestScope`); every message a
pushguard policy reports passes through :func:`scrub`, which replaces those strings (and, for
URLs, their host, path, query and userinfo) with ``[secret]``. Rule messages also never repeat an
endpoint's path or query string in the first place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from pushguard.crossguard.scope import current_scope

_MIN_SECRET = 4  # a shorter whole value ("a", "on") would mangle messages, protecting nothing
_MIN_PART = 6  # a URL's host, path, query or userinfo: shorter ones ("/v1", "api") are words


def _parts(secret: str) -> set[str]:
    parts: set[str] = set()
    try:
        url = urlsplit(secret)
        parts.update(
            {url.hostname or "", url.path, url.query, url.username or "", url.password or ""}
        )
    except ValueError:
        pass
    found = {p for p in parts if len(p) >= _MIN_PART and p.strip("/")}
    return found | ({secret} if len(secret) >= _MIN_SECRET else set())


def scrubber(secrets: Iterable[str]) -> Callable[[str], str]:
    """A function that replaces every one of ``secrets`` (and, for URLs, their host, path, query
    and userinfo) in a text by ``[secret]``, compared case-insensitively; built once for many
    texts. Overlapping or adjacent occurrences become one ``[secret]``, so no fragment of a
    secret is left between two replacements and a replacement is never matched again."""
    parts = sorted({p for s in secrets for p in _parts(s)}, key=lambda p: (-len(p), p))
    if not parts:
        return lambda text: text
    # A lookahead finds overlapping occurrences too; each match covers [start, start + len).
    pattern = re.compile(
        "(?=(" + "|".join(re.escape(p) for p in parts) + "))", flags=re.IGNORECASE | re.DOTALL
    )
    singles = [re.compile(re.escape(p), flags=re.IGNORECASE) for p in parts]

    def apply(text: str) -> str:
        spans: list[list[int]] = []
        for match in pattern.finditer(text):
            start = match.start()
            # The alternation reports one part per position: take the longest that matches here.
            end = max(m.end() for m in (s.match(text, start) for s in singles) if m)
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        if not spans:
            return text
        pieces, last = [], 0
        for start, end in spans:
            pieces += [text[last:start], "[secret]"]
            last = end
        return "".join([*pieces, text[last:]])

    return apply


def scrub(message: str, secrets: Iterable[str] | None = None) -> str:
    """``message`` with every secret value in scope (or in ``secrets``) replaced by
    ``[secret]``, compared case-insensitively."""
    values = current_scope().secrets if secrets is None else frozenset(secrets)
    return scrubber(values)(message)
