"""Property-based tests of endpoint classification against an independent WHATWG parser (Ada).

The security claim: whatever pushguard accepts, a WHATWG URL parser (what browsers, Node.js and
most HTTP stacks use) reads as the same scheme, host and port; and nothing that is not a Cloud Run
default URL to *both* parsers is classified as one.
"""

from __future__ import annotations

import ada_url
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pushguard.rules import RULES, SubscriptionFacts, evaluate
from pushguard.rules.endpoint import (
    EndpointError,
    cloud_run_default_url_form,
    parse_endpoint,
)

TOKENS = [
    "https://", "http://", "HTTPS://", "x.a.run.app", "orders-3kq2x7ab9c-ew.a.run.app",
    "svc-123456789012.europe-west1.run.app", "a.run.app", "run.app", "evil.example", "evilrun.app",
    "@", "\\", "/", "//", "#", "?", ":", ":443", ":8443", "%2e", "%40", ".", "。", "．", "ｘ",
    "[", "]", "::1", "127.0.0.1", "0x7f", "1", "-", "---", "xn--", " ", "\t", "\u200b", "\u00ad",
    "ß", "İ", "\u0131", "A", "token=1", "&", "..",
]  # fmt: skip


def whatwg(url: str) -> ada_url.URL | None:
    try:
        return ada_url.URL(url)
    except ValueError:
        return None


def assert_parsers_agree(raw: str) -> None:
    try:
        ours = parse_endpoint(raw)
    except EndpointError:
        return
    theirs = whatwg(raw)
    assert theirs is not None, f"pushguard accepted what a WHATWG parser rejects: {raw!r}"
    if ours.scheme in ("http", "https"):
        assert theirs.protocol == f"{ours.scheme}:"
        host = theirs.hostname.strip("[]").rstrip(".")
        assert host == ours.host, f"host disagreement on {raw!r}: {host!r} vs {ours.host!r}"
        default_port = ours.effective_port == (443 if ours.scheme == "https" else 80)
        assert theirs.port == ("" if default_port else str(ours.port))


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=10).map("".join))
@example("https://x.a.run.app@evil.example/")
@example("https://evil.example\\@x.a.run.app/")
@example("https://0x7f.1/")
@example("https://x。a.run.app/")
def test_accepted_urls_mean_the_same_to_a_whatwg_parser(raw: str) -> None:
    assert_parsers_agree(raw)


@settings(max_examples=1500)
@given(st.text(min_size=0, max_size=60))
def test_arbitrary_text_never_crashes_the_parser_or_the_rules(raw: str) -> None:
    assert_parsers_agree(raw)
    facts = SubscriptionFacts(
        resource="s", project_id="p", push_endpoint=raw, in_service_perimeter=True
    )
    for finding in evaluate(facts):
        assert finding.rule_id in {r.id for r in RULES}


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=10).map("".join))
def test_default_url_classification_only_for_run_app_hosts(raw: str) -> None:
    try:
        endpoint = parse_endpoint(raw)
    except EndpointError:
        return
    if cloud_run_default_url_form(endpoint) is None:
        return
    theirs = whatwg(raw)
    assert theirs is not None and theirs.protocol == "https:"
    host = theirs.hostname.rstrip(".")
    assert host.endswith(".run.app") and "evil" not in host
    assert theirs.port == ""
    assert theirs.username == "" and theirs.password == ""


labels = st.from_regex(r"[a-z][a-z0-9]{0,10}(-[a-z0-9]{1,6}){0,2}", fullmatch=True)
hashes = st.from_regex(r"[a-z0-9]{10}", fullmatch=True)
regions = st.sampled_from(["europe-west1", "us-central1", "asia-northeast1", "me-central2"])
codes = st.sampled_from(["ew", "uc", "an", "uk"])
tails = st.sampled_from(["", "/", "/push", "/a/b?x=1", "?v=2"])


def vary(url: str, upper: bool, dot: bool) -> str:
    scheme, _, rest = url.partition("://")
    host, slash, tail = rest.partition("/")
    host = (host.upper() if upper else host) + ("." if dot else "")
    return f"{scheme}://{host}{slash}{tail}"


@given(labels, hashes, codes, tails, st.booleans(), st.booleans())
def test_every_hash_form_url_is_a_default_url(service, hash_, code, tail, upper, dot) -> None:
    url = vary(f"https://{service}-{hash_}-{code}.a.run.app{tail}", upper, dot)
    assert cloud_run_default_url_form(parse_endpoint(url)) == "hash"


@given(labels, st.from_regex(r"[1-9][0-9]{5,11}", fullmatch=True), regions, tails, st.booleans())
def test_every_deterministic_url_is_a_default_url(service, number, region, tail, tagged) -> None:
    tag = "green---" if tagged else ""
    url = f"https://{tag}{service}-{number}.{region}.run.app{tail}"
    assert cloud_run_default_url_form(parse_endpoint(url)) == "deterministic"


@given(
    labels, hashes, codes, st.sampled_from(["evil.example", "run.app.evil.example", "a.run.app.x"])
)
def test_suffixing_a_default_url_makes_it_custom(service, hash_, code, suffix) -> None:
    url = f"https://{service}-{hash_}-{code}.a.run.app.{suffix}/"
    assert cloud_run_default_url_form(parse_endpoint(url)) is None


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("https://orders-3kq2x7ab9c-ew.a.run.app@evil.example/", "userinfo"),
        ("https://evil.example\\@orders-3kq2x7ab9c-ew.a.run.app/", "backslash"),
        ("https://orders-3kq2x7ab9c-ew.a.run.app%2eevil.example/", "percent-encoded"),
        ("https://0x7f.1/", "numeric host"),
        ("https://2130706433/", "numeric host"),
        ("https://[orders.a.run.app]/", "not a valid URL"),
        ("https://exa\u200bmple.com/", "control character"),
        ("https://example.com:99999/", "not a valid URL"),
        ("https://xn--zz.example/", "not a valid domain name"),
        ("https:///", "no host"),
        ("orders.a.run.app/push", "not an absolute URL"),
        ("https://" + "a" * 2100 + ".com/", "longer than"),
    ],
)
def test_adversarial_endpoints_are_rejected_with_the_reason(raw: str, reason: str) -> None:
    with pytest.raises(EndpointError, match=reason):
        parse_endpoint(raw)


@pytest.mark.parametrize(
    ("raw", "host"),
    [
        ("https://ORDERS-3KQ2X7AB9C-EW.A.RUN.APP./x", "orders-3kq2x7ab9c-ew.a.run.app"),
        ("https://ｏｒｄｅｒｓ-3kq2x7ab9c-ew.a.run.app/", "orders-3kq2x7ab9c-ew.a.run.app"),
        ("https://orders-3kq2x7ab9c-ew。a.run.app/", "orders-3kq2x7ab9c-ew.a.run.app"),
        ("https://bücher.example/", "xn--bcher-kva.example"),
        ("https://[2001:db8::1]:8443/", "2001:db8::1"),
    ],
)
def test_hosts_are_normalised_as_clients_resolve_them(raw: str, host: str) -> None:
    assert parse_endpoint(raw).host == host
