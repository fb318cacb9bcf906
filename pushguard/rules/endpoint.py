"""Parsing and classifying push endpoint URLs: the one place that decides what a URL's host is.

Bypasses of endpoint rules live in disagreements between parsers: ``https://x.a.run.app@evil.com``
(userinfo), ``https://evil.com\\@x.a.run.app`` (backslash, which WHATWG parsers read as ``/``),
``https://x.a.run.app%2eevil.com`` (encoded host), ``https://X.A.RUN.APP.`` (case, trailing dot),
full-width or other Unicode lookalikes (IDNA maps them), ``https://0x7f.1`` (numeric hosts that some
parsers read as IPv4). :func:`parse_endpoint` accepts only URLs on which RFC 3986
(:mod:`urllib.parse`) and WHATWG parsers agree, and normalises the host with IDNA 2008 / UTS #46
(the ``idna`` package); everything else is an :class:`EndpointError` with the reason.

Facts (https://cloud.google.com/pubsub/docs/push, https://cloud.google.com/run/docs/triggering/https-request):
a push endpoint is a publicly reachable HTTPS URL with a CA-signed certificate. Cloud Run default
URLs are ``https://SERVICE-HASH-REGIONCODE.a.run.app`` and
``https://[TAG---]SERVICE-PROJECT_NUMBER.REGION.run.app``.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import SplitResult, urlsplit

import idna

MAX_ENDPOINT_LENGTH = 2048
"""Longest endpoint accepted, in characters (no documented limit; bounds the work and the
messages)."""

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
_HASH_FORM = re.compile(r"^(?:[a-z0-9-]+---)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?-[a-z0-9]+-[a-z0-9]+$")
_DETERMINISTIC_FORM = re.compile(
    r"^(?:(?P<tag>[a-z0-9-]+)---)?(?P<service>[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)-(?P<number>[0-9]+)$"
)
_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
_NON_PUBLIC_SUFFIXES = (".localhost", ".local", ".internal", ".localdomain", ".home.arpa")


class EndpointError(ValueError):
    """The endpoint is not a URL pushguard can classify safely; ``reason`` says why.

    The reason never repeats the URL's query string or userinfo, which may carry secrets.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class PushEndpoint:
    """A parsed, normalised endpoint.

    ``host`` is lower-case ASCII (IDNA A-labels), without a trailing dot; for an IP literal it is
    the address's canonical text and ``ip`` is set. ``port`` is ``None`` when the URL names none.
    """

    scheme: str
    host: str
    port: int | None
    path: str
    query: str
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None

    @property
    def effective_port(self) -> int:
        """The port a client connects to (443 for https when none is given)."""
        if self.port is not None:
            return self.port
        return 443 if self.scheme == "https" else 80

    def redacted(self) -> str:
        """Scheme, host and port only, for messages: a webhook's path or query string often
        carries a secret (``/services/T0/B0/XXXX``, ``?token=...``)."""
        port = f":{self.port}" if self.port is not None else ""
        host = f"[{self.host}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.host
        rest = "/…" if self.path not in ("", "/") or self.query else ""
        return f"{self.scheme}://{host}{port}{rest}"


def _reject_characters(raw: str) -> None:
    if len(raw) > MAX_ENDPOINT_LENGTH:
        raise EndpointError(f"is longer than {MAX_ENDPOINT_LENGTH} characters")
    for char in raw:
        category = unicodedata.category(char)
        if char.isspace() or category in ("Cc", "Cf", "Zs", "Zl", "Zp"):
            raise EndpointError(
                f"contains whitespace or a control character (U+{ord(char):04X}); "
                "endpoints must not contain any"
            )
        if char == "\\":
            raise EndpointError("contains a backslash, which URL parsers disagree on")


def _split(raw: str) -> SplitResult:
    try:
        parts = urlsplit(raw)
        _ = parts.port  # urlsplit validates the port lazily
    except ValueError as error:
        # The parser's message may quote the netloc, userinfo included: keep only safe ones.
        detail = str(error) if "'" not in str(error) else "its host or port cannot be parsed"
        raise EndpointError(f"is not a valid URL ({detail})") from None
    if not parts.scheme:
        raise EndpointError("is not an absolute URL (no scheme); use https://HOST/PATH")
    if not parts.netloc:
        raise EndpointError("has no host; use https://HOST/PATH")
    if "@" in parts.netloc:
        raise EndpointError("contains userinfo (user@host); credentials do not belong in a URL")
    if "%" in parts.netloc:
        raise EndpointError("has a percent-encoded host, which parsers decode differently")
    return parts


