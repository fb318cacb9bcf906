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

import contextlib
import unicodedata
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import ahocorasick
import idna

from pushguard.crossguard.scope import current_scope
from pushguard.rules.accounts import service_account_project
from pushguard.rules.endpoint import EndpointError, parse_endpoint

_MIN_SECRET = 4  # a shorter whole value ("a", "on") would mangle messages, protecting nothing
_MIN_PART = 6  # a URL's path, query or userinfo: shorter ones ("/v1", "api") are words
_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
"""Characters that continue a host name or project ID: a short part (a host like ``x.co``) is
hidden only where it stands as a whole name, not inside a longer word."""


def _parts(secret: str) -> dict[str, bool]:
    """The strings to hide for one secret, each with whether it is *short* (matched only as a
    whole name): the secret itself; for a URL its host (any length), path, query and userinfo;
    for an e-mail its domain and, for a service account, its project (ID or number), which
    messages name ("belongs to project P")."""
    parts: dict[str, bool] = {}

    def add(part: str, short_ok: bool = False) -> None:
        part = part.strip()
        if len(part) >= _MIN_PART and part.strip("/"):
            parts[part] = False
        elif short_ok and len(part) >= 2 and part.strip("/."):
            parts.setdefault(part, True)

    if "://" in secret:
        hosts, pieces = _url_parts(secret)
        for host in hosts:
            add(host, short_ok=True)
        for piece in pieces:
            add(piece)
        parts.update(dict.fromkeys(_quoted(hosts) - parts.keys(), False))
    elif "@" in secret:
        domain = secret.rpartition("@")[2]
        add(domain, short_ok=True)
        owner = service_account_project(secret)
        if owner is not None:
            for project in (owner.project_id, owner.project_number):
                if project:
                    add(project, short_ok=True)
                    add(project.rpartition(":")[2], short_ok=True)
    if len(secret) >= _MIN_SECRET:
        parts[secret] = False
    return parts


_PUBLIC_LABELS = frozenset({"com", "net", "org", "app", "dev", "io", "example"})
"""Labels that say nothing about a host (quoted alone they name no secret)."""


def _host_forms(secret: str, hostname: str) -> set[str]:
    """Every form of a URL's host that a message may show: as written (``urlsplit``'s
    ``hostname`` is lower-cased), without its trailing dot, NFKC-normalised (full-width letters
    as ASCII), case-folded, IDNA-encoded with UTS #46 mapping (punycode A-labels, as the endpoint
    classifier normalises hosts: https://www.unicode.org/reports/tr46/), decoded back to
    U-labels, and the host :func:`pushguard.rules.endpoint.parse_endpoint` reads (the one
    messages name)."""
    forms = {hostname}
    for form in list(forms):
        forms.add(form.rstrip("."))
    for form in list(forms):
        forms.add(unicodedata.normalize("NFKC", form))
    for form in list(forms):
        forms.add(form.casefold())
    for form in list(forms):
        try:
            encoded = idna.encode(form, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError, ValueError):
            continue
        forms.add(encoded)
        with contextlib.suppress(idna.IDNAError, UnicodeError, ValueError):
            forms.add(idna.decode(encoded))
    with contextlib.suppress(EndpointError):
        forms.add(parse_endpoint(secret).host)
    return {form for form in forms if form}


def _url_parts(secret: str) -> tuple[set[str], list[str]]:
    """``(host forms, other parts)`` of a URL: :func:`_host_forms`, and its path, query,
    user name and password; nothing when it cannot be split."""
    try:
        url = urlsplit(secret)
        return _host_forms(secret, url.hostname or ""), [
            url.path,
            url.query,
            url.username or "",
            url.password or "",
        ]
    except ValueError:
        return set(), []


def _quoted(hosts: Iterable[str]) -> set[str]:
    """Each of ``hosts`` and each of their labels between quotes, as messages that quote a
    parsed part show them (an IDNA error names the label that fails as Python's ``repr``): a
    label is hidden there only, never as a plain word (``example`` in "for example")."""
    quoted: set[str] = set()
    for host in hosts:
        labels = (label for label in host.split(".") if label not in _PUBLIC_LABELS)
        for part in (host, *labels):
            if part:
                quoted.update((repr(part), f"'{part}'", f'"{part}"'))
    return quoted


def _fold(text: str) -> str:
    """``text`` lower-cased character by character, so positions in the result are positions
    in ``text`` (``str.lower`` may lengthen a character: ``"İ".lower()`` is two)."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


def scrubber(secrets: Iterable[str]) -> Callable[[str], str]:
    """A function that replaces every one of ``secrets`` (and, for URLs and e-mails, the parts
    :func:`_parts` names) in a text by ``[secret]``, compared case-insensitively; built once for
    many texts. Overlapping or adjacent occurrences become one ``[secret]``, so no fragment of a
    secret is left between two replacements and a replacement is never matched again.

    One Aho-Corasick automaton holds every part (pyahocorasick,
    https://pyahocorasick.readthedocs.io/): building it is linear in the parts' total length
    and each text is scanned once, in time linear in its length plus the occurrences found,
    however many secrets there are."""
    parts: dict[str, bool] = {}
    for secret in secrets:
        for part, short in _parts(secret).items():
            folded = _fold(part)
            parts[folded] = parts.get(folded, True) and short
    if not parts:
        return lambda text: text
    automaton = ahocorasick.Automaton()
    for part, short in parts.items():
        automaton.add_word(part, (len(part), short))
    automaton.make_automaton()

    def apply(text: str) -> str:
        folded = _fold(text)
        found: list[tuple[int, int]] = []
        for last, (length, short) in automaton.iter(folded):
            start, end = last - length + 1, last + 1
            if short and (
                (start > 0 and folded[start - 1] in _WORD)
                or (end < len(folded) and folded[end] in _WORD)
            ):
                continue
            found.append((start, end))
        if not found:
            return text
        found.sort()
        spans: list[list[int]] = []
        for start, end in found:
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        pieces, position = [], 0
        for start, end in spans:
            pieces += [text[position:start], "[secret]"]
            position = end
        return "".join([*pieces, text[position:]])

    return apply


def scrub(message: str, secrets: Iterable[str] | None = None) -> str:
    """``message`` with every secret value in scope (or in ``secrets``) replaced by
    ``[secret]``, compared case-insensitively; the scope's scrubber is built once per request."""
    if secrets is not None:
        return scrubber(secrets)(message)
    scope = current_scope()
    apply = scope.memo.get("scrubber")
    if apply is None:  # once per request, not once per message
        apply = scope.memo["scrubber"] = scrubber(scope.secrets)
    result: str = apply(message)
    return result
