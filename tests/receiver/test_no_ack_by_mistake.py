"""No push is acknowledged by mistake, whatever the handler raises or returns, in every adapter;
async handlers run where the framework can run them and are refused at registration where not.

Each case goes through a real server on 127.0.0.1: Flask on werkzeug's server, the Functions
Framework as ``functions-framework`` serves it (gunicorn), FastAPI on uvicorn. The handler picks
what to do from the message's ``do`` attribute.
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

from pushguard.receiver.testing import LocalIssuer

from .conftest import wrapped_body

AUDIENCE = "https://orders-3kq2x7ab9c-ew.a.run.app"
ACCOUNT = "orders-push@acme-orders.iam.gserviceaccount.com"

COMMON = f"""
import asyncio, json, os
from pushguard.receiver import PushVerifier
VERIFIER = PushVerifier({AUDIENCE!r}, {ACCOUNT!r}, keys=json.loads(os.environ["CERTS"]))
"""

WSGI_HANDLER = """
import flask
from werkzeug.exceptions import HTTPException

class Forgot(HTTPException):
    description = "a subclass without code"

class Acknowledging(HTTPException):
    code = 204

def act(message):
    do = message.attributes.get("do")
    if do == "codeless":
        raise HTTPException()
    if do == "subclass":
        raise Forgot()
    if do == "stream-codeless":
        def body():
            yield "started"
            raise HTTPException()
        return flask.Response(body(), status=200)
    if do == "stream-redirect":
        def body():
            yield "started"
            flask.abort(flask.redirect("https://example.com/"))
        return flask.Response(body(), status=200)
    if do == "abort-404":
        flask.abort(404)
    if do == "raise-runtime":
        raise RuntimeError("the handler failed")
    if do == "raise-204":
        raise Acknowledging()
    if do == "abort-response-200":
        flask.abort(flask.Response("fine", 200))
    if do == "stream-204":
        def body():
            yield "started"
            flask.abort(flask.Response("", 204))
        return flask.Response(body(), status=200)
    if do == "coroutine":
        async def later():
            return None
        return later()
    return None

async def act_async(message):
    await asyncio.sleep(0)
    if message.attributes.get("do") == "async-fail":
        raise RuntimeError("async handler failed")
    return 201
"""

APPS = {
    "flask": COMMON
    + WSGI_HANDLER
    + """
from pushguard.receiver.flask import push_handler
app = flask.Flask("acks")
app.post("/push")(push_handler(VERIFIER)(act))
app.post("/async")(push_handler(VERIFIER)(act_async))

@app.errorhandler(Exception)  # a common catch-all that would acknowledge every failure
def everything(error):
    return {"error": "handled"}, 200
""",
    "functions-framework": COMMON
    + WSGI_HANDLER
    + """
import functions_framework
from pushguard.receiver.functions_framework import push_function
sync_fn = push_function(VERIFIER)(act)
async_fn = push_function(VERIFIER)(act_async)

@functions_framework.http
def entry(request):
    return async_fn(request) if request.path == "/async" else sync_fn(request)
""",
    "fastapi": COMMON
    + """
from fastapi import Depends, FastAPI, Request
from fastapi.responses import StreamingResponse
from starlette.exceptions import HTTPException
from pushguard.receiver import PushMessage
from pushguard.receiver.fastapi import PushDependency, PushRoute
from fastapi.responses import JSONResponse
app = FastAPI()
app.router.route_class = PushRoute
verified = PushDependency(VERIFIER)

@app.exception_handler(Exception)  # common catch-alls that would acknowledge every failure
async def everything(request, error):
    return JSONResponse({"error": "handled"}, status_code=200)

@app.exception_handler(HTTPException)
async def http_errors(request, error):
    return JSONResponse({"error": "handled"}, status_code=200)

@app.post("/push", status_code=204)
async def act(request: Request, message: PushMessage = Depends(verified)):
    do = message.attributes.get("do")
    if do == "starlette-302":
        raise HTTPException(302)
    if do == "starlette-203":
        raise HTTPException(203)
    if do == "starlette-204":
        raise HTTPException(204)
    if do == "raise-runtime":
        raise RuntimeError("the handler failed")
    if do == "stream-204":
        async def failing():
            yield b"started"
            raise HTTPException(204)
        return StreamingResponse(failing(), status_code=200)
    if do == "stream-302":
        async def body():
            yield b"started"
            raise HTTPException(302)
        return StreamingResponse(body(), status_code=200)
    if do == "abort-404":
        raise HTTPException(404)
    if do == "body":
        raw = await request.body()
        return StreamingResponse(iter([raw]), status_code=200)
    return None