def _normalise_host(
    hostname: str, bracketed: bool
) -> tuple[str, ipaddress.IPv4Address | ipaddress.IPv6Address | None]:
    if bracketed:
        # urlsplit strips the brackets; what is inside them must be an IPv6 address.
        try:
            v6 = ipaddress.IPv6Address(hostname)
        except ValueError:
            raise EndpointError("has a bracketed host that is not an IPv6 address") from None
        return str(v6), v6
    host = hostname[:-1] if hostname.endswith(".") else hostname
    if not host:
        raise EndpointError("has an empty host")
    try:
        host = idna.encode(host, uts46=True).decode("ascii")
        idna.decode(host)  # rejects invalid A-labels such as xn--zz
    except (idna.IDNAError, UnicodeError) as error:
        raise EndpointError(f"has a host that is not a valid domain name ({error})") from None
    labels = host.split(".")
    if _NUMERIC_LABEL.match(labels[-1]):
        try:
            address = ipaddress.IPv4Address(host)
        except ValueError:
            raise EndpointError(
                "has a numeric host that is not a dotted-quad IPv4 address "
                "(forms like 0x7f.1 or 2130706433 are read as addresses by some clients)"
            ) from None
        return str(address), address
    for label in labels:
        if not _LABEL.match(label):
            raise EndpointError(
                f"has a host label {label!r} that is not a valid DNS label "
                "(letters, digits and inner hyphens, 1 to 63 characters)"
            )
    return host, None


@functools.lru_cache(maxsize=4096)
def parse_endpoint(raw: str) -> PushEndpoint:
    """Parse and normalise a push endpoint URL (results are cached: the parse is pure and the
    result immutable; a stack checks the same endpoints once per policy).

    Accepts any scheme (the scheme is checked by the ``push-endpoint-https`` rule) but rejects
    what parsers disagree on: whitespace, control and format characters, backslashes, userinfo,
    percent-encoded hosts, bad ports, invalid IDNA, non-DNS labels, ambiguous numeric hosts.

    Raises:
        EndpointError: with the reason, never echoing the query string or userinfo.
    """
    if not isinstance(raw, str):
        raise EndpointError(f"is a {type(raw).__name__}, not a string")
    _reject_characters(raw)
    parts = _split(raw)
    host, ip = _normalise_host(parts.hostname or "", "[" in parts.netloc)
    return PushEndpoint(
        scheme=parts.scheme.lower(),
        host=host,
        port=parts.port,
        path=parts.path,
        query=parts.query,
        ip=ip,
    )


def non_public_reason(endpoint: PushEndpoint) -> str | None:
    """Why the endpoint's host cannot be a publicly reachable address, or ``None``.

    Covers private, loopback, link-local (including the metadata server 169.254.169.254),
    reserved and other non-global IP literals, ``localhost``, names under suffixes that only
    resolve inside a network (``.internal``, ``.local``, ``.localhost``, ``.home.arpa``),
    single-label names (``https://metadata/``) and port 0.
    """
    if endpoint.ip is not None:
        return None if endpoint.ip.is_global else f"{endpoint.ip} is not a public address"
    if endpoint.host == "localhost" or endpoint.host.endswith(_NON_PUBLIC_SUFFIXES):
        return f"{endpoint.host} only resolves inside a private network"
    if "." not in endpoint.host.rstrip("."):
        # A single-label name (``metadata``, ``intranet``) is completed from the resolver's
        # search domains: it names a host inside a network, never a public one (RFC 6761 s. 6.3
        # for ``localhost``; ICANN's SSAC 064 on dotless names).
        return f"{endpoint.host} is a single-label name, which only resolves inside a network"
    if endpoint.port == 0:
        return "port 0 cannot be connected to"
    return None


METADATA_SERVER_NAMES = frozenset({"metadata.google.internal", "metadata"})
"""The names of the Compute Engine metadata server inside a VPC network
(``http://metadata.google.internal/computeMetadata/v1/``,
https://cloud.google.com/compute/docs/storing-retrieving-metadata), which hands out the credentials
of the machine that calls it."""


