"""The adapters under attack, through their frameworks and a real server on 127.0.0.1.

- No adapter reads the body of a request whose token is not valid, and none reads more than
  ``max_body_bytes`` (a WSGI input / ASGI ``receive`` that counts the bytes taken from it);
- the Functions Framework served as ``functions-framework`` serves it (gunicorn): connections
  that announce a body and withhold it get their 401 at once and do not block a real push;
- handler results follow each framework's conventions, decided before the handler where the
  framework allows it, and 102 is answered with a final status HTTP clients can read.

One server process for the module; every request loop is bounded and every socket has a timeout.
"""

from __future__ import annotations

import asyncio
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
from typing import Any

import flask
import functions_framework
import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient

from pushguard.receiver import PushMessage, PushVerifier
from pushguard.receiver.fastapi import PushDependency, PushRoute
from pushguard.receiver.flask import push_handler

from .conftest import AUDIENCE, EMAIL, NOW, FakeGoogle, bearer, wrapped_body

BIG = 64 * 1024 * 1024
LIMIT = 4096


class CountingInput:
    """A WSGI input that produces ``size`` bytes on demand and counts what was read."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.taken = 0

    def read(self, n: int = -1) -> bytes:
        left = self.size - self.taken
        n = left if n is None or n < 0 else min(n, left)
        self.taken += n
        return b"x" * n

    def readline(self, n: int = -1) -> bytes:
        return self.read(n)


def _result(message: PushMessage) -> Any:
    """What the test handlers return: picked by the message's ``answer`` attribute."""
    answer = message.attributes.get("answer", "none")
    return {
        "none": None,
        "ok-string": "OK",
        "bytes": b"done",
        "tuple-202": ("accepted", 202),
        "tuple-503": ("busy", 503),
        "102": 102,
        "201": 201,
        "response-200": flask.Response("fine", 200),
        "true": True,
        "false": False,
    }[answer]


# --- Flask and the Functions Framework in-process ----------------------------------------------


@pytest.fixture(scope="module")
def module_google(session_keys: dict[str, Any]) -> FakeGoogle:
    return FakeGoogle(dict(session_keys))


@pytest.fixture(scope="module")
def small_verifier(module_google: FakeGoogle) -> PushVerifier:
    return PushVerifier(
        AUDIENCE, EMAIL, keys=module_google.certs, clock=module_google.now, max_body_bytes=LIMIT
    )


@pytest.fixture(scope="module")
def calls() -> list[PushMessage]:
    return []


@pytest.fixture(scope="module")
def flask_app(small_verifier: PushVerifier, calls: list[PushMessage]) -> flask.Flask:
    app = flask.Flask("push-servers")

    @app.post("/push")
    @push_handler(small_verifier)
    def on_message(message: PushMessage) -> Any:
        calls.append(message)
        return _result(message)

    return app


@pytest.fixture(scope="module")
def ff_app(
    small_verifier: PushVerifier, calls: list[PushMessage], tmp_path_factory: pytest.TempPathFactory
) -> flask.Flask:
    """A Functions Framework app made the way ``functions-framework --target`` makes it."""
    folder = tmp_path_factory.mktemp("ff-inproc")
    (folder / "main.py").write_text(
        "import functions_framework\n"
        "from pushguard.receiver.functions_framework import push_function\n"
        "import ff_settings\n"
        "\n"
        "@functions_framework.http\n"
        "@push_function(ff_settings.VERIFIER)\n"
        "def on_order(message):\n"
        "    ff_settings.CALLS.append(message)\n"
        "    return ff_settings.RESULT(message)\n"
    )
    settings = type(sys)("ff_settings")
    settings.VERIFIER = small_verifier  # type: ignore[attr-defined]
    settings.CALLS = calls  # type: ignore[attr-defined]
    settings.RESULT = _result  # type: ignore[attr-defined]
    sys.modules["ff_settings"] = settings
    try:
        return functions_framework.create_app(target="on_order", source=str(folder / "main.py"))
    finally:
        del sys.modules["ff_settings"]


@pytest.fixture(params=["flask", "functions-framework"])
def wsgi(request: pytest.FixtureRequest) -> tuple[flask.Flask, str]:
    if request.param == "flask":
        return request.getfixturevalue("flask_app"), "/push"
    return request.getfixturevalue("ff_app"), "/"


