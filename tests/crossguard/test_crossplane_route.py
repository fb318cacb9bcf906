"""Issue 34: the Crossplane (provider-upjet-gcp) adapter and the push-shaped search on their own
(the end-to-end checks: tests/routes.py's Crossplane scenario through the pack, the preview and
analyze, and test_unjudged_protocol.py)."""

from __future__ import annotations

from typing import Any

import pytest

from pushguard.components.push_subscription import TYPE_TOKEN
from pushguard.crossguard.facts import wire_facts
from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.routes import canonical, unmapped_iam
from pushguard.crossguard.routes.names import SpellingError
from pushguard.crossguard.routes.shaped import (
    COMPONENT_TYPE,
    MAX_VALUES,
    push_shaped,
    push_shaped_path,
)
from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY, UNKNOWN, WireShapeError

V1 = "kubernetes:pubsub.gcp.upbound.io/v1beta1:Subscription"
V2 = "kubernetes:pubsub.gcp.upbound.io/v1beta2:Subscription"
HTTPS, HTTP = "https://hooks.example.com/push", "http://hooks.example.com/push"
SA = "push@acme-web.iam.gserviceaccount.com"


def read(kind: str, spec: Any, **metadata: Any) -> WireResource:
    """The subscription ``canonical`` makes of a Crossplane object with ``spec``."""
    props = {"metadata": {"name": "k8s-name", **metadata}, "spec": spec}
    [sub] = canonical(WireResource(urn=f"urn:pulumi:d::p::{kind}::s", type=kind, name="s",
                                   props=props))  # fmt: skip
    return sub


def test_init_provider_fills_only_what_for_provider_leaves_empty() -> None:
    spec = {
        "forProvider": {"project": "acme-web", "pushConfig": [{"pushEndpoint": HTTPS}]},
        "initProvider": {
            "project": "elsewhere",
            "pushConfig": [{"pushEndpoint": HTTP, "oidcToken": [{"serviceAccountEmail": SA}]}],
        },
    }
    facts = wire_facts(read(V1, spec)).facts
    assert (facts.push_endpoint, facts.push_auth_account, facts.project_id) == (
        HTTPS,
        SA,
        "acme-web",
    )
    spec["forProvider"] = {"project": "acme-web", "pushConfig": {"pushEndpoint": ""}}
    spec["initProvider"] = {"pushConfig": {"pushEndpoint": HTTP}}
    assert wire_facts(read(V2, spec)).facts.push_endpoint == HTTP  # empty is filled in


def test_the_external_name_annotation_names_the_subscription() -> None:
    spec = {"forProvider": {"project": "p"}}
    assert read(V2, spec).props["name"] == "k8s-name"
    named = read(V2, spec, annotations={"crossplane.io/external-name": "orders"})
    assert named.props["name"] == "orders"


def test_a_topic_from_a_reference_is_unknown_and_the_project_is_never_presumed() -> None:
    spec = {"forProvider": {"deadLetterPolicy": {"deadLetterTopicRef": {"name": "dead"}}}}
    sub = read(V2, spec)
    assert wire_facts(sub).facts.dead_letter_topic == "a dead-letter topic not known yet"
    assert "ProviderConfig 'default'" in str(sub.no_project) and sub.no_default_project
    assert sub.project("acme-default") is None  # defaultProject does not stand in


def test_a_spec_not_known_yet_leaves_the_endpoint_unknown_and_a_bad_one_is_refused() -> None:
    assert "push_endpoint" in wire_facts(read(V2, UNKNOWN)).facts.unknown
    with pytest.raises(WireShapeError):
        read(V2, {"forProvider": "pushConfig"})
    with pytest.raises(SpellingError, match="push_config"):
        read(V2, {"forProvider": {"push_config": {"pushEndpoint": HTTP}}})


@pytest.mark.parametrize(
    ("kind", "unread"),
    [
        ("kubernetes:cloudplatform.gcp.upbound.io/v1beta1:ProjectIAMMember", True),
        ("kubernetes:cloudplatform.gcp.upbound.io/v1beta1:ServiceAccountIAMMember", True),
        ("kubernetes:pubsub.gcp.m.upbound.io/v1beta1:TopicIAMMember", True),
        ("kubernetes:cloudrun.gcp.upbound.io/v1beta1:ServiceIAMMember", True),
        ("kubernetes:storage.gcp.upbound.io/v1beta1:BucketIAMMember", False),
        ("kubernetes:cloudplatform.gcp.upbound.io/v1beta1:ProjectIAMCustomRole", False),
    ],
)
def test_crossplane_iam_on_what_the_grant_rules_read_is_named(kind: str, unread: bool) -> None:
    grant = WireResource(urn=f"urn:pulumi:d::p::{kind}::g", type=kind, name="g", props={})
    assert (unmapped_iam(grant) is not None) is unread


def test_the_exempt_component_is_pushguards_own() -> None:
    assert COMPONENT_TYPE == TYPE_TOKEN


@pytest.mark.parametrize(
    "key", ["pushConfig", "push_config", "PushConfig", "PUSH-ENDPOINT", "pushendpoint"]
)
def test_every_spelling_is_push_shaped(key: str) -> None:
    assert push_shaped_path({"a": [{"b": {key: {"x": 1}}}]}) == (f"a[0].b.{key}", "")


def test_the_endpoint_is_named_before_the_config_in_a_stable_order() -> None:
    props = {"z": {"pushConfig": {"pushEndpoint": HTTP}}, "a": {"pushConfig": None}}
    assert push_shaped_path(props) == ("z.pushConfig.pushEndpoint", "")
    assert push_shaped_path(dict(reversed(props.items()))) == ("z.pushConfig.pushEndpoint", "")
    secret = {SIG_KEY: SECRET_SIG, "value": {"push_endpoint": HTTP}}
    assert push_shaped_path({"spec": secret}) == ("spec.push_endpoint", "")


def test_what_is_too_large_to_search_is_push_shaped() -> None:
    """A push key the search would reach only after :data:`MAX_VALUES` values; a resource that
    does not mention one at all is read to the end as text, whatever its size."""
    wide = {"items": [{"pushConfig": {}}, *range(MAX_VALUES)]}
    found = push_shaped("acme:index/thing:Thing", "t", wide)
    assert found is not None and found.stopped == f"more than {MAX_VALUES} values"
    assert push_shaped("acme:index/thing:Thing", "t", wide, custom=False) is None
    assert push_shaped("acme:index/thing:Thing", "t", {"items": list(range(MAX_VALUES))}) is None
