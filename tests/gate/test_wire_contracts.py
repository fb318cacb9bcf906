"""The contracts that cross between the pack and its clients: URNs, not-checked entries and the
request scope."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pushguard.crossguard.not_checked import NotChecked, decode, encode
from pushguard.crossguard.scope import current_scope, request_scope
from pushguard.crossguard.secrets import scrub
from pushguard.crossguard.urn import (
    is_stack_urn,
    parse_urn,
    provider_urn,
    stack_urn,
    urn_name,
)

SUB = "urn:pulumi:dev::team::gcp:pubsub/subscription:Subscription::orders"


def test_a_name_may_hold_the_separator() -> None:
    urn = (
        "urn:pulumi:dev::team::pushguard:index:PushSubscription"
        "$gcp:pubsub/subscription:Subscription::a::b"
    )
    parts = parse_urn(urn)
    assert parts.name == "a::b" and urn_name(urn) == "a::b"
    assert parts.type == "gcp:pubsub/subscription:Subscription"
    assert parts.stack == "dev" and parts.project == "team"


@pytest.mark.parametrize(
    "text", ["", "urn:pulumi:dev::team::T", "urn:other:dev::team::T::n", "urn:pulumi:::team::T::n"]
)
def test_a_malformed_urn_is_refused_by_name(text: str) -> None:
    with pytest.raises(ValueError, match="is not a Pulumi URN"):
        parse_urn(text)
    assert urn_name(text) == text  # a diagnostic still names something


def test_stack_urns_and_provider_references() -> None:
    root = stack_urn("team", "dev")
    assert root == "urn:pulumi:dev::team::pulumi:pulumi:Stack::team-dev" and is_stack_urn(root)
    assert not is_stack_urn(SUB)
    reference = "urn:pulumi:dev::team::pulumi:providers:gcp::p::x::04da6b54-80e4"
    assert provider_urn(reference) == "urn:pulumi:dev::team::pulumi:providers:gcp::p::x"
    assert provider_urn("") == ""


urns = st.builds(
    lambda stack, name: f"urn:pulumi:{stack}::team::gcp:pubsub/subscription:Subscription::{name}",
    st.text(alphabet="abc-", min_size=1, max_size=5),
    st.text(min_size=1, max_size=30),
)


@given(
    policy=st.sampled_from(["push-sa-same-project", "push-invoker-binding"]),
    urn=urns | st.just(""),
    reason=st.text(max_size=60).filter(lambda r: " [urn:pulumi:" not in r),
)
def test_not_checked_entries_cross_the_protocol_unchanged(
    policy: str, urn: str, reason: str
) -> None:
    """Whatever the subscription is called (brackets, ``::``, newlines), the client gets back the
    entry the pack sent."""
    entry = NotChecked(policy, urn, reason)
    assert decode(*encode(entry)) == entry


def test_another_packs_reason_is_about_the_whole_stack() -> None:
    assert decode("other", "needs [config]") == NotChecked("other", "", "needs [config]")


def test_each_request_has_its_own_scope() -> None:
    """Concurrent requests on the server's threads never scrub with each other's secrets."""
    seen: dict[str, str] = {}
    barrier = threading.Barrier(2)

    def serve(name: str, secret: str) -> None:
        with request_scope({secret}):
            barrier.wait()
            seen[name] = scrub("alpha-secret beta-secret")

    threads = [
        threading.Thread(target=serve, args=("a", "alpha-secret")),
        threading.Thread(target=serve, args=("b", "beta-secret")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"a": "[secret] beta-secret", "b": "alpha-secret [secret]"}
    assert current_scope().secrets == frozenset() and current_scope().notes is None


def test_a_stack_request_collects_notes_and_shares_its_cache() -> None:
    with request_scope(stack=True) as scope:
        assert current_scope() is scope
        assert scope.notes is not None and scope.stack_cache == {}
    assert current_scope().stack_cache is None


def test_sarif_uris_are_uri_references() -> None:
    from pushguard.gate.sarif import uri

    assert uri("stacks/legacy.py") == "stacks/legacy.py"
    assert uri("my stacks/state #1?.json") == "my%20stacks/state%20%231%3F.json"
    assert uri("/tmp/a b/state.json") == "file:///tmp/a%20b/state.json"
