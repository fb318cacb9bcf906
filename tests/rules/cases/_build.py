"""Builders shared by the per-rule case files: a case at each level, and the facts and resources
the cases are made of.

A *fact case* names the rule it must (``fail``) or must not (``pass``) trigger and the facts of
one subscription; a *wire case* names the policy, the resources of one stack as the Pulumi engine
sends them to a policy pack, and the pack settings given to every policy. Both are in the style of
Checkov/KICS fixtures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pushguard.rules import IamBinding, IamGrant, InvokerTarget
from tests.crossguard.wire import (
    ACCOUNT_URN,
    AGENT,
    NUMBER,
    PROJECT,
    PUSH_SA,
    RUN_URL,
    RUN_URN,
    UNKNOWN,
    AnalyzerResource,
    push_config,
    resource,
    subscription,
    urn,
)

# --- fact level ---------------------------------------------------------------------------------

BASE: dict[str, Any] = {
    "resource": "projects/acme-orders/subscriptions/orders",
    "project_id": "acme-orders",
    "project_number": "123456789012",
    "push_endpoint": RUN_URL,
    "push_auth_account": PUSH_SA,
    "audience": "orders-push",
}
"""The facts of a compliant push subscription; each case overrides some of them."""


@dataclass(frozen=True)
class FactCase:
    rule: str
    expect: str  # "pass" or "fail"
    name: str
    facts: dict[str, Any]
    message: tuple[str, ...] = ()
    """Texts every violation of a ``fail`` case must contain (what the user reads)."""

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.expect}:{self.name}"


def fact(
    rule: str, expect: str, name: str, *, message: tuple[str, ...] = (), **facts: Any
) -> FactCase:
    return FactCase(rule, expect, name, {**BASE, **facts}, message)


TOKEN = IamGrant(role="roles/iam.serviceAccountTokenCreator", member=AGENT, resource="sa")
SELF_TOKEN = IamGrant(
    role="roles/iam.serviceAccountTokenCreator",
    member=f"serviceAccount:{PUSH_SA}",
    resource=f"projects/acme-orders/serviceAccounts/{PUSH_SA}",
)
NO_NUMBER: dict[str, Any] = {"project_number": None}


def binding(*members: str, resource: str = "projects/acme-orders", **facts: Any) -> dict[str, Any]:
    """Facts with an authoritative binding of token creator (``*IAMBinding``, ``*IAMPolicy``) on
    ``resource``: the binding, and its members among the grants (with ``facts``' own grants)."""
    role = "roles/iam.serviceAccountTokenCreator"
    grants = tuple(IamGrant(role=role, member=m, resource=resource) for m in members)
    return {
        **facts,
        "push_auth_account_grants": (*facts.get("push_auth_account_grants", ()), *grants),
        "push_auth_account_bindings": (IamBinding(role=role, members=members, resource=resource),),
    }


V1_FUNCTION = InvokerTarget(kind="cloud-function-v1", name="orders")
INVOKER = IamGrant(role="roles/run.invoker", member=f"serviceAccount:{PUSH_SA}", resource="run")

# --- wire level ---------------------------------------------------------------------------------

NUMBERS = {"projectNumbers": {PROJECT: NUMBER}}
DETERMINISTIC = f"https://orders-{NUMBER}.europe-west1.run.app/"
SUB_URN = urn("gcp:pubsub/subscription:Subscription", "orders")
FUNCTION_URN = urn("gcp:cloudfunctions/function:Function", "orders")
TOKEN_CREATOR = "roles/iam.serviceAccountTokenCreator"
PUSHER = f"serviceAccount:{PUSH_SA}"
SELF_GRANT = ("push-auth service account itself", PUSH_SA, "should go to the Pub/Sub service agent")
REMOVES_AGENT = ("authoritative", "would remove the Pub/Sub service agent's token-creator grant")


@dataclass(frozen=True)
class WireCase:
    policy: str
    expect: str  # "pass" or "fail"
    name: str
    resources: tuple[AnalyzerResource, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    message: tuple[str, ...] = ()
    """Texts each violation of a ``fail`` case must contain (what the user reads)."""

    @property
    def id(self) -> str:
        return f"{self.policy}:{self.expect}:{self.name}"


def wire(
    policy: str,
    expect: str,
    name: str,
    *resources: AnalyzerResource,
    message: tuple[str, ...] = (),
    **settings: Any,
) -> WireCase:
    return WireCase(policy, expect, name, resources, settings, message)


def perimeter(
    *projects: str, services: tuple[str, ...] = ("pubsub.googleapis.com",)
) -> AnalyzerResource:
    return resource(
        "gcp:accesscontextmanager/servicePerimeter:ServicePerimeter",
        "perimeter",
        {
            "name": "accessPolicies/1/servicePerimeters/orders",
            "title": "orders",
            "status": {"resources": list(projects), "restrictedServices": list(services)},
        },
    )


def unknown_account_sub(**kw: Any) -> AnalyzerResource:
    return subscription(
        pushConfig=push_config(account=UNKNOWN), deps={"pushConfig": (ACCOUNT_URN,)}, **kw
    )


def cloud_run_sub(**kw: Any) -> AnalyzerResource:
    return subscription(
        pushConfig=push_config(endpoint=UNKNOWN), deps={"pushConfig": (RUN_URN,)}, **kw
    )


def function_v1_sub() -> AnalyzerResource:
    """A subscription pushing to the URL of the 1st-gen function below (unknown at preview)."""
    return subscription(
        pushConfig=push_config(endpoint=UNKNOWN), deps={"pushConfig": (FUNCTION_URN,)}
    )


def function_v1() -> AnalyzerResource:
    return resource(
        "gcp:cloudfunctions/function:Function",
        "orders",
        {
            "name": "orders",
            "region": "europe-west1",
            "runtime": "python312",
            "triggerHttp": True,
            "httpsTriggerUrl": UNKNOWN,
        },
    )


def project_binding(*members: str, role: str = TOKEN_CREATOR) -> AnalyzerResource:
    """An authoritative project-level binding: it sets every member of ``role`` on the project."""
    return resource(
        "gcp:projects/iAMBinding:IAMBinding",
        "token-creators",
        {"project": PROJECT, "role": role, "members": list(members)},
    )


def project_policy(*members: str) -> AnalyzerResource:
    """An authoritative project IAM policy that binds token creator."""
    data = {
        "bindings": [
            {"role": TOKEN_CREATOR, "members": list(members)},
            {"role": "roles/viewer", "members": ["group:all@example.com"]},
        ]
    }
    return resource(
        "gcp:projects/iAMPolicy:IAMPolicy",
        "project-policy",
        {"project": PROJECT, "policyData": json.dumps(data)},
    )


def dlq_sub() -> AnalyzerResource:
    return subscription(
        deadLetterPolicy={
            "deadLetterTopic": f"projects/{PROJECT}/topics/orders-dlq",
            "maxDeliveryAttempts": 10,
        }
    )


def dlq_grants() -> tuple[AnalyzerResource, ...]:
    return (
        resource(
            "gcp:pubsub/topicIAMMember:TopicIAMMember",
            "dlq-publisher",
            {
                "topic": f"projects/{PROJECT}/topics/orders-dlq",
                "role": "roles/pubsub.publisher",
                "member": AGENT,
            },
        ),
        resource(
            "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember",
            "dlq-subscriber",
            {"subscription": UNKNOWN, "role": "roles/pubsub.subscriber", "member": AGENT},
            property_dependencies={"subscription": (SUB_URN,)},
        ),
    )


EVENTARC_TRIGGER = "gcp:eventarc/trigger:Trigger"
TRIGGER_FACTS: dict[str, Any] = {
    "resource": "projects/acme-orders/locations/europe-west1/triggers/orders",
    "project_id": "acme-orders",
    "project_number": "123456789012",
    "kind": "eventarc-trigger",
    "trigger_destination": "httpEndpoint",
    "push_endpoint": "https://orders.acme.internal/events",
    "push_auth_account": PUSH_SA,
    "audience": None,
}
"""The facts of a compliant Eventarc trigger with an HTTP endpoint destination in the VPC
network; a case overrides some of them (see :func:`trigger_fact`)."""


def trigger_fact(
    rule: str, expect: str, name: str, *, message: tuple[str, ...] = (), **facts: Any
) -> FactCase:
    """A fact case about an Eventarc trigger (:data:`TRIGGER_FACTS` with ``facts``)."""
    return FactCase(rule, expect, f"eventarc: {name}", {**TRIGGER_FACTS, **facts}, message)


def eventarc_trigger(
    name: str = "orders",
    destination: dict[str, Any] | None = None,
    account: Any = PUSH_SA,
) -> AnalyzerResource:
    """A raw pulumi-gcp ``gcp.eventarc.Trigger`` (an HTTP endpoint destination in the VPC network
    and an account of its project unless overridden)."""
    props: dict[str, Any] = {
        "name": name,
        "location": "europe-west1",
        "matchingCriterias": [
            {"attribute": "type", "value": "google.cloud.pubsub.topic.v1.messagePublished"}
        ],
        "destination": destination or {"httpEndpoint": {"uri": "https://10.0.0.5/events"}},
        "serviceAccount": account,
    }
    return resource(EVENTARC_TRIGGER, name, {k: v for k, v in props.items() if v is not None})
