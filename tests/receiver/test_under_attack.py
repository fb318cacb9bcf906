"""The receiver under attack (issue 28): everything around the token.

Bounded header work before the token check, fixed rejection reasons, strict metadata headers,
keys that rotate cleanly, signed values that never crash, the pinned subscription. The servers
themselves (bodies read, withheld bodies, interim statuses) are in ``test_servers.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from pushguard.receiver import GoogleKeySource, PushRejected, PushVerifier
from pushguard.receiver.verifier import MAX_HEADER_BYTES, MAX_HEADER_LINES

from .conftest import AUDIENCE, EMAIL, NOW, FakeGoogle, b64url, bearer, make_key
from .conftest import wrapped_body as _wrapped_body
from .test_keys_and_cache import CertEndpoint, Response

SUBSCRIPTION = "projects/acme-orders/subscriptions/orders-push"


def _reject(call: Callable[[], object]) -> PushRejected:
    with pytest.raises(PushRejected) as caught:
        call()
    return caught.value


# --- 2. header work before the token check is linear and capped -----------------------------


class CountingHeaders:
    """A header collection that counts the lines the verifier pulls from it."""

    def __init__(self, lines: list[tuple[str, str]]) -> None:
        self.lines = lines
        self.pulled = 0

    def items(self) -> Iterator[tuple[str, str]]:
        for line in self.lines:
            self.pulled += 1
            yield line


@pytest.mark.parametrize("repeats", [100_000])
def test_repeated_header_lines_are_refused_after_the_cap_before_the_token(
    verifier: PushVerifier, repeats: int
) -> None:
    headers = CountingHeaders([("X-Filler", "a" * 8)] * repeats)
    rejection = _reject(lambda: verifier.verify_token(headers))
    assert (rejection.status, rejection.code) == (431, "headers_too_large")
    assert headers.pulled <= MAX_HEADER_LINES + 1


def test_a_header_block_over_the_byte_cap_is_refused(verifier: PushVerifier) -> None:
    headers = CountingHeaders([("X-Big", "b" * 8192)] * 200)
    rejection = _reject(lambda: verifier.verify_token(headers))
    assert (rejection.status, rejection.code) == (431, "headers_too_large")
    assert headers.pulled * 8192 <= MAX_HEADER_BYTES + 8192 + 8


def test_many_headers_under_the_cap_still_verify(
    google: FakeGoogle, verifier: PushVerifier
) -> None:
    filler = [("X-Trace", str(n)) for n in range(MAX_HEADER_LINES - 10)]
    headers = [*filler, *bearer(google.token()).items()]
    assert verifier.verify_token(CountingHeaders(headers)).email == EMAIL


# --- 3. reasons are fixed sentences, never request text ---------------------------------------

MARKERS = ("<b>", "FORGED", "\n", "\r", "\x1b", "\u2028", "A" * 300)
EVIL = "<b>x</b>\nFORGED\r\x1b[31m\u2028" + "A" * 300
REASON = re.compile(r"[A-Za-z0-9 .,:;'()_/\-]{1,200}")


def _evil_bodies() -> dict[str, bytes]:
    good = json.loads(_wrapped_body())
    message = good["message"]
    cases: dict[str, Any] = {
        "attribute key with non-string value": {"attributes": {EVIL: 1}},
        "attribute value non-string": {"attributes": {"k": {EVIL: EVIL}}},
        "attributes not an object": {"attributes": [EVIL]},
        "data": {"data": EVIL},
        "data non-string": {"data": {EVIL: 1}},
        "messageId": {"messageId": {EVIL: 1}, "message_id": {EVIL: 1}},
        "messageId too long": {"messageId": EVIL * 10, "message_id": EVIL * 10},
        "publishTime": {"publishTime": EVIL, "publish_time": EVIL},
        "orderingKey": {"orderingKey": {EVIL: EVIL}},
        "spellings differ": {"messageId": EVIL, "message_id": "1"},
    }
    bodies = {}
    for name, change in cases.items():
        bodies[name] = json.dumps({**good, "message": {**message, **change}}).encode()
    bodies["subscription"] = json.dumps({**good, "subscription": EVIL}).encode()
    bodies["deliveryAttempt"] = json.dumps({**good, "deliveryAttempt": EVIL}).encode()
    bodies["message not an object"] = json.dumps({**good, "message": {EVIL: EVIL}}).encode()
    bodies["top level key"] = json.dumps({EVIL: EVIL}).encode()
    bodies["not JSON"] = EVIL.encode()
    bodies["not UTF-8"] = b'{"message": {"data": "\xff' + EVIL.encode() + b'"}}'
    return bodies


@pytest.mark.parametrize("name", sorted(_evil_bodies()))
def test_reasons_never_carry_request_text_wrapped(
    google: FakeGoogle, verifier: PushVerifier, name: str
) -> None:
    body = _evil_bodies()[name]
    rejection = _reject(lambda: verifier.verify(bearer(google.token()), body))
    assert rejection.status == 400
    assert REASON.fullmatch(rejection.reason), rejection.reason
    assert not any(marker in rejection.reason for marker in MARKERS)


@pytest.mark.parametrize(
    "header",
    [
        "x-goog-pubsub-subscription-name",
        "x-goog-pubsub-message-id",
        "x-goog-pubsub-publish-time",
    ],
)
def test_reasons_never_carry_request_text_unwrapped(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier], header: str
) -> None:
    verifier = make_verifier(payload_format="unwrapped")
    headers = {**bearer(google.token()), header: EVIL.replace("\n", " ").replace("\r", " ")}
    rejection = _reject(lambda: verifier.verify(headers, b"data"))
    assert rejection.status == 400
    assert REASON.fullmatch(rejection.reason), rejection.reason
    assert "<b>" not in rejection.reason


# --- 4. metadata headers strictly, no credentials as attributes --------------------------------


@pytest.mark.parametrize(
    ("header", "merged"),
    [
        ("X-Goog-Pubsub-Message-Id", "2070443601311540,2070443601311541"),
        ("X-Goog-Pubsub-Message-Id", "2070443601311540, 2070443601311541"),
        (
            "X-Goog-Pubsub-Subscription-Name",
            "projects/a-b-c/subscriptions/s1,projects/a-b-c/subscriptions/s2",
        ),
        ("X-Goog-Pubsub-Publish-Time", "2026-11-21T19:13:55Z,2026-11-21T19:13:56Z"),
    ],
)
def test_a_merged_metadata_header_is_refused_not_parsed(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier], header: str, merged: str
) -> None:
    """werkzeug and gunicorn merge repeated lines into one value joined by ','."""
    verifier = make_verifier(payload_format="unwrapped")
    rejection = _reject(lambda: verifier.verify({**bearer(google.token()), header: merged}, b"x"))
    assert (rejection.status, rejection.code) == (400, "malformed_metadata")


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "authorization",
        "Proxy-Authorization",
        "Cookie",
        "X-Serverless-Authorization",
        "X-Goog-IAP-JWT-Assertion",
        "X-Forwarded-Authorization",
        "X-Goog-Pubsub-Message-Id",
        "bad name",
        "",
    ],
)
def test_attribute_headers_refuse_credentials_and_bad_names(
    make_verifier: Callable[..., PushVerifier], name: str
) -> None:
    with pytest.raises(ValueError, match="attribute_headers"):
        make_verifier(payload_format="unwrapped", attribute_headers=[name])


# --- 6. keys ---------------------------------------------------------------------------------


def _pem_public(key: Any) -> str:
    return str(
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def test_unusable_certificate_entries_are_skipped_and_reported(google: FakeGoogle) -> None:
    document = {
        **google.certs,
        "ec": _pem_public(ec.generate_private_key(ec.SECP256R1())),
        "weak": _pem_public(rsa.generate_private_key(public_exponent=65537, key_size=1024)),
        "garbage": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        "not a string": 42,
    }
    source = GoogleKeySource(
        fetch=lambda url: Response(200, {}, json.dumps(document).encode()), clock=google.now
    )
    verifier = PushVerifier(AUDIENCE, EMAIL, keys=source, clock=google.now)
    assert verifier.verify_token(bearer(google.token())).key_id == "k1"
    assert sorted(source.skipped) == ["ec", "garbage", "not a string", "weak"]
    assert all(REASON.fullmatch(reason) for reason in source.skipped.values())


class OddKeys:
    def __init__(self, answer: Callable[[], Any]) -> None:
        self.answer = answer

    def key(self, kid: str) -> Any:
        return self.answer()


def _raise() -> Any:
    raise RuntimeError("metadata server down")


@pytest.mark.parametrize(
    "answer",
    [
        lambda: ec.generate_private_key(ec.SECP256R1()).public_key(),
        lambda: rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key(),
        lambda: "not a key",
        _raise,
    ],
    ids=["EC key", "1024-bit RSA", "a string", "raises"],
)
def test_a_custom_key_source_that_fails_or_answers_an_unusable_key_is_503(
    google: FakeGoogle, answer: Callable[[], Any]
) -> None:
    verifier = PushVerifier(AUDIENCE, EMAIL, keys=OddKeys(answer), clock=google.now)
    rejection = _reject(lambda: verifier.verify_token(bearer(google.token())))
    assert (rejection.status, rejection.code) == (503, "keys_unavailable")


def test_a_cached_verification_ends_when_its_key_is_withdrawn(google: FakeGoogle) -> None:
    endpoint = CertEndpoint(google, headers={"Cache-Control": "max-age=600"})
    keys = GoogleKeySource(fetch=endpoint, clock=google.now)
    verifier = PushVerifier(AUDIENCE, EMAIL, keys=keys, clock=google.now)
    token = google.token(kid="k1")
    verifier.verify_token(bearer(token))
    del google.keys["k1"]  # Google withdraws k1 (compromised); the next document lacks it
    google.clock[0] += 601
    rejection = _reject(lambda: verifier.verify_token(bearer(token)))
    assert (rejection.status, rejection.code) == (401, "unknown_key")


def test_a_cached_verification_ends_when_its_kid_names_another_key(google: FakeGoogle) -> None:
    endpoint = CertEndpoint(google, headers={"Cache-Control": "max-age=600"})
    keys = GoogleKeySource(fetch=endpoint, clock=google.now)
    verifier = PushVerifier(AUDIENCE, EMAIL, keys=keys, clock=google.now)
    token = google.token(kid="k1")
    verifier.verify_token(bearer(token))
    google.keys["k1"] = make_key()
    google.clock[0] += 601
    rejection = _reject(lambda: verifier.verify_token(bearer(token)))
    assert (rejection.status, rejection.code) == (401, "bad_signature")


def test_a_made_up_kid_delays_a_real_rotation_by_seconds_only(google: FakeGoogle) -> None:
    endpoint = CertEndpoint(google)
    keys = GoogleKeySource(fetch=endpoint, clock=google.now)
    verifier = PushVerifier(AUDIENCE, EMAIL, keys=keys, clock=google.now, cache_size=0)
    verifier.verify_token(bearer(google.token()))
    google.clock[0] += 60
    _reject(lambda: verifier.verify_token(bearer(google.token(header={"kid": "made-up"}))))
    google.keys["k3"] = make_key()  # published a moment after the attacker's request
    google.clock[0] += 1
    _reject(lambda: verifier.verify_token(bearer(google.token(kid="k3"))))  # still rate-limited
    google.clock[0] += 5
    assert verifier.verify_token(bearer(google.token(kid="k3"))).key_id == "k3"


def test_made_up_kids_keep_the_total_refetch_rate_bounded(google: FakeGoogle) -> None:
    endpoint = CertEndpoint(google)
    keys = GoogleKeySource(fetch=endpoint, clock=google.now)
    verifier = PushVerifier(AUDIENCE, EMAIL, keys=keys, clock=google.now, cache_size=0)
    verifier.verify_token(bearer(google.token()))
    payload = b64url(json.dumps(google.claims()).encode())
    for n in range(600):  # ten forged kids a second for a minute (the kid is looked up first)
        google.clock[0] += 0.1
        header = b64url(json.dumps({"alg": "RS256", "kid": f"x{n}"}).encode())
        forged = bearer(f"{header}.{payload}.AAAA")
        assert _reject(lambda forged=forged: verifier.verify_token(forged)).code == "unknown_key"
    assert endpoint.calls <= 1 + 60 / 5


# --- 7. signed values ------------------------------------------------------------------------


def _signed_raw(google: FakeGoogle, header: bytes, payload: bytes) -> str:
    signing_input = f"{b64url(header)}.{b64url(payload)}"
    signature = google.keys["k1"].sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64url(signature)}"


def _claims_text(google: FakeGoogle, **raw: str) -> bytes:
    claims = {k: json.dumps(v) for k, v in google.claims().items()}
    claims.update(raw)
    return ("{" + ",".join(f'"{k}": {v}' for k, v in claims.items()) + "}").encode()


HEADER = b'{"alg": "RS256", "kid": "k1", "typ": "JWT"}'


@pytest.mark.parametrize(
    "raw",
    [
        {"exp": "1" + "0" * 400},
        {"exp": "1e400"},
        {"exp": "-1e400"},
        {"exp": f"{NOW + 3600.5}"},
        {"exp": "99999999999999999999"},
        {"iat": "1" + "0" * 400},
        {"iat": "-1e400"},
        {"iat": f"{NOW - 0.25}"},
        {"nbf": "1e400"},
        {"nbf": "-1" + "0" * 400},
    ],
    ids=lambda raw: f"{next(iter(raw))}={next(iter(raw.values()))[:12]}",
)
def test_absurd_times_are_401_never_a_crash(
    google: FakeGoogle, verifier: PushVerifier, raw: dict[str, str]
) -> None:
    token = _signed_raw(google, HEADER, _claims_text(google, **raw))
    rejection = _reject(lambda: verifier.verify_token(bearer(token)))
    assert rejection.status == 401


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "utf-8-sig"])
@pytest.mark.parametrize("part", ["header", "claims"])
def test_jose_header_and_claims_must_be_utf8(
    google: FakeGoogle, verifier: PushVerifier, encoding: str, part: str
) -> None:
    header = HEADER.decode().encode(encoding) if part == "header" else HEADER
    claims = json.dumps(google.claims()).encode()
    claims = claims.decode().encode(encoding) if part == "claims" else claims
    rejection = _reject(lambda: verifier.verify_token(bearer(_signed_raw(google, header, claims))))
    assert (rejection.status, rejection.code) == (401, "malformed_token")


@pytest.mark.parametrize("token", ["a\ud800.b.c", "\udcff", "é.b.c"])
def test_non_ascii_tokens_are_401(verifier: PushVerifier, token: str) -> None:
    rejection = _reject(lambda: verifier.tokens.verify(token))
    assert (rejection.status, rejection.code) == (401, "malformed_token")


@pytest.mark.parametrize(
    "change",
    [
        {"deliveryAttempt": 1, "delivery_attempt": 2},
        {"deliveryAttempt": 1, "delivery_attempt": True},
        {"message": {"orderingKey": "a", "ordering_key": "b"}},
        {"message": {"publishTime": 0, "publish_time": 0}},
        {"message": {"publishTime": "1790000000"}},
        {"message": {"publishTime": "2026-11-21"}},
        {"message": {"publishTime": "2026-11-21T19:13:55.749Z", "publish_time": "2026-11-21"}},
    ],
    ids=[
        "deliveryAttempt",
        "deliveryAttempt true",
        "orderingKey",
        "publishTime 0",
        "epoch string",
        "date only",
        "differ",
    ],
)
def test_envelope_spellings_agree_and_publish_time_is_rfc3339(
    google: FakeGoogle, verifier: PushVerifier, change: dict[str, Any]
) -> None:
    envelope = json.loads(_wrapped_body())
    message_change = change.pop("message", {})
    message = {**envelope["message"], **message_change}
    if "publishTime" in message_change and "publish_time" not in message_change:
        message["publish_time"] = message["publishTime"]
    body = json.dumps({**envelope, "message": message, **change}).encode()
    rejection = _reject(lambda: verifier.verify(bearer(google.token()), body))
    assert (rejection.status, rejection.code) == (400, "malformed_envelope")


# --- 8. the pinned subscription ----------------------------------------------------------------


@pytest.fixture
def pinned(make_verifier: Callable[..., PushVerifier]) -> PushVerifier:
    return make_verifier(subscription=SUBSCRIPTION)


def test_a_pinned_subscription_accepts_its_own_pushes(
    google: FakeGoogle, pinned: PushVerifier
) -> None:
    assert pinned.verify(bearer(google.token()), _wrapped_body()).subscription == SUBSCRIPTION


@pytest.mark.parametrize(
    "subscription", ["projects/acme-orders/subscriptions/other", "projects/x1-y/subscriptions/s1"]
)
def test_another_subscription_is_403(
    google: FakeGoogle, pinned: PushVerifier, subscription: str
) -> None:
    body = _wrapped_body(subscription=subscription)
    rejection = _reject(lambda: pinned.verify(bearer(google.token()), body))
    assert (rejection.status, rejection.code) == (403, "wrong_subscription")
    assert subscription not in rejection.reason


def test_an_envelope_without_subscription_is_403_when_pinned(
    google: FakeGoogle, pinned: PushVerifier
) -> None:
    envelope = json.loads(_wrapped_body())
    del envelope["subscription"]
    body = json.dumps(envelope).encode()
    rejection = _reject(lambda: pinned.verify(bearer(google.token()), body))
    assert (rejection.status, rejection.code) == (403, "wrong_subscription")


def test_unwrapped_pinned_subscription_needs_the_metadata_header(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier]
) -> None:
    verifier = make_verifier(payload_format="unwrapped", subscription=SUBSCRIPTION)
    headers = {**bearer(google.token()), "X-Goog-Pubsub-Subscription-Name": SUBSCRIPTION}
    assert verifier.verify(headers, b"x").subscription == SUBSCRIPTION
    other = {**headers, "X-Goog-Pubsub-Subscription-Name": SUBSCRIPTION + "-2"}
    assert _reject(lambda: verifier.verify(other, b"x")).code == "wrong_subscription"
    rejection = _reject(lambda: verifier.verify(bearer(google.token()), b"x"))
    assert (rejection.status, rejection.code) == (403, "no_subscription_metadata")


@pytest.mark.parametrize(
    "subscription", ["orders-push", "projects/p/subscriptions/", "projects/p/topics/t", ""]
)
def test_a_malformed_pinned_subscription_is_a_configuration_error(
    make_verifier: Callable[..., PushVerifier], subscription: str
) -> None:
    with pytest.raises(ValueError, match="subscription"):
        make_verifier(subscription=subscription)
