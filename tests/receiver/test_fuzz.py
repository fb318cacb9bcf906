"""Property tests: whatever arrives, the verifier answers a 4xx (or accepts a genuine request);
it never raises anything else and never accepts an altered token."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushguard.receiver import PushMessage, PushRejected, PushVerifier

from .conftest import FakeGoogle, bearer, wrapped_body

SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

TOKEN_ALPHABET = st.sampled_from(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.= é\x00"
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)


@SETTINGS
@given(authorization=st.text(max_size=300), body=st.binary(max_size=300))
def test_arbitrary_authorization_is_never_accepted(
    verifier: PushVerifier, authorization: str, body: bytes
) -> None:
    try:
        verifier.verify({"Authorization": authorization}, body)
    except PushRejected as rejection:
        assert rejection.status == 401
    else:
        raise AssertionError("an arbitrary Authorization header was accepted")


@SETTINGS
@given(data=st.data())
def test_an_altered_genuine_token_is_never_accepted(
    google: FakeGoogle, verifier: PushVerifier, data: st.DataObject
) -> None:
    token = google.token()
    position = data.draw(st.integers(0, len(token) - 1))
    replacement = data.draw(TOKEN_ALPHABET.filter(lambda c: c != token[position]))
    altered = token[:position] + replacement + token[position + 1 :]
    try:
        verifier.verify_token(bearer(altered))
    except PushRejected as rejection:
        assert rejection.status == 401
    else:
        raise AssertionError(f"altered token accepted (position {position})")


@SETTINGS
@given(envelope=json_values)
def test_arbitrary_json_body_is_a_message_or_a_400(
    google: FakeGoogle, verifier: PushVerifier, envelope: object
) -> None:
    try:
        message = verifier.verify(bearer(google.token()), json.dumps(envelope).encode())
    except PushRejected as rejection:
        assert rejection.status == 400
    else:
        assert isinstance(message, PushMessage) and message.message_id


@SETTINGS
@given(
    message=st.dictionaries(
        st.sampled_from(
            ["data", "attributes", "messageId", "message_id", "publishTime", "orderingKey"]
        ),
        json_values,
    )
)
def test_arbitrary_message_fields_are_a_message_or_a_400(
    google: FakeGoogle, verifier: PushVerifier, message: dict[str, object]
) -> None:
    try:
        verifier.verify(bearer(google.token()), json.dumps({"message": message}).encode())
    except PushRejected as rejection:
        assert rejection.status == 400


@SETTINGS
@given(body=st.binary(max_size=2000))
def test_arbitrary_bytes_body_is_a_400(
    google: FakeGoogle, verifier: PushVerifier, body: bytes
) -> None:
    try:
        verifier.verify(bearer(google.token()), body)
    except PushRejected as rejection:
        assert rejection.status == 400
    else:
        assert json.loads(body)["message"]


def test_the_genuine_request_still_passes(google: FakeGoogle, verifier: PushVerifier) -> None:
    assert verifier.verify(bearer(google.token()), wrapped_body()).data == b'{"order": 42}'
