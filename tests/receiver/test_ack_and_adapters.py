"""Acknowledgement statuses, and the Flask, FastAPI and Functions Framework adapters end to end."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import flask
import functions_framework
import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient

from pushguard.receiver import ACK_STATUSES, PushMessage, PushVerifier, ack_status, is_ack
from pushguard.receiver.fastapi import PushDependency, PushRoute
from pushguard.receiver.flask import push_handler

from .conftest import FakeGoogle, bearer, wrapped_body


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        (None, 204),
        (True, 204),
        (False, 503),
        (200, 200),
        (102, 102),
        (202, 202),
        (429, 429),
        (500, 500),
    ],
)
def test_ack_status(outcome: bool | int | None, status: int) -> None:
    assert ack_status(outcome) == status
    assert is_ack(status) == (status in {102, 200, 201, 202, 204})


@pytest.mark.parametrize("status", [203, 206, 301, 304, 100, 0, 600])
def test_statuses_pubsub_would_silently_nack_are_refused(status: int) -> None:
    with pytest.raises(ValueError, match=f"status {status} is neither"):
        ack_status(status)


def test_nack_status_must_be_an_error_status() -> None:
    assert ack_status(False, nack_status=429) == 429
    with pytest.raises(ValueError, match="nack_status"):
        ack_status(False, nack_status=200)


def test_ack_statuses_are_pubsubs() -> None:
    assert frozenset({102, 200, 201, 202, 204}) == ACK_STATUSES


@pytest.fixture
def received() -> list[PushMessage]:
    return []


@pytest.fixture
def flask_client(verifier: PushVerifier, received: list[PushMessage]) -> flask.testing.FlaskClient:
    app = flask.Flask("push-test")

    @app.post("/push")
    @push_handler(verifier)
    def on_message(message: PushMessage) -> bool:
        received.append(message)
        return message.attributes.get("fail") != "yes"

    return app.test_client()


def test_flask_acknowledges_a_verified_push(
    google: FakeGoogle, flask_client: flask.testing.FlaskClient, received: list[PushMessage]
) -> None:
    response = flask_client.post("/push", data=wrapped_body(), headers=bearer(google.token()))
    assert response.status_code == 204
    assert received[0].data == b'{"order": 42}'


def test_flask_nacks_when_the_handler_says_so(
    google: FakeGoogle, flask_client: flask.testing.FlaskClient
) -> None:
    body = wrapped_body(attributes={"fail": "yes"})
    assert flask_client.post("/push", data=body, headers=bearer(google.token())).status_code == 503


def test_flask_rejects_without_calling_the_handler(
    google: FakeGoogle, flask_client: flask.testing.FlaskClient, received: list[PushMessage]
) -> None:
    response = flask_client.post("/push", data=wrapped_body())
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    assert response.text == "no Authorization header"
    forged = google.token(email="attacker@evil.iam.gserviceaccount.com")
    assert (
        flask_client.post("/push", data=wrapped_body(), headers=bearer(forged)).status_code == 403
    )
    assert flask_client.post("/push", data=b"[]", headers=bearer(google.token())).status_code == 400
    assert received == []


def test_flask_reads_no_more_than_the_limit(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier]
) -> None:
    app = flask.Flask("push-limit")

    @app.post("/push")
    @push_handler(make_verifier(max_body_bytes=1000))
    def on_message(message: PushMessage) -> None:
        raise AssertionError("must not be called")

    body = wrapped_body(data=b"x" * 5000)
    response = app.test_client().post("/push", data=body, headers=bearer(google.token()))
    assert response.status_code == 413


@pytest.fixture
def fastapi_client(verifier: PushVerifier, received: list[PushMessage]) -> TestClient:
    app = FastAPI()
    app.router.route_class = PushRoute
    verified_push = PushDependency(verifier)

    @app.post("/push", status_code=204)
    async def on_message(message: PushMessage = Depends(verified_push)) -> None:  # noqa: B008
        received.append(message)

    return TestClient(app)


def test_fastapi_acknowledges_a_verified_push(
    google: FakeGoogle, fastapi_client: TestClient, received: list[PushMessage]
) -> None:
    response = fastapi_client.post("/push", content=wrapped_body(), headers=bearer(google.token()))
    assert response.status_code == 204
    assert received[0].message_id == "2070443601311540"


@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        ({}, wrapped_body(), 401),
        ({"Authorization": "Bearer a.b.c"}, wrapped_body(), 401),
        (None, b"not json", 400),
        (None, wrapped_body(data=b"x" * 15_000_000), 413),
    ],
)
def test_fastapi_rejections_carry_the_status(
    google: FakeGoogle,
    fastapi_client: TestClient,
    received: list[PushMessage],
    headers: dict[str, str] | None,
    body: bytes,
    status: int,
) -> None:
    response = fastapi_client.post(
        "/push", content=body, headers=bearer(google.token()) if headers is None else headers
    )
    assert response.status_code == status
    assert received == []


def test_functions_framework_http_function(
    google: FakeGoogle, verifier: PushVerifier, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real Functions Framework app loading a source file, as `functions-framework` does."""
    source = tmp_path / "main.py"
    source.write_text(
        "import functions_framework\n"
        "from pushguard.receiver.functions_framework import push_function\n"
        "import receiver_settings\n"
        "\n"
        "@functions_framework.http\n"
        "@push_function(receiver_settings.VERIFIER)\n"
        "def on_order(message):\n"
        "    receiver_settings.RECEIVED.append(message)\n"
    )
    settings = tmp_path / "receiver_settings.py"
    settings.write_text("VERIFIER = None\nRECEIVED = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    receiver_settings = importlib.import_module("receiver_settings")
    receiver_settings.VERIFIER = verifier
    app = functions_framework.create_app(target="on_order", source=str(source))
    client = app.test_client()
    assert client.post("/", data=wrapped_body(), headers=bearer(google.token())).status_code == 204
    assert receiver_settings.RECEIVED[0].data == b'{"order": 42}'
    assert client.post("/", data=wrapped_body()).status_code == 401
