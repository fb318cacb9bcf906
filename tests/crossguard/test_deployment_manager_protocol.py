"""Issue 34 over the pack's Analyzer protocol, as the Pulumi CLI calls it: a Deployment Manager
deployment is analysed (the server's type filter lets it through), each push subscription of its
configuration is checked on the deployment's URN once (the resource and the stack halves agree),
a configuration the pack cannot read is a violation of every policy naming why, and IAM granted
inside a deployment leaves the grant rules not checked."""

from __future__ import annotations

from typing import Any

import pytest

from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY
from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from pushguard.rules import RULES
from tests.deployment_manager import (
    DEPLOYMENT,
    HTTP,
    PROJECT,
    TWO_SUBSCRIPTIONS,
    UNREADABLE,
    target,
    urn,
)
from tests.routes import policy_config

PROVIDER = {"project": PROJECT}


def _deployment(name: str, inputs: dict[str, Any]) -> AnalyzerResource:
    return AnalyzerResource(
        urn=urn(name), type=DEPLOYMENT, name=name, properties=inputs, provider=PROVIDER
    )


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_a_deployment_the_pack_cannot_read_violates_every_policy(
    pack: PolicyPackProcess, case: str
) -> None:
    inputs, why = UNREADABLE[case]
    pack.configure(policy_config())
    found = pack.analyze(_deployment(case, inputs))
    cannot = {d.policy: d for d in found if "cannot be checked" in d.message}
    applicable = {rule.id for rule in RULES if "pack" in rule.enforcement_points}
    assert set(cannot) == applicable, found
    assert all(why in d.message for d in cannot.values()), found
    assert cannot["push-endpoint-https"].level == "mandatory"


def test_each_subscription_of_a_deployment_is_reported_once_on_the_deployment(
    pack: PolicyPackProcess,
) -> None:
    orders = _deployment("orders", target(TWO_SUBSCRIPTIONS))
    pack.configure(policy_config())
    found = [d.urn or orders.urn for d in pack.analyze(orders) if d.policy == "push-endpoint-https"]
    found += [d.urn for d in pack.analyze_stack([orders]) if d.policy == "push-endpoint-https"]
    assert found == [orders.urn, orders.urn]  # first and second, each once, on the deployment


GRANTED = f"""resources:
- name: orders-push
  type: pubsub.v1.subscription
  properties:
    subscription: orders-push
    pushConfig:
      pushEndpoint: https://orders-111111111111.europe-west1.run.app/push
      oidcToken:
        serviceAccountEmail: orders-push@{PROJECT}.iam.gserviceaccount.com
  accessControl:
    gcpIamPolicy:
      bindings:
      - role: roles/pubsub.subscriber
        members:
        - serviceAccount:service-111111111111@gcp-sa-pubsub.iam.gserviceaccount.com
- name: http-push
  type: pubsub.v1.subscription
  properties:
    subscription: http-push
    pushConfig:
      pushEndpoint: {HTTP}
"""


def test_iam_granted_inside_a_deployment_leaves_the_grant_rules_not_checked(
    pack: PolicyPackProcess,
) -> None:
    orders = _deployment("orders", target(GRANTED))
    pack.configure(policy_config())
    found = {
        (d.policy, d.message.rsplit("\n", 1)[-1].split(":", 1)[0])
        for d in pack.analyze_stack([orders])
    }
    unread = {n.policy: n.reason for n in pack.not_applicable if n.urn == orders.urn}
    for rule in ("push-agent-token-creator", "push-invoker-binding"):
        assert (rule, "orders/orders-push") not in found
        assert "accessControl of Deployment Manager resource 'orders-push'" in unread[rule]
    assert ("push-endpoint-https", "orders/http-push") in found  # the other rules still run


SECRET_CONFIG = """resources:
- name: orders-push
  type: pubsub.v1.subscription
  properties:
    subscription: orders-push
    pushConfig:
      pushEndpoint: http://relay.acme-internal.example/push
      oidcToken:
        serviceAccountEmail: relay@acme-hidden.iam.gserviceaccount.com
"""


def test_a_configuration_held_as_a_secret_is_checked_and_its_values_never_shown(
    pack: PolicyPackProcess,
) -> None:
    secret = {SIG_KEY: SECRET_SIG, "value": SECRET_CONFIG}
    orders = _deployment("orders", {"target": {"config": {"content": secret}}})
    pack.configure(policy_config())
    found = pack.analyze(orders) + pack.analyze_stack([orders])
    assert {d.policy for d in found if d.level == "mandatory"} >= {
        "push-endpoint-https",
        "push-sa-same-project",
    }
    assert not [d for d in found if "acme-internal" in d.message or "acme-hidden" in d.message]
