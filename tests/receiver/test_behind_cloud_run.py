"""Each adapter behind a stand-in for Cloud Run's front end, on real servers on 127.0.0.1.

The stand-in (``pushguard.receiver.testing.CloudRunFrontEnd``) checks the token as Cloud Run does
for a service that requires authentication (signature, audience against the service URL and its
custom audiences, the principal against the invokers) and forwards it with its signature replaced
by ``SIGNATURE_REMOVED_BY_GOOGLE``. Behind it, each app serves two routes: ``/push`` in the
documented mode (``behind_cloud_run_iam=True``, the container started with Cloud Run's
variables) and ``/push-default`` without it.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pushguard.receiver.testing import (
    CloudRunFrontEnd,
    LocalIssuer,
    cloud_run_environ,
    strip_signature,
)

from .conftest import wrapped_body

SERVICE_URL = "https://orders-3kq2x7ab9c-ew.a.run.app"
PUSH_ACCOUNT = "orders-push@acme-orders.iam.gserviceaccount.com"
OTHER_INVOKER = "deployer@acme-orders.iam.gserviceaccount.com"
CUSTOM_AUDIENCE = "orders-internal"

COMMON = f"""
import json, os
from pushguard.receiver import PushVerifier
CERTS = json.loads(os.environ["PUSHGUARD_TEST_CERTS"])
ON = PushVerifier({SERVICE_URL!r}, {PUSH_ACCOUNT!r}, keys=CERTS, behind_cloud_run_iam=True)
OFF = PushVerifier({SERVICE_URL!r}, {PUSH_ACCOUNT!r}, keys=CERTS)
"""

APPS = {
    "flask": (
        COMMON
        + """
import flask
from pushguard.receiver.flask import push_handler
app = flask.Flask("behind")

@app.post("/push")
@push_handler(ON)
def on(message):
    return None

@app.post("/push-default")
@push_handler(OFF)
def off(message):
    return None
"""
    ),
    "fastapi": (
        COMMON
        + """
from fastapi import Depends, FastAPI
from pushguard.receiver import PushMessage
from pushguard.receiver.fastapi import PushDependency, PushRoute
app = FastAPI()
app.router.route_class = PushRoute

@app.post("/push", status_code=204)
async def on(message: PushMessage = Depends(PushDependency(ON))) -> None:
    return None

@app.post("/push-default", status_code=204)
async def off(message: PushMessage = Depends(PushDependency(OFF))) -> None:
    return None
"""
    ),
    "functions-framework": (
        COMMON
        + """
import functions_framework
from pushguard.receiver.functions_framework import push_function
on = push_function(ON)(lambda message: None)
off = push_function(OFF)(lambda message: None)

@functions_framework.http
def entry(request):
    return off(request) if request.path.endswith("-default") else on(request)
