"""The three pure adapters (component spec, Pulumi wire resource, joined audit row) give the same
facts for the same subscription, and the policy settings are laid over them the same way.

No Pulumi engine, no gRPC, no Spark: the adapters are called directly.
"""

from __future__ import annotations

from typing import Any

import pytest

from pushguard.audit.evaluate import facts_from_row
from pushguard.components.facts import component_facts
from pushguard.components.spec import validate_spec
from pushguard.crossguard.facts import subscription_facts, wire_facts
from pushguard.crossguard.graph import StackGraph
from pushguard.crossguard.resources import WireResource
from pushguard.policy import PackSettings
from pushguard.rules import evaluate
from pushguard.rules.accounts import member, pubsub_service_agent_email
from pushguard.rules.facts import SubscriptionFacts, TargetKind
from tests.helpers import NUMBER, PROJECT

ENDPOINT = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
SERVICE_URL = "https://orders-3kq2x7ab9c-ew.a.run.app"
ACCOUNT = f"orders-push@{PROJECT}.iam.gserviceaccount.com"
DEAD_LETTER = f"projects/{PROJECT}/topics/orders-dead-letter"
AGENT = member(pubsub_service_agent_email(NUMBER))
PUSHER = member(ACCOUNT)
SETTINGS = PackSettings.model_validate({"projectNumbers": {PROJECT: NUMBER}})


def _component() -> SubscriptionFacts:
    spec = validate_spec(
        "orders",
        {
            "project": PROJECT,
            "project_number": NUMBER,
            "topic": f"projects/{PROJECT}/topics/orders",
            "push_endpoint": ENDPOINT,
            "push_auth_service_account_email": ACCOUNT.replace("orders-push", "Orders-Push"),
            "audience": "orders-api",
            "target": {"kind": "cloud-run", "name": "orders", "location": "europe-west1"},
            "dead_letter": {"topic": DEAD_LETTER},
        },
    )
    return component_facts("orders", spec)


def _wire(urn_kind: str, name: str, props: dict[str, Any], **deps: tuple[str, ...]) -> WireResource:
    return WireResource(
        urn=f"urn:pulumi:dev::team::{urn_kind}::{name}",
        type=urn_kind,
        name=name,
        props=props,
        provider_props={"project": PROJECT},
        property_dependencies=deps,
    )


SUBSCRIPTION = _wire(
    "gcp:pubsub/subscription:Subscription",
    "orders",
    {
        "name": "orders",
        "topic": f"projects/{PROJECT}/topics/orders",
        "pushConfig": {
            "pushEndpoint": ENDPOINT,
            "oidcToken": {"serviceAccountEmail": ACCOUNT, "audience": "orders-api"},
        },
        "deadLetterPolicy": {"deadLetterTopic": DEAD_LETTER, "maxDeliveryAttempts": 5},
    },
)
STACK = [
    SUBSCRIPTION,
    _wire(
        "gcp:cloudrunv2/service:Service",
        "orders-svc",
        {"name": "orders", "location": "europe-west1", "uri": SERVICE_URL},
    ),
    _wire(
        "gcp:serviceaccount/iAMMember:IAMMember",
        "token-creator",
        {
            "serviceAccountId": f"projects/{PROJECT}/serviceAccounts/{ACCOUNT}",
            "role": "roles/iam.serviceAccountTokenCreator",
            "member": AGENT,
        },
    ),
    _wire(
        "gcp:cloudrunv2/serviceIamMember:ServiceIamMember",
        "invoker",
        {
            "name": "orders",
            "location": "europe-west1",
            "role": "roles/run.invoker",
            "member": PUSHER,
        },
    ),
    _wire(
        "gcp:pubsub/topicIAMMember:TopicIAMMember",
        "dl-publisher",
        {"topic": DEAD_LETTER, "role": "roles/pubsub.publisher", "member": AGENT},
    ),
    _wire(
        "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember",
        "dl-subscriber",
        {"subscription": "orders", "role": "roles/pubsub.subscriber", "member": AGENT},
        subscription=(SUBSCRIPTION.urn,),
    ),
]


def _grant(role: str, who: str, resource: str) -> dict[str, Any]:
    return {"role": role, "member": who, "resource": resource, "condition": None}


ROW: dict[str, Any] = {
    "asset_name": f"//pubsub.googleapis.com/projects/{PROJECT}/subscriptions/orders",
    "project_id": PROJECT,
    "project_number": "",  # CAI may not carry it: the policy config's projectNumbers fills it
    "ancestors": [f"projects/{NUMBER}", "organizations/1"],
    "push_endpoint": ENDPOINT,
    "push_auth_account": ACCOUNT,
    "audience": "orders-api",
    "exactly_once_delivery": False,
    "dead_letter_topic": DEAD_LETTER,
    "in_service_perimeter": False,
    "account_grants": [
        _grant("roles/iam.serviceAccountTokenCreator", AGENT, f"projects/{PROJECT}/sa/{ACCOUNT}")
    ],
    "target_kind": "cloud-run",
    "target_name": "orders",
    "target_grants": [_grant("roles/run.invoker", PUSHER, "run/orders")],
    "dead_letter_grants": [_grant("roles/pubsub.publisher", AGENT, DEAD_LETTER)],
    "subscription_grants": [_grant("roles/pubsub.subscriber", AGENT, "sub/orders")],
}


