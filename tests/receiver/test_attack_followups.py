"""Issue 28 follow-ups: what a second attacker found after the receiver was hardened.

1. FastAPI: a handler's own ``Response`` (or ``response.status_code = ...``) follows the ack
   contract too, checked by :class:`~pushguard.receiver.fastapi.PushRoute`; a push route without
   it is refused before its handler runs.
2. Streamed responses (Flask, Functions Framework, FastAPI) are run to their end before the
   status is sent: no acknowledgement before the work.
3. ``http.HTTPStatus`` members are statuses (their ``int`` value); ``bool`` and ``float`` are not.
4. The wrapped envelope is strict JSON (no ``NaN``/``Infinity``, no duplicate keys, no absurd
   ``deliveryAttempt``) and the strings a handler logs carry no control characters.
5. Certificates outside their validity period are never used.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

import flask
import functions_framework
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Response
from fastapi.responses import StreamingResponse
from fastapi.testclient import TestClient

from pushguard.receiver import (
    GoogleKeySource,
    PushMessage,
    PushRejected,
    PushVerifier,
    StaticKeySource,
    ack_status,
)
from pushguard.receiver.fastapi import PushDependency, PushRoute
from pushguard.receiver.flask import push_handler

from .conftest import AUDIENCE, EMAIL, NOW, FakeGoogle, bearer, wrapped_body
from .test_keys_and_cache import Response as CertResponse

# --- 1 and 2: FastAPI handler results ---------------------------------------------------------


def _error_routes(app: FastAPI, verified: PushDependency) -> None:
    @app.post("/raises-302", status_code=204)
    def raises_302(message: PushMessage = Depends(verified)) -> None:  # noqa: B008
        raise HTTPException(302, headers={"Location": "https://elsewhere.example/"})

    @app.post("/raises-429", status_code=204)
    def raises_429(message: PushMessage = Depends(verified)) -> None:  # noqa: B008
        raise HTTPException(429)

    @app.post("/returns-102")
    def returns_102(message: PushMessage = Depends(verified)) -> Response:  # noqa: B008
        return Response(status_code=102)


@pytest.fixture(scope="module")
def fastapi_app(session_keys: dict[str, Any]) -> tuple[TestClient, list[str], FakeGoogle]:
    google = FakeGoogle(dict(session_keys))
    verified = PushDependency(
        PushVerifier(AUDIENCE, EMAIL, keys=google.certs, clock=google.now, max_body_bytes=4096)
    )
    ran: list[str] = []
    app = FastAPI()
    app.router.route_class = PushRoute

    @app.post("/returns-203")
    def returns_203(message: PushMessage = Depends(verified)) -> Response:  # noqa: B008
        ran.append("returns-203")
        return Response(status_code=203)

    @app.post("/sets-203", status_code=204)
    def sets_203(response: Response, message: PushMessage = Depends(verified)) -> None:  # noqa: B008
        ran.append("sets-203")
        response.status_code = 203

    @app.post("/returns-204")
    async def returns_204(message: PushMessage = Depends(verified)) -> Response:  # noqa: B008
        ran.append("returns-204")
        return Response(status_code=HTTPStatus.NO_CONTENT)

    @app.post("/returns-503")
    def returns_503(message: PushMessage = Depends(verified)) -> Response:  # noqa: B008
        return Response("busy", status_code=503)

    _error_routes(app, verified)

    @app.post("/streams-204")
    def streams_204(message: PushMessage = Depends(verified)) -> StreamingResponse:  # noqa: B008
        def work() -> Iterator[bytes]:
            ran.append("stream-start")
            yield b"partial"
            if message.attributes.get("fail") == "yes":
                raise RuntimeError("processing failed after the first chunk")
            ran.append("stream-end")

        return StreamingResponse(work(), status_code=204)

    @app.get("/health", status_code=302)  # not a push route: PushRoute leaves it alone
    def health() -> None:
        return None

    plain = APIRouter()  # a push route without PushRoute

    @plain.post("/plain", status_code=204)
    def plain_route(message: PushMessage = Depends(verified)) -> None:  # noqa: B008
        ran.append("plain")

    app.include_router(plain)
    return TestClient(app, raise_server_exceptions=False), ran, google


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/returns-203", 500),
        ("/sets-203", 500),
        ("/returns-204", 204),
        ("/returns-503", 503),
        ("/raises-302", 500),
        ("/raises-429", 429),
        ("/returns-102", 202),
    ],
)
def test_fastapi_a_handlers_own_response_follows_the_ack_contract(
    fastapi_app: tuple[TestClient, list[str], FakeGoogle],
    path: str,
    status: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client, _, google = fastapi_app
    with caplog.at_level(logging.ERROR, logger="pushguard.receiver"):
        response = client.post(
            path, content=wrapped_body(), headers=bearer(google.token()), follow_redirects=False
        )
    assert response.status_code == status
    if status == 500:
        assert f"status {path[-3:]}" in caplog.text


def test_fastapi_a_push_route_without_push_route_is_refused_before_its_handler(
    fastapi_app: tuple[TestClient, list[str], FakeGoogle], caplog: pytest.LogCaptureFixture
) -> None:
    client, ran, google = fastapi_app
    with caplog.at_level(logging.ERROR, logger="pushguard.receiver"):
        response = client.post("/plain", content=wrapped_body(), headers=bearer(google.token()))
    assert response.status_code == 500
    assert "plain" not in ran
    assert "PushRoute" in caplog.text
    assert client.get("/health", follow_redirects=False).status_code == 302


def test_fastapi_a_streamed_response_runs_before_the_acknowledgement(
    fastapi_app: tuple[TestClient, list[str], FakeGoogle],
) -> None:
    client, ran, google = fastapi_app
    ran.clear()
    token = bearer(google.token())
    assert client.post("/streams-204", content=wrapped_body(), headers=token).status_code == 204
    assert ran == ["stream-start", "stream-end"]
    failing = wrapped_body(attributes={"fail": "yes"})
    assert client.post("/streams-204", content=failing, headers=token).status_code == 500


# --- 2 and 3: Flask and the Functions Framework -------------------------------------------------


def _flask_result(message: PushMessage, ran: list[str]) -> Any:
    answer = message.attributes["answer"]

    def work() -> Iterator[str]:
        ran.append("stream-start")
        yield "partial"
        if message.attributes.get("fail") == "yes":
            raise RuntimeError("processing failed after the first chunk")
        ran.append("stream-end")

    return {
        "response-generator-204": lambda: flask.Response(work(), status=204),
        "bare-generator": work,
        "stream-with-context": lambda: flask.Response(flask.stream_with_context(work()), 202),
        "no-content": lambda: HTTPStatus.NO_CONTENT,
        "accepted": lambda: HTTPStatus.ACCEPTED,
        "processing": lambda: HTTPStatus.PROCESSING,
        "tuple-accepted": lambda: ("queued", HTTPStatus.ACCEPTED),
        "enum-203": lambda: HTTPStatus.NON_AUTHORITATIVE_INFORMATION,
        "float": lambda: 204.0,
        "abort-redirect": lambda: flask.abort(flask.redirect("https://elsewhere.example/")),
        "abort-404": lambda: flask.abort(404),
    }[answer]()


@pytest.fixture(scope="module")
def wsgi_apps(
    session_keys: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, tuple[flask.Flask, str]], list[str], FakeGoogle]:
    google = FakeGoogle(dict(session_keys))
    verifier = PushVerifier(AUDIENCE, EMAIL, keys=google.certs, clock=google.now)
    ran: list[str] = []
    app = flask.Flask("push-followups")

    @app.post("/push")
    @push_handler(verifier)
    def on_message(message: PushMessage) -> Any:
        return _flask_result(message, ran)

    folder = tmp_path_factory.mktemp("ff-followups")
    (folder / "main.py").write_text(
        "import functions_framework\n"
        "from pushguard.receiver.functions_framework import push_function\n"
        "import followup_settings as s\n"
        "\n"
        "@functions_framework.http\n"
        "@push_function(s.VERIFIER)\n"
        "def on_order(message):\n"
        "    return s.RESULT(message, s.RAN)\n"
    )
    import sys

    settings = type(sys)("followup_settings")
    settings.VERIFIER, settings.RESULT, settings.RAN = verifier, _flask_result, ran  # type: ignore[attr-defined]
    sys.modules["followup_settings"] = settings
    try:
        ff = functions_framework.create_app(target="on_order", source=str(folder / "main.py"))
    finally:
        del sys.modules["followup_settings"]
    return {"flask": (app, "/push"), "functions-framework": (ff, "/")}, ran, google


@pytest.mark.parametrize("adapter", ["flask", "functions-framework"])
@pytest.mark.parametrize(
    ("answer", "status"),
    [("response-generator-204", 204), ("bare-generator", 200), ("stream-with-context", 202)],
)
def test_wsgi_a_streamed_response_runs_before_the_acknowledgement(
    wsgi_apps: tuple[dict[str, tuple[flask.Flask, str]], list[str], FakeGoogle],
    adapter: str,
    answer: str,
    status: int,
) -> None:
    apps, ran, google = wsgi_apps
    app, path = apps[adapter]
    client = app.test_client()
    ran.clear()
    body = wrapped_body(attributes={"answer": answer})
    response = client.post(path, data=body, headers=bearer(google.token()), buffered=False)
    assert ran == ["stream-start", "stream-end"]  # before anyone read the response body
    assert response.status_code == status
    response.close()
    failing = wrapped_body(attributes={"answer": answer, "fail": "yes"})
    response = client.post(path, data=failing, headers=bearer(google.token()), buffered=False)
    assert response.status_code == 500
    response.close()


@pytest.mark.parametrize("adapter", ["flask", "functions-framework"])
@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("no-content", 204),
        ("accepted", 202),
        ("processing", 202),
        ("tuple-accepted", 202),
        ("enum-203", 500),
        ("float", 500),
        ("abort-redirect", 500),
        ("abort-404", 404),
    ],
)
def test_wsgi_http_status_members_are_their_int_value(
    wsgi_apps: tuple[dict[str, tuple[flask.Flask, str]], list[str], FakeGoogle],
    adapter: str,
    answer: str,
    status: int,
) -> None:
    apps, _, google = wsgi_apps
    app, path = apps[adapter]
    body = wrapped_body(attributes={"answer": answer})
    response = app.test_client().post(path, data=body, headers=bearer(google.token()))
    assert response.status_code == status


def test_ack_status_takes_int_subclasses_as_ints_but_not_floats() -> None:
    assert ack_status(HTTPStatus.NO_CONTENT) == 204
    assert type(ack_status(HTTPStatus.NO_CONTENT)) is int
    assert ack_status(HTTPStatus.SERVICE_UNAVAILABLE) == 503
    assert ack_status(True) == 204
    assert ack_status(False) == 503
    with pytest.raises(ValueError, match="an int status"):
        ack_status(204.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="status 203"):
        ack_status(HTTPStatus.NON_AUTHORITATIVE_INFORMATION)


# --- 4. the wrapped envelope is strict JSON, and its logged strings are clean ------------------

GOOD = json.loads(wrapped_body())


def _with_message(**fields: Any) -> bytes:
    return json.dumps({**GOOD, "message": {**GOOD["message"], **fields}}).encode()


def _raw_message(fields: str) -> bytes:
    return (
        b'{"message": {"data": "aGk=", "messageId": "1", '
        b'"publishTime": "2026-11-26T00:00:00Z"' + fields.encode() + b"}}"
    )


STRICT_JSON = {
    "NaN delivery attempt": b'{"message": {"data": "aGk=", "messageId": "1", '
    b'"publishTime": "2026-11-26T00:00:00Z"}, "deliveryAttempt": NaN}',
    "Infinity in an ignored field": _raw_message(', "x": Infinity'),
    "-Infinity": _raw_message(', "x": [-Infinity]'),
    "two data keys": _raw_message(', "data": "ZXZpbA=="'),
    "two subscriptions": b'{"message": {"data": "aGk=", "messageId": "1", '
    b'"publishTime": "2026-11-26T00:00:00Z"}, '
    b'"subscription": "projects/p/subscriptions/a", "subscription": "projects/p/subscriptions/b"}',
    "two attribute keys": _raw_message(', "attributes": {"k": "a", "k": "b"}'),
    "a lone surrogate in an attribute value": _raw_message(', "attributes": {"k": "\\ud800"}'),
    "a 4,000-digit delivery attempt": json.dumps({**GOOD, "deliveryAttempt": 10**3999}).encode(),
    "UTF-16": json.dumps(GOOD).encode("utf-16"),
    "a BOM": b"\xef\xbb\xbf" + json.dumps(GOOD).encode(),
}

CONTROL = ["\n", "\r", "\x00", "\x1b[31m", "\x7f", "\x85", "\u2028", "\u2029"]

DIRTY_STRINGS = {
    **{f"messageId {c!r}": _with_message(messageId=f"1{c}2", message_id=f"1{c}2") for c in CONTROL},
    "messageId with a space": _with_message(messageId="1 2", message_id="1 2"),
    "messageId not ASCII": _with_message(messageId="1é", message_id="1é"),
    **{f"orderingKey {c!r}": _with_message(orderingKey=f"k{c}FORGED") for c in CONTROL},
    **{f"attribute key {c!r}": _with_message(attributes={f"k{c}FORGED": "v"}) for c in CONTROL},
    **{
        f"subscription {c!r}": json.dumps(
            {**GOOD, "subscription": f"projects/p/subscriptions/s{c}x"}
        ).encode()
        for c in CONTROL
    },
}


@pytest.mark.parametrize("name", sorted(STRICT_JSON))
def test_the_envelope_is_strict_json(google: FakeGoogle, verifier: PushVerifier, name: str) -> None:
    with pytest.raises(PushRejected) as caught:
        verifier.verify(bearer(google.token()), STRICT_JSON[name])
    assert (caught.value.status, caught.value.code) == (400, "malformed_envelope")
    assert caught.value.reason.startswith(("body: ", "message.", "deliveryAttempt: "))
    assert "\\" not in caught.value.reason and "ZXZpbA" not in caught.value.reason


@pytest.mark.parametrize("name", sorted(DIRTY_STRINGS))
def test_logged_envelope_strings_carry_no_control_characters(
    google: FakeGoogle, verifier: PushVerifier, name: str
) -> None:
    with pytest.raises(PushRejected) as caught:
        verifier.verify(bearer(google.token()), DIRTY_STRINGS[name])
    assert (caught.value.status, caught.value.code) == (400, "malformed_envelope")
    assert caught.value.reason.isascii() and caught.value.reason.isprintable()
    assert "FORGED" not in caught.value.reason


def test_an_unwrapped_ordering_key_header_carries_no_control_characters(
    google: FakeGoogle, make_verifier: Any
) -> None:
    verifier = make_verifier(payload_format="unwrapped")
    headers = {**bearer(google.token()), "x-goog-pubsub-ordering-key": "k\x1b[31mFORGED"}
    with pytest.raises(PushRejected) as caught:
        verifier.verify(headers, b"data")
    assert caught.value.reason == "x-goog-pubsub-ordering-key: must not contain control characters"


def test_clean_unicode_still_passes(google: FakeGoogle, verifier: PushVerifier) -> None:
    body = _with_message(
        orderingKey="client 42 / café", attributes={"région": "île-de-France 😀", "note": "a\nb"}
    )
    message = verifier.verify(bearer(google.token()), body)
    assert message.ordering_key == "client 42 / café"
    assert message.attributes == {"région": "île-de-France 😀", "note": "a\nb"}


# --- 5. certificates outside their validity period ---------------------------------------------


def _certificate(google: FakeGoogle, kid: str, start: float, end: float) -> str:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "accounts.google.com")])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(google.keys[kid].public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(dt.datetime.fromtimestamp(start, dt.UTC))
        .not_valid_after(dt.datetime.fromtimestamp(end, dt.UTC))
        .sign(google.keys[kid], hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


def _online(google: FakeGoogle, document: dict[str, str]) -> tuple[GoogleKeySource, PushVerifier]:
    source = GoogleKeySource(
        fetch=lambda url: CertResponse(200, {}, json.dumps(document).encode()), clock=google.now
    )
    return source, PushVerifier(AUDIENCE, EMAIL, keys=source, clock=google.now)


def _code(verifier: PushVerifier, token: str) -> str:
    try:
        verifier.verify_token(bearer(token))
    except PushRejected as rejection:
        return rejection.code
    return "accepted"


def test_an_expired_or_future_certificate_is_skipped_and_reported(google: FakeGoogle) -> None:
    day = 86400.0
    source, verifier = _online(
        google,
        {
            "k1": _certificate(google, "k1", NOW - 30 * day, NOW - 120),  # expired 2 minutes ago
            "k2": _certificate(google, "k2", NOW + 3600, NOW + 30 * day),  # valid in an hour
            "k3": _certificate(google, "k1", NOW - day, NOW + day),  # k1's key, valid, as k3
        },
    )
    assert _code(verifier, google.token(kid="k1")) == "unknown_key"
    assert _code(verifier, google.token(kid="k2")) == "unknown_key"
    assert _code(verifier, google.token(kid="k3", key=google.keys["k1"])) == "accepted"
    assert source.skipped == {
        "k1": "a certificate outside its validity period",
        "k2": "a certificate outside its validity period",
    }


def test_a_document_of_expired_certificates_only_is_keys_unavailable(google: FakeGoogle) -> None:
    _, verifier = _online(google, {"k1": _certificate(google, "k1", NOW - 86400, NOW - 120)})
    assert _code(verifier, google.token(kid="k1")) == "keys_unavailable"  # 503: Pub/Sub retries


def test_a_certificate_within_the_clock_skew_of_its_validity_is_used(google: FakeGoogle) -> None:
    source, verifier = _online(
        google,
        {
            "k1": _certificate(google, "k1", NOW - 86400, NOW - 30),  # expired 30 s ago
            "k2": _certificate(google, "k2", NOW + 30, NOW + 86400),  # valid in 30 s
        },
    )
    assert _code(verifier, google.token(kid="k1")) == "accepted"
    assert _code(verifier, google.token(kid="k2")) == "accepted"
    assert source.skipped == {}


def test_a_cached_certificate_stops_being_used_when_it_expires(google: FakeGoogle) -> None:
    _, verifier = _online(
        google,
        {
            "k1": _certificate(google, "k1", NOW - 86400, NOW + 600),
            "k2": _certificate(google, "k2", NOW - 86400, NOW + 86400),
        },
    )
    token = google.token(kid="k1")
    assert _code(verifier, token) == "accepted"
    google.clock[0] += 600 + 61  # the document is still cached (300 s default), k1 expired
    assert _code(verifier, google.token(kid="k1")) == "unknown_key"
    assert _code(verifier, token) == "unknown_key"  # the token cache does not vouch either
    assert _code(verifier, google.token(kid="k2")) == "accepted"


def test_static_keys_never_use_an_expired_certificate(google: FakeGoogle) -> None:
    keys = StaticKeySource(
        {"k1": _certificate(google, "k1", NOW - 86400, NOW - 120)}, clock=google.now
    )
    verifier = PushVerifier(AUDIENCE, EMAIL, keys=keys, clock=google.now)
    assert _code(verifier, google.token(kid="k1")) == "unknown_key"


def test_verifier_static_keys_use_its_clock(google: FakeGoogle) -> None:
    certificate = _certificate(google, "k1", NOW - 86400, NOW + 600)
    verifier = PushVerifier(AUDIENCE, EMAIL, keys={"k1": certificate}, clock=google.now)
    assert _code(verifier, google.token(kid="k1")) == "accepted"
    google.clock[0] += 700
    assert _code(verifier, google.token(kid="k1")) == "unknown_key"
