"""The push body, wrapped and unwrapped, into one message; malformed bodies are 400 or 413."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable

import pytest

from pushguard.receiver import PushRejected, PushVerifier

from .conftest import FakeGoogle, bearer, wrapped_body


def test_wrapped_message_has_every_field(google: FakeGoogle, verifier: PushVerifier) -> None:
    body = wrapped_body(
        data=b"\x00\xffbinary",
        attributes={"origin": "checkout", "tenant": "acme"},
        deliveryAttempt=3,
    )
    message = verifier.verify(bearer(google.token()), body)
    assert message.data == b"\x00\xffbinary"
    assert message.attributes == {"origin": "checkout", "tenant": "acme"}
    assert message.message_id == "2070443601311540"
    assert message.publish_time == dt.datetime(2026, 11, 21, 19, 13, 55, 749000, tzinfo=dt.UTC)
    assert message.delivery_attempt == 3
    assert message.subscription == "projects/acme-orders/subscriptions/orders-push"


@pytest.mark.parametrize(
    "message",
    [
        {"data": "aGk=", "messageId": "1", "publishTime": "2026-11-21T19:13:55Z"},
        {"data": "aGk=", "message_id": "1", "publish_time": "2026-11-21T19:13:55Z"},
        {"data": "aGk=", "messageId": "1", "publish_time": "2026-11-21T19:13:55.5+01:00"},
    ],
    ids=["camelCase only", "snake_case only", "mixed"],
)
def test_either_spelling_is_read(
    google: FakeGoogle, verifier: PushVerifier, message: dict[str, str]
) -> None:
    parsed = verifier.verify(bearer(google.token()), json.dumps({"message": message}).encode())
    assert (parsed.data, parsed.message_id) == (b"hi", "1")
    assert parsed.publish_time is not None and parsed.publish_time.tzinfo is not None
    assert parsed.attributes == {} and parsed.delivery_attempt is None


def test_ordering_key_and_attribute_only_message(
    google: FakeGoogle, verifier: PushVerifier
) -> None:
    body = {
        "message": {
            "attributes": {"objectId": "a.csv"},
            "messageId": "9",
            "publishTime": "2026-11-21T19:13:55Z",
            "orderingKey": "customer-7",
        }
    }
    message = verifier.verify(bearer(google.token()), json.dumps(body).encode())
    assert message.data == b"" and message.ordering_key == "customer-7"


def _message(**fields: object) -> bytes:
    base: dict[str, object] = {
        "data": "aGk=",
        "messageId": "1",
        "publishTime": "2026-11-21T19:13:55Z",
    }
    base.update(fields)
    return json.dumps({"message": {k: v for k, v in base.items() if v is not None}}).encode()


MALFORMED: dict[str, bytes] = {
    "empty body": b"",
    "not JSON": b"orders=42",
    "JSON array": b"[]",
    "truncated JSON": wrapped_body()[:-7],
    "binary garbage": bytes(range(256)),
    "invalid UTF-8": b'{"message": {"data": "\xff\xfe"}}',
    "missing message": b'{"subscription": "projects/p/subscriptions/s"}',
    "message is a string": b'{"message": "hello"}',
    "message is null": b'{"message": null}',
    "data not base64": _message(data="not base64!"),
    "data URL-safe base64": _message(data=base64.urlsafe_b64encode(b"\xfb\xff").decode()),
    "data a number": _message(data=42),
    "attributes a list": _message(attributes=["a", "b"]),
    "attribute value a number": _message(attributes={"retries": 3}),
    "attribute value null": _message(attributes={"k": None}),
    "no message ID": _message(messageId=None),
    "empty message ID": _message(messageId=""),
    "message ID a number": _message(messageId=1),
    "spellings disagree": _message(message_id="2"),
    "no publish time": _message(publishTime=None),
    "publish time not a time": _message(publishTime="yesterday"),
    "publish time without zone": _message(publishTime="2026-11-21T19:13:55"),
    "delivery attempt a string": json.dumps(
        {"message": json.loads(_message())["message"], "deliveryAttempt": "3"}
    ).encode(),
    "delivery attempt zero": json.dumps(
        {"message": json.loads(_message())["message"], "deliveryAttempt": 0}
    ).encode(),
    "subscription not a subscription name": json.dumps(
        {"message": json.loads(_message())["message"], "subscription": "../../etc/passwd"}
    ).encode(),
    "deeply nested": b'{"message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_body_is_400(google: FakeGoogle, verifier: PushVerifier, name: str) -> None:
    with pytest.raises(PushRejected) as caught:
        verifier.verify(bearer(google.token()), MALFORMED[name])
    assert caught.value.status == 400
    assert caught.value.code == "malformed_envelope"
    assert len(caught.value.reason) < 200


def test_body_over_the_limit_is_413_before_parsing(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier]
) -> None:
    verifier = make_verifier(max_body_bytes=1024)
    with pytest.raises(PushRejected) as caught:
        verifier.verify(bearer(google.token()), wrapped_body(data=b"x" * 2000))
    assert (caught.value.status, caught.value.code) == (413, "body_too_large")
    assert verifier.verify(bearer(google.token()), wrapped_body(data=b"x" * 500)).data == b"x" * 500


def test_a_ten_megabyte_message_fits_the_default_limit(
    google: FakeGoogle, verifier: PushVerifier
) -> None:
    data = b"\x01" * 10_000_000  # Pub/Sub's largest message
    assert verifier.verify(bearer(google.token()), wrapped_body(data=data)).data == data


def test_unauthenticated_huge_body_gets_401_not_a_parse(verifier: PushVerifier) -> None:
    with pytest.raises(PushRejected) as caught:
        verifier.verify({}, b"{" * 50_000_000)
    assert caught.value.status == 401


def test_unwrapped_with_write_metadata(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier]
) -> None:
    verifier = make_verifier(payload_format="unwrapped", attribute_headers=["tenant-id"])
    headers = {
        **bearer(google.token()),
        "Content-Type": "application/json",
        "x-goog-pubsub-subscription-name": "projects/acme-orders/subscriptions/orders-raw",
        "X-Goog-Pubsub-Message-Id": "123",
        "x-goog-pubsub-publish-time": "2026-11-21T19:13:55.749Z",
        "x-goog-pubsub-ordering-key": "some-key",
        "tenant-id": "acme",
    }
    message = verifier.verify(headers, b'{"status": "Hello there"}')
    assert message.data == b'{"status": "Hello there"}'
    assert message.attributes == {"tenant-id": "acme"}
    assert message.message_id == "123"
    assert message.ordering_key == "some-key"
    assert message.subscription == "projects/acme-orders/subscriptions/orders-raw"
    assert message.publish_time is not None and message.publish_time.year == 2026


def test_unwrapped_without_metadata_is_just_the_body(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier]
) -> None:
    verifier = make_verifier(payload_format="unwrapped")
    message = verifier.verify(bearer(google.token()), b"\x00raw bytes, not JSON")
    assert message.data == b"\x00raw bytes, not JSON"
    assert (message.message_id, message.publish_time, message.attributes) == (None, None, {})


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("x-goog-pubsub-publish-time", "not a time"),
        ("x-goog-pubsub-subscription-name", "orders"),
        ("x-goog-pubsub-message-id", ""),
    ],
)
def test_unwrapped_with_bad_metadata_is_400(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier], header: str, value: str
) -> None:
    verifier = make_verifier(payload_format="unwrapped")
    with pytest.raises(PushRejected) as caught:
        verifier.verify({**bearer(google.token()), header: value}, b"data")
    assert (caught.value.status, caught.value.code) == (400, "malformed_metadata")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"payload_format": "raw"}, "payload_format"),
        ({"max_body_bytes": 0}, "max_body_bytes"),
        ({"attribute_headers": ["x"]}, "attribute_headers"),
        ({"clock_skew": 3600}, "clock_skew"),
        ({"cache_size": -1}, "cache_size"),
        ({"keys": {}}, "keys"),
        ({"keys": {"k1": "not a PEM"}}, "key 'k1'"),
    ],
)
def test_bad_settings_name_the_field(
    make_verifier: Callable[..., PushVerifier], options: dict[str, object], field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        make_verifier(**options)


def test_body_must_be_bytes(google: FakeGoogle, verifier: PushVerifier) -> None:
    with pytest.raises(TypeError, match="bytes"):
        verifier.verify(bearer(google.token()), "text")  # type: ignore[arg-type]