def _core(facts: SubscriptionFacts) -> dict[str, Any]:
    """What the rules read, without the names each source gives the subscription and its grants."""
    target = facts.invoker_target

    def grants(collected: Any) -> Any:
        return None if collected is None else sorted((g.role, g.member) for g in collected)

    return {
        **facts.model_dump(
            include={
                "project_id",
                "project_number",
                "push_endpoint",
                "push_auth_account",
                "audience",
                "exactly_once_delivery",
                "dead_letter_topic",
                "in_service_perimeter",
                "unknown",
            }
        ),
        "target": None if target is None else (target.kind, target.name),
        "account_grants": grants(facts.push_auth_account_grants),
        "target_grants": grants(target.grants if target else None),
        "dead_letter_grants": grants(facts.dead_letter_topic_grants),
        "subscription_grants": grants(facts.subscription_grants),
        "verdicts": sorted((f.rule_id, f.status.value) for f in evaluate(facts)),
    }


def test_component_wire_and_row_give_equal_facts() -> None:
    component = _component()
    wire = subscription_facts(SUBSCRIPTION, SETTINGS, StackGraph.build(STACK, SETTINGS)).facts
    row = SETTINGS.apply(facts_from_row(ROW))

    assert _core(component) == _core(wire) == _core(row)
    assert component.push_auth_account == ACCOUNT  # normalised where the facts are made
    assert _core(row)["verdicts"] == []  # a compliant subscription: nothing to report


def test_a_public_invoker_grant_on_the_target_gives_one_verdict_in_the_pack_and_the_audit() -> None:
    """push-target-requires-auth reads the target's grants as both adapters collect them (the
    component never sees them: its facts above, with only its own grant, decide nothing)."""
    public = _wire(
        "gcp:cloudrunv2/serviceIamMember:ServiceIamMember",
        "public",
        {
            "name": "orders",
            "location": "europe-west1",
            "role": "roles/run.invoker",
            "member": "allUsers",
        },
    )
    stack = [*STACK, public]
    wire = subscription_facts(SUBSCRIPTION, SETTINGS, StackGraph.build(stack, SETTINGS)).facts
    row = {
        **ROW,
        "target_grants": [
            *ROW["target_grants"],
            _grant("roles/run.invoker", "allUsers", "run/orders"),
        ],
    }
    facts = SETTINGS.apply(facts_from_row(row))
    assert _core(wire) == _core(facts)
    assert _core(facts)["verdicts"] == [("push-target-requires-auth", "violation")]


def test_without_the_stack_the_wire_facts_say_grants_were_not_collected() -> None:
    alone = subscription_facts(SUBSCRIPTION, SETTINGS).facts
    assert alone.push_auth_account_grants is None and alone.invoker_target is None
    # ... and so the IAM rules cannot decide, rather than pass or fail.
    undecided = {f.rule_id for f in evaluate(alone) if not f.is_violation}
    assert {
        "push-agent-token-creator",
        "push-invoker-binding",
        "push-target-requires-auth",
    } <= undecided


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, {"project_number": None, "in_service_perimeter": False}),
        ({"projectNumbers": {PROJECT: NUMBER}}, {"project_number": NUMBER}),
        ({"perimeterProjects": [PROJECT]}, {"in_service_perimeter": True}),
        (
            {"perimeterProjects": [f"projects/{NUMBER}"], "projectNumbers": {PROJECT: NUMBER}},
            {"in_service_perimeter": True, "project_number": NUMBER},
        ),
        ({"tokenCreatorGrantedProjects": [PROJECT]}, {"token_creator_known_granted": True}),
        (
            {"exemptEndpointPrefixes": ["rpc://legacy/"]},
            {"exempt_endpoint_prefixes": ("rpc://legacy/",)},
        ),
    ],
)
def test_one_overlay_gives_the_same_settings_to_every_adapter(
    given: dict[str, Any], expected: dict[str, Any]
) -> None:
    settings = PackSettings.model_validate(given)
    read_wire = wire_facts(SUBSCRIPTION).facts
    read_row = facts_from_row({**ROW, "project_number": None})
    for facts in (settings.apply(read_wire), settings.apply(read_row)):
        for field, value in expected.items():
            assert getattr(facts, field) == value, field


def test_settings_only_add_knowledge() -> None:
    known = SubscriptionFacts(
        resource="r",
        project_id=PROJECT,
        project_number="42",
        in_service_perimeter=True,
        token_creator_known_granted=True,
    )
    applied = SETTINGS.apply(known)  # maps PROJECT to another number, lists no perimeter
    assert applied.project_number == "42"
    assert applied.in_service_perimeter and applied.token_creator_known_granted


def test_the_target_kinds_are_one_type_across_adapters() -> None:
    assert _component().invoker_target is not None
    assert _component().invoker_target.kind is TargetKind.CLOUD_RUN  # type: ignore[union-attr]
    target = facts_from_row(ROW).invoker_target
    assert target is not None and target.kind is TargetKind.CLOUD_RUN
    external = facts_from_row({**ROW, "target_kind": None, "push_endpoint": "https://x.example/"})
    assert external.invoker_target is not None
    assert external.invoker_target.kind is TargetKind.EXTERNAL
