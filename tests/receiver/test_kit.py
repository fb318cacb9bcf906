"""The signed-push test kit (``pushguard.receiver.testing``): pushes as Pub/Sub sends them, a
key source that trusts the kit's issuer, and a default verifier that never does.

Google's certificate endpoint is never reached: the default key source's transport is replaced by
one that serves a document of another key (Google's, as far as these tests go), so the default
``PushVerifier`` is the real one in every other respect.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import flask
import functions_framework
import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient

import pushguard.receiver.keys as keys_module
from pushguard.receiver import GOOGLE_CERTS_URL, PushMessage, PushRejected, PushVerifier
from pushguard.receiver.envelope import parse_unwrapped, parse_wrapped
from pushguard.receiver.fastapi import PushDependency, PushRoute
from pushguard.receiver.flask import push_handler
from pushguard.receiver.testing import (
    MAX_DATA_BYTES,
    LocalIssuer,
    PushRequest,
    load_or_create_issuer,
    local_key_source,
    push_request,
)
from pushguard.receiver.verifier import lowercase_headers

AUDIENCE = "https://orders-3kq2x7ab9c-ew.a.run.app"
ACCOUNT = "orders-push@acme-orders.iam.gserviceaccount.com"
SUBSCRIPTION = "projects/acme-orders/subscriptions/orders-push"
ROOT = Path(__file__).resolve().parents[2]


class _CertsAnswer:
    """What https://www.googleapis.com/oauth2/v1/certs answers, for another key than the kit's."""

    def __init__(self, certs: dict[str, str]) -> None:
        self.status = 200
        self.headers = {"Cache-Control": "public, max-age=3600"}
        self.data = json.dumps(certs).encode()


