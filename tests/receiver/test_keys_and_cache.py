"""Google's certificates: fetched once, cached as the headers say, refetched on rotation, never
hammered; verified tokens: cached by hash until they expire, bounded."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from pushguard.receiver import GoogleKeySource, PushRejected, PushVerifier, StaticKeySource
from pushguard.receiver.keys import cache_lifetime

from .conftest import AUDIENCE, EMAIL, FakeGoogle, bearer, certificate_pem, make_key


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    data: bytes


@dataclass
class CertEndpoint:
    """Serves https://www.googleapis.com/oauth2/v1/certs from memory and counts the calls."""

    google: FakeGoogle
    headers: dict[str, str] = field(
        default_factory=lambda: {"Cache-Control": "public, max-age=20000, must-revalidate"}
    )
    status: int = 200
    fail: bool = False
    calls: int = 0

    def __call__(self, url: str) -> Response:
        assert url == "https://www.googleapis.com/oauth2/v1/certs"
        self.calls += 1
        if self.fail:
            raise OSError("connection refused")
        return Response(self.status, self.headers, json.dumps(self.google.certs).encode())


@pytest.fixture
def endpoint(google: FakeGoogle) -> CertEndpoint:
    return CertEndpoint(google)


@pytest.fixture
def online(google: FakeGoogle, endpoint: CertEndpoint) -> PushVerifier:
    keys = GoogleKeySource(fetch=endpoint, clock=google.now)
    return PushVerifier(AUDIENCE, EMAIL, keys=keys, clock=google.now, cache_size=0)


def test_keys_are_fetched_once_and_reused(
    google: FakeGoogle, endpoint: CertEndpoint, online: PushVerifier
) -> None:
    for _ in range(5):
        online.verify_token(bearer(google.token()))
    online.verify_token(bearer(google.token(kid="k2")))
    assert endpoint.calls == 1


def test_keys_are_refetched_when_max_age_runs_out(
    google: FakeGoogle, endpoint: CertEndpoint, online: PushVerifier
) -> None:
    endpoint.headers = {"Cache-Control": "max-age=600", "Age": "100"}
    online.verify_token(bearer(google.token()))
    google.clock[0] += 499
    online.verify_token(bearer(google.token()))
    assert endpoint.calls == 1
    google.clock[0] += 2
    online.verify_token(bearer(google.token()))
    assert endpoint.calls == 2


def test_rotation_an_unknown_kid_triggers_one_refetch(
    google: FakeGoogle, endpoint: CertEndpoint, online: PushVerifier
) -> None:
    online.verify_token(bearer(google.token()))
    google.keys["k3"] = make_key()  # Google publishes a new key
    google.clock[0] += 31
    assert online.verify_token(bearer(google.token(kid="k3"))).key_id == "k3"
    assert endpoint.calls == 2


def test_made_up_kids_cannot_make_the_receiver_hammer_google(
    google: FakeGoogle, endpoint: CertEndpoint, online: PushVerifier
) -> None:
    online.verify_token(bearer(google.token()))
    google.clock[0] += 31
    for n in range(50):
        with pytest.raises(PushRejected) as caught:
            online.verify_token(bearer(google.token(header={"kid": f"forged-{n}"})))
        assert caught.value.status == 401
    assert endpoint.calls == 2  # the first fetch, then one refetch per 30 s interval


def test_outage_with_unexpired_keys_keeps_verifying(
    google: FakeGoogle, endpoint: CertEndpoint, online: PushVerifier
) -> None:
    online.verify_token(bearer(google.token()))
    endpoint.fail = True
    google.clock[0] += 60
    with pytest.raises(PushRejected) as caught:
        online.verify_token(bearer(google.token(header={"kid": "new"})))
    assert caught.value.status == 401
    assert online.verify_token(bearer(google.token())).key_id == "k1"


