"""Real RS256 keys and Google-shaped tokens for the receiver tests.

Tokens are minted with google-auth's own JWT encoder (``google.auth.jwt.encode``), the way a Google
token is laid out: header ``{"alg": "RS256", "kid": ..., "typ": "JWT"}``, claims ``aud``, ``azp``,
``email``, ``email_verified``, ``exp``, ``iat``, ``iss``, ``sub``. Certificates are self-signed
X.509 PEM, as https://www.googleapis.com/oauth2/v1/certs serves them.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from google.auth import crypt, jwt

from pushguard.receiver import PushVerifier
from pushguard.receiver.testing import self_signed_certificate

AUDIENCE = "https://orders-abc123-ew.a.run.app/push"
EMAIL = "orders-push@acme-orders.iam.gserviceaccount.com"
NOW = 1_790_000_000.0


def make_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def certificate_pem(key: rsa.RSAPrivateKey, name: str = "accounts.google.com") -> str:
    """A certificate valid through the tests' fixed clock (:data:`NOW`)."""
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    return self_signed_certificate(key, not_before=start, name=name)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_json(value: Any) -> str:
    return b64url(json.dumps(value).encode())


@dataclass
class FakeGoogle:
    """Google's side: signing keys by kid, and a token minter."""

    keys: dict[str, rsa.RSAPrivateKey]
    clock: list[float] = field(default_factory=lambda: [NOW])

    @property
    def certs(self) -> dict[str, str]:
        return {kid: certificate_pem(key) for kid, key in self.keys.items()}

    def now(self) -> float:
        return self.clock[0]

    def claims(self, **overrides: Any) -> dict[str, Any]:
        claims: dict[str, Any] = {
            "aud": AUDIENCE,
            "azp": "112233445566778899001",
            "email": EMAIL,
            "email_verified": True,
            "exp": int(self.now()) + 3600,
            "iat": int(self.now()),
            "iss": "https://accounts.google.com",
            "sub": "112233445566778899001",
        }
        claims.update(overrides)
        return {name: value for name, value in claims.items() if value is not DROP}

    def token(
        self,
        kid: str = "k1",
        key: rsa.RSAPrivateKey | None = None,
        header: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        key = key or self.keys[kid]
        if header is None:  # the genuine layout, from google-auth's own encoder
            signer = crypt.RSASigner(key, key_id=kid)
            encoded: bytes = jwt.encode(signer, self.claims(**claims))
            return encoded.decode()
        fields = {"alg": "RS256", "kid": kid, "typ": "JWT", **header}
        signing_input = f"{b64url_json(fields)}.{b64url_json(self.claims(**claims))}"
        signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{b64url(signature)}"


DROP = object()
"""Pass as a claim value to leave the claim out."""


@pytest.fixture(scope="session")
def session_keys() -> dict[str, rsa.RSAPrivateKey]:
    return {"k1": make_key(), "k2": make_key()}


@pytest.fixture(scope="session")
def stranger_key() -> rsa.RSAPrivateKey:
    """A valid RSA key that is not Google's."""
    return make_key()


@pytest.fixture
def google(session_keys: dict[str, rsa.RSAPrivateKey]) -> FakeGoogle:
    return FakeGoogle(dict(session_keys))


@pytest.fixture
def make_verifier(google: FakeGoogle) -> Callable[..., PushVerifier]:
    certs = google.certs

    def build(**options: Any) -> PushVerifier:
        options.setdefault("keys", certs)
        return PushVerifier(AUDIENCE, EMAIL, clock=google.now, **options)

    return build


@pytest.fixture
def verifier(make_verifier: Callable[..., PushVerifier]) -> PushVerifier:
    return make_verifier()


def wrapped_body(
    data: bytes = b'{"order": 42}',
    attributes: dict[str, str] | None = None,
    **extra: Any,
) -> bytes:
    """A wrapped push body as Pub/Sub sends it (both spellings of ID and publish time)."""
    envelope: dict[str, Any] = {
        "message": {
            "attributes": attributes if attributes is not None else {"origin": "checkout"},
            "data": base64.b64encode(data).decode(),
            "messageId": "2070443601311540",
            "message_id": "2070443601311540",
            "publishTime": "2026-11-21T19:13:55.749Z",
            "publish_time": "2026-11-21T19:13:55.749Z",
        },
        "subscription": "projects/acme-orders/subscriptions/orders-push",
    }
    envelope.update(extra)
    return json.dumps(envelope).encode()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