""",
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _command(kind: str, folder: Path, port: int) -> list[str]:
    if kind == "flask":
        return [sys.executable, "-m", "flask", "--app", "app", "run", "--host", "127.0.0.1",
                "--port", str(port)]  # fmt: skip
    if kind == "fastapi":
        return [sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port),
                "app:app"]  # fmt: skip
    return [sys.executable, "-m", "functions_framework", "--target", "entry", "--source",
            str(folder / "app.py"), "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip


@pytest.fixture(scope="module")
def issuer() -> LocalIssuer:
    return LocalIssuer()


@pytest.fixture(scope="module", params=sorted(APPS))
def server(
    request: pytest.FixtureRequest, issuer: LocalIssuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int, Path]]:
    """``(kind, port, log file)`` of the app on its server."""
    kind: str = request.param
    folder = tmp_path_factory.mktemp(f"acks-{kind}")
    (folder / "app.py").write_text(APPS[kind])
    log = folder / "server.log"
    port = _free_port()
    environ = {**os.environ, "CERTS": json.dumps(issuer.certs)}
    environ["PYTHONPATH"] = os.pathsep.join([str(folder), environ.get("PYTHONPATH", "")])
    with log.open("wb") as sink:
        process = subprocess.Popen(
            _command(kind, folder, port), cwd=folder, env=environ, stdout=sink, stderr=sink
        )
    try:
        for _ in range(300):
            assert process.poll() is None, log.read_text()[-2000:]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        yield kind, port, log
    finally:
        process.send_signal(signal.SIGQUIT if kind == "functions-framework" else signal.SIGTERM)
        process.wait(timeout=15)


def _push(port: int, issuer: LocalIssuer, path: str, do: str, **headers: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "POST",
            path,
            body=wrapped_body(attributes={"do": do}),
            headers={
                "Authorization": f"Bearer {issuer.token(AUDIENCE, ACCOUNT)}",
                "Content-Type": "application/json",
                **headers,
            },
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


WSGI_CASES = {
    "codeless": 500,  # Flask would answer a code-less HTTPException with 200
    "subclass": 500,
    "stream-codeless": 500,
    "stream-redirect": 500,  # was a 302 with no log line
    "coroutine": 500,  # a coroutine returned by a plain def is not an outcome
    "abort-404": 404,  # a 4xx stays the handler's answer
    "raise-runtime": 500,  # whatever the app's error handlers would make of it
    "raise-204": 500,  # a raised exception is never an acknowledgement
    "abort-response-200": 500,
    "stream-204": 500,
    "none": 204,
}
FASTAPI_CASES = {
    "starlette-302": 500,
    "starlette-203": 500,
    "stream-302": 500,
    "abort-404": 404,
    "starlette-204": 500,
    "raise-runtime": 500,
    "stream-204": 500,
    "none": 204,
}


def test_nothing_the_handler_raises_becomes_an_acknowledgement(
    server: tuple[str, int, Path], issuer: LocalIssuer
) -> None:
    kind, port, log = server
    path = "/" if kind == "functions-framework" else "/push"
    cases = FASTAPI_CASES if kind == "fastapi" else WSGI_CASES
    answers = {do: _push(port, issuer, path, do)[0] for do in cases}
    assert answers == cases
    time.sleep(0.2)  # the server's log is written by another process
    logged = log.read_text()
    assert "push handler result refused" in logged  # each refusal says why, in the log


def test_async_handlers_run_where_the_framework_can_run_them(
    server: tuple[str, int, Path], issuer: LocalIssuer
) -> None:
    kind, port, _ = server
    if kind == "fastapi":
        pytest.skip("FastAPI runs async routes natively (the cases above are async)")
    assert _push(port, issuer, "/async", "none")[0] == 201
    assert _push(port, issuer, "/async", "async-fail")[0] == 500


def test_a_fastapi_handler_can_read_the_verified_body(
    server: tuple[str, int, Path], issuer: LocalIssuer
) -> None:
    kind, port, _ = server
    if kind != "fastapi":
        pytest.skip("Flask handlers get the message; request.get_data() is the sealed body")
    status, body = _push(port, issuer, "/push", "body")
    assert status == 200
    assert json.loads(body)["message"]["attributes"] == {"do": "body"}


def test_an_async_handler_without_asgiref_is_refused_at_registration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from pushguard.receiver import PushVerifier
    from pushguard.receiver.flask import push_handler
    from pushguard.receiver.functions_framework import push_function

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "asgiref" else real(name)
    )
    verifier = PushVerifier(AUDIENCE, ACCOUNT, keys=LocalIssuer().certs)

    async def on_order(message: object) -> None:
        return None

    for decorator in (push_handler, push_function):
        with pytest.raises(TypeError, match=r"flask\[async\]"):
            decorator(verifier)(on_order)


def test_a_fastapi_push_route_with_a_body_parameter_is_refused_at_start_up() -> None:
    from fastapi import Body, Depends, FastAPI

    from pushguard.receiver import PushMessage, PushVerifier
    from pushguard.receiver.fastapi import PushDependency, PushRoute

    app = FastAPI()
    app.router.route_class = PushRoute
    verified = PushDependency(PushVerifier(AUDIENCE, ACCOUNT, keys=LocalIssuer().certs))
    with pytest.raises(TypeError, match=r"'envelope'.*request\.body\(\)"):

        @app.post("/push", status_code=204)
        async def on_order(
            message: PushMessage = Depends(verified),  # noqa: B008
            envelope: dict[str, object] = Body(None),  # noqa: B008
        ) -> None:
            return None

    @app.post("/other")  # a route without the dependency may take a body
    async def other(envelope: dict[str, object] = Body(None)) -> None:  # noqa: B008
        return None


def test_a_content_length_of_other_digits_is_a_400_not_a_traceback(
    server: tuple[str, int, Path], issuer: LocalIssuer
) -> None:
    kind, port, log = server
    path = "/" if kind == "functions-framework" else "/push"
    token = issuer.token(AUDIENCE, ACCOUNT)
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nContent-Length: \u00b2\r\nConnection: close\r\n\r\n"
    ).encode("latin-1")  # one byte 0xB2: '²' to servers that decode headers as ISO-8859-1
    logged_before = log.stat().st_size  # earlier tests' lines stay out of this one
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        answer = connection.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    time.sleep(0.2)
    assert b"Traceback" not in log.read_bytes()[logged_before:]


def test_a_rejection_is_answered_whatever_the_app_s_error_handlers_say(
    server: tuple[str, int, Path], issuer: LocalIssuer
) -> None:
    kind, port, _ = server
    path = "/" if kind == "functions-framework" else "/push"
    forged = LocalIssuer(kid=issuer.kid).token(AUDIENCE, ACCOUNT)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", path, body=b"{}", headers={"Authorization": f"Bearer {forged}"})
        assert connection.getresponse().status == 401
    finally:
        connection.close()
