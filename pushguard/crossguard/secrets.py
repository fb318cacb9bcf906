"""Keeping secret values out of policy messages.

pulumi-policy unwraps secret envelopes before a validator sees the properties, so a validator
cannot tell a secret from a plain value. pushguard's server (:mod:`pushguard.crossguard.server`)
records the secret strings of each request before pulumi-policy unwraps them; every message a
pushguard policy reports passes through :func:`scrub`, which replaces those strings (and, for
URLs, their host, path, query and userinfo) with ``[secret]``. Rule messages also never repeat an
endpoint's path or query string in the first place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from urllib.parse import urlsplit

_SECRETS: ContextVar[frozenset[str]] = ContextVar("pushguard_secrets", default=frozenset())
_MIN_PART = 3  # shorter fragments ("/", "a") would mangle messages without protecting anything


@contextmanager
def secrets_in_scope(values: Iterable[str]) -> Iterator[None]:
    """Within the block, :func:`scrub` removes ``values`` from messages."""
    token = _SECRETS.set(frozenset(values))
    try:
        yield
    finally:
        _SECRETS.reset(token)


def _parts(secret: str) -> set[str]:
    parts = {secret}
    try:
        url = urlsplit(secret)
        parts.update(
            {url.hostname or "", url.path, url.query, url.username or "", url.password or ""}
        )
    except ValueError:
        pass
    return {p for p in parts if len(p) >= _MIN_PART and p.strip("/")}


def scrub(message: str, secrets: Iterable[str] | None = None) -> str:
    """``message`` with every secret value in scope (or in ``secrets``) replaced by
    ``[secret]``, compared case-insensitively."""
    values = _SECRETS.get() if secrets is None else frozenset(secrets)
    parts = sorted({p for s in values for p in _parts(s)}, key=len, reverse=True)
    for part in parts:
        message = re.sub(re.escape(part), "[secret]", message, flags=re.IGNORECASE)
    return message
