"""What the receiver refuses at start-up, where it believes it runs, and how the key source
behaves for operators: a fetch in flight never holds up a push, and every failure is logged."""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field

import pytest

from pushguard.receiver import GoogleKeySource, PushRejected, PushVerifier
from pushguard.receiver.platform import cloud_run_service
from pushguard.receiver.testing import LocalIssuer, cloud_run_environ, strip_signature

AUDIENCE = "https://orders-3kq2x7ab9c-ew.a.run.app"
ACCOUNT = "orders-push@acme-orders.iam.gserviceaccount.com"


@pytest.fixture(scope="module")
def issuer() -> LocalIssuer:
    return LocalIssuer()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"audience": AUDIENCE + " "}, "audience"),
        ({"audience": "\t" + AUDIENCE}, "audience"),
        ({"service_account_email": "serviceAccount:" + ACCOUNT}, "an IAM member; give the email"),
        ({"service_account_email": ACCOUNT + "\n"}, "not an email address"),
        ({"service_account_email": "orders-push"}, "not an email address"),
        ({"audience": AUDIENCE + "\u200b"}, "invisible character"),
        (
            {"service_account_email": "projects/-/serviceAccounts/" + ACCOUNT},
            "not an email address",
        ),
        ({"service_account_email": "principal://iam.googleapis.com/x"}, "not an email address"),
        (
            {"payload_format": "unwrapped", "attribute_headers": ["TenantId"]},
            "arrives as 'tenantid'",
        ),
        ({"payload_format": "unwrapped", "attribute_headers": ["host"]}, "request itself"),
    ],
    ids=[
        "audience-space",
        "audience-tab",
        "member-prefix",
        "email-newline",
        "no-at",
        "zero-width",
        "resource-name",
        "principal",
        "case",
        "transport-header",
    ],
)
def test_configuration_that_would_refuse_every_push_is_refused_at_start_up(
    issuer: LocalIssuer, options: dict[str, object], named: str
) -> None:
    settings: dict[str, object] = {"audience": AUDIENCE, "service_account_email": ACCOUNT}
    settings.update(options)
    with pytest.raises(ValueError, match=named):
        PushVerifier(keys=issuer.certs, **settings)  # type: ignore[arg-type]


def test_wsgi_adapters_refuse_attribute_headers_that_wsgi_servers_drop(
    issuer: LocalIssuer,
) -> None:
    from pushguard.receiver.flask import push_handler
    from pushguard.receiver.functions_framework import push_function

    verifier = PushVerifier(
        AUDIENCE,
        ACCOUNT,
        keys=issuer.certs,
        payload_format="unwrapped",
        attribute_headers=["tenant_id"],
    )
    for decorator in (push_handler, push_function):
        with pytest.raises(ValueError, match=r"'tenant_id'.*drop"):
            decorator(verifier)(lambda message: None)


@pytest.mark.parametrize(
    ("environ", "on_cloud_run", "named"),
    [
        (cloud_run_environ(), True, ""),
        ({}, False, "K_SERVICE, K_REVISION, K_CONFIGURATION not set"),
        ({"K_SERVICE": "orders"}, False, "K_REVISION, K_CONFIGURATION not set"),
        ({**cloud_run_environ(), "KUBERNETES_SERVICE_HOST": "10.0.0.1"}, False, "Kubernetes"),
    ],
    ids=["cloud-run", "laptop", "partial", "knative-on-gke"],
)
def test_the_mode_behind_cloud_run_iam_is_refused_where_it_cannot_be_safe(
    issuer: LocalIssuer, environ: dict[str, str], on_cloud_run: bool, named: str
) -> None:
    assert cloud_run_service(environ)[0] is on_cloud_run
    if on_cloud_run:
        verifier = PushVerifier(
            AUDIENCE, ACCOUNT, keys=issuer.certs, behind_cloud_run_iam=True, environ=environ
        )
        stripped = strip_signature(issuer.token(AUDIENCE, ACCOUNT))
        claims = verifier.tokens.verify(stripped)
        assert (claims.email, claims.signature_removed) == (ACCOUNT, True)
        assert verifier.tokens.verify(issuer.token(AUDIENCE, ACCOUNT)).signature_removed is False
        return
    with pytest.raises(ValueError, match=named):
        PushVerifier(
            AUDIENCE, ACCOUNT, keys=issuer.certs, behind_cloud_run_iam=True, environ=environ
        )


def test_in_the_mode_only_the_exact_marker_stands_for_a_signature(issuer: LocalIssuer) -> None:
    verifier = PushVerifier(
        AUDIENCE, ACCOUNT, keys=issuer.certs, behind_cloud_run_iam=True, environ=cloud_run_environ()
    )
    header, payload, _ = issuer.token(AUDIENCE, ACCOUNT).split(".")
    for signature in ("signature_removed_by_google", "SIGNATURE_REMOVED_BY_GOOGLE_", "", "AAAA"):
        with pytest.raises(PushRejected) as refused:
            verifier.tokens.verify(f"{header}.{payload}.{signature}")
        assert refused.value.code in {"malformed_token", "bad_signature"}
    none_header = strip_signature(issuer.token(AUDIENCE, ACCOUNT)).split(".")
    none_header[0] = "eyJhbGciOiJub25lIiwia2lkIjoicHVzaGd1YXJkLWxvY2FsIn0"  # alg none
    with pytest.raises(PushRejected, match="RS256"):
        verifier.tokens.verify(".".join(none_header))


