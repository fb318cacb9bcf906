"""Pub/Sub's largest unwrapped push, sent to real servers on 127.0.0.1.

An unwrapped push (``noWrapper``) carries each message attribute as a header, and Pub/Sub allows
100 attributes per message, keys of up to 256 bytes and values of up to 1,024 bytes
(https://cloud.google.com/pubsub/quotas#resource_limits). With the transport headers that is 109
header fields and about 130 KB of header block, sent here in 4 KiB TCP segments as a large header
block arrives over a network.

- With their defaults the servers refuse such a push before the app runs: werkzeug's development
  server, gunicorn and the ``functions-framework`` command (gunicorn) answer 431, uvicorn (h11)
  400. Pub/Sub would redeliver it, and every redelivery fails the same way.
- ``functions-framework`` passes no gunicorn setting through: ``GUNICORN_CMD_ARGS`` and a
  ``gunicorn.conf.py`` leave it at 431.
- With the settings docs/receiver-servers.md documents, each server acknowledges the push (204)
  and the handler sees all 100 attributes it names in ``attribute_headers``.

The documented commands and snippets are read from the page and run as written; only the address
to bind is added. So the page and these tests cannot drift apart. One server process per case,
stopped by the fixture; every socket has a timeout.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import select
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from .conftest import AUDIENCE, EMAIL, NOW, FakeGoogle

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "receiver-servers.md"

ATTRIBUTES = 100
KEY_BYTES = 256
VALUE_BYTES = 1024
NAMES = [f"attr-{i:03d}-".ljust(KEY_BYTES, "k") for i in range(ATTRIBUTES)]
"""Header names as every server passes them on: lowercase letters, digits and ``-``."""
VALUES = [f"{i:03d}-".ljust(VALUE_BYTES, "v") for i in range(ATTRIBUTES)]
SUBSCRIPTION = "projects/acme-orders/subscriptions/orders-raw"
USER_AGENT = "APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)"
SEGMENT = 4096
PAUSE = 0.005
"""Seconds between segments: each arrives on its own, as over a network."""

PROGRAMS = {
    "flask": "flask",
    "gunicorn": "gunicorn",
    "functions-framework": "functions_framework",
    "uvicorn": "uvicorn",
}
"""The documented programs, run as ``python -m MODULE`` with this interpreter."""

SETTINGS = """\
import json
import pathlib

from pushguard.receiver import PushVerifier

HERE = pathlib.Path(__file__).parent
CONFIG = json.loads((HERE / "push_config.json").read_text())
verifier = PushVerifier(
    CONFIG["audience"],
    CONFIG["email"],
    keys=CONFIG["certs"],
    clock=lambda: CONFIG["now"],
    payload_format="unwrapped",
    attribute_headers=CONFIG["names"],
    subscription=CONFIG["subscription"],
)


def record(message):
    seen = {"attributes": message.attributes, "subscription": message.subscription}
    received = HERE / "received"
    received.mkdir(exist_ok=True)
    (received / f"{message.message_id}.json").write_text(json.dumps(seen))
"""

FLASK_APP = """\
import flask

import push_settings
from pushguard.receiver.flask import push_handler

app = flask.Flask(__name__)


@app.post("/push")
@push_handler(push_settings.verifier)
def on_message(message):
    push_settings.record(message)
"""

FUNCTION = """\
import functions_framework

import push_settings
from pushguard.receiver.functions_framework import push_function


@functions_framework.http
@push_function(push_settings.verifier)
def on_order(message):
    push_settings.record(message)
"""

FASTAPI_APP = """\
from fastapi import Depends, FastAPI

import push_settings
from pushguard.receiver import PushMessage
from pushguard.receiver.fastapi import PushDependency, PushRoute

app = FastAPI()
app.router.route_class = PushRoute
verified_push = PushDependency(push_settings.verifier)


@app.post("/push", status_code=204)
async def on_message(message: PushMessage = Depends(verified_push)) -> None:
    push_settings.record(message)
