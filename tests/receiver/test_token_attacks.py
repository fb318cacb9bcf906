"""The attack corpus: forged, altered, misdirected and malformed tokens are all refused.

Each case states the status it must get (401 invalid token, 403 wrong identity) and the stable
code; none may be accepted, none may raise anything but ``PushRejected``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from pushguard.receiver import PushRejected, PushVerifier

from .conftest import AUDIENCE, DROP, EMAIL, FakeGoogle, b64url, b64url_json, bearer, wrapped_body


def test_a_genuine_token_is_accepted(google: FakeGoogle, verifier: PushVerifier) -> None:
    message = verifier.verify(bearer(google.token()), wrapped_body())
    assert message.token is not None
    assert message.token.email == EMAIL
    assert message.token.audience == AUDIENCE
    assert message.token.key_id == "k1"
    assert message.data == b'{"order": 42}'


@pytest.mark.parametrize("issuer", ["accounts.google.com", "https://accounts.google.com"])
def test_both_google_issuer_forms_are_accepted(
    google: FakeGoogle, verifier: PushVerifier, issuer: str
) -> None:
    assert verifier.verify_token(bearer(google.token(iss=issuer))).issuer == issuer


def test_a_token_signed_by_the_second_google_key_is_accepted(
    google: FakeGoogle, verifier: PushVerifier
) -> None:
    assert verifier.verify_token(bearer(google.token(kid="k2"))).key_id == "k2"


def test_an_hour_old_token_is_still_accepted(google: FakeGoogle, verifier: PushVerifier) -> None:
    token = google.token()
    google.clock[0] += 3600 - 1  # Pub/Sub reuses tokens for up to an hour
    assert verifier.verify_token(bearer(token)).email == EMAIL


def _unsigned(google: FakeGoogle, alg: str) -> str:
    return f"{b64url_json({'alg': alg, 'kid': 'k1', 'typ': 'JWT'})}.{b64url_json(google.claims())}."


def _hs256_with_public_key(google: FakeGoogle) -> str:
    """The classic key-confusion forgery: HMAC keyed with the RSA public key's PEM."""
    public_pem = (
        google.keys["k1"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    signing_input = f"{b64url_json({'alg': 'HS256', 'kid': 'k1'})}.{b64url_json(google.claims())}"
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(mac)}"


def _swap_payload(google: FakeGoogle, **claims: Any) -> str:
    """A genuine signature with a payload the attacker edited."""
    header, _, signature = google.token().split(".")
    return f"{header}.{b64url_json(google.claims(**claims))}.{signature}"


Case = Callable[[FakeGoogle, rsa.RSAPrivateKey], str]

ATTACKS: dict[str, tuple[Case, int, str]] = {
    "alg none, empty signature": (lambda g, _: _unsigned(g, "none"), 401, "wrong_algorithm"),
    "alg None spelled differently": (lambda g, _: _unsigned(g, "None"), 401, "wrong_algorithm"),
    "HS256 signed with the public key": (
        lambda g, _: _hs256_with_public_key(g),
        401,
        "wrong_algorithm",
    ),
    "RS512 header": (lambda g, _: g.token(header={"alg": "RS512"}), 401, "wrong_algorithm"),
    "ES256 header": (lambda g, _: g.token(header={"alg": "ES256"}), 401, "wrong_algorithm"),
    "unknown kid": (lambda g, _: g.token(header={"kid": "not-a-google-kid"}), 401, "unknown_key"),
    "no kid": (lambda g, _: _drop_kid(g), 401, "unknown_key"),
    "non-string kid": (lambda g, _: g.token(header={"kid": 1}), 401, "unknown_key"),
    "crit header": (lambda g, _: g.token(header={"crit": ["exp"]}), 401, "malformed_token"),
    "key that is not Google's, known kid": (
        lambda g, stranger: g.token(key=stranger),
        401,
        "bad_signature",
    ),
    "jwk header pointing at the attacker's key": (
        lambda g, stranger: g.token(
            key=stranger, header={"jwk": {"kty": "RSA", "n": "attacker", "e": "AQAB"}}
        ),
        401,
        "bad_signature",
    ),
    "edited payload, genuine signature": (
        lambda g, _: _swap_payload(g, email="attacker@evil.iam.gserviceaccount.com"),
        401,
        "bad_signature",
    ),
    "expired": (
        lambda g, _: g.token(exp=int(g.now()) - 31, iat=int(g.now()) - 3631),
        401,
        "token_expired",
    ),
    "issued in the future": (
        lambda g, _: g.token(iat=int(g.now()) + 600, exp=int(g.now()) + 4200),
        401,
        "token_not_yet_valid",
    ),
    "not before in the future": (
        lambda g, _: g.token(nbf=int(g.now()) + 600),
        401,
        "token_not_yet_valid",
    ),
    "exp as a string": (lambda g, _: g.token(exp=str(int(g.now()) + 3600)), 401, "malformed_token"),
    "exp true": (lambda g, _: g.token(exp=True), 401, "malformed_token"),
    "no exp": (lambda g, _: g.token(exp=DROP), 401, "malformed_token"),
    "no iat": (lambda g, _: g.token(iat=DROP), 401, "malformed_token"),
    "wrong issuer": (lambda g, _: g.token(iss="https://evil.example.com"), 401, "wrong_issuer"),
    "issuer with a trailing slash": (
        lambda g, _: g.token(iss="https://accounts.google.com/"),
        401,
        "wrong_issuer",
    ),
    "issuer http://": (lambda g, _: g.token(iss="http://accounts.google.com"), 401, "wrong_issuer"),
    "wrong audience": (
        lambda g, _: g.token(aud="https://other-abc123-ew.a.run.app/push"),
        401,
        "wrong_audience",
    ),
    "audience in upper case": (lambda g, _: g.token(aud=AUDIENCE.upper()), 401, "wrong_audience"),
    "audience with a trailing slash": (
        lambda g, _: g.token(aud=AUDIENCE + "/"),
        401,
        "wrong_audience",
    ),
    "audience without the path": (
        lambda g, _: g.token(aud="https://orders-abc123-ew.a.run.app"),
        401,
        "wrong_audience",
    ),
    "audience as a list": (lambda g, _: g.token(aud=[AUDIENCE]), 401, "wrong_audience"),
    "no audience": (lambda g, _: g.token(aud=DROP), 401, "wrong_audience"),
    "wrong email": (
        lambda g, _: g.token(email="attacker@evil-project.iam.gserviceaccount.com"),
        403,
        "wrong_account",
    ),
    "email in upper case": (lambda g, _: g.token(email=EMAIL.upper()), 403, "wrong_account"),
    "no email": (lambda g, _: g.token(email=DROP), 403, "wrong_account"),
    "email_verified false": (lambda g, _: g.token(email_verified=False), 403, "email_not_verified"),
    'email_verified "false"': (
        lambda g, _: g.token(email_verified="false"),
        403,
        "email_not_verified",
    ),
    'email_verified "true" (a string)': (
        lambda g, _: g.token(email_verified="true"),
        403,
        "email_not_verified",
    ),
    "no email_verified": (lambda g, _: g.token(email_verified=DROP), 403, "email_not_verified"),
    "signature truncated by ten bytes": (lambda g, _: _cut_signature(g), 401, "bad_signature"),
    "truncated mid-character": (lambda g, _: g.token()[:-21], 401, "malformed_token"),
    "signature cut off": (lambda g, _: g.token().rsplit(".", 1)[0], 401, "malformed_token"),
    "two tokens joined": (lambda g, _: g.token() + "." + g.token(), 401, "malformed_token"),
    "doubled with a space": (lambda g, _: g.token() + " " + g.token(), 401, "malformed_token"),
    "standard base64 padding": (lambda g, _: g.token() + "==", 401, "malformed_token"),
    "header not JSON": (
        lambda g, _: "bm90IGpzb24." + g.token().split(".", 1)[1],
        401,
        "malformed_token",
    ),
    "header a JSON array": (
        lambda g, _: b64url_json(["RS256"]) + "." + g.token().split(".", 1)[1],
        401,
        "malformed_token",
    ),
    "payload NaN": (
        lambda g, _: g.token().split(".")[0] + "." + b64url(b'{"exp": NaN}') + ".c2ln",
        401,
        "malformed_token",
    ),
    "over-long token": (lambda g, _: "a" * 10_000, 401, "malformed_token"),
    "non-ASCII": (lambda g, _: g.token().replace("e", "é", 1), 401, "malformed_token"),
}


def _cut_signature(google: FakeGoogle) -> str:
    header, payload, signature = google.token().split(".")
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    return f"{header}.{payload}.{b64url(raw[:-10])}"


def _drop_kid(google: FakeGoogle) -> str:
    _header, rest = google.token().split(".", 1)
    return b64url_json({"alg": "RS256", "typ": "JWT"}) + "." + rest


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_is_refused_with_its_status(
    name: str,
    google: FakeGoogle,
    stranger_key: rsa.RSAPrivateKey,
    verifier: PushVerifier,
) -> None:
    build, status, code = ATTACKS[name]
    token = build(google, stranger_key)
    with pytest.raises(PushRejected) as caught:
        verifier.verify(bearer(token), wrapped_body())
    assert (caught.value.status, caught.value.code) == (status, code)
    assert token not in caught.value.reason
    assert AUDIENCE not in caught.value.reason and EMAIL not in caught.value.reason


@pytest.mark.parametrize(
    ("authorization", "code"),
    [
        (None, "missing_token"),
        ("", "missing_token"),
        ("Basic dXNlcjpwYXNz", "malformed_token"),
        ("Bearer", "malformed_token"),
        ("Bearer ", "malformed_token"),
        ("Token abc.def.ghi", "malformed_token"),
    ],
)
def test_missing_or_non_bearer_authorization_is_401(
    verifier: PushVerifier, authorization: str | None, code: str
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    with pytest.raises(PushRejected) as caught:
        verifier.verify(headers, wrapped_body())
    assert (caught.value.status, caught.value.code) == (401, code)
    assert caught.value.www_authenticate == 'Bearer error="invalid_token"'


def test_bearer_scheme_is_case_insensitive(google: FakeGoogle, verifier: PushVerifier) -> None:
    assert verifier.verify_token({"authorization": f"bearer {google.token()}"}).email == EMAIL


def test_two_authorization_headers_are_refused(google: FakeGoogle, verifier: PushVerifier) -> None:
    class Repeated:
        def items(self) -> list[tuple[str, str]]:
            return [("Authorization", f"Bearer {google.token()}"), ("authorization", "Bearer x")]

    with pytest.raises(PushRejected) as caught:
        verifier.verify(Repeated(), wrapped_body())
    assert caught.value.status == 401


def test_clock_skew_is_honoured_at_both_ends(
    google: FakeGoogle, make_verifier: Callable[..., PushVerifier]
) -> None:
    verifier = make_verifier(clock_skew=60, cache_size=0)
    now = int(google.now())
    assert verifier.verify_token(bearer(google.token(exp=now - 59, iat=now - 3659)))
    assert verifier.verify_token(bearer(google.token(iat=now + 59, exp=now + 3659)))
    with pytest.raises(PushRejected, match="expired"):
        verifier.verify_token(bearer(google.token(exp=now - 61, iat=now - 3661)))