def non_vpc_reason(endpoint: PushEndpoint) -> str | None:
    """Why the endpoint's host cannot be a service inside a VPC network, or ``None``.

    For an Eventarc trigger's HTTP endpoint, which Google documents as "either a static IP
    addressable from the VPC specified by the network config, or an internal DNS hostname of
    the service resolvable via Cloud DNS" (``HttpEndpoint.uri``,
    https://cloud.google.com/eventarc/docs/reference/rest/v1/projects.locations.triggers): private
    addresses and internal names are what such an endpoint is, so only what no service in a
    network can be is refused: loopback, link-local (the metadata server 169.254.169.254),
    unspecified, multicast and reserved addresses, ``localhost``, the metadata server's names
    (:data:`METADATA_SERVER_NAMES`), single-label names (completed from a resolver's search
    domains, so they name different hosts in different places) and port 0.
    """
    ip = endpoint.ip
    if ip is not None:
        if ip.is_loopback or ip.is_link_local or ip.is_unspecified:
            return f"{ip} is a loopback, link-local or unspecified address"
        if ip.is_multicast or ip.is_reserved:
            return f"{ip} is a multicast or reserved address"
        return None if endpoint.port != 0 else "port 0 cannot be connected to"
    if endpoint.host in METADATA_SERVER_NAMES:
        return f"{endpoint.host} is the Compute Engine metadata server"
    if endpoint.host == "localhost" or endpoint.host.endswith(".localhost"):
        return f"{endpoint.host} is the calling machine itself"
    if "." not in endpoint.host:
        return f"{endpoint.host} is a single-label name, which each resolver completes its own way"
    if endpoint.port == 0:
        return "port 0 cannot be connected to"
    return None


CloudRunUrlForm = Literal["hash", "deterministic"]


def cloud_run_default_url_form(endpoint: PushEndpoint) -> CloudRunUrlForm | None:
    """Which Cloud Run default URL form the endpoint is, or ``None`` for any other URL.

    ``hash``: one DNS label directly under ``a.run.app`` shaped
    ``[TAG---]SERVICE-HASH-REGIONCODE``. ``deterministic``:
    ``[TAG---]SERVICE-PROJECT_NUMBER.REGION.run.app``. Both need ``https`` and the default port.
    Only Google can serve names under ``run.app``, so the host's position under it is what counts;
    the label shapes reject names Cloud Run never issues.
    Source: https://cloud.google.com/run/docs/triggering/https-request#deterministic
    """
    if endpoint.scheme != "https" or endpoint.ip is not None or endpoint.effective_port != 443:
        return None
    labels = endpoint.host.split(".")
    if len(labels) == 4 and labels[1:] == ["a", "run", "app"] and _HASH_FORM.match(labels[0]):
        return "hash"
    if (
        len(labels) == 4
        and labels[2:] == ["run", "app"]
        and _REGION.match(labels[1])
        and _DETERMINISTIC_FORM.match(labels[0])
    ):
        return "deterministic"
    return None


@dataclass(frozen=True)
class DeterministicRunUrl:
    """What a deterministic Cloud Run URL, ``https://[TAG---]SERVICE-PROJECT_NUMBER.REGION.run.app``,
    says about the service behind it: its name, its project's number and its region
    (https://cloud.google.com/run/docs/triggering/https-request#deterministic)."""

    service: str
    project_number: str
    region: str


def cloud_run_deterministic_url(endpoint: PushEndpoint) -> DeterministicRunUrl | None:
    """The service, project number and region a deterministic run.app URL names, or ``None``
    for any other URL (:func:`cloud_run_default_url_form`). The hash form,
    ``SERVICE-HASH-REGIONCODE.a.run.app``, names neither project nor region in full."""
    if cloud_run_default_url_form(endpoint) != "deterministic":
        return None
    label, region = endpoint.host.split(".")[:2]
    match = _DETERMINISTIC_FORM.match(label)
    assert match is not None  # the form was just recognised
    return DeterministicRunUrl(match["service"], match["number"], region)


GOOGLE_SERVING_SUFFIXES = (".run.app", ".cloudfunctions.net", ".googleapis.com", ".appspot.com")
"""Hosts under which Google serves Cloud Run, Cloud Functions, App Engine and Google APIs."""


