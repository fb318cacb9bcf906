"""Issue 22: `finding_id` is the same for the same asset, rule and cause, whatever the message
says; the CAI name and the subscription path are one asset."""

from __future__ import annotations

import dataclasses

from pushguard.rules import RULES, evaluate_rules
from pushguard.rules.facts import SubscriptionFacts
from pushguard.rules.identity import cause, finding_id

SUB = "projects/acme-orders/subscriptions/orders"


def _findings(endpoint: str, resource: str = SUB) -> dict[str, str]:
    facts = SubscriptionFacts(resource=resource, project_id="acme-orders", push_endpoint=endpoint)
    return {f.rule_id: f.finding_id for f in evaluate_rules(RULES, facts) if f.is_violation}


def test_same_asset_rule_and_cause_same_id_whatever_the_message() -> None:
    facts = SubscriptionFacts(
        resource=SUB, project_id="acme-orders", push_endpoint="http://a.example/"
    )
    [first] = [f for f in evaluate_rules(RULES, facts) if f.rule_id == "push-endpoint-https"]
    reworded = dataclasses.replace(first, message="Reworded: plain HTTP is not allowed.")
    assert reworded.finding_id == first.finding_id
    assert first.finding_id == _findings("http://a.example/")["push-endpoint-https"]
    assert first.finding_id.startswith("pg1-") and len(first.finding_id) == 28


def test_cai_name_and_subscription_path_are_one_asset() -> None:
    assert _findings("http://a.example/", "//pubsub.googleapis.com/" + SUB) == _findings(
        "http://a.example/"
    )


def test_another_asset_rule_or_cause_is_another_id() -> None:
    base = finding_id(SUB, "push-endpoint-https", cause("push_endpoint", {"host": "a"}))
    assert base != finding_id(
        SUB + "2", "push-endpoint-https", cause("push_endpoint", {"host": "a"})
    )
    assert base != finding_id(SUB, "push-auth-oidc", cause("push_endpoint", {"host": "a"}))
    assert base != finding_id(SUB, "push-endpoint-https", cause("push_endpoint", {"host": "b"}))
    # evidence order does not matter; parts cannot run into each other
    assert cause("f", {"a": "1", "b": "2"}) == cause("f", {"b": "2", "a": "1"})
    assert finding_id("ab", "c", "") != finding_id("a", "bc", "")
