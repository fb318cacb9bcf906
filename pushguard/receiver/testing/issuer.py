"""A token issuer of your own: an RSA key that signs tokens shaped as Pub/Sub's push tokens.

Pub/Sub signs each authenticated push with an OpenID Connect ID token of the push-auth service
account: header ``{"alg": "RS256", "kid": ..., "typ": "JWT"}``, claims ``aud`` (the subscription's
audience), ``azp`` and ``sub`` (the account's numeric unique ID), ``email`` (the account),
``email_verified`` (``true``), ``iat``, ``exp`` (an hour later) and ``iss``
(``https://accounts.google.com``): the decoded example of
https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions#jwt_format, the layout of
https://developers.google.com/identity/openid-connect/openid-connect#an-id-tokens-payload.

:class:`LocalIssuer` signs such tokens through google-auth's own encoder with a 2048-bit RSA key
of its own and publishes its certificate by ``kid`` as https://www.googleapis.com/oauth2/v1/certs
publishes Google's. Nothing trusts it by default: a receiver trusts it only when its
certificates are passed explicitly (``PushVerifier(..., keys=issuer.key_source())``).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from google.auth import crypt, jwt

from pushguard.receiver.keys import StaticKeySource

GOOGLE_ISSUER = "https://accounts.google.com"
"""The ``iss`` of Google's ID tokens, Pub/Sub's push tokens included."""

TOKEN_LIFETIME = 3600
"""Seconds from ``iat`` to ``exp`` in Pub/Sub's tokens (the documented example: 1550182335 to
1550185935)."""

ACCOUNT_UNIQUE_ID = "100000000000000000001"
"""The ``sub`` and ``azp`` of the kit's tokens: a service account's unique ID is 21 digits."""


def self_signed_certificate(
    key: rsa.RSAPrivateKey,
    *,
    not_before: dt.datetime | None = None,
    days: int = 3650,
    name: str = "pushguard local issuer",
) -> str:
    """A PEM X.509 certificate for ``key`` (the form of Google's signing certificates), valid
    from ``not_before`` (default: a day ago) for ``days`` days."""
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    start = not_before or dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=days))
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM).decode("ascii")


class LocalIssuer:
    """A token issuer of the test's own: an RSA key, its certificate by ``kid``, and tokens.

    Args:
        kid: the key ID put in each token's header and in :attr:`certs`.
        clock: seconds since the epoch, for ``iat`` and ``exp``.
        key: an RSA private key (a new 2048-bit key by default).
        certificate: the key's PEM certificate (a new self-signed one by default; given when
            the key is loaded from a key folder, :mod:`pushguard.receiver.testing.key_dir`).
    """

    def __init__(
        self,
        kid: str = "pushguard-local",
        *,
        clock: Callable[[], float] = time.time,
        key: rsa.RSAPrivateKey | None = None,
        certificate: str | None = None,
    ) -> None:
        self.kid = kid
        self._clock = clock
        self._key = key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.certs: dict[str, str] = {kid: certificate or self_signed_certificate(self._key)}
        """``{kid: PEM certificate}``, as https://www.googleapis.com/oauth2/v1/certs serves them:
        what a receiver takes as ``keys=``."""

    @property
    def private_key(self) -> rsa.RSAPrivateKey:
        """The signing key (to save it in a key folder)."""
        return self._key

    def key_source(self) -> StaticKeySource:
        """A key source that trusts this issuer and nothing else, for
        ``PushVerifier(..., keys=issuer.key_source())``."""
        return StaticKeySource(self.certs, clock=self._clock)

    def claims(
        self, audience: str, email: str, *, lifetime: float = TOKEN_LIFETIME, **extra: Any
    ) -> dict[str, Any]:
        """The claims of a push token (Pub/Sub's set: ``aud``, ``azp``, ``email``,
        ``email_verified``, ``exp``, ``iat``, ``iss``, ``sub``), ``extra`` added or overriding."""
        now = int(self._clock())
        claims: dict[str, Any] = {
            "aud": audience,
            "azp": ACCOUNT_UNIQUE_ID,
            "email": email,
            "email_verified": True,
            "exp": now + int(lifetime),
            "iat": now,
            "iss": GOOGLE_ISSUER,
            "sub": ACCOUNT_UNIQUE_ID,
        }
        claims.update(extra)
        return claims

    def token(
        self, audience: str, email: str, *, lifetime: float = TOKEN_LIFETIME, **extra: Any
    ) -> str:
        """A signed ID token for ``audience`` and ``email``, valid ``lifetime`` seconds from now
        (negative: already expired); ``extra`` claims are added or override the defaults."""
        signer = crypt.RSASigner(self._key, key_id=self.kid)  # type: ignore[no-untyped-call]
        claims = self.claims(audience, email, lifetime=lifetime, **extra)
        encoded: bytes = jwt.encode(signer, claims)  # type: ignore[no-untyped-call]
        return encoded.decode("ascii")