"""
    ),
}


def _command(kind: str, folder: Path, port: int) -> list[str]:
    if kind == "flask":
        return [sys.executable, "-m", "gunicorn", "--chdir", str(folder), "-b",
                f"127.0.0.1:{port}", "--threads", "4", "app:app"]  # fmt: skip
    if kind == "fastapi":
        return [sys.executable, "-m", "uvicorn", "--app-dir", str(folder), "--host",
                "127.0.0.1", "--port", str(port), "app:app"]  # fmt: skip
    return [sys.executable, "-m", "functions_framework", "--target", "entry", "--source",
            str(folder / "app.py"), "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def issuer() -> LocalIssuer:
    return LocalIssuer()


def _wait_listening(port: int, server: subprocess.Popen[bytes]) -> None:
    for _ in range(300):  # up to 30 s
        if server.poll() is not None:
            raise AssertionError(f"the server exited: {server.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


@pytest.fixture(scope="module", params=sorted(APPS))
def container(
    request: pytest.FixtureRequest, issuer: LocalIssuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int]]:
    """The app served as Cloud Run would run it: ``(kind, port)``."""
    kind: str = request.param
    folder = tmp_path_factory.mktemp(f"behind-{kind}")
    (folder / "app.py").write_text(APPS[kind])
    port = _free_port()
    environ = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    environ |= {**cloud_run_environ(), "PUSHGUARD_TEST_CERTS": json.dumps(issuer.certs)}
    environ["PYTHONPATH"] = os.pathsep.join([str(folder), environ.get("PYTHONPATH", "")])
    server = subprocess.Popen(
        _command(kind, folder, port),
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_listening(port, server)
        yield kind, port
    finally:
        server.send_signal(signal.SIGTERM if kind == "fastapi" else signal.SIGQUIT)
        server.wait(timeout=15)


def _post(url: str, path: str, token: str, **headers: str) -> tuple[int, str]:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request(
            "POST",
            path,
            body=wrapped_body(),
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                **headers,
            },
        )
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        connection.close()


def _front(container: tuple[str, int], issuer: LocalIssuer, **options: object) -> CloudRunFrontEnd:
    settings: dict[str, object] = {
        "invokers": {PUSH_ACCOUNT, OTHER_INVOKER},
        "custom_audiences": {CUSTOM_AUDIENCE},
    }
    settings.update(options)
    return CloudRunFrontEnd(
        ("127.0.0.1", container[1]),
        issuer=issuer,
        service_url=SERVICE_URL,
        **settings,  # type: ignore[arg-type]
    )


def test_a_stripped_push_is_accepted_in_the_documented_mode(
    container: tuple[str, int], issuer: LocalIssuer
) -> None:
    with _front(container, issuer) as front:
        status, _ = _post(front.url, "/push", issuer.token(SERVICE_URL, PUSH_ACCOUNT))
    assert status == 204


def test_a_stripped_push_is_refused_by_default_with_its_own_reason(
    container: tuple[str, int], issuer: LocalIssuer
) -> None:
    with _front(container, issuer) as front:
        status, body = _post(front.url, "/push-default", issuer.token(SERVICE_URL, PUSH_ACCOUNT))
    assert status == 401
    assert "signature was removed by Google's front end" in body
    assert "not valid" not in body  # never reported as a bad signature


def test_an_intact_token_is_still_verified_in_full_in_the_mode(
    container: tuple[str, int], issuer: LocalIssuer
) -> None:
    token = issuer.token(SERVICE_URL, PUSH_ACCOUNT)
    with _front(container, issuer, strip=False) as front:
        assert _post(front.url, "/push", token)[0] == 204
        assert _post(front.url, "/push-default", token)[0] == 204


@pytest.mark.parametrize(
    ("claims", "status", "reason"),
    [
        ({"email": OTHER_INVOKER}, 403, "another service account"),  # an invoker, not the account
        ({"aud": CUSTOM_AUDIENCE}, 401, "another audience"),  # Cloud Run takes custom audiences
        ({"lifetime": -120}, 401, "expired"),  # the front end's clock allows 10 minutes here
        ({"email_verified": False}, 403, "not verified"),
        ({"iss": "https://evil.example"}, 401, "not issued by accounts.google.com"),
    ],
    ids=["email", "aud", "exp", "email_verified", "iss"],
)
def test_claims_the_front_end_lets_through_are_refused_by_the_receiver(
    container: tuple[str, int],
    issuer: LocalIssuer,
    claims: dict[str, object],
    status: int,
    reason: str,
) -> None:
    claims = dict(claims)  # the parameter is shared by every container
    email = str(claims.pop("email", PUSH_ACCOUNT))
    audience = str(claims.pop("aud", SERVICE_URL))
    token = issuer.token(audience, email, **claims)  # type: ignore[arg-type]
    with _front(container, issuer, leeway=600) as front:
        got, body = _post(front.url, "/push", token)
    assert (got, reason in body) == (status, True)


def test_forged_stripped_tokens_never_reach_the_container(
    container: tuple[str, int], issuer: LocalIssuer
) -> None:
    stranger = LocalIssuer(kid=issuer.kid)  # the same kid, another key
    forged = strip_signature(stranger.token(SERVICE_URL, PUSH_ACCOUNT))
    with _front(container, issuer) as front:
        assert _post(front.url, "/push", forged)[0] == 401
        assert _post(front.url, "/push", stranger.token(SERVICE_URL, PUSH_ACCOUNT))[0] == 401


def test_a_stripped_token_beside_another_checked_token_is_refused(
    container: tuple[str, int], issuer: LocalIssuer
) -> None:
    """Cloud Run checks X-Serverless-Authorization when a request has it and hands Authorization
    on as it came: an invoker's own token there must not vouch for a forged push token."""
    forged = strip_signature(LocalIssuer(kid=issuer.kid).token(SERVICE_URL, PUSH_ACCOUNT))
    invoker = issuer.token(SERVICE_URL, OTHER_INVOKER)
    with _front(container, issuer) as front:
        status, body = _post(
            front.url, "/push", forged, **{"X-Serverless-Authorization": f"Bearer {invoker}"}
        )
    assert status == 401
    assert "checked another one" in body
