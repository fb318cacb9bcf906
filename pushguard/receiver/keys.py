"""Where the verifier gets Google's public keys: a fixed mapping, or Google's certificate endpoint.

Pub/Sub's push tokens are Google-signed ID tokens: RS256 JWTs whose header names the signing key
by ``kid``. Google publishes the current keys as X.509 certificates at
https://www.googleapis.com/oauth2/v1/certs (a JSON object ``{kid: PEM certificate}``) and says how
long to cache them in the response's ``Cache-Control: max-age`` (with ``Age``) or ``Expires``
headers (https://developers.google.com/identity/openid-connect/openid-connect#validatinganidtoken).

Keys are parsed once, when they arrive, not per request: parsing a certificate costs more than
checking a signature.
"""

from __future__ import annotations

import email.utils
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

GOOGLE_CERTS_URL = "https://www.googleapis.com/oauth2/v1/certs"
"""Google's signing certificates for ID tokens, PEM form (what ``google.oauth2.id_token`` uses)."""

MIN_RSA_BITS = 2048
"""RS256 keys must be at least 2048 bits (RFC 7518 section 3.3)."""

CERTIFICATE_CLOCK_SKEW = 60.0
"""Seconds a certificate is still used after its ``notAfter`` (and already before its
``notBefore``), for clocks that differ between Google and the receiver. An X.509 certificate is
valid from ``notBefore`` to ``notAfter`` inclusive (RFC 5280 section 4.1.2.5); Google publishes
each signing certificate well inside that period, so the allowance only matters at its edges."""

OUTSIDE_VALIDITY = "a certificate outside its validity period"

LOG = logging.getLogger("pushguard.receiver")


class KeySourceError(Exception):
    """No usable signing keys: the certificate endpoint failed and nothing valid is cached."""


class KeySource(Protocol):
    """Maps a JWT ``kid`` to the RSA public key that must have signed it.

    ``key(kid)`` returns ``None`` for a key it does not know, and raises :class:`KeySourceError`
    when it cannot say (no keys at all).
    """

    def key(self, kid: str) -> RSAPublicKey | None: ...


