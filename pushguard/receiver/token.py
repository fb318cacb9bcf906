"""Verification of the OIDC token Pub/Sub attaches to each push request.

With authentication on, Pub/Sub sends ``Authorization: Bearer <JWT>``: a Google-signed ID token
(RS256) whose ``aud`` is the subscription's audience (the push endpoint when none is set) and
whose ``email`` is the push-auth service account
(https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions). Tokens are cached by
Pub/Sub and may be up to an hour old, so ``iat`` alone says nothing; ``exp`` decides.

The signature is checked with ``cryptography`` against a key chosen by ``kid`` before any claim is
read. Parsing is strict and does less than general JWT libraries on purpose: exactly three
base64url segments, ``alg`` exactly ``RS256`` (so ``none``, HS256-with-the-public-key and ES256
are impossible), a ``kid`` that must name a known key (no "try every key"), no ``crit`` headers,
and keys only ever from the :class:`~pushguard.receiver.keys.KeySource` (``jku``, ``jwk``, ``x5u``
and ``x5c`` in the header are never used).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cachetools import TLRUCache
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.hashes import SHA256

from pushguard.receiver.errors import PushRejected
from pushguard.receiver.keys import MIN_RSA_BITS, KeySource, KeySourceError

LOG = logging.getLogger("pushguard.receiver")

GOOGLE_ISSUERS = frozenset({"accounts.google.com", "https://accounts.google.com"})
"""The ``iss`` values of Google ID tokens (both forms occur: Google's OpenID Connect docs)."""

MAX_TOKEN_CHARS = 8192
"""Google ID tokens are about 1 KB; anything far larger is not one."""

MAX_NUMERIC_DATE = 253_402_300_799
"""9999-12-31T23:59:59Z: a larger ``exp``, ``iat`` or ``nbf`` is not a time but an attack on the
arithmetic (``10**400`` overflows a float, ``1e400`` parses as infinity and never expires)."""

SIGNATURE_REMOVED = "SIGNATURE_REMOVED_BY_GOOGLE"
"""What Google's front end puts in place of an ID token's signature before the container of a
Cloud Run service that requires authentication sees it ("Identity token signature redacted by
Google", https://cloud.google.com/run/docs/troubleshooting#signature-removed). Google has
verified the signature by then; the container can only check the claims."""

SIGNATURE_REMOVED_DOCS = "docs/receiver-platforms.md#behind-cloud-run-iam"
"""Where the receiver's documentation explains a stripped signature (named in the rejection)."""

_SEGMENT = re.compile(r"[A-Za-z0-9_-]+")
_PADDING = PKCS1v15()
_SHA256 = SHA256()


@dataclass(frozen=True, slots=True)
class TokenClaims:
    """The verified claims of a push token.

    Attributes:
        issuer: ``iss``, one of :data:`GOOGLE_ISSUERS`.
        audience: ``aud``, equal to the verifier's audience.
        email: the push-auth service account, equal to the verifier's.
        subject: ``sub``, the account's unique numeric ID (``""`` if absent).
        issued_at: ``iat``, seconds since the epoch.
        expires_at: ``exp``, seconds since the epoch.
        key_id: the ``kid`` of the key that signed the token.
        signature_removed: ``True`` when the token arrived without its signature
            (:data:`SIGNATURE_REMOVED`) and was accepted because Google's front end checked it
            (``behind_cloud_run_iam``); ``False`` when pushguard verified the signature itself.
    """

    issuer: str
    audience: str
    email: str
    subject: str
    issued_at: float
    expires_at: float
    key_id: str
    signature_removed: bool = False


def _invalid(code: str, reason: str) -> PushRejected:
    return PushRejected(401, code, reason)


def _b64url_json(segment: str, what: str) -> dict[str, Any]:
    """The JSON object in a token segment. UTF-8 only (RFC 7515 section 5.2 and RFC 7519
    section 7.2): ``json.loads`` of bytes would also take UTF-16, UTF-32 and a BOM."""
    try:
        text = _b64url(segment, what).decode("utf-8")
        value = json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _invalid("malformed_token", f"the token {what} is not a JSON object") from None
    if not isinstance(value, dict):
        raise _invalid("malformed_token", f"the token {what} is not a JSON object")
    return value


def _b64url(segment: str, what: str) -> bytes:
    """Strict base64url (RFC 7515 section 2): no padding, no stray characters, and canonical, so
    one token has exactly one spelling (a second spelling would be a second cache key)."""
    if len(segment) % 4 == 1 or not _SEGMENT.fullmatch(segment):
        raise _invalid("malformed_token", f"the token {what} is not base64url")
    decoded = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    if base64.urlsafe_b64encode(decoded).rstrip(b"=") != segment.encode("ascii"):
        raise _invalid("malformed_token", f"the token {what} is not canonical base64url")
    return decoded


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _number(claims: dict[str, Any], name: str) -> float:
    """A NumericDate claim (RFC 7519 section 2): a whole number of seconds from 0 to
    :data:`MAX_NUMERIC_DATE`; Google issues integers."""
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _invalid("malformed_token", f"the token has no numeric '{name}' claim")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise _invalid("malformed_token", f"the token's '{name}' claim is not a whole number")
    if not 0 <= value <= MAX_NUMERIC_DATE:
        raise _invalid("malformed_token", f"the token's '{name}' claim is out of range")
    return float(value)


_EMAIL = re.compile(r"[^@\s:/]+@[^@\s:/]+\.[^@\s:/]+")


def _check_audience(audience: object) -> None:
    """An audience as Pub/Sub puts it in ``aud``: compared byte for byte, so a value with
    surrounding whitespace (from a copied config line) would refuse every push."""
    if not isinstance(audience, str) or not audience:
        raise ValueError("audience: a non-empty string is required")
    if audience != audience.strip() or not audience.isprintable():
        raise ValueError(
            f"audience: {audience!r} has surrounding whitespace or an invisible character; "
            "give the exact value of the subscription's audience (the token's aud)"
        )


def _check_email(email: object) -> None:
    """A service account's email alone: ``NAME@PROJECT.iam.gserviceaccount.com``, not an IAM
    member (``serviceAccount:...``) and without whitespace, which would refuse every push."""
    if not isinstance(email, str) or not email:
        raise ValueError("service_account_email: an email address is required")
    prefix, colon, rest = email.partition(":")
    if colon and "@" not in prefix and _EMAIL.fullmatch(rest.strip()):
        raise ValueError(
            f"service_account_email: {email!r} is an IAM member; give the email alone "
            f"({rest.strip()!r}), as the token's email claim holds it"
        )
    if not _EMAIL.fullmatch(email):
        raise ValueError(
            f"service_account_email: {email!r} is not an email address "
            "(NAME@PROJECT.iam.gserviceaccount.com; no whitespace)"
        )


def _header_kid(segment: str) -> str:
    """The ``kid`` of a token header that is RS256 without critical extensions."""
    header = _b64url_json(segment, "header")
    if header.get("alg") != "RS256":
        raise _invalid("wrong_algorithm", "the token is not signed with RS256")
    if "crit" in header:
        raise _invalid("malformed_token", "the token has critical header extensions")
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise _invalid("unknown_key", "the token names no signing key")
    return kid


def _usable(key: object) -> RSAPublicKey:
    """The key a key source answered, if RS256 can use it (RSA of at least 2048 bits: RFC 7518
    section 3.3); else the receiver is misconfigured: 503, and the cause is logged."""
    if isinstance(key, RSAPublicKey) and key.key_size >= MIN_RSA_BITS:
        return key
    what = f"{key.key_size}-bit RSA" if isinstance(key, RSAPublicKey) else type(key).__name__
    LOG.error("the key source answered an unusable key (%s); RS256 needs RSA of 2048+ bits", what)
    raise _unavailable()


def _unavailable() -> PushRejected:
    return PushRejected(
        503, "keys_unavailable", "Google's signing keys are unavailable; retry later"
    )


class TokenVerifier:
    """Verifies push tokens for one audience and one push-auth service account.

    Args:
        audience: the exact ``aud`` expected (the subscription's ``pushConfig.oidcToken.audience``,
            or its push endpoint when none is set). Compared byte for byte: no case folding, no
            trailing-slash forgiveness.
        service_account_email: the push-auth service account; compared after lowercasing this
            argument (Google issues lowercase emails).
        keys: where signing keys come from.
        clock_skew: seconds of tolerance on ``exp``, ``iat`` and ``nbf`` (0-300).
        cache_size: verified tokens remembered (0 turns the cache off). A cached token is reused
            until its ``exp`` (plus skew), keyed by the SHA-256 of the whole token, as Pub/Sub's
            documentation suggests for high volume.
        clock: seconds since the epoch; injectable for tests.
        accept_removed_signature: accept a token whose signature segment is exactly
            :data:`SIGNATURE_REMOVED` after checking its header and every claim as for a signed
            one. Only for a receiver behind Cloud Run's IAM check, which verified the signature
            before removing it; :class:`~pushguard.receiver.PushVerifier` refuses to turn it on
            anywhere else. Off, such a token is 401 ``signature_removed`` (logged once).

    Raises:
        ValueError: an argument is out of range (the message names it).
    """

    def __init__(
        self,
        audience: str,
        service_account_email: str,
        keys: KeySource,
        *,
        clock_skew: float = 30.0,
        cache_size: int = 10_000,
        clock: Callable[[], float] = time.time,
        accept_removed_signature: bool = False,
    ) -> None:
        _check_audience(audience)
        _check_email(service_account_email)
        if not 0 <= clock_skew <= 300:
            raise ValueError(f"clock_skew: 0-300 seconds allowed, got {clock_skew}")
        if cache_size < 0:
            raise ValueError(f"cache_size: 0 or more allowed, got {cache_size}")
        self.audience = audience
        self.service_account_email = service_account_email.lower()
        self._keys = keys
        self._skew = clock_skew
        self._clock = clock
        self._cache: TLRUCache[bytes, tuple[TokenClaims, RSAPublicKey]] | None = (
            TLRUCache(cache_size, ttu=self._cache_until, timer=clock) if cache_size else None
        )
        self._cache_lock = threading.Lock()
        self.accept_removed_signature = accept_removed_signature
        self._told_removed = False

    def _cache_until(
        self, _key: bytes, entry: tuple[TokenClaims, RSAPublicKey], _now: float
    ) -> float:
        return entry[0].expires_at + self._skew

    def _key(self, kid: str) -> object:
        """What the key source answers for ``kid``: 401 when it knows no such key, 503 when it
        fails (whatever it raises)."""
        try:
            key: object = self._keys.key(kid)
        except KeySourceError:
            raise _unavailable() from None
        except Exception as exc:  # a custom key source's own failure is an outage, not a 500
            LOG.error("the key source failed: %s", type(exc).__name__)
            raise _unavailable() from None
        if key is None:
            raise _invalid("unknown_key", "the token is not signed by a known Google key")
        return key

    def verify(self, token: str) -> TokenClaims:
        """Verify a compact-serialised JWT and return its claims.

        Raises:
            PushRejected: 401 for a malformed, unsigned, wrongly signed, expired or not-yet-valid
                token, an unknown ``kid``, a wrong issuer or audience, a signature removed by
                Google's front end (``signature_removed``, unless accepted); 403 for a valid
                token of another account or an unverified email; 503 when no signing keys can
                be had.
        """
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS or not token.isascii():
            raise _invalid("malformed_token", "the token is not a compact JWT")
        parts = token.split(".")
        if len(parts) == 3 and parts[2] == SIGNATURE_REMOVED:
            return self._verify_removed(parts)
        if self._cache is None:
            return self._verify_fresh(token)[0]
        digest = hashlib.sha256(token.encode("ascii")).digest()
        with self._cache_lock:
            cached = self._cache.get(digest)
        if cached is not None:
            claims, key = cached
            # The cache vouches only while the key set still has the key that signed the token:
            # a withdrawn key ends its verifications at once, not at their ``exp``.
            current = self._key(claims.key_id)
            if current is key or (
                isinstance(current, RSAPublicKey)
                and current.public_numbers() == key.public_numbers()
            ):
                return claims
        entry = self._verify_fresh(token)
        with self._cache_lock:
            self._cache[digest] = entry
        return entry[0]

    def _verify_removed(self, parts: list[str]) -> TokenClaims:
        """A token whose signature Google's front end replaced by :data:`SIGNATURE_REMOVED`: its
        own rejection by default; in the explicit mode, the header and every claim checked as
        for a signed token (not cached: there is no signature to save)."""
        if not self.accept_removed_signature:
            if not self._told_removed:
                self._told_removed = True
                LOG.error(
                    "a push token arrived without its signature (SIGNATURE_REMOVED_BY_GOOGLE), "
                    "refused: 401 signature_removed. If this is a Cloud Run service that "
                    "requires authentication, Google's front end removed it and every push will "
                    "be refused until the receiver is set up for it; if the service is public, "
                    "the token is forged and the mode must stay off: see %s",
                    SIGNATURE_REMOVED_DOCS,
                )
            raise _invalid(
                "signature_removed",
                "the token's signature was removed by Google's front end (Cloud Run IAM); "
                f"the receiver is not set up for that: see {SIGNATURE_REMOVED_DOCS}",
            )
        kid = _header_kid(parts[0])
        claims = self._check_claims(_b64url_json(parts[1], "payload"), kid)
        return dataclasses.replace(claims, signature_removed=True)

    def _verify_fresh(self, token: str) -> tuple[TokenClaims, RSAPublicKey]:
        parts = token.split(".")
        if len(parts) != 3:
            raise _invalid("malformed_token", "the token is not a signed JWT (three segments)")
        kid = _header_kid(parts[0])
        claims = _b64url_json(parts[1], "payload")
        signature = _b64url(parts[2], "signature")
        key = _usable(self._key(kid))
        try:
            key.verify(signature, f"{parts[0]}.{parts[1]}".encode("ascii"), _PADDING, _SHA256)
        except InvalidSignature:
            raise _invalid("bad_signature", "the token signature is not valid") from None
        return self._check_claims(claims, kid), key

    def _check_claims(self, claims: dict[str, Any], kid: str) -> TokenClaims:
        issuer = claims.get("iss")
        if not isinstance(issuer, str) or issuer not in GOOGLE_ISSUERS:
            raise _invalid("wrong_issuer", "the token is not issued by accounts.google.com")
        expires_at = _number(claims, "exp")
        issued_at = _number(claims, "iat")
        now = self._clock()
        if now > expires_at + self._skew:
            raise _invalid("token_expired", "the token has expired")
        if issued_at > now + self._skew:
            raise _invalid("token_not_yet_valid", "the token is issued in the future")
        if "nbf" in claims and _number(claims, "nbf") > now + self._skew:
            raise _invalid("token_not_yet_valid", "the token is not valid yet")
        audience = claims.get("aud")
        if not isinstance(audience, str) or audience != self.audience:
            raise _invalid("wrong_audience", "the token is for another audience")
        email = claims.get("email")
        if not isinstance(email, str) or email != self.service_account_email:
            raise PushRejected(403, "wrong_account", "the token is for another service account")
        if claims.get("email_verified") is not True:
            raise PushRejected(403, "email_not_verified", "the token's email is not verified")
        subject = claims.get("sub")
        return TokenClaims(
            issuer=issuer,
            audience=audience,
            email=email,
            subject=subject if isinstance(subject, str) else "",
            issued_at=issued_at,
            expires_at=expires_at,
            key_id=kid,
        )