"""

# --- the page: its commands and files ----------------------------------------------------------

FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Command:
    """A documented command line: leading ``NAME=value`` assignments, then the program's argv."""

    env: tuple[tuple[str, str], ...]
    argv: tuple[str, ...]

    @property
    def id(self) -> str:
        return shlex.join([f"{k}={v}" for k, v in self.env] + list(self.argv))


def _blocks(lang: str) -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    return [m["body"] for m in FENCE.finditer(text) if m["lang"] == lang]


def documented_commands() -> list[Command]:
    commands = []
    for block in _blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            env = []
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0], re.S):
                name, _, value = words.pop(0).partition("=")
                env.append((name, value))
            if words:
                commands.append(Command(tuple(env), tuple(words)))
    return commands


def documented_file(name: str) -> str:
    """The Python block that starts with the comment ``# NAME``: a file the page asks for."""
    found = [code for code in _blocks("python") if code.startswith(f"# {name}")]
    assert len(found) == 1, f"{PAGE.name}: one python block must start with '# {name}'"
    return found[0]


def kind_of(command: Command) -> str:
    """The server a documented command starts: werkzeug, gunicorn, functions-framework, uvicorn."""
    program = command.argv[0]
    if program == "flask":
        return "werkzeug"
    if program == "gunicorn":
        is_function = any(arg.startswith("functions_framework:") for arg in command.argv)
        return "functions-framework" if is_function else "gunicorn"
    if program == "uvicorn":
        return "uvicorn"
    raise AssertionError(f"{PAGE.name}: no server test runs `{command.id}`")


COMMANDS = documented_commands()

# --- servers -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _with_address(argv: tuple[str, ...], port: int) -> list[str]:
    program, *rest = argv
    if program == "gunicorn":
        return [program, "--bind", f"127.0.0.1:{port}", *rest]
    if program == "flask":  # options of `flask run` follow the subcommand
        return [program, *rest, "--host", "127.0.0.1", "--port", str(port)]
    return [program, "--host", "127.0.0.1", "--port", str(port), *rest]