def _post_counting(
    app: flask.Flask, path: str, stream: CountingInput, headers: dict[str, str], chunked: bool
) -> Any:
    environ: dict[str, Any] = {"wsgi.input": stream}
    if chunked:
        environ["wsgi.input_terminated"] = True
        headers = {**headers, "Transfer-Encoding": "chunked"}
    else:
        environ["CONTENT_LENGTH"] = str(stream.size)
    return app.test_client().post(path, headers=headers, environ_overrides=environ)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_wsgi_adapters_read_no_unauthenticated_body(
    wsgi: tuple[flask.Flask, str], module_google: FakeGoogle, chunked: bool
) -> None:
    app, path = wsgi
    stream = CountingInput(BIG)
    response = _post_counting(app, path, stream, {"Content-Type": "application/json"}, chunked)
    assert response.status_code == 401
    assert stream.taken == 0
    forged = bearer(module_google.token(aud="https://elsewhere.example.com"))
    stream = CountingInput(BIG)
    assert _post_counting(app, path, stream, forged, chunked).status_code == 401
    assert stream.taken == 0


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_wsgi_adapters_read_at_most_the_limit(
    wsgi: tuple[flask.Flask, str], module_google: FakeGoogle, chunked: bool
) -> None:
    app, path = wsgi
    stream = CountingInput(BIG)
    response = _post_counting(app, path, stream, bearer(module_google.token()), chunked)
    assert response.status_code == 413
    assert stream.taken <= LIMIT + 1


def _asgi_app(verifier: PushVerifier, received: list[PushMessage]) -> FastAPI:
    app = FastAPI()
    app.router.route_class = PushRoute

    @app.post("/push", status_code=204)
    async def on_message(message: PushMessage = Depends(PushDependency(verifier))) -> None:  # noqa: B008
        received.append(message)

    return app


def _asgi_post(app: Any, headers: dict[str, str], size: int, chunk: int = 65536) -> tuple[int, int]:
    """POST ``size`` bytes in ``chunk``-byte ``http.request`` events, as uvicorn delivers them;
    the response status and the bytes the app took."""
    taken = [0]
    status = [0]

    async def receive() -> dict[str, Any]:
        if taken[0] >= size:
            return {"type": "http.disconnect"}
        taken[0] += chunk
        return {"type": "http.request", "body": b"x" * chunk, "more_body": taken[0] < size}

    async def send(event: dict[str, Any]) -> None:
        if event["type"] == "http.response.start":
            status[0] = event["status"]

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
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1234),
        "server": ("127.0.0.1", 80),
    }
    # A loop of its own, not asyncio.run(): that leaves the main thread with no current loop, and
    # later tests in this process run programs under Pulumi's mock runtime, which needs one.
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(app(scope, receive, send))
    finally:
        loop.close()
    return status[0], taken[0]


@pytest.mark.parametrize("length", [False, True], ids=["chunked", "content-length"])
@pytest.mark.parametrize("authenticated", [False, True])
def test_fastapi_reads_no_unauthenticated_body_and_at_most_the_limit(
    small_verifier: PushVerifier, module_google: FakeGoogle, authenticated: bool, length: bool
) -> None:
    headers = bearer(module_google.token()) if authenticated else {}
    if length:
        headers["Content-Length"] = str(BIG)
    status, taken = _asgi_post(_asgi_app(small_verifier, []), headers, BIG)
    assert status == (413 if authenticated else 401)
    assert taken <= (LIMIT + 65536 if authenticated and not length else 0)


# --- handler results ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("none", 204),
        ("true", 204),
        ("false", 503),
        ("ok-string", 200),
        ("bytes", 200),
        ("tuple-202", 202),
        ("tuple-503", 503),
        ("201", 201),
        ("102", 202),
        ("response-200", 200),
    ],
)
def test_wsgi_handler_results_follow_flask_conventions(
    wsgi: tuple[flask.Flask, str], module_google: FakeGoogle, answer: str, status: int
) -> None:
    app, path = wsgi
    body = wrapped_body(attributes={"answer": answer})
    response = app.test_client().post(path, data=body, headers=bearer(module_google.token()))
    assert response.status_code == status


