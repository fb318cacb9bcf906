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

Then the time each adapter takes to reject, with no token (in-process, through the framework):
- 100,000 repeated header lines (1.8 MB): what an ASGI server without a header limit, such as
  uvicorn with httptools, hands over as 100,000 pairs; WSGI servers merge repeats into one
  ``", "``-joined value (1 MB), which is what the Flask and Functions Framework rows get;
- an unauthenticated 100 MiB body (a WSGI input / ASGI ``receive`` producing it on demand), with
  the bytes the adapter took from it.

    python bench/receiver_bench.py                  # 3 runs, 5,000 fresh tokens
    python bench/receiver_bench.py --runs 5 --tokens 20000
"""

from __future__ import annotations

import argparse
import base64
import json
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import crypt, jwt
from google.oauth2 import id_token

from pushguard.receiver import PushVerifier
from pushguard.receiver.testing import self_signed_certificate

AUDIENCE = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
EMAIL = "orders-push@acme-orders.iam.gserviceaccount.com"


def _certificate(key: rsa.RSAPrivateKey) -> str:
    return self_signed_certificate(key, days=30, name="accounts.google.com")


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


_HEADER_LINES = 100_000
_BIG_BODY = 100 * 1024 * 1024


class _Body:
    """A WSGI input of ``size`` bytes made on demand, counting what is read."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.taken = 0

    def read(self, n: int = -1) -> bytes:
        n = self.size - self.taken if n is None or n < 0 else min(n, self.size - self.taken)
        self.taken += n
        return b"x" * n

    def readline(self, n: int = -1) -> bytes:
        return self.read(n)


def _timed(function: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def _asgi_post(app: object, headers: list[tuple[bytes, bytes]], size: int) -> tuple[int, int]:
    import asyncio

    taken, status, chunk = [0], [0], 65536

    async def receive() -> dict[str, object]:
        if taken[0] >= size:
            return {"type": "http.disconnect"}
        taken[0] += chunk
        return {"type": "http.request", "body": b"x" * chunk, "more_body": taken[0] < size}

    async def send(event: dict[str, object]) -> None:
        if event["type"] == "http.response.start":
            status[0] = int(event["status"])  # type: ignore[call-overload]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/push",
        "raw_path": b"/push",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))  # type: ignore[operator]
    return status[0], taken[0]


def attack_rejections(certs: dict[str, str]) -> list[tuple[str, str, float, str]]:
    """(adapter, attack, seconds, outcome) for each adapter and attack, no token."""
    import flask
    from fastapi import Depends, FastAPI

    from pushguard.receiver import PushMessage
    from pushguard.receiver.fastapi import PushDependency, PushRoute
    from pushguard.receiver.flask import push_handler

    verifier = PushVerifier(AUDIENCE, EMAIL, keys=certs)
    lines = [("X-Filler", "aaaaaaaa")] * _HEADER_LINES
    rows: list[tuple[str, str, float, str]] = []

    class _Lines:
        def items(self) -> list[tuple[str, str]]:
            return lines

    def core() -> str:
        try:
            verifier.verify_token(_Lines())
        except Exception as exc:  # PushRejected
            return f"{getattr(exc, 'status', '?')}"
        return "accepted"

    seconds, outcome = _timed(core)
    rows.append(("verify_token (any framework)", "100,000 header lines", seconds, str(outcome)))

    flask_app = flask.Flask("bench")
    flask_app.post("/push")(push_handler(verifier)(lambda message: None))
    ff_app = _functions_framework_app(verifier)
    merged = ", ".join(value for _, value in lines)  # what a WSGI server makes of them
    for name, app in (("Flask", flask_app), ("Functions Framework", ff_app)):  # type: ignore[assignment]
        body = _Body(_BIG_BODY)
        seconds, response = _timed(
            lambda app=app, body=body: app.test_client().post(
                "/push",
                environ_overrides={"wsgi.input": body, "CONTENT_LENGTH": str(body.size)},
            )
        )
        status = getattr(response, "status_code", "?")
        rows.append((name, "100 MiB body", seconds, f"{status}, {body.taken:,} bytes read"))
        seconds, response = _timed(
            lambda app=app: app.test_client().post(
                "/push", environ_overrides={"HTTP_X_FILLER": merged}
            )
        )
        status = getattr(response, "status_code", "?")
        rows.append((name, "100,000 header lines (merged)", seconds, str(status)))

    fastapi_app = FastAPI()
    fastapi_app.router.route_class = PushRoute
    dependency = PushDependency(verifier)

    @fastapi_app.post("/push", status_code=204)
    async def on_message(message: PushMessage = Depends(dependency)) -> None:  # noqa: B008
        return None

    raw = [(b"x-filler", b"aaaaaaaa")] * _HEADER_LINES
    seconds, (status, _) = _timed(lambda: _asgi_post(fastapi_app, raw, 0))  # type: ignore[misc]
    rows.append(("FastAPI", "100,000 header lines", seconds, str(status)))
    seconds, (status, taken) = _timed(lambda: _asgi_post(fastapi_app, [], _BIG_BODY))  # type: ignore[misc]
    rows.append(("FastAPI", "100 MiB body", seconds, f"{status}, {taken:,} bytes read"))
    return rows


def _functions_framework_app(verifier: PushVerifier) -> object:
    """The app ``functions-framework --target on_order`` serves (its hooks included)."""
    import sys
    import tempfile
    import types
    from pathlib import Path

    import functions_framework

    folder = Path(tempfile.mkdtemp(prefix="pushguard-bench-"))
    (folder / "main.py").write_text(
        "import functions_framework\n"
        "from pushguard.receiver.functions_framework import push_function\n"
        "import bench_settings\n"
        "\n"
        "@functions_framework.http\n"
        "@push_function(bench_settings.VERIFIER)\n"
        "def on_order(message):\n"
        "    return None\n"
    )
    settings = types.ModuleType("bench_settings")
    settings.VERIFIER = verifier  # type: ignore[attr-defined]
    sys.modules["bench_settings"] = settings
    return functions_framework.create_app(target="on_order", source=str(folder / "main.py"))


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
    print()
    print("| adapter | attack, no token | seconds to reject | answer |")
    print("|---|---|---|---|")
    certs = {kid: _certificate(key) for kid, key in keys.items()}
    for adapter, attack, seconds, outcome in attack_rejections(certs):
        print(f"| {adapter} | {attack} | {seconds:.3f} | {outcome} |")


if __name__ == "__main__":
    main()