def _clean_environment() -> dict[str, str]:
    """This process's environment without the variables the servers read their settings from."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("GUNICORN_", "UVICORN_", "FLASK_", "WERKZEUG_"))
        and name not in ("WORKERS", "THREADS", "CLOUD_RUN_TIMEOUT_SECONDS", "DEBUG", "PORT")
    }


@dataclass
class Server:
    port: int
    folder: Path
    path: str

    def received(self, message_id: str) -> dict[str, Any] | None:
        record = self.folder / "received" / f"{message_id}.json"
        return json.loads(record.read_text()) if record.exists() else None


@dataclass
class Servers:
    """Starts servers in their own folder (the app, push_settings.py, the files asked for) and
    stops them all when the test ends."""

    root: Path
    config: dict[str, Any]
    running: list[tuple[subprocess.Popen[bytes], Any]] = field(default_factory=list)

    def start(
        self, kind: str, argv: tuple[str, ...], env: dict[str, str], files: dict[str, str]
    ) -> Server:
        folder = self.root / f"server-{len(self.running)}"
        folder.mkdir()
        (folder / "push_config.json").write_text(json.dumps(self.config))
        (folder / "push_settings.py").write_text(SETTINGS)
        for name, text in files.items():
            (folder / name).write_text(text)
        port = _free_port()
        program, *args = _with_address(argv, port)
        log = (folder / "server.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", PROGRAMS[program], *args],
            cwd=folder,
            env={**_clean_environment(), "PYTHONPATH": f"{folder}{os.pathsep}{ROOT}", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.running.append((process, log))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"{shlex.join(argv)} exited:\n{(folder / 'server.log').read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail(f"{shlex.join(argv)} did not listen within 20 s")
        return Server(port, folder, "/" if kind == "functions-framework" else "/push")

    def stop(self) -> None:
        for process, log in self.running:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)  # quick shutdown for each of them
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
            log.close()


@pytest.fixture(scope="module")
def google(session_keys: dict[str, Any]) -> FakeGoogle:
    return FakeGoogle(dict(session_keys))


@pytest.fixture
def servers(tmp_path: Path, google: FakeGoogle) -> Iterator[Servers]:
    config = {
        "audience": AUDIENCE,
        "email": EMAIL,
        "certs": google.certs,
        "now": NOW,
        "names": NAMES,
        "subscription": SUBSCRIPTION,
    }
    started = Servers(tmp_path, config)
    try:
        yield started
    finally:
        started.stop()


def app_files(kind: str, argv: tuple[str, ...], *, raised: bool) -> dict[str, str]:
    """The app a server serves and, raised, the page's files its command uses: the app.py
    snippet for werkzeug (its only setting), gunicorn.conf.py where the command names it."""
    if kind == "werkzeug":
        return {"app.py": (documented_file("app.py") + "\n" if raised else "") + FLASK_APP}
    if kind == "gunicorn":
        files = {"app.py": FLASK_APP}
        if raised and "gunicorn.conf.py" in argv:
            files["gunicorn.conf.py"] = documented_file("gunicorn.conf.py")
        return files
    if kind == "functions-framework":
        return {"main.py": FUNCTION}
    return {"app.py": FASTAPI_APP}


# --- the push ----------------------------------------------------------------------------------


TRANSPORT_FIELDS = 9
"""The header fields of a push besides its attributes (``Host`` to the four metadata headers)."""


def push_request(
    google: FakeGoogle, server: Server, message_id: str, attributes: int = ATTRIBUTES
) -> bytes:
    """An unwrapped push with writeMetadata and ``attributes`` attributes of the largest size."""
    body = b'{"order": 42}'
    lines = [
        f"POST {server.path} HTTP/1.1",
        f"Host: 127.0.0.1:{server.port}",
        f"Authorization: Bearer {google.token()}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        f"User-Agent: {USER_AGENT}",
        f"x-goog-pubsub-subscription-name: {SUBSCRIPTION}",
        f"x-goog-pubsub-message-id: {message_id}",
        "x-goog-pubsub-publish-time: 2026-11-21T19:13:55.749Z",
        "x-goog-pubsub-ordering-key: customer-42",
    ]
    assert len(lines) == 1 + TRANSPORT_FIELDS
    lines += [f"{name}: {value}" for name, value in zip(NAMES, VALUES, strict=True)][:attributes]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body


def send_segmented(port: int, request: bytes) -> int:
    """Send ``request`` in ``SEGMENT``-byte segments; the status of the answer. Sending stops
    when the server answers early (a refusal of the header block)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for start in range(0, len(request), SEGMENT):
            if select.select([conn], [], [], PAUSE)[0]:
                break
            try:
                conn.sendall(request[start : start + SEGMENT])
            except OSError:  # the server refused and closed
                break
        answer = b""
        try:
            while b"\r\n" not in answer:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                answer += chunk
        except ConnectionResetError:
            pass
    status = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    assert status, f"no HTTP answer: {answer[:200]!r}"
    return int(status[1])


def test_the_push_is_pubsubs_largest() -> None:
    assert len(set(NAMES)) == ATTRIBUTES
    assert {len(n.encode()) for n in NAMES} == {KEY_BYTES}
    assert {len(v.encode()) for v in VALUES} == {VALUE_BYTES}
    assert all(re.fullmatch(r"[a-z0-9-]+", name) for name in NAMES)


# --- (a) the defaults refuse it ----------------------------------------------------------------