def test_fastapi_route_status_that_pubsub_would_nack_is_refused_before_the_handler(
    small_verifier: PushVerifier, module_google: FakeGoogle
) -> None:
    received: list[PushMessage] = []
    app = FastAPI()
    app.router.route_class = PushRoute

    @app.post("/push", status_code=203)
    async def on_message(message: PushMessage = Depends(PushDependency(small_verifier))) -> None:  # noqa: B008
        received.append(message)

    client = TestClient(app, raise_server_exceptions=False)
    response = client.post("/push", content=wrapped_body(), headers=bearer(module_google.token()))
    assert response.status_code == 500
    assert received == []


# --- the Functions Framework as served in production (gunicorn), on 127.0.0.1 ------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def ff_server(
    module_google: FakeGoogle, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[int, FakeGoogle]]:
    folder: Path = tmp_path_factory.mktemp("ff-server")
    (folder / "main.py").write_text(
        "import functions_framework\n"
        "from pushguard.receiver import PushVerifier\n"
        "from pushguard.receiver.functions_framework import push_function\n"
        "\n"
        f"CERTS = {json.dumps(module_google.certs)}\n"
        f"verifier = PushVerifier({AUDIENCE!r}, {EMAIL!r}, keys=CERTS, clock=lambda: {NOW!r})\n"
        "\n"
        "@functions_framework.http\n"
        "@push_function(verifier)\n"
        "def on_order(message):\n"
        "    return 102 if message.attributes.get('answer') == '102' else None\n"
    )
    port = _free_port()
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "functions_framework"),
            *("--target", "on_order", "--source", str(folder / "main.py")),
            *("--host", "127.0.0.1", "--port", str(port)),
        ],
        env={**os.environ, "THREADS": "4"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):  # up to 20 s for gunicorn to listen
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("functions-framework did not start")
        yield port, module_google
    finally:
        server.send_signal(signal.SIGQUIT)  # gunicorn's quick shutdown
        server.wait(timeout=10)


def _push(port: int, google: FakeGoogle, **body: Any) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("POST", "/", body=wrapped_body(**body), headers=bearer(google.token()))
    return connection.getresponse()


def test_withheld_bodies_get_their_401_and_do_not_block_a_real_push(
    ff_server: tuple[int, FakeGoogle],
) -> None:
    port, google = ff_server
    withheld = []
    for _ in range(12):  # three times the server's threads
        conn = socket.create_connection(("127.0.0.1", port), timeout=5)
        conn.sendall(
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 300000000\r\n\r\n"
        )
        withheld.append(conn)
    try:
        for conn in withheld:
            conn.settimeout(3)
            assert conn.recv(64).startswith(b"HTTP/1.1 401")
        assert _push(port, google).status == 204
    finally:
        for conn in withheld:
            conn.close()


def _raw_post(connection: socket.socket, token: str) -> bytes:
    """One POST in a single send (headers and body in one segment); the status line and headers
    of the answer, whose body is read off by its Content-Length."""
    body = wrapped_body()
    connection.sendall(
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Authorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += connection.recv(4096) or b"<closed>\r\n\r\n"
    head, _, rest = answer.partition(b"\r\n\r\n")
    length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), b"0"))  # fmt: skip
    while len(rest) < length:
        rest += connection.recv(4096)
    return head


def test_a_rejected_push_whose_body_arrived_keeps_its_connection(
    ff_server: tuple[int, FakeGoogle],
) -> None:
    """gunicorn says keep-alive on every answer; a rejection whose body is already at hand reads
    it off, so the connection really stays open for the next push."""
    port, google = ff_server
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        first = _raw_post(connection, "not-a-token")
        assert first.startswith(b"HTTP/1.1 401") and b"Connection: keep-alive" in first
        time.sleep(0.5)  # gunicorn reads the next request (or finds the connection shut)
        assert _raw_post(connection, google.token()).startswith(b"HTTP/1.1 204")


def test_an_interim_102_is_answered_with_a_final_ack_clients_can_read(
    ff_server: tuple[int, FakeGoogle],
) -> None:
    port, google = ff_server
    response = _push(port, google, attributes={"answer": "102"})
    assert response.status == 202