@pytest.fixture
def google_fetches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The default key source's transport, serving Google's stand-in document locally; the
    URLs it was asked for."""
    google = LocalIssuer("0e72da1df501ca6f7e1b2a7d3f3b5e0a1c2d3e4f")
    asked: list[str] = []

    def fetch(url: str) -> _CertsAnswer:
        asked.append(url)
        return _CertsAnswer(google.certs)

    monkeypatch.setattr(keys_module, "_default_fetch", lambda: fetch)
    return asked


@pytest.fixture(scope="module")
def issuer() -> LocalIssuer:
    return LocalIssuer()


def _push(issuer: LocalIssuer, **options: Any) -> PushRequest:
    options.setdefault("audience", AUDIENCE)
    options.setdefault("service_account_email", ACCOUNT)
    options.setdefault("subscription", SUBSCRIPTION)
    return push_request(issuer, **options)


# ---------------------------------------------------------------------------------------------
# The token and the request, as Pub/Sub sends them.


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


def test_the_token_carries_exactly_the_claims_pubsub_sets(issuer: LocalIssuer) -> None:
    request = _push(issuer)
    claims = _claims(request.token)
    assert set(claims) == {"iss", "aud", "email", "email_verified", "exp", "iat", "sub", "azp"}
    assert (claims["iss"], claims["aud"], claims["email"]) == (
        "https://accounts.google.com",
        AUDIENCE,
        ACCOUNT,
    )
    assert claims["email_verified"] is True
    assert claims["exp"] - claims["iat"] == 3600
    assert request.headers["Authorization"] == f"Bearer {request.token}"


def test_a_wrapped_push_is_the_envelope_pubsub_sends(issuer: LocalIssuer) -> None:
    request = _push(
        issuer,
        data=b'{"order": 42}',
        attributes={"origin": "checkout"},
        ordering_key="customer-7",
        delivery_attempt=3,
    )
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"] == "CloudPubSub-Google"
    body = json.loads(request.body)
    assert set(body) == {"message", "subscription", "deliveryAttempt"}
    assert set(body["message"]) == {
        "attributes", "data", "messageId", "message_id", "publishTime", "publish_time",
        "orderingKey",
    }  # fmt: skip
    message = parse_wrapped(request.body)
    assert message.data == b'{"order": 42}'
    assert message.attributes == {"origin": "checkout"}
    assert (message.message_id, message.ordering_key) == (request.message_id, "customer-7")
    assert (message.delivery_attempt, message.subscription) == (3, SUBSCRIPTION)
    assert message.publish_time is not None and message.publish_time.tzinfo is not None


def test_without_dead_letter_policy_or_ordering_key_those_fields_are_absent(
    issuer: LocalIssuer,
) -> None:
    body = json.loads(_push(issuer, data=b"x").body)
    assert "deliveryAttempt" not in body
    assert "orderingKey" not in body["message"]


def test_an_unwrapped_push_with_write_metadata(issuer: LocalIssuer) -> None:
    request = _push(
        issuer,
        data=b"raw bytes \x00\xff",
        attributes={"tenant-id": "acme"},
        ordering_key="customer-7",
        unwrapped=True,
        write_metadata=True,
    )
    assert request.body == b"raw bytes \x00\xff"
    headers = lowercase_headers(request.headers)
    message = parse_unwrapped(headers, request.body, attribute_headers=["tenant-id"])
    assert message.attributes == {"tenant-id": "acme"}
    assert (message.message_id, message.subscription) == (request.message_id, SUBSCRIPTION)
    assert message.ordering_key == "customer-7"
    assert message.publish_time is not None


def test_an_unwrapped_push_without_write_metadata_carries_the_data_alone(
    issuer: LocalIssuer,
) -> None:
    request = _push(issuer, data=b"raw", attributes={"tenant-id": "acme"}, unwrapped=True)
    assert request.body == b"raw"
    assert not [name for name in request.headers if name.lower().startswith("x-goog-pubsub-")]
    assert "tenant-id" not in request.headers


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"write_metadata": True}, "write_metadata"),
        ({"unwrapped": True, "delivery_attempt": 1}, "delivery_attempt"),
        ({"delivery_attempt": 0}, "delivery_attempt"),
        ({"unwrapped": True, "write_metadata": True, "attributes": {"a b": "1"}}, "attributes"),
        (
            {"unwrapped": True, "write_metadata": True, "attributes": {"Authorization": "x"}},
            "attributes",
        ),
        ({"unwrapped": True, "write_metadata": True, "attributes": {"k": "a\r\nb"}}, "attributes"),
        # the HTTP client's own header, replaced silently before
        (
            {"unwrapped": True, "write_metadata": True, "attributes": {"Accept-Encoding": "x"}},
            "attributes",
        ),
        # two attributes, one header
        (
            {"unwrapped": True, "write_metadata": True, "attributes": {"k": "1", "K": "2"}},
            "attributes",
        ),
        ({"attributes": {"googclient_x": "1"}}, "attributes"),  # Pub/Sub reserves goog*
        ({"data": b"x" * (MAX_DATA_BYTES + 1)}, "data"),  # over Pub/Sub's 10 MB
    ],
)
def test_a_push_pubsub_could_not_send_is_refused(
    issuer: LocalIssuer, options: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        _push(issuer, **options)


# ---------------------------------------------------------------------------------------------
# Trust: the kit's key source, and never by default.


def test_the_kits_key_source_verifies_and_the_default_verifier_refuses(
    issuer: LocalIssuer, google_fetches: list[str]
) -> None:
    request = _push(issuer, data=b"hello")
    trusting = PushVerifier(AUDIENCE, ACCOUNT, keys=issuer.key_source())
    assert trusting.verify(request.headers, request.body).data == b"hello"
    default = PushVerifier(AUDIENCE, ACCOUNT)
    with pytest.raises(PushRejected) as refused:
        default.verify(request.headers, request.body)
    assert (refused.value.status, refused.value.code) == (401, "unknown_key")
    assert google_fetches and set(google_fetches) == {GOOGLE_CERTS_URL}


def test_nothing_the_kit_does_makes_a_default_verifier_trust_it(
    tmp_path: Path, google_fetches: list[str]
) -> None:
    """No global registration: a key folder, a key source and the issuer's own key source leave
    every default verifier as it was, before and after."""
    before = PushVerifier(AUDIENCE, ACCOUNT)
    kept = load_or_create_issuer(tmp_path / "keys")
    local_key_source(tmp_path / "keys")
    kept.key_source()
    after = PushVerifier(AUDIENCE, ACCOUNT)
    for verifier in (before, after):
        request = _push(kept)
        with pytest.raises(PushRejected, match="not signed by a known Google key"):
            verifier.verify(request.headers, request.body)


def test_a_key_folder_is_created_once_and_shared(tmp_path: Path) -> None:
    folder = tmp_path / "issuer"
    first = load_or_create_issuer(folder)
    second = load_or_create_issuer(folder)
    assert first.kid == second.kid and first.kid.startswith("pushguard-local-")
    assert stat.S_IMODE((folder / "issuer-key.pem").stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert set(json.loads((folder / "certs.json").read_text())) == {first.kid}
    request = _push(first)
    verifier = PushVerifier(AUDIENCE, ACCOUNT, keys=local_key_source(folder))
    assert verifier.verify(request.headers, request.body).message_id == request.message_id
    other = load_or_create_issuer(tmp_path / "other")
    assert other.kid != first.kid
    with pytest.raises(PushRejected, match="not signed by a known Google key"):
        verifier.verify(*_as_pair(_push(other)))


def test_a_key_folder_with_something_else_in_it_is_refused(tmp_path: Path) -> None:
    (tmp_path / "issuer-key.pem").write_text("not a key")
    (tmp_path / "issuer-key.pem").chmod(0o600)
    with pytest.raises(ValueError, match="not an unencrypted PEM private key"):
        load_or_create_issuer(tmp_path)


def test_a_content_type_attribute_is_the_unwrapped_pushs_content_type(
    issuer: LocalIssuer,
) -> None:
    # Pub/Sub's way to give an unwrapped push a Content-Type: an attribute of that name
    request = _push(issuer, attributes={"Content-Type": "application/json"}, unwrapped=True,
                    write_metadata=True)  # fmt: skip
    assert request.headers["Content-Type"] == "application/json"


def test_a_key_folder_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "issuer").write_text("")
    with pytest.raises(ValueError, match="issuer: a file, not a folder"):
        load_or_create_issuer(tmp_path / "issuer")


def test_a_private_key_readable_by_others_is_refused_not_repaired(tmp_path: Path) -> None:
    load_or_create_issuer(tmp_path)
    (tmp_path / "issuer-key.pem").chmod(0o644)
    with pytest.raises(ValueError, match=r"readable by group or others \(mode 0644\)"):
        load_or_create_issuer(tmp_path)
    assert stat.S_IMODE((tmp_path / "issuer-key.pem").stat().st_mode) == 0o644


def test_a_certs_file_without_the_keys_certificate_is_refused_not_rewritten(
    tmp_path: Path,
) -> None:
    load_or_create_issuer(tmp_path / "other")
    kept = load_or_create_issuer(tmp_path / "issuer")
    certs = tmp_path / "issuer" / "certs.json"
    stale = (tmp_path / "other" / "certs.json").read_text()
    stale_with_our_kid = json.dumps({kept.kid: next(iter(json.loads(stale).values()))})
    for wrong in (stale, stale_with_our_kid, "{not json"):
        certs.write_text(wrong)
        with pytest.raises(ValueError, match=r"does not hold the certificate of issuer-key\.pem"):
            load_or_create_issuer(tmp_path / "issuer")
        assert certs.read_text() == wrong
    certs.unlink()  # deleted: written again, and the receivers' certificate is the kit's
    again = load_or_create_issuer(tmp_path / "issuer")
    assert json.loads(certs.read_text()) == again.certs
    assert load_or_create_issuer(tmp_path / "issuer").certs == again.certs


def _as_pair(request: PushRequest) -> tuple[dict[str, str], bytes]:
    return request.headers, request.body


# ---------------------------------------------------------------------------------------------
# Each adapter accepts the kit's pushes with the kit's key source, refuses them by default.


def _flask_client(verifier: PushVerifier, received: list[PushMessage]) -> Any:
    app = flask.Flask("kit")

    @app.post("/push")
    @push_handler(verifier)
    def on(message: PushMessage) -> None:
        received.append(message)

    return app.test_client()


def _fastapi_client(verifier: PushVerifier, received: list[PushMessage]) -> Any:
    app = FastAPI()
    app.router.route_class = PushRoute

    @app.post("/push", status_code=204)
    async def on(message: PushMessage = Depends(PushDependency(verifier))) -> None:  # noqa: B008
        received.append(message)

    return _Content(TestClient(app))


class _Content:
    """httpx's spelling of a raw body: ``content=``, not ``data=``."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def post(self, path: str, *, data: bytes, **options: Any) -> Any:
        return self.client.post(path, content=data, **options)


