"""Keeping secret values out of policy messages.

pulumi-policy unwraps secret envelopes before a validator sees the properties, so a validator
cannot tell a secret from a plain value. pushguard's server (:mod:`pushguard.crossguard.server`)
records the secret strings of each request before pulumi-policy unwraps them (in its
:class:`~pushguard.crossguard.scope.RequestScope`); every message a
pushguard policy reports passes through :func:`scrub`, which replaces those strings (and, for
URLs, their host, path, query and userinfo) with ``[secret]``. Rule messages also never repeat an
endpoint's path or query string in the first place.

**The rule for text** (the same in the pack and in every report,
:mod:`pushguard.gate.redact`): a secret, or a part of it a message may derive from it, is
replaced where it stands as a *whole token*: where the text has no letter, digit, ``-`` or ``_``
right before it (when the secret itself starts with one) nor right after it (when it ends with
one). So a secret ``relay`` hides ``relay`` in "relay: ...", "host relay.example" or
"/hooks/relay/push", and leaves the name ``relay-push`` (or ``relayed``) whole: a word that
merely contains a secret is not that secret. Matching ignores case. The parts
(:func:`_parts`): the secret itself; for a URL each form of its host (of any length), its path,
query and userinfo (six characters or more: shorter ones, ``/v1`` or ``api``, are words), each
path segment and query value that reads as a credential (eight characters or more with a digit
or a capital letter, or sixteen or more: a message may quote the token alone), and its host and
host labels where a message quotes them; for an e-mail its domain and, for a
service account, its project (ID and number).

A secret shorter than four characters (``1``, ``a``, ``on``) is replaced only where a message
quotes it (``'a'``, ``"a"``, `` `a` ``) or is nothing else: hiding every standalone ``a`` of a
sentence would show the secret by where the sentence reads ``[secret]``, and would protect
nothing. Reports still hide such a secret wherever it is a whole value
(:class:`pushguard.gate.redact.Redactor`).
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import ahocorasick
import idna

from pushguard.crossguard.scope import current_scope
from pushguard.rules.accounts import service_account_project
from pushguard.rules.endpoint import EndpointError, parse_endpoint

_MIN_SECRET = 4
"""A secret shorter than this is hidden only where a message quotes it (see the module
documentation)."""
_MIN_PART = 6  # a URL's path, query or userinfo: shorter ones ("/v1", "api") are words
_TOKEN = 8
"""The shortest path segment or query value of a secret URL hidden on its own
(:func:`_token_like`)."""


def _is_word(char: str) -> bool:
    """A character that continues a name, a host label or a word (so a secret glued to it is
    part of a longer token, not the secret standing on its own)."""
    return char.isalnum() or char in "-_"


def _parts(secret: str) -> set[str]:
    """The strings to hide for one secret, each matched as a whole token (see the module
    documentation): the secret itself (when shorter than :data:`_MIN_SECRET`, its quoted
    forms); for a URL its host forms, path, query and userinfo, and its host and labels quoted;
    for an e-mail its domain and, for a service account, its project (ID or number), which
    messages name ("belongs to project P")."""
    parts: set[str] = set()

    def add(part: str, short_ok: bool = False) -> None:
        part = part.strip()
        long_enough = len(part) >= _MIN_PART and part.strip("/")
        if long_enough or (short_ok and len(part) >= 2 and part.strip("/.")):
            parts.add(part)

    if "://" in secret:
        hosts, pieces = _url_parts(secret)
        for host in hosts:
            add(host, short_ok=True)
        for piece in pieces:
            add(piece)
        parts.update(_quoted(hosts))
    elif "@" in secret:
        domain = secret.rpartition("@")[2]
        add(domain, short_ok=True)
        owner = service_account_project(secret)
        if owner is not None:
            for project in (owner.project_id, owner.project_number):
                if project:
                    add(project, short_ok=True)
                    add(project.rpartition(":")[2], short_ok=True)
    whole = secret.strip()
    if len(whole) >= _MIN_SECRET:
        parts.add(whole)
    elif whole:
        parts.update(_quotes(whole))
    return parts


def _quotes(part: str) -> set[str]:
    """``part`` as a message quotes it: Python's ``repr`` and between ``'``, ``"`` or `` ` ``."""
    return {repr(part), f"'{part}'", f'"{part}"', f"`{part}`"}


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
    fragment, user name and password, and each path segment, query value and fragment piece
    that looks like a credential (:func:`_token_like`); nothing when it cannot be split."""
    try:
        url = urlsplit(secret)
        hosts = _host_forms(secret, url.hostname or "")
    except ValueError:
        return set(), []
    pieces = [url.path, url.query, url.fragment, url.username or "", url.password or ""]
    words = re.split(r"[/\\?#&=;:]+", f"{url.path}/{url.query}/{url.fragment}")
    return hosts, pieces + [word for word in words if _token_like(word)]


def _token_like(word: str) -> bool:
    """Whether a piece of a secret URL reads as a credential rather than a word a message may
    use for itself (``hooks``, ``pubsub``, ``subscriptions``): eight characters or more with a
    digit or a capital letter, or sixteen or more."""
    long_enough = len(word) >= _TOKEN
    return (long_enough and any(c.isdigit() or c.isupper() for c in word)) or len(word) >= 16


def _quoted(hosts: Iterable[str]) -> set[str]:
    """Each of ``hosts`` and each of their labels between quotes, as messages that quote a
    parsed part show them (an IDNA error names the label that fails as Python's ``repr``): a
    label is hidden there only, never as a plain word (``example`` in "for example")."""
    quoted: set[str] = set()
    for host in hosts:
        labels = (label for label in host.split(".") if label not in _PUBLIC_LABELS)
        for part in (host, *labels):
            if part:
                quoted.update(_quotes(part))
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
    :func:`_parts` names) in a text by ``[secret]`` where it stands as a whole token (see the
    module documentation), compared case-insensitively; built once for many texts. A text that
    is, stripped, nothing but a secret (of any length) becomes ``[secret]``. Overlapping or
    adjacent occurrences become one ``[secret]``, so no fragment of a secret is left between
    two replacements and a replacement is never matched again.

    One Aho-Corasick automaton holds every part (pyahocorasick,
    https://pyahocorasick.readthedocs.io/): building it is linear in the parts' total length
    and each text is scanned once, in time linear in its length plus the occurrences found,
    however many secrets there are."""
    parts: set[str] = set()
    wholes: set[str] = set()
    for secret in secrets:
        parts.update(_fold(part) for part in _parts(secret))
        if secret.strip():
            wholes.add(_fold(secret.strip()))
    if not parts and not wholes:
        return lambda text: text
    automaton = ahocorasick.Automaton()
    for part in parts:
        automaton.add_word(part, len(part))
    if parts:
        automaton.make_automaton()

    def apply(text: str) -> str:
        folded = _fold(text)
        stripped = folded.strip()
        if stripped in wholes:
            start = folded.index(stripped)
            return f"{text[:start]}[secret]{text[start + len(stripped) :]}"
        if not parts:
            return text
        found = [(last - length + 1, last + 1) for last, length in automaton.iter(folded)]
        return _replaced(text, [s for s in _merged(found) if _standalone(folded, *s)])

    return apply


def _merged(found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans ``found`` (``(start, end)``, in any order) with overlapping or adjacent ones
    merged: two secrets that overlap ("abcd" and "cdxy" in "abcdxy") are one occurrence."""
    spans: list[list[int]] = []
    for start, end in sorted(found):
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    return [(start, end) for start, end in spans]


def _standalone(folded: str, start: int, end: int) -> bool:
    """Whether ``folded[start:end]`` stands as a whole token: not glued to a word character on
    a side where it starts or ends with one ("relay" in "relay-push" is not)."""
    glued_before = start > 0 and _is_word(folded[start]) and _is_word(folded[start - 1])
    glued_after = end < len(folded) and _is_word(folded[end - 1]) and _is_word(folded[end])
    return not (glued_before or glued_after)


def _replaced(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of ``spans`` (sorted, disjoint ``(start, end)``) replaced by
    ``[secret]``."""
    if not spans:
        return text
    pieces, position = [], 0
    for start, end in spans:
        pieces += [text[position:start], "[secret]"]
        position = end
    return "".join([*pieces, text[position:]])


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