FUNCTIONS_FRAMEWORK = ("functions-framework", "--target", "on_order", "--source", "main.py")
DEFAULTS = [
    # server, command, environment, status for the largest push, attributes that still fit
    pytest.param("werkzeug", ("flask", "--app", "app", "run"), {}, 431, 90, id="werkzeug"),
    pytest.param("gunicorn", ("gunicorn", "app:app"), {}, 431, 91, id="gunicorn"),
    pytest.param("functions-framework", FUNCTIONS_FRAMEWORK, {}, 431, 91, id="functions-framework"),
    pytest.param(
        "functions-framework",
        FUNCTIONS_FRAMEWORK,
        {"GUNICORN_CMD_ARGS": "--limit-request-fields 200"},
        431,
        91,
        id="functions-framework-ignores-GUNICORN_CMD_ARGS-and-gunicorn.conf.py",
    ),
    pytest.param("uvicorn", ("uvicorn", "app:app"), {}, 400, 11, id="uvicorn"),
]


@pytest.mark.parametrize(("kind", "argv", "env", "status", "fits"), DEFAULTS)
def test_the_default_limits_refuse_the_largest_push(
    servers: Servers,
    google: FakeGoogle,
    kind: str,
    argv: tuple[str, ...],
    env: dict[str, str],
    status: int,
    fits: int,
) -> None:
    files = app_files(kind, argv, raised=False)
    if env:  # and a gunicorn.conf.py where gunicorn itself reads it: neither is used
        files["gunicorn.conf.py"] = documented_file("gunicorn.conf.py")
    server = servers.start(kind, argv, env, files)
    assert send_segmented(server.port, push_request(google, server, "1001")) == status
    assert server.received("1001") is None  # the app never saw it
    # The limit is where the page says: 99 header fields (werkzeug), 100 (gunicorn), 16 KiB of
    # unfinished header block (uvicorn, whose exact cut depends on how the block arrives).
    assert send_segmented(server.port, push_request(google, server, "1002", fits)) == 204
    if kind != "uvicorn":
        assert send_segmented(server.port, push_request(google, server, "1003", fits + 1)) == status
    if kind == "uvicorn":
        assert len(push_request(google, server, "1002", fits)) < 16 * 1024


# --- (b) the documented settings let it through ------------------------------------------------


def test_the_page_documents_every_server() -> None:
    assert sorted({kind_of(c) for c in COMMANDS}) == [
        "functions-framework",
        "gunicorn",
        "uvicorn",
        "werkzeug",
    ]
    # each python block is a file the servers run with
    assert sorted(code.splitlines()[0] for code in _blocks("python")) == [
        "# app.py, before the app is served:",
        "# gunicorn.conf.py",
    ]
    # `uvicorn.run()` takes the option as a keyword of the same name
    assert "h11_max_incomplete_event_size" in inspect.signature(uvicorn.Config).parameters
    assert 'uvicorn.run("app:app", h11_max_incomplete_event_size=262144)' in PAGE.read_text()


def _assert_acknowledged(server: Server, google: FakeGoogle) -> None:
    assert send_segmented(server.port, push_request(google, server, "2002")) == 204
    seen = server.received("2002")
    assert seen is not None
    assert seen["subscription"] == SUBSCRIPTION
    assert seen["attributes"] == dict(zip(NAMES, VALUES, strict=True))


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_the_documented_settings_acknowledge_the_largest_push(
    servers: Servers, google: FakeGoogle, command: Command
) -> None:
    kind = kind_of(command)
    files = app_files(kind, command.argv, raised=True)
    _assert_acknowledged(servers.start(kind, command.argv, dict(command.env), files), google)


def test_gunicorn_reads_gunicorn_conf_py_from_the_working_directory(
    servers: Servers, google: FakeGoogle
) -> None:
    """What the page says of gunicorn.conf.py, and why the functions-framework case above puts one
    in its working directory: plain gunicorn uses it there without --config."""
    files = {
        **app_files("gunicorn", (), raised=False),
        "gunicorn.conf.py": documented_file("gunicorn.conf.py"),
    }
    _assert_acknowledged(servers.start("gunicorn", ("gunicorn", "app:app"), {}, files), google)