def _functions_client(verifier: PushVerifier, received: list[PushMessage], folder: Path) -> Any:
    source = folder / "main.py"
    source.write_text(
        "import functions_framework\n"
        "from pushguard.receiver.functions_framework import push_function\n"
        "import kit_settings\n\n"
        "@functions_framework.http\n"
        "@push_function(kit_settings.VERIFIER)\n"
        "def on(message):\n"
        "    kit_settings.RECEIVED.append(message)\n"
    )
    settings = importlib.import_module("kit_settings")
    settings.VERIFIER = verifier  # type: ignore[attr-defined]
    settings.RECEIVED = received  # type: ignore[attr-defined]
    app = functions_framework.create_app(target="on", source=str(source))
    return _AtPath(app.test_client(), "/")


class _AtPath:
    """A Functions Framework client: the function answers at ``/``, not ``/push``."""

    def __init__(self, client: Any, path: str) -> None:
        self.client, self.path = client, path

    def post(self, _path: str, **options: Any) -> Any:
        return self.client.post(self.path, **options)


@pytest.fixture
def make_client(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[PushVerifier, list[PushMessage]], Any]]:
    kind = request.param
    if kind == "functions-framework":
        (tmp_path / "kit_settings.py").write_text("VERIFIER = None\nRECEIVED = []\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        sys.modules.pop("kit_settings", None)
        yield lambda verifier, received: _functions_client(verifier, received, tmp_path)
        sys.modules.pop("kit_settings", None)
    else:
        yield _flask_client if kind == "flask" else _fastapi_client


ADAPTERS = ["flask", "fastapi", "functions-framework"]


@pytest.mark.parametrize("make_client", ADAPTERS, indirect=True)
@pytest.mark.parametrize("unwrapped", [False, True], ids=["wrapped", "unwrapped"])
def test_each_adapter_accepts_the_kits_push_only_with_the_kits_key_source(
    make_client: Callable[[PushVerifier, list[PushMessage]], Any],
    issuer: LocalIssuer,
    unwrapped: bool,
    google_fetches: list[str],
) -> None:
    options: dict[str, Any] = {"data": b"order 42", "attributes": {"tenant-id": "acme"}}
    settings: dict[str, Any] = {}
    if unwrapped:
        options |= {"unwrapped": True, "write_metadata": True}
        settings = {"payload_format": "unwrapped", "attribute_headers": ["tenant-id"]}
    push = _push(issuer, **options)
    received: list[PushMessage] = []
    trusting = make_client(
        PushVerifier(AUDIENCE, ACCOUNT, keys=issuer.key_source(), **settings), received
    )
    answer = trusting.post("/push", headers=push.headers, data=push.body)
    assert answer.status_code == 204
    assert [(m.data, dict(m.attributes)) for m in received] == [
        (b"order 42", {"tenant-id": "acme"})
    ]
    refusing = make_client(PushVerifier(AUDIENCE, ACCOUNT, **settings), received)
    answer = refusing.post("/push", headers=push.headers, data=push.body)
    assert answer.status_code == 401
    assert len(received) == 1


# ---------------------------------------------------------------------------------------------
# The pytest plugin: opt-in.

PLUGIN_TEST = """
from pushguard.receiver import PushVerifier

ACCOUNT = "p@x.iam.gserviceaccount.com"

def test_uses_the_fixtures(make_push, push_key_source):
    push = make_push(audience="https://a.example", service_account_email=ACCOUNT, data=b"hi")
    verifier = PushVerifier("https://a.example", ACCOUNT, keys=push_key_source)
    assert verifier.verify(push.headers, push.body).data == b"hi"
"""


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, str(folder)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_pytest_plugin_gives_its_fixtures_only_when_loaded(tmp_path: Path) -> None:
    (tmp_path / "test_handler.py").write_text(PLUGIN_TEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    without = _pytest(tmp_path)
    assert without.returncode == 1 and "fixture 'make_push' not found" in without.stdout
    loaded = _pytest(tmp_path, "-p", "pushguard.receiver.testing.pytest_plugin")
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr


def test_the_plugin_is_registered_nowhere() -> None:
    """No pytest11 entry point: installing pushguard loads the plugin into no one's test run."""
    import importlib.metadata

    assert not [
        e for e in importlib.metadata.entry_points(group="pytest11") if "pushguard" in e.value
    ]
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "pytest11" not in pyproject


BLOCKED_IMPORT = """
import importlib.abc, sys
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {"cachetools", "cryptography", "requests"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
import pushguard.receiver.testing.pytest_plugin
"""


def test_loading_the_plugin_without_the_receiver_extra_names_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_IMPORT],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "ImportError: pushguard.receiver needs the 'receiver' extra" in done.stderr