@pytest.mark.parametrize("failure", ["refused", "http 500", "not json", "not a certificate"])
def test_no_keys_at_all_is_503_not_a_crash(
    google: FakeGoogle, endpoint: CertEndpoint, online: PushVerifier, failure: str
) -> None:
    endpoint.fail = failure == "refused"
    endpoint.status = 500 if failure == "http 500" else 200
    if failure == "not json":
        endpoint.google = FakeGoogle({})
    if failure == "not a certificate":
        endpoint.headers = {}
        online.tokens._keys = GoogleKeySource(  # type: ignore[attr-defined]
            fetch=lambda url: Response(200, {}, b'{"k1": "-----BEGIN CERTIFICATE-----\\nAAAA"}'),
            clock=google.now,
        )
    with pytest.raises(PushRejected) as caught:
        online.verify(bearer(google.token()), b"{}")
    assert (caught.value.status, caught.value.code) == (503, "keys_unavailable")


def test_expired_keys_are_not_used_during_an_outage(
    google: FakeGoogle, endpoint: CertEndpoint, online: PushVerifier
) -> None:
    endpoint.headers = {"Cache-Control": "max-age=300"}
    online.verify_token(bearer(google.token()))
    endpoint.fail = True
    google.clock[0] += 301
    with pytest.raises(PushRejected) as caught:
        online.verify_token(bearer(google.token()))
    assert caught.value.status == 503
    endpoint.fail = False
    google.clock[0] += 31  # the next attempt after the rate-limit interval recovers
    assert online.verify_token(bearer(google.token())).key_id == "k1"


@pytest.mark.parametrize(
    ("headers", "lifetime"),
    [
        ({"Cache-Control": "public, max-age=19204, must-revalidate, no-transform"}, 19204.0),
        ({"cache-control": "max-age=600", "age": "100"}, 500.0),
        ({"Cache-Control": "max-age=60", "Age": "100"}, 0.0),
        ({"Cache-Control": "no-store, max-age=600"}, 0.0),
        (
            {"Expires": "Sat, 21 Nov 2026 12:10:00 GMT", "Date": "Sat, 21 Nov 2026 12:00:00 GMT"},
            600.0,
        ),
        ({"Expires": "0"}, 0.0),
        ({"Content-Type": "application/json"}, None),
    ],
)
def test_cache_lifetime_follows_http_caching(
    headers: dict[str, str], lifetime: float | None
) -> None:
    assert cache_lifetime(headers, now=0.0) == lifetime


def test_static_keys_accept_a_public_key_pem_and_reject_weak_or_non_rsa_keys() -> None:
    key = make_key()
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    assert StaticKeySource({"pk": public_pem}).key("pk") is not None
    assert StaticKeySource({"cert": certificate_pem(key)}).key("other") is None
    ec_pem = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    with pytest.raises(ValueError, match=r"'ec'.*RSA"):
        StaticKeySource({"ec": ec_pem})


def test_cached_token_skips_the_signature_check_until_it_expires(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier], monkeypatch: pytest.MonkeyPatch
) -> None:
    verifier = make_verifier(clock_skew=0)
    fresh = verifier.tokens._verify_fresh  # type: ignore[attr-defined]
    checks = []

    def counting(token: str):  # type: ignore[no-untyped-def]
        checks.append(token)
        return fresh(token)

    monkeypatch.setattr(verifier.tokens, "_verify_fresh", counting)
    token = google.token()
    for _ in range(100):
        verifier.verify_token(bearer(token))
    assert len(checks) == 1
    google.clock[0] += 3601  # past exp: the cache no longer vouches for it
    with pytest.raises(PushRejected, match="expired"):
        verifier.verify_token(bearer(token))


def test_cache_is_bounded(google: FakeGoogle, make_verifier: Callable[..., PushVerifier]) -> None:
    verifier = make_verifier(cache_size=8)
    for n in range(50):
        verifier.verify_token(bearer(google.token(sub=str(n))))
    assert len(verifier.tokens._cache) == 8  # type: ignore[arg-type]


def test_a_cached_token_does_not_vouch_for_a_variant(
    google: FakeGoogle, verifier: PushVerifier
) -> None:
    token = google.token()
    verifier.verify_token(bearer(token))
    header, payload, signature = token.split(".")
    with pytest.raises(PushRejected):
        verifier.verify_token(bearer(f"{header}.{payload}.{signature[:-2]}AA"))
