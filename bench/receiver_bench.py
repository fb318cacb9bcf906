"""Benchmark of the receiver: push-token verifications per second, on one core.

Compared, per request:
- ``fresh``: every token distinct (the verified-token cache misses, then stores it): the strict
  JWT parse, an RS256 signature check with ``cryptography`` and the claim checks;
- ``cached``: the same token again and again (Pub/Sub reuses a token for up to an hour): the
  SHA-256 of the token and a cache lookup;
- ``verify()`` fresh and cached: the same plus the wrapped envelope (a 1 KB message) into a
  ``PushMessage``;
- ``google-auth``: ``google.oauth2.id_token.verify_oauth2_token(token, request, audience)`` per
  request, with the certificates served from memory (no network), as the Pub/Sub samples do.

Tokens are real RS256 tokens minted with google-auth's encoder and 2048-bit keys. Single thread,
so the figures are per core. Median of ``--runs`` runs.

    python bench/receiver_bench.py                  # 3 runs, 5,000 fresh tokens
    python bench/receiver_bench.py --runs 5 --tokens 20000
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from google.auth import crypt, jwt
from google.oauth2 import id_token

from pushguard.receiver import PushVerifier

AUDIENCE = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
EMAIL = "orders-push@acme-orders.iam.gserviceaccount.com"


def _certificate(key: rsa.RSAPrivateKey) -> str:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "accounts.google.com")])
    start = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _tokens(keys: dict[str, rsa.RSAPrivateKey], count: int) -> list[str]:
    signers = [crypt.RSASigner(key, key_id=kid) for kid, key in keys.items()]
    now = int(time.time())
    claims = {
        "aud": AUDIENCE,
        "email": EMAIL,
        "email_verified": True,
        "iss": "https://accounts.google.com",
        "iat": now,
        "exp": now + 3600,
    }
    return [
        jwt.encode(signers[n % len(signers)], {**claims, "sub": str(10**20 + n)}).decode()
        for n in range(count)
    ]


@dataclass
class _Response:
    status: int
    headers: dict[str, str]
    data: bytes


class _InMemoryCerts:
    """A google.auth transport Request that serves the certificates without network."""

    def __init__(self, certs: dict[str, str]) -> None:
        self._data = json.dumps(certs).encode()

    def __call__(self, url: str, method: str = "GET", **_: object) -> _Response:
        return _Response(200, {"Cache-Control": "max-age=20000"}, self._data)


def _rate(function: Callable[[str], object], tokens: list[str]) -> float:
    start = time.perf_counter()
    for token in tokens:
        function(token)
    return len(tokens) / (time.perf_counter() - start)


def _body() -> bytes:
    return json.dumps(
        {
            "message": {
                "attributes": {"origin": "checkout"},
                "data": base64.b64encode(b"x" * 1024).decode(),
                "messageId": "2070443601311540",
                "message_id": "2070443601311540",
                "publishTime": "2026-11-21T19:13:55.749Z",
                "publish_time": "2026-11-21T19:13:55.749Z",
            },
            "subscription": "projects/acme-orders/subscriptions/orders-push",
        }
    ).encode()


def run_once(keys: dict[str, rsa.RSAPrivateKey], tokens: list[str]) -> dict[str, float]:
    certs = {kid: _certificate(key) for kid, key in keys.items()}
    body = _body()
    repeated = [tokens[0]] * (len(tokens) * 20)
    google_request = _InMemoryCerts(certs)

    def verifier() -> PushVerifier:
        return PushVerifier(AUDIENCE, EMAIL, keys=certs, cache_size=len(tokens) + 1)

    fresh, cached, full_fresh, full_cached = verifier(), verifier(), verifier(), verifier()
    cached.tokens.verify(tokens[0])
    full_cached.verify({"Authorization": f"Bearer {tokens[0]}"}, body)
    return {
        "fresh tokens/s": _rate(fresh.tokens.verify, tokens),
        "cached tokens/s": _rate(cached.tokens.verify, repeated),
        "verify() fresh/s": _rate(
            lambda t: full_fresh.verify({"Authorization": f"Bearer {t}"}, body), tokens
        ),
        "verify() cached/s": _rate(
            lambda t: full_cached.verify({"Authorization": f"Bearer {t}"}, body), repeated
        ),
        "google-auth verify_oauth2_token/s": _rate(
            lambda t: id_token.verify_oauth2_token(t, google_request, AUDIENCE),  # type: ignore[arg-type]
            tokens[: max(1, len(tokens) // 5)],
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=5000)
    options = parser.parse_args()
    keys = {f"k{n}": rsa.generate_private_key(public_exponent=65537, key_size=2048) for n in (1, 2)}
    tokens = _tokens(keys, options.tokens)
    runs = [run_once(keys, tokens) for _ in range(options.runs)]
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, one thread, "
        f"{options.tokens} fresh tokens, median of {options.runs}"
    )
    print("| measure | per second | µs each |")
    print("|---|---|---|")
    for name in runs[0]:
        rate = statistics.median(run[name] for run in runs)
        print(f"| {name} | {rate:,.0f} | {1e6 / rate:.1f} |")


if __name__ == "__main__":
    main()