def test_a_stripped_token_is_logged_once_with_where_to_read(
    issuer: LocalIssuer, caplog: pytest.LogCaptureFixture
) -> None:
    verifier = PushVerifier(AUDIENCE, ACCOUNT, keys=issuer.certs)
    stripped = strip_signature(issuer.token(AUDIENCE, ACCOUNT))
    with caplog.at_level(logging.ERROR, logger="pushguard.receiver"):
        for _ in range(3):
            with pytest.raises(PushRejected) as refused:
                verifier.tokens.verify(stripped)
            assert (refused.value.status, refused.value.code) == (401, "signature_removed")
    logged = [r.getMessage() for r in caplog.records if "SIGNATURE_REMOVED" in r.getMessage()]
    assert len(logged) == 1
    assert "receiver-platforms.md#behind-cloud-run-iam" in logged[0]


@dataclass
class _Response:
    status: int
    data: bytes
    headers: dict[str, str] = field(default_factory=lambda: {"Cache-Control": "max-age=3600"})


class _SlowEndpoint:
    """Answers the first fetch at once; later ones block until released (a slow endpoint)."""

    def __init__(self, document: dict[str, str]) -> None:
        self.document = json.dumps(document).encode()
        self.fetches = 0
        self.release = threading.Event()

    def __call__(self, url: str) -> _Response:
        self.fetches += 1
        if self.fetches > 1:
            self.release.wait(timeout=30)
        return _Response(200, self.document)


def test_a_fetch_in_flight_never_holds_up_a_push(issuer: LocalIssuer) -> None:
    clock = [1_800_000_000.0]
    endpoint = _SlowEndpoint(issuer.certs)
    keys = GoogleKeySource(fetch=endpoint, clock=lambda: clock[0])
    assert keys.key(issuer.kid) is not None  # cached
    clock[0] += 10  # past the rate limit: the next unknown kid refetches
    slow = threading.Thread(target=keys.key, args=("made-up-1",))
    slow.start()
    while endpoint.fetches < 2:
        threading.Event().wait(0.01)
    answers: list[object] = []
    quick = threading.Thread(
        target=lambda: answers.extend([keys.key("made-up-2"), keys.key(issuer.kid)])
    )
    quick.start()
    quick.join(timeout=10)
    finished_while_fetching = not quick.is_alive()
    endpoint.release.set()
    slow.join(timeout=10)
    quick.join(timeout=10)
    assert finished_while_fetching
    assert answers[0] is None and answers[1] is not None
    assert endpoint.fetches == 2  # the second unknown kid did not fetch again


def test_a_failed_fetch_is_logged_with_its_cause(
    issuer: LocalIssuer, caplog: pytest.LogCaptureFixture
) -> None:
    keys = GoogleKeySource(fetch=lambda url: _Response(500, b"oops"), clock=lambda: 1.8e9)
    verifier = PushVerifier(AUDIENCE, ACCOUNT, keys=keys, clock=lambda: 1.8e9)
    with (
        caplog.at_level(logging.WARNING, logger="pushguard.receiver"),
        pytest.raises(PushRejected) as refused,
    ):
        verifier.tokens.verify(issuer.token(AUDIENCE, ACCOUNT))
    assert refused.value.code == "keys_unavailable"
    messages = [record.getMessage() for record in caplog.records]
    assert any("HTTP 500" in m and "503 keys_unavailable" in m for m in messages), messages
    assert all("eyJ" not in m for m in messages)  # no token in the log


@pytest.mark.parametrize(
    "options",
    [
        {"behind_cloud_run_iam": "false", "environ": cloud_run_environ()},
        {"behind_cloud_run_iam": 1, "environ": cloud_run_environ()},
        {"payload_format": "unwrapped", "attribute_headers": "tenant-id"},
    ],
    ids=["mode-string", "mode-int", "headers-string"],
)
def test_arguments_of_the_wrong_type_are_refused_not_read_loosely(
    issuer: LocalIssuer, options: dict[str, object]
) -> None:
    with pytest.raises(TypeError):
        PushVerifier(AUDIENCE, ACCOUNT, keys=issuer.certs, **options)  # type: ignore[arg-type]


def test_an_empty_kubernetes_variable_still_marks_a_pod() -> None:
    assert cloud_run_service({**cloud_run_environ(), "KUBERNETES_SERVICE_HOST": ""})[0] is False


def test_headers_may_be_given_as_pairs(issuer: LocalIssuer) -> None:
    verifier = PushVerifier(AUDIENCE, ACCOUNT, keys=issuer.certs)
    pairs = [("Authorization", f"Bearer {issuer.token(AUDIENCE, ACCOUNT)}")]
    assert verifier.verify_token(pairs).email == ACCOUNT