class UnusableKeyError(ValueError):
    """A key RS256 cannot use. ``reason`` is a fixed phrase (no key material, no input)."""

    def __init__(self, kid: str, reason: str, detail: str = "") -> None:
        super().__init__(f"key {kid!r}: {reason}{f' ({detail})' if detail else ''}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class SigningKey:
    """An RSA public key and the period its certificate is valid in.

    Attributes:
        key: the RSA public key.
        not_before: the certificate's ``notBefore``, seconds since the epoch (``-inf`` for a
            bare public key, which has no validity period).
        not_after: the certificate's ``notAfter``, seconds since the epoch (``inf`` likewise).
    """

    key: RSAPublicKey
    not_before: float = float("-inf")
    not_after: float = float("inf")

    def valid_at(self, now: float) -> bool:
        """Whether the certificate is valid at ``now``, give or take
        :data:`CERTIFICATE_CLOCK_SKEW`."""
        return (
            self.not_before - CERTIFICATE_CLOCK_SKEW
            <= now
            <= self.not_after + CERTIFICATE_CLOCK_SKEW
        )


def load_signing_key(pem: str | bytes, *, kid: str = "?") -> SigningKey:
    """Parse a PEM X.509 certificate or PEM public key into an RSA key and its validity period.

    Args:
        pem: ``-----BEGIN CERTIFICATE-----`` (Google's format) or ``-----BEGIN PUBLIC KEY-----``.
        kid: the key ID, only to name the key in errors.

    Raises:
        UnusableKeyError: (a ``ValueError``) not PEM, not RSA, or shorter than 2048 bits (RS256
            keys must be at least 2048 bits: RFC 7518 section 3.3).
    """
    if not isinstance(pem, str | bytes):
        raise UnusableKeyError(kid, "not a PEM string")
    data = pem.encode() if isinstance(pem, str) else pem
    window: tuple[float, float] = (float("-inf"), float("inf"))
    try:
        if b"-----BEGIN CERTIFICATE-----" in data:
            certificate = x509.load_pem_x509_certificate(data)
            public_key: object = certificate.public_key()
            window = (
                certificate.not_valid_before_utc.timestamp(),
                certificate.not_valid_after_utc.timestamp(),
            )
        else:
            public_key = load_pem_public_key(data)
    except (ValueError, TypeError, UnicodeError) as exc:
        raise UnusableKeyError(kid, "not a PEM certificate or public key", str(exc)) from None
    if not isinstance(public_key, RSAPublicKey):
        raise UnusableKeyError(kid, "not an RSA key (RS256 needs RSA)", type(public_key).__name__)
    if public_key.key_size < MIN_RSA_BITS:
        raise UnusableKeyError(kid, "an RSA key under 2048 bits", f"{public_key.key_size} bits")
    return SigningKey(public_key, *window)


def _outside_validity(kid: str, origin: str) -> None:
    LOG.warning("signing key %r from %s not used: %s", kid, origin, OUTSIDE_VALIDITY)


class StaticKeySource:
    """A fixed ``{kid: PEM}`` mapping: for tests, and for receivers with no route to Google.

    Args:
        keys: key ID to PEM certificate or public key (as served by :data:`GOOGLE_CERTS_URL`).
        clock: seconds since the epoch; a certificate is used only inside its validity period
            (give or take :data:`CERTIFICATE_CLOCK_SKEW`); a bare public key has none.

    Raises:
        ValueError: a key does not parse (the message names its ``kid``), or the mapping is empty.
    """

    def __init__(
        self, keys: Mapping[str, str | bytes], *, clock: Callable[[], float] = time.time
    ) -> None:
        if not keys:
            raise ValueError("keys: at least one {kid: PEM} entry is required")
        self._keys = {kid: load_signing_key(pem, kid=kid) for kid, pem in keys.items()}
        self._clock = clock

    def key(self, kid: str) -> RSAPublicKey | None:
        """The key for ``kid``, or ``None`` (unknown, or its certificate is outside its validity
        period: logged)."""
        entry = self._keys.get(kid)
        if entry is None:
            return None
        if not entry.valid_at(self._clock()):
            _outside_validity(kid, "the static keys")
            return None
        return entry.key


class HttpResponse(Protocol):
    """The part of ``google.auth.transport.Response`` this module reads."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def data(self) -> bytes: ...


Fetch = Callable[[str], HttpResponse]
"""Performs ``GET url``. By default a ``google.auth.transport.requests.Request``."""

_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|,)\s*(?:no-cache|no-store)\s*(?:,|$)", re.IGNORECASE)


def cache_lifetime(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds a response may be reused, from its HTTP caching headers (RFC 9111 section 4.2.1).

    ``Cache-Control: max-age`` minus ``Age`` wins; else ``Expires`` minus ``Date`` (or ``now``);
    ``no-cache``/``no-store`` give 0. ``None`` when the headers say nothing usable.
    """
    lower = {name.lower(): value for name, value in headers.items()}
    control = lower.get("cache-control", "")
    if _NO_CACHE.search(control):
        return 0.0
    if match := _MAX_AGE.search(control):
        age = lower.get("age", "0").strip()
        return max(0.0, float(match.group(1)) - (float(age) if age.isdigit() else 0.0))
    if "expires" in lower:
        try:
            expires = email.utils.parsedate_to_datetime(lower["expires"]).timestamp()
            date = lower.get("date")
            base = email.utils.parsedate_to_datetime(date).timestamp() if date else now
        except (TypeError, ValueError):
            return 0.0  # RFC 9111: an invalid Expires means "already expired"
        return max(0.0, expires - base)
    return None


class GoogleKeySource:
    """Google's signing keys, fetched on first use and cached as the endpoint's headers say.

    Args:
        url: the certificate endpoint (JSON ``{kid: PEM certificate}``).
        fetch: performs the GET; default ``google.auth.transport.requests.Request`` (needs
            ``requests``), called as ``fetch(url)``.
        clock: seconds since the epoch; injectable for tests.
        default_lifetime: seconds to cache when the response has no caching headers.
        min_refresh_interval: at most one refetch per this many seconds (default 5) when a
            token names a ``kid`` that is not cached (Google rotated its keys). Made-up ``kid`` s
            therefore cost Google at most one request per interval, and delay the refetch a
            genuinely new key needs by at most the interval.

    ``key()`` raises :class:`KeySourceError` when the cached keys have expired and a refetch
    failed (or was rate-limited after a failure): expired keys are not used, since Google may have
    withdrawn them. A failed refetch for an unknown ``kid`` keeps the unexpired keys.

    Entries of the document that RS256 cannot use (not RSA, under 2048 bits, not a certificate,
    a certificate outside its validity period give or take :data:`CERTIFICATE_CLOCK_SKEW`) are
    skipped, logged and listed in :attr:`skipped` (``{kid: reason}``); the document is refused
    only when no entry is usable. A cached certificate that expires before the document does is
    dropped then, logged and listed the same way.
    """

    def __init__(
        self,
        url: str = GOOGLE_CERTS_URL,
        *,
        fetch: Fetch | None = None,
        clock: Callable[[], float] = time.time,
        default_lifetime: float = 300.0,
        min_refresh_interval: float = 5.0,
    ) -> None:
        self._url = url
        self._fetch = fetch
        self._clock = clock
        self._default_lifetime = default_lifetime
        self._min_refresh_interval = min_refresh_interval
        self._keys: dict[str, SigningKey] = {}
        self._expires_at = float("-inf")
        self._last_attempt = float("-inf")
        self._last_error = "not fetched yet"
        self._lock = threading.Lock()
        self.skipped: dict[str, str] = {}
        """Entries of the last document that were not usable: ``{kid: reason}``."""

    def key(self, kid: str) -> RSAPublicKey | None:
        """The key for ``kid``; refetches when the cache expired or ``kid`` is not in it."""
        now = self._clock()
        if now >= self._expires_at or kid not in self._keys:
            self._refresh(now, kid)
        if now >= self._expires_at:
            raise KeySourceError(f"no unexpired keys from {self._url}: {self._last_error}")
        entry = self._keys.get(kid)
        if entry is None:
            return None
        if not entry.valid_at(now):
            with self._lock:
                if self._keys.get(kid) is entry:  # once per certificate, not per request
                    self._keys = {k: v for k, v in self._keys.items() if k != kid}
                    self.skipped = {**self.skipped, kid: OUTSIDE_VALIDITY}
                    _outside_validity(kid, self._url)
            return None
        return entry.key

    def _refresh(self, now: float, kid: str) -> None:
        """Refetch the document, at most once per ``min_refresh_interval``.

        While unexpired keys are cached (a ``kid`` is merely unknown), nothing waits: the rate
        limit is checked before the lock, and a fetch already in flight is not waited for, so
        made-up ``kid`` s never queue behind a slow certificate endpoint, and the threads that
        serve genuine pushes are never taken up by them. With no unexpired keys, a request
        waits for the fetch in flight (bounded by its timeout): it cannot be answered otherwise.
        """
        cached = now < self._expires_at
        if cached and now - self._last_attempt < self._min_refresh_interval:
            return  # rate limit, without touching the lock
        if not self._lock.acquire(blocking=not cached):
            return  # a fetch is in flight and the cached keys still answer
        try:
            if now < self._expires_at and kid in self._keys:
                return  # another thread fetched them while this one waited
            if now - self._last_attempt < self._min_refresh_interval:
                return  # rate limit: made-up kids and outages cost one fetch per interval
            self._last_attempt = now
            try:
                keys, lifetime = self._download(now)
            except Exception as exc:  # any failure of the transport or the document
                self._last_error = f"{type(exc).__name__}: {exc}"
                LOG.warning(
                    "fetching Google's signing keys from %s failed (%s); %s",
                    self._url,
                    self._last_error,
                    "the cached keys stay in use until they expire"
                    if now < self._expires_at
                    else "pushes are answered 503 keys_unavailable until a fetch succeeds",
                )
                return
            self._keys = keys
            self._expires_at = now + max(lifetime, self._min_refresh_interval)
        finally:
            self._lock.release()

    def _download(self, now: float) -> tuple[dict[str, SigningKey], float]:
        fetch = self._fetch or _default_fetch()
        response = fetch(self._url)
        if response.status != 200:
            raise ValueError(f"HTTP {response.status}")
        document = json.loads(response.data)
        if not isinstance(document, dict) or not document:
            raise ValueError("expected a JSON object of {kid: PEM certificate}")
        keys: dict[str, SigningKey] = {}
        skipped: dict[str, str] = {}
        for kid, pem in document.items():
            try:
                entry = load_signing_key(pem, kid=kid)
            except UnusableKeyError as exc:
                skipped[kid] = exc.reason
                LOG.warning("signing key %r from %s skipped: %s", kid, self._url, exc.reason)
                continue
            if entry.valid_at(now):
                keys[kid] = entry
            else:
                skipped[kid] = OUTSIDE_VALIDITY
                _outside_validity(kid, self._url)
        self.skipped = skipped
        if not keys:
            raise ValueError("no usable RSA key in the document")
        lifetime = cache_lifetime(response.headers, now)
        return keys, self._default_lifetime if lifetime is None else lifetime


def _default_fetch() -> Fetch:
    try:
        from google.auth.transport.requests import Request  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise KeySourceError(
            "GoogleKeySource needs the 'requests' package (pip install 'pushguard[receiver]'), "
            "or pass fetch= / use StaticKeySource"
        ) from exc
    request = Request()

    def fetch(url: str) -> HttpResponse:
        response: HttpResponse = request(url=url, method="GET", timeout=10)
        return response

    return fetch
