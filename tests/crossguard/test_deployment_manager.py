"""Issue 34: the Deployment Manager adapter on its own (the end-to-end checks are in
tests/preview/test_deployment_manager.py, tests/analyze/test_deployment_manager_state.py,
tests/crossguard/test_deployment_manager_protocol.py and the routes scenario)."""

from __future__ import annotations

from typing import Any

import pytest

from pushguard.crossguard.facts import wire_facts
from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.crossguard.routes import cannot_check, canonical, unmapped_iam
from pushguard.crossguard.wire import UNKNOWN
from tests.deployment_manager import DEPLOYMENT, HTTP, target, urn


def deployment(content: str, **props: Any) -> WireResource:
    return WireResource(
        urn=urn("dm"),
        type=DEPLOYMENT,
        name="dm",
        props={**target(content), **props},
        provider_props={"project": "acme-provider"},
    )


def one(kind: str, properties: str, name: str = "s") -> str:
    body = "\n".join(f"    {line}" for line in properties.splitlines())
    return f"resources:\n- name: {name}\n  type: {kind}\n  properties:\n{body}\n"


PUSH = f"pushConfig:\n  pushEndpoint: {HTTP}"


def test_the_project_is_the_names_else_the_deployments_else_the_providers() -> None:
    path = one("pubsub.v1.subscription", f"name: projects/acme-vault/subscriptions/x\n{PUSH}")
    [named] = canonical(deployment(path, project="acme-web"))
    assert (named.props["project"], named.props["name"]) == ("acme-vault", "x")
    [own] = canonical(deployment(one("pubsub.v1.subscription", f"subscription: y\n{PUSH}")))
    assert wire_facts(own).facts.project_id == "acme-provider"
    [unknown] = canonical(deployment(one("pubsub.v1.subscription", PUSH), project=UNKNOWN))
    assert "project_id" in wire_facts(unknown).facts.unknown  # never the provider's instead


def test_a_subscription_is_named_apart_and_placed_on_the_deployment() -> None:
    two = one("pubsub.v1.subscription", PUSH, "a") + one("pubsub.v1.subscription", PUSH, "b")[10:]
    subs = canonical(deployment(two))
    assert [s.urn for s in subs] == [f"{urn('dm')}#a", f"{urn('dm')}#b"]
    assert {s.report_urn for s in subs} == {urn("dm")} and subs[0].type == SUBSCRIPTION_TYPE
    twice = one("pubsub.v1.subscription", PUSH, "a") + one("pubsub.v1.subscription", PUSH, "a")[10:]
    assert "needs a name of its own" in str(cannot_check(deployment(twice)))


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (one("pubsub.v1.subscription", f"push_config:\n  pushEndpoint: {HTTP}"), "'push_config'"),
        (one("pubsub.v1.subscription", f"pushConfig:\n  PushEndpoint: {HTTP}"), "PushEndpoint"),
        (
            one("pubsub.v1beta2.subscription", PUSH),
            "'pubsub.v1beta2.subscription') sets pushConfig",
        ),
        (one("my-project/composite:pubsub", "endpoint: x"), "template or composite type"),
        (one("pubsub.v1.subscription", "subscription: '{{ env[\"name\"] }}'"), "template syntax"),
        ("a: &x [*x]", "nests or repeats values"),
        ("- just\n- a list", "not a YAML mapping"),
    ],
)
def test_what_the_adapter_cannot_read_is_named(content: str, why: str) -> None:
    found = cannot_check(deployment(content))
    assert found is not None and why in found, found
    if "{{" not in content:  # a subscription read apart from the template syntax is checked too
        assert canonical(deployment(content)) == []


def test_a_reference_outside_the_fields_read_does_not_stop_the_check() -> None:
    content = one("pubsub.v1.subscription", f"topic: $(ref.orders.name)\n{PUSH}")
    assert cannot_check(deployment(content)) is None
    [sub] = canonical(deployment(content))
    assert wire_facts(sub).facts.push_endpoint == HTTP


def test_grants_inside_a_deployment_are_named_for_the_grant_rules() -> None:
    action = (
        "resources:\n- name: g\n  action: gcp-types/pubsub-v1:pubsub.projects.topics.setIamPolicy\n"
    )
    binding = (
        "resources:\n- name: b\n"
        "  type: gcp-types/cloudresourcemanager-v1:virtual.projects.iamMemberBinding\n"
    )
    assert "action" in str(unmapped_iam(deployment(action)))
    assert "iamMemberBinding" in str(unmapped_iam(deployment(binding)))
    assert "cannot read in full" in str(unmapped_iam(deployment("a: [")))
    assert unmapped_iam(deployment(one("pubsub.v1.subscription", PUSH))) is None


def test_a_repeated_key_is_refused_not_the_last_one_kept() -> None:
    """Found by the attacker trial: PyYAML keeps the last of two ``pushConfig`` keys; which one
    Deployment Manager keeps is not documented, so the configuration cannot be judged."""
    from pushguard.state.deployment_manager import ConfigError, parse_config

    content = (
        "resources:\n- name: s\n  type: pubsub.v1.subscription\n  properties:\n"
        "    pushConfig: {pushEndpoint: 'http://evil.example/p'}\n"
        "    pushConfig: {pushEndpoint: 'https://x-3kq2x7ab9c-ew.a.run.app/p'}\n"
    )
    with pytest.raises(ConfigError, match="repeats the key 'pushConfig'"):
        parse_config(content)
