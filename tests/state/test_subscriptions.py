"""What a state resource records of its subscription (:mod:`pushguard.state.subscriptions`): the
path per route and the push settings, with secrets and version 4 output values as Pulumi writes
them (the values an attacker or a broken state could put there included)."""

from __future__ import annotations

from typing import Any

from pushguard.state.document import OUTPUT_VALUE_SIG
from pushguard.state.subscriptions import (
    CROSSPLANE_SUBSCRIPTIONS,
    GCP_SUBSCRIPTION,
    KCC_SUBSCRIPTION,
    NATIVE_SUBSCRIPTION,
    PUSH_FIELDS,
    TERRAFORM_SUBSCRIPTIONS,
    recorded_subscription,
    recorded_subscriptions,
)
from tests.analyze.exports import SIG, encrypted, shown

PATH = "projects/acme-orders/subscriptions/orders"
PUSH = {"pushEndpoint": "https://a.example/push", "oidcToken": {"serviceAccountEmail": "A@x.com"}}


def test_the_path_of_each_route() -> None:
    assert recorded_subscription(GCP_SUBSCRIPTION, PATH, {}).path == PATH
    native = recorded_subscription(NATIVE_SUBSCRIPTION, "", {"name": PATH})
    assert native.path == PATH
    bridged = recorded_subscription(
        TERRAFORM_SUBSCRIPTIONS[1], "", {"project": "acme-orders", "name": "orders"}
    )
    assert bridged.path == PATH
    kcc = {
        "metadata": {"name": "k8s-name", "namespace": "team"},
        "spec": {"resourceID": "orders", "projectRef": {"external": "projects/acme-orders"}},
    }
    assert recorded_subscription(KCC_SUBSCRIPTION, "team/k8s-name", kcc).path == PATH
    assert recorded_subscription("gcp:pubsub/topic:Topic", PATH, {}) is None


def test_a_path_that_is_not_one_is_not_matched() -> None:
    for bad in ("projects/a/subscriptions/b/extra", "projects//subscriptions/b", "../x"):
        assert recorded_subscription(GCP_SUBSCRIPTION, bad, {"name": "b/../c"}).path is None


def test_secrets_encrypted_are_not_checked_and_plaintext_ones_are_marked() -> None:
    hidden = recorded_subscription(
        GCP_SUBSCRIPTION, PATH, {"pushConfig": {**PUSH, "oidcToken": encrypted("x")}}
    )
    assert hidden.not_checked == ("push_auth_account", "audience")
    assert hidden.settings["push_endpoint"] == "https://a.example/push"
    plain = recorded_subscription(GCP_SUBSCRIPTION, PATH, {"pushConfig": shown(PUSH)})
    assert plain.not_checked == () and set(plain.secret) >= {"push_endpoint", "push_auth_account"}
    assert plain.settings["push_auth_account"] == "a@x.com"
    whole = recorded_subscription(GCP_SUBSCRIPTION, encrypted(PATH), encrypted({"id": PATH}))
    assert whole.path is None  # below an encrypted secret: never guessed


def test_output_values_of_version_4() -> None:
    known = {SIG: OUTPUT_VALUE_SIG, "value": PUSH, "dependencies": []}
    assert (
        recorded_subscription(GCP_SUBSCRIPTION, PATH, {"pushConfig": known}).settings[
            "push_endpoint"
        ]
        == "https://a.example/push"
    )
    unknown = {SIG: OUTPUT_VALUE_SIG, "dependencies": ["urn:pulumi:a::b::c::d"]}
    record = recorded_subscription(GCP_SUBSCRIPTION, PATH, {"pushConfig": unknown})
    assert "push_endpoint" in record.not_checked


def test_a_malformed_plaintext_is_not_checked_not_trusted() -> None:
    broken = {SIG: "1b47061264138c4ac30d75fd1eb44270", "plaintext": "{not json"}
    record = recorded_subscription(GCP_SUBSCRIPTION, PATH, {"pushConfig": broken})
    assert "push_endpoint" in record.not_checked


DM = "gcp:deploymentmanager/deployment:Deployment"
DM_CONFIG = """resources:
- name: first
  type: pubsub.v1.subscription
  properties:
    subscription: first
    topic: $(ref.orders.name)
    pushConfig:
      pushEndpoint: https://a.example/push
      oidcToken: {serviceAccountEmail: A@x.com}
- name: second
  type: gcp-types/pubsub-v1:projects.subscriptions
  properties:
    name: projects/acme-other/subscriptions/second
    pushConfig: {pushEndpoint: $(ref.relay.url)}
- name: orders
  type: pubsub.v1.topic
  properties: {topic: orders}
"""


def _deployment(content: Any, **extra: Any) -> dict[str, Any]:
    return {"project": "acme-orders", "target": {"config": {"content": content}, **extra}}


def test_each_subscription_of_a_deployment_manager_config_is_recorded() -> None:
    assert recorded_subscription(DM, "d", _deployment(DM_CONFIG)) is None  # not one subscription
    first, second = recorded_subscriptions(DM, "d", _deployment(DM_CONFIG))
    assert (first.path, first.part) == ("projects/acme-orders/subscriptions/first", "first")
    assert first.settings["push_endpoint"] == "https://a.example/push"
    assert first.settings["push_auth_account"] == "a@x.com" and first.not_checked == ()
    assert second.path == "projects/acme-other/subscriptions/second"  # the project in its name
    assert second.not_checked == PUSH_FIELDS  # a reference is never read as itself


def test_what_a_deployment_manager_config_does_not_say_is_a_record_without_a_path() -> None:
    templated = _deployment(DM_CONFIG, imports=[{"name": "pubsub.jinja", "content": "x"}])
    *declared, rest = recorded_subscriptions(DM, "d", templated)
    assert len(declared) == 2 and rest.path is None and rest.not_checked == PUSH_FIELDS
    first, _ = recorded_subscriptions(DM, "d", _deployment(shown(DM_CONFIG)))
    assert "push_endpoint" in first.secret  # compared, never shown
    for unread in (encrypted(DM_CONFIG), "resources: [", shown("resources: [")):
        [only] = recorded_subscriptions(DM, "d", _deployment(unread))
        assert only.path is None and only.not_checked == PUSH_FIELDS, unread


def test_a_crossplane_subscription_as_upjet_creates_it() -> None:
    """Issue 34: the path from ``status.atProvider.id``, else the project and the external name;
    the push config from ``forProvider`` with what ``initProvider`` fills in (v1beta1 lists)."""
    v1beta1, _, namespaced = CROSSPLANE_SUBSCRIPTIONS
    outputs = {
        "metadata": {"name": "k8s-name", "annotations": {"crossplane.io/external-name": "orders"}},
        "spec": {
            "forProvider": {
                "project": "acme-orders",
                "pushConfig": [{"pushEndpoint": "https://a.example/push", "oidcToken": []}],
            },
            "initProvider": {"pushConfig": [{"oidcToken": [{"serviceAccountEmail": "A@x.com"}]}]},
        },
    }
    record = recorded_subscription(v1beta1, "k8s-name", outputs)
    assert record is not None and record.path == PATH
    assert record.settings["push_endpoint"] == "https://a.example/push"
    assert record.settings["push_auth_account"] == "a@x.com"
    observed = {"status": {"atProvider": {"id": PATH}}, "metadata": {"name": "x"}}
    assert recorded_subscription(namespaced, "team/x", observed).path == PATH
    unplaced = {"metadata": {"name": "orders"}, "spec": {"forProvider": {}}}
    assert recorded_subscription(namespaced, "team/orders", unplaced).path is None
