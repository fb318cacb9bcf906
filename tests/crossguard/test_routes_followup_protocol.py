"""Follow-ups on issue 25 over the pack's Analyzer protocol, as the Pulumi CLI calls it: a
subscription type the pack cannot read is a violation of every policy (never a quiet pass), a
bridged subscription's snake_case keys are read as the Terraform bridge reads them, and a
Config Connector ``PubSubSubscriptionPatch`` is checked (the preview's end of these is in
tests/preview/test_routes_followup.py)."""

from __future__ import annotations

from typing import Any

import pytest

from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from tests.routes import policy_config

HTTP = {"pushEndpoint": "http://hooks.example.com/push"}


def _analyze(pack: PolicyPackProcess, kind: str, props: dict[str, Any]) -> dict[str, str]:
    """policy -> level of each ``Analyze`` diagnostic on one resource of type ``kind``."""
    package = kind.split(":", 1)[0]
    resource = AnalyzerResource(
        urn=f"urn:pulumi:dev::team::{kind}::s",
        type=kind,
        name="s",
        properties=props,
        provider={"project": "acme-web"},
        provider_type=f"pulumi:providers:{package}",
    )
    pack.configure(policy_config())
    return {d.policy: f"{d.level}: {d.message}" for d in pack.analyze(resource)}


def test_an_unmapped_subscription_type_is_a_violation_of_every_policy(pack) -> None:
    found = _analyze(
        pack,
        "google-native:pubsub/v1beta2:Subscription",
        {"project": "acme-web", "subscriptionId": "s", "topic": "t", "pushConfig": HTTP},
    )
    assert found["push-endpoint-https"].startswith("mandatory: ")
    assert (
        "s: cannot be checked: google-native:pubsub/v1beta2:Subscription"
        in (found["push-endpoint-https"])
    )
    assert found["push-auth-oidc"].startswith("mandatory: ")


def test_an_eventarc_trigger_is_no_violation(pack) -> None:
    assert _analyze(pack, "gcp:eventarc/trigger:Trigger", {"location": "europe-west1"}) == {}


@pytest.mark.parametrize(
    ("kind", "props"),
    [
        (
            "gcp:pubsub/subscription:Subscription",
            {"name": "s", "topic": "t", "push_config": {"push_endpoint": HTTP["pushEndpoint"]}},
        ),
        (
            "google-beta:index/pubsubSubscription:PubsubSubscription",
            {"name": "s", "topic": "t", "PushConfig": [{"PushEndpoint": HTTP["pushEndpoint"]}]},
        ),
        (
            "kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:PubSubSubscriptionPatch",
            {
                "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
                "kind": "PubSubSubscriptionPatch",
                "metadata": {
                    "name": "orders",
                    "annotations": {"cnrm.cloud.google.com/project-id": "acme-web"},
                },
                "spec": {"pushConfig": HTTP},
            },
        ),
    ],
    ids=["gcp-snake", "tf-beta-pascal-block-list", "kcc-patch"],
)
def test_the_resource_half_fails_an_http_endpoint_however_spelt(pack, kind, props) -> None:
    found = _analyze(pack, kind, props)
    assert "uses http://" in found["push-endpoint-https"], found
