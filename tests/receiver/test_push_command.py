"""``pushguard push`` (the console script, through a subprocess) against each adapter's
development server on 127.0.0.1: Flask's (``flask run``), FastAPI's (``uvicorn``) and the
Functions Framework's (``functions-framework``). Each app trusts the kit's key folder on its push
routes and keeps a default ``PushVerifier`` on ``/default``, whose certificate transport is
answered in the app (another key: Google's, as far as the test goes), so no traffic leaves the
machine.

Backoff is checked by what the command reports and what the server counted, never by the clock.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.receiver.testing import (
    LocalIssuer,
    RemoteRefusedError,
    load_or_create_issuer,
    push_request,
    push_until_ack,
    resolve_target,
    retry_delays,
)

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"
AUDIENCE = "https://orders-3kq2x7ab9c-ew.a.run.app"
ACCOUNT = "orders-push@acme-orders.iam.gserviceaccount.com"

COMMON = f"""
import json, os
import pushguard.receiver.keys as keys_module
from pushguard.receiver import PushVerifier
from pushguard.receiver.testing import LocalIssuer, local_key_source


class _GoogleCerts:  # Google's certificate endpoint, answered here
    status = 200
    headers = {{"Cache-Control": "max-age=3600"}}
    data = json.dumps(LocalIssuer("google-stand-in").certs).encode()


keys_module._default_fetch = lambda: (lambda url: _GoogleCerts())
KIT = PushVerifier({AUDIENCE!r}, {ACCOUNT!r}, keys=local_key_source(os.environ["KIT_KEYS"]))
UNWRAPPED = PushVerifier({AUDIENCE!r}, {ACCOUNT!r}, keys=local_key_source(os.environ["KIT_KEYS"]),
                         payload_format="unwrapped", attribute_headers=["tenant-id"])
DEFAULT = PushVerifier({AUDIENCE!r}, {ACCOUNT!r})


def count(message):
    with open(os.environ["KIT_COUNTER"], "a") as out:
        out.write(message.message_id + "\\n")
    return False


def tenant(message):
    return message.attributes.get("tenant-id") == "acme"
"""

APPS = {
    "flask": COMMON
    + """
import flask
from pushguard.receiver.flask import push_handler
app = flask.Flask("kit")
app.post("/push", endpoint="push")(push_handler(KIT)(lambda message: None))
app.post("/nack", endpoint="nack")(push_handler(KIT)(count))
app.post("/unwrapped", endpoint="unwrapped")(push_handler(UNWRAPPED)(tenant))
app.post("/default", endpoint="default")(push_handler(DEFAULT)(lambda message: None))
""",
    "fastapi": COMMON
    + """
from fastapi import Depends, FastAPI
from pushguard.receiver import PushMessage
from pushguard.receiver.fastapi import PushDependency, PushRoute
from fastapi import Response
app = FastAPI()
app.router.route_class = PushRoute

@app.post("/push", status_code=204)
async def push(message: PushMessage = Depends(PushDependency(KIT))) -> None:
    return None

@app.post("/nack", status_code=204)
async def nack(response: Response, message: PushMessage = Depends(PushDependency(KIT))) -> None:
    count(message)
    response.status_code = 503

@app.post("/unwrapped", status_code=204)
async def unwrapped(response: Response,
                    message: PushMessage = Depends(PushDependency(UNWRAPPED))) -> None:
    if not tenant(message):
        response.status_code = 503

@app.post("/default", status_code=204)
async def default(message: PushMessage = Depends(PushDependency(DEFAULT))) -> None:
    return None
""",
    "functions-framework": COMMON
    + """
import functions_framework
from pushguard.receiver.functions_framework import push_function
ROUTES = {
    "/push": push_function(KIT)(lambda message: None),
    "/nack": push_function(KIT)(count),
    "/unwrapped": push_function(UNWRAPPED)(tenant),
    "/default": push_function(DEFAULT)(lambda message: None),
}