def is_google_serving_endpoint(endpoint: str) -> bool:
    """True when the endpoint's host is one Google serves (:data:`GOOGLE_SERVING_SUFFIXES`), so
    the service behind it may need an invoker grant; False for other hosts and bad URLs."""
    try:
        host = parse_endpoint(endpoint).host
    except EndpointError:
        return False
    return host.endswith(GOOGLE_SERVING_SUFFIXES)


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
"""What a scheme is made of after its first letter (RFC 3986 s. 3.1; ``urllib.parse``'s
``scheme_chars``, which :func:`parse_endpoint` reads the scheme with)."""


def prefix_scheme(prefix: str) -> str | None:
    """The scheme, lower-case, of every URL that starts with ``prefix``, read as
    :func:`parse_endpoint` reads one (:func:`urllib.parse.urlsplit`: the text before the first
    ``:`` when it is a letter followed by scheme characters): ``"http"`` for ``http:`` and
    ``http://``, ``""`` (no scheme: never an absolute URL) for ``/push``, ``a.b/`` or ``:x``;
    ``None`` when the rest decides it (``""``, ``h``, ``http``, ``ftp``: ``http`` + ``s://...``
    is ``https``, ``ftp`` + ``/x`` has no scheme). Text before the scheme that ``urlsplit`` would
    strip (spaces, control characters) is refused by :func:`parse_endpoint` anyway."""
    head, colon, _ = prefix.partition(":")
    valid = bool(head) and head[0].isascii() and head[0].isalpha() and set(head) <= _SCHEME_CHARS
    if colon:
        return head.lower() if valid else ""
    return None if valid or not head else ""


def prefix_allows_scheme(prefix: str, scheme: str) -> bool:
    """True when a URL that starts with ``prefix`` may have ``scheme`` (lower-case; ``""``: no
    scheme): when the prefix decides the scheme (:func:`prefix_scheme`), that one; else ``""``
    and any scheme the prefix begins (``http`` allows ``http`` and ``https``, ``h`` allows
    ``https``, ``ftp`` does not)."""
    decided = prefix_scheme(prefix)
    if decided is not None:
        return decided == scheme
    return not scheme or scheme.startswith(prefix.lower())


def prefix_may_be_exempt(prefix: str, exempt_prefixes: Iterable[str]) -> bool:
    """True when an endpoint that starts with ``prefix`` may be under one of
    ``exempt_prefixes`` (policy config ``exemptEndpointPrefixes``): when it may have the scheme
    of one (:func:`matches_exempt_prefix` compares schemes first). A prefix that cannot be read
    as a URL is skipped, as :func:`matches_exempt_prefix` never matches it."""
    for exempt in exempt_prefixes:
        try:
            scheme = urlsplit(exempt).scheme
        except ValueError:
            continue
        if prefix_allows_scheme(prefix, scheme.lower()):
            return True
    return False


_UNSAFE_FOR_EXEMPTION = re.compile(r"[\s\x00-\x1f\x7f\\]")


def matches_exempt_prefix(endpoint: str, prefix: str) -> bool:
    """True when ``endpoint`` is under ``prefix`` (policy config ``exemptEndpointPrefixes``)
    read as URLs, never as raw strings: the same scheme, the same host (whole, case-insensitive)
    and port, and a path under the prefix's path at a segment boundary (a prefix of a scheme other
    than http and https may be the scheme alone: ``rpc://``). An endpoint with userinfo,
    a backslash, whitespace or control characters matches no prefix, so
    ``https://partner.example@evil.test/`` and ``https://partner.example.evil.test/`` are not
    exempted by ``https://partner.example``. Never raises."""
    if _UNSAFE_FOR_EXEMPTION.search(endpoint):
        return False
    try:
        given, allowed = urlsplit(endpoint), urlsplit(prefix)
        same_port = given.port == allowed.port
    except ValueError:
        return False
    if given.scheme.lower() != allowed.scheme.lower() or "@" in given.netloc:
        return False
    if allowed.scheme.lower() not in ("http", "https") and not allowed.netloc:
        return endpoint.lower().startswith(prefix.lower())  # a scheme of its own: rpc://
    if not allowed.hostname or not same_port:
        return False
    if (given.hostname or "").rstrip(".") != allowed.hostname.rstrip("."):
        return False
    base = allowed.path
    if not base or base.endswith("/"):
        return given.path.startswith(base)
    return given.path == base or given.path.startswith(f"{base}/")