@functions_framework.http
def entry(request):
    return ROUTES[request.path](request)
""",
}


def _command(kind: str, folder: Path, port: int) -> list[str]:
    if kind == "flask":
        return [sys.executable, "-m", "flask", "--app", "app", "run", "--host", "127.0.0.1",
                "--port", str(port)]  # fmt: skip
    if kind == "fastapi":
        return [sys.executable, "-m", "uvicorn", "--app-dir", str(folder), "--host",
                "127.0.0.1", "--port", str(port), "app:app"]  # fmt: skip
    return [sys.executable, "-m", "functions_framework", "--target", "entry", "--source",
            str(folder / "app.py"), "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The key folder the servers trust and the command signs with."""
    folder = tmp_path_factory.mktemp("kit") / "issuer"
    load_or_create_issuer(folder)
    return folder


@pytest.fixture(scope="module", params=sorted(APPS))
def server(
    request: pytest.FixtureRequest, keys: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """``(base URL, counter file)`` of one adapter's development server."""
    kind: str = request.param
    folder = tmp_path_factory.mktemp(f"dev-{kind}")
    (folder / "app.py").write_text(APPS[kind])
    counter = folder / "deliveries.txt"
    counter.touch()
    port = _free_port()
    environ = {**os.environ, "KIT_KEYS": str(keys), "KIT_COUNTER": str(counter)}
    environ["PYTHONPATH"] = os.pathsep.join([str(folder), str(ROOT)])
    process = subprocess.Popen(
        _command(kind, folder, port),
        cwd=folder,
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_listening(port, process)
        yield f"http://127.0.0.1:{port}", counter
    finally:
        process.send_signal(signal.SIGQUIT if kind == "functions-framework" else signal.SIGTERM)
        process.wait(timeout=15)


def pushguard_push(
    *args: str, keys: Path | None = None, audience: bool = True
) -> subprocess.CompletedProcess[str]:
    """The console script, with this worktree's code."""
    identity = ["--push-auth-account", ACCOUNT] + (["--audience", AUDIENCE] if audience else [])
    if keys is not None:
        identity += ["--issuer-key-dir", str(keys)]
    script = Path(sys.executable).with_name("pushguard")
    return subprocess.run(
        [str(script), "push", *args, *identity],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _lines(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_an_acknowledged_push_is_reported_as_ack(server: tuple[str, Path], keys: Path) -> None:
    url, _ = server
    done = pushguard_push(f"{url}/push", "--data", '{"order": 42}', "--json", keys=keys)
    assert done.returncode == 0, done.stderr
    assert _lines(done) == [{"attempt": 1, "delay": 0.0, "status": 204, "outcome": "ack"}]
    text = pushguard_push(f"{url}/push", "--data", "x", keys=keys)
    assert (text.returncode, text.stdout.splitlines()[0]) == (0, "attempt 1: HTTP 204: ack")


def test_a_nacking_handler_is_redelivered_with_the_retry_policys_backoff(
    server: tuple[str, Path], keys: Path
) -> None:
    url, counter = server
    before = counter.read_text().splitlines()
    done = pushguard_push(
        f"{url}/nack", "--data", "x", "--json", "--retry", "3",
        "--minimum-backoff", "0.01", "--maximum-backoff", "0.03",
        keys=keys,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    attempts = _lines(done)
    assert [(a["attempt"], a["status"], a["outcome"]) for a in attempts] == [
        (n, 503, "nack") for n in (1, 2, 3, 4)
    ]
    delays = [a["delay"] for a in attempts]
    assert delays == [0.0, 0.01, 0.02, 0.03]  # doubling from the minimum, capped at the maximum
    delivered = counter.read_text().splitlines()[len(before) :]
    assert len(delivered) == 4 and len(set(delivered)) == 1  # one message, delivered 4 times


def test_an_unwrapped_push_carries_its_attributes_as_headers(
    server: tuple[str, Path], keys: Path
) -> None:
    url, _ = server
    common = ("--unwrapped", "--write-metadata", "--data", "raw", "--json")
    acked = pushguard_push(f"{url}/unwrapped", *common, "--attribute", "tenant-id=acme", keys=keys)
    assert (acked.returncode, _lines(acked)[0]["outcome"]) == (0, "ack"), acked.stderr
    other = pushguard_push(f"{url}/unwrapped", *common, "--attribute", "tenant-id=x", keys=keys)
    assert (other.returncode, _lines(other)[0]["status"]) == (1, 503)


def test_the_audience_follows_the_deployed_endpoint(server: tuple[str, Path], keys: Path) -> None:
    """Without --audience, the token's aud is what the component derives from --endpoint (a
    Cloud Run URL's origin), or the URL itself, which the server does not take."""
    url, _ = server
    deployed = f"{AUDIENCE}/push"
    done = pushguard_push(
        f"{url}/push", "--endpoint", deployed, "--json", keys=keys, audience=False
    )
    assert (done.returncode, _lines(done)[0]["status"]) == (0, 204), done.stderr
    local = pushguard_push(f"{url}/push", "--json", keys=keys, audience=False)
    assert (local.returncode, _lines(local)[0]["status"]) == (1, 401)


def test_a_default_verifier_refuses_the_kits_push(server: tuple[str, Path], keys: Path) -> None:
    url, _ = server
    done = pushguard_push(f"{url}/default", "--data", "x", "--json", keys=keys)
    assert done.returncode == 1
    assert _lines(done) == [{"attempt": 1, "delay": 0.0, "status": 401, "outcome": "nack"}]


def test_another_issuer_is_refused_by_the_servers(server: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = server
    done = pushguard_push(f"{url}/push", "--json", keys=tmp_path / "another")
    assert (done.returncode, _lines(done)[0]["status"]) == (1, 401)


# ---------------------------------------------------------------------------------------------
# Loopback only, refused before any connection; exit codes.


def _this_machines_other_address() -> str | None:
    """A non-loopback address of this machine (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("198.51.100.1", 9))  # TEST-NET-2: only routed, never sent
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


@pytest.fixture
def listening_elsewhere() -> Iterator[tuple[str, socket.socket]]:
    """A socket listening on a non-loopback address of this machine, which must see no
    connection."""
    address = _this_machines_other_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address")
    with socket.socket() as listener:
        listener.bind((address, 0))
        listener.listen(8)
        listener.setblocking(False)
        yield address, listener


def _no_connection(listener: socket.socket) -> bool:
    try:
        listener.accept()[0].close()
    except BlockingIOError:
        return True
    return False


def test_a_non_loopback_address_is_refused_before_any_connection(
    listening_elsewhere: tuple[str, socket.socket], keys: Path
) -> None:
    address, listener = listening_elsewhere
    port = listener.getsockname()[1]
    done = pushguard_push(f"http://{address}:{port}/push", "--data", "x", keys=keys)
    assert done.returncode == 2
    assert "is not a loopback address" in done.stderr and "--allow-remote" in done.stderr
    assert _no_connection(listener)


def test_a_name_that_resolves_elsewhere_is_refused_before_any_connection(
    listening_elsewhere: tuple[str, socket.socket],
    keys: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The command resolves the name once and requires every address to be loopback: one
    loopback address among others does not do."""
    address, listener = listening_elsewhere
    port = listener.getsockname()[1]
    asked: list[str] = []

    def resolve(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        asked.append(host)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    done = CliRunner().invoke(
        app, ["push", f"http://orders.dev.example:{port}/push", "--issuer-key-dir", str(keys)]
    )
    assert done.exit_code == 2
    assert f"{address} is not a loopback address" in done.output
    assert asked == ["orders.dev.example"]
    assert _no_connection(listener)


def test_the_request_goes_to_the_checked_address(keys: Path) -> None:
    """Resolved once, connected to the address checked: a later DNS answer cannot redirect it.
    The Host header keeps the name."""
    seen: list[bytes] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        target = resolve_target(
            f"http://push.dev.invalid:{port}/p?x=1",
            resolve=lambda *a, **k: [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))
            ],
        )
        issuer = load_or_create_issuer(keys)
        request = push_request(issuer, audience=AUDIENCE, service_account_email=ACCOUNT)

        def answer() -> None:
            connection, _ = listener.accept()
            with connection:
                seen.append(connection.recv(65536))
                connection.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")

        thread = threading.Thread(target=answer)
        thread.start()
        attempts = push_until_ack(target, lambda n: request)
        thread.join(timeout=10)
    assert [a.status for a in attempts] == [204]
    assert seen[0].startswith(b"POST /p?x=1 HTTP/1.1\r\n")
    assert f"Host: push.dev.invalid:{port}\r\n".encode() in seen[0]


@pytest.mark.parametrize("address", ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
def test_loopback_addresses_are_accepted(address: str) -> None:
    target = resolve_target(
        "http://dev.local:8080/push",
        resolve=lambda *a, **k: [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, 8080))],
    )
    assert (target.address, target.loopback) == (address, True)


def test_remote_is_refused_unless_allowed() -> None:
    def resolve(*args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.10", 80))]

    with pytest.raises(RemoteRefusedError):
        resolve_target("http://staging.example/push", resolve=resolve)
    assert not resolve_target(
        "http://staging.example/push", allow_remote=True, resolve=resolve
    ).loopback


def test_connection_refused_is_exit_2_with_the_cause(keys: Path) -> None:
    done = pushguard_push(f"http://127.0.0.1:{_free_port()}/push", keys=keys)
    assert done.returncode == 2
    assert "Connection refused" in done.stderr


def test_no_answer_is_exit_2_with_the_cause(keys: Path) -> None:
    """A server that takes the connection and never answers: Pub/Sub would count a nack; the
    command cannot say what the handler did, so it is a failed run."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        done = pushguard_push(f"http://127.0.0.1:{port}/push", "--timeout", "0.5", keys=keys)
    assert done.returncode == 2
    assert "timed out" in done.stderr


def test_allow_remote_warns(keys: Path) -> None:
    done = pushguard_push(f"http://127.0.0.1:{_free_port()}/push", "--allow-remote", keys=keys)
    assert "warning: --allow-remote" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["https://127.0.0.1/push"], "http://HOST[:PORT]/PATH is required"),
        (["http://127.0.0.1:9/push", "--write-metadata"], "only with --unwrapped"),
        (["http://127.0.0.1:9/push", "--attribute", "novalue"], "KEY=VALUE is required"),
        (["http://127.0.0.1:9/push", "--data", "a", "--data-file", "f"], "give one of them"),
        (["http://127.0.0.1:9/push", "--unwrapped", "--dead-letter"], "only a wrapped push"),
        (
            ["http://127.0.0.1:9/push", "--minimum-backoff", "5", "--maximum-backoff", "1"],
            "must not exceed",
        ),
        (["http://127.0.0.1:9/push", "--attribute", "googclient=1"], "'googclient' starts with"),
        (
            ["http://127.0.0.1:9/push", "--attribute", "k=1", "--attribute", "k=2"],
            "--attribute: 'k' is given twice",
        ),
        (
            [
                *("http://127.0.0.1:9/push", "--unwrapped", "--write-metadata"),
                *("--attribute", "Accept-Encoding=gzip"),
            ],
            "'Accept-Encoding' would replace a header of the request itself",
        ),
        (
            ["http://127.0.0.1:9/push", "--data", "x" * 10_000_001],
            "--data: over Pub/Sub's message size limit",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 60 else None,
)
def test_usage_errors_are_exit_2_before_any_connection(
    args: list[str], message: str, keys: Path
) -> None:
    done = CliRunner().invoke(app, ["push", *args, "--issuer-key-dir", str(keys)])
    assert done.exit_code == 2
    assert message in done.output


def test_a_data_file_is_read_no_further_than_the_size_limit(keys: Path) -> None:
    # /dev/zero never ends: read whole, the command would never answer (120 s timeout)
    done = pushguard_push("http://127.0.0.1:9/push", "--data-file", "/dev/zero", keys=keys)
    assert done.returncode == 2
    assert "--data-file: /dev/zero: over Pub/Sub's message size limit of 10000000 bytes" in (
        done.stderr
    )


def test_a_key_folder_that_is_not_as_the_kit_leaves_it_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    folder = tmp_path / "issuer"
    load_or_create_issuer(folder)
    (folder / "issuer-key.pem").chmod(0o640)
    for given, message in (
        (tmp_path / "a-file", "a file, not a folder"),
        (folder, "readable by group or others"),
    ):
        done = CliRunner().invoke(
            app, ["push", "http://127.0.0.1:9/push", "--issuer-key-dir", str(given)]
        )
        assert done.exit_code == 2
        assert f"pushguard push: error: --issuer-key-dir: {given}" in done.stderr
        assert message in done.stderr


def test_ctrl_c_during_a_retry_wait_is_exit_2_interrupted(keys: Path) -> None:
    nacks = http.server.ThreadingHTTPServer((LOOPBACK, 0), _Nack)
    threading.Thread(target=nacks.serve_forever, daemon=True).start()
    script = Path(sys.executable).with_name("pushguard")
    url = f"http://{LOOPBACK}:{nacks.server_address[1]}/push"
    command = [str(script), "push", url, "--retry", "3", "--minimum-backoff", "600",
               "--issuer-key-dir", str(keys)]  # fmt: skip
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Ctrl-C in a terminal: SIGINT as the shell gives it to a foreground command. A background
    # job of a non-interactive shell (how CI may run this suite) inherits SIGINT ignored, and
    # Python then installs no KeyboardInterrupt handler: the child starts with the default, set
    # by a fresh interpreter that then becomes the command (a preexec_fn would fork this test
    # worker, whose gRPC threads from other tests can abort the child: grpc/grpc#43055).
    process = subprocess.Popen([sys.executable, "-c", _DEFAULT_SIGINT, *command], env=environ,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # the first delivery is done: now in the 600 s wait
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
        nacks.shutdown()
        nacks.server_close()
    assert first == "attempt 1: HTTP 503: nack\n"
    assert process.returncode == 2
    assert "pushguard push: error: interrupted" in stderr and "Traceback" not in stderr


_DEFAULT_SIGINT = (
    "import os, signal, sys\n"
    "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


class _Nack(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def test_the_usage_line_names_the_url_argument() -> None:
    done = CliRunner().invoke(app, ["push", "-h"])
    assert "Usage: pushguard push [OPTIONS] URL\n" in done.stdout


def test_retry_delays_double_from_the_minimum_up_to_the_maximum() -> None:
    assert retry_delays(6, 10, 600) == [10, 20, 40, 80, 160, 320]
    assert retry_delays(4, 1, 3) == [1, 2, 3, 3]
    assert retry_delays(0, 10, 600) == []
    with pytest.raises(ValueError, match="backoff"):
        retry_delays(1, 10, 601)


def test_the_kits_issuer_is_not_the_command_default_folder_when_one_is_named(
    tmp_path: Path,
) -> None:
    kept = load_or_create_issuer(tmp_path / "a")
    assert kept.kid != LocalIssuer().kid


# ---------------------------------------------------------------------------------------------
# The documented workflow (docs/receiver-local.md): its files, its two commands.

PAGE = ROOT / "docs/receiver-local.md"


def _page_blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", PAGE.read_text(encoding="utf-8"), re.S | re.M)


def _page_commands(block: str) -> list[list[str]]:
    return [shlex.split(line) for line in block.replace("\\\n", " ").splitlines()]


@pytest.fixture
def documented_server(tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """The page's files in ``tmp_path``, its ``flask run`` command serving them on a free
    port: the port and the environment to run ``pushguard push`` in."""
    for code in _page_blocks("python"):
        name = code.splitlines()[0].removeprefix("# ").split(":")[0]
        (tmp_path / name).write_text(code, encoding="utf-8")
    serve = _page_commands(_page_blocks("bash")[0])[0]
    port = _free_port()
    assert serve[:4] == ["flask", "--app", "dev_app", "run"] and "8080" in serve
    serve = [sys.executable, "-m", *[str(port) if w == "8080" else w for w in serve]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    server = subprocess.Popen(serve, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)  # fmt: skip
    try:
        _wait_listening(port, server)
        yield port, env
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=15)


def _run_documented(push: list[str], port: int, env: dict[str, str], cwd: Path) -> Any:
    assert push[:2] == ["pushguard", "push"]
    url = push[2].replace(":8080/", f":{port}/")
    script = Path(sys.executable).with_name("pushguard")
    return subprocess.run(
        [str(script), "push", url, *push[3:]],
        cwd=cwd, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def test_the_documented_workflow_acknowledges(
    tmp_path: Path, documented_server: tuple[int, dict[str, str]]
) -> None:
    push = _page_commands(_page_blocks("bash")[0])[1]
    done = _run_documented(push, *documented_server, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["attempt 1: HTTP 204: ack", "acknowledged (1 delivery)"]
    assert "`attempt 1: HTTP 204: ack` and `acknowledged (1 delivery)`" in PAGE.read_text()
    assert (tmp_path / ".pushguard/issuer/certs.json").exists()


def test_the_documented_retry_example_reaches_the_handlers_nack(
    tmp_path: Path, documented_server: tuple[int, dict[str, str]]
) -> None:
    (block,) = [b for b in _page_blocks("bash") if "--retry" in b]
    (push,) = _page_commands(block)
    done = _run_documented(push, *documented_server, tmp_path)
    assert done.returncode == 1, done.stderr
    attempts = _lines(done)
    # the handler's nack (503), not the verifier's refusal (401), on each of the 1 + 2 deliveries
    assert [(a["attempt"], a["status"], a["outcome"]) for a in attempts] == [
        (1, 503, "nack"), (2, 503, "nack"), (3, 503, "nack")
    ]  # fmt: skip
    assert [a["delay"] for a in attempts] == [0.0, 1.0, 2.0]
    page = PAGE.read_text(encoding="utf-8")
    assert json.dumps(attempts[0], sort_keys=True) in page
    assert '"delay": 1.0' in page and '"delay": 2.0' in page


# ---------------------------------------------------------------------------------------------
# The default audience is the component's.


@pytest.mark.parametrize(
    ("target", "endpoint"),
    [
        ({"kind": "cloud-run", "name": "orders", "location": "europe-west1"},
         "https://orders-3kq2x7ab9c-ew.a.run.app/push"),
        ({"kind": "cloud-run", "name": "orders", "location": "europe-west1"},
         "https://orders-123456789012.europe-west1.run.app/push"),
        ({"kind": "cloud-function-v1", "name": "orders", "location": "europe-west1"},
         "https://europe-west1-acme-orders.cloudfunctions.net/orders"),
        ({"kind": "external"}, "https://hooks.example.com/push?team=orders"),
    ],
    ids=["cloud-run-hash", "cloud-run-deterministic", "function-v1", "external"],
)  # fmt: skip
def test_the_default_audience_is_the_components_output(
    target: dict[str, str], endpoint: str
) -> None:
    import pulumi

    from pushguard.cli.push_command import component_audience
    from pushguard.components import PushSubscription
    from tests.helpers import run

    seen: list[str] = []

    def program() -> None:
        sub = PushSubscription("orders", {"topic": "orders", "push_endpoint": endpoint,
                                          "target": target})  # fmt: skip
        pulumi.Output.from_input(sub.audience).apply(seen.append)

    run(program, preview=False)
    assert seen == [component_audience(endpoint)]
