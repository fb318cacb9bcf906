"""Issue 20, part 3 and an "also found" item, over the Analyzer protocol as the Pulumi CLI drives
the pack.

At preview the engine sends an endpoint that IS a Cloud Run service's ``uri`` and one computed
from it the same way: the unknown sentinel with a property dependency on the service. Neither is
presumed to be the service's Google-issued URL: both are undecided, reported with the reason.
"""

from __future__ import annotations

import pytest

from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from tests.crossguard.test_protocol import PREVIEW_PREFIX, everything, settings_for_all
from tests.crossguard.wire import (
    ACCOUNT_URN,
    PROJECT,
    RUN_URN,
    account,
    push_config,
    resource,
    run_invoker,
    run_service,
    subscription,
    urn,
)
from tests.helpers import UNKNOWN

FUNCTION_V1_URN = urn("gcp:cloudfunctions/function:Function", "orders-fn")


def run_sub() -> AnalyzerResource:
    return subscription(pushConfig=push_config(endpoint=UNKNOWN), deps={"pushConfig": (RUN_URN,)})


@pytest.mark.parametrize("enforce", [False, True], ids=["warn", "enforce"])
def test_an_unknown_endpoint_from_a_cloud_run_service_is_undecided(
    pack: PolicyPackProcess, enforce: bool
) -> None:
    settings = {"unknownAtPreview": "enforce"} if enforce else {}
    pack.configure(settings_for_all(**settings))
    found = [
        d for d in everything(pack, [run_sub(), run_service()]) if d.policy == "push-endpoint-https"
    ]
    assert len(found) == 1, found
    if enforce:
        assert (found[0].level, found[0].urn) == ("mandatory", run_sub().urn)
        assert "could not be verified" in found[0].message
    else:
        assert found[0].level == "advisory" and found[0].message.startswith(PREVIEW_PREFIX)
    assert "gcp:cloudrunv2/service:Service 'orders'" in found[0].message


def test_in_a_perimeter_an_endpoint_from_a_cloud_run_service_is_undecided(
    pack: PolicyPackProcess,
) -> None:
    pack.configure(settings_for_all(perimeterProjects=[PROJECT], unknownAtPreview="enforce"))
    found = [
        d
        for d in everything(pack, [run_sub(), run_service()])
        if d.policy == "push-vpcsc-default-url"
    ]
    assert [(d.level, d.urn) for d in found] == [("mandatory", run_sub().urn)]


def test_the_service_behind_the_endpoint_is_still_found_for_the_invoker_grant(
    pack: PolicyPackProcess,
) -> None:
    """The endpoint stays undecided, but the service it depends on is still the invoker target:
    its grant is checked (here it is granted, so push-invoker-binding is silent)."""
    pack.configure({})
    resources = [run_sub(), run_service(), run_invoker(deps={"name": (RUN_URN,)})]
    found = everything(pack, resources)
    assert not [d for d in found if d.policy == "push-invoker-binding"], found


def test_a_first_gen_function_in_a_perimeter_still_fails_before_its_url_is_known(
    pack: PolicyPackProcess,
) -> None:
    pack.configure(settings_for_all(perimeterProjects=[PROJECT]))
    sub = subscription(
        pushConfig=push_config(endpoint=UNKNOWN), deps={"pushConfig": (FUNCTION_V1_URN,)}
    )
    fn = resource(
        "gcp:cloudfunctions/function:Function",
        "orders-fn",
        {"name": "orders-fn", "httpsTriggerUrl": UNKNOWN},
    )
    found = [d for d in everything(pack, [sub, fn]) if d.policy == "push-vpcsc-default-url"]
    assert [d.level for d in found] == ["mandatory"]
    assert "1st-gen Cloud Function" in found[0].message


# --- "also found": a can't-run reason is about the fact the rule needs, listed once -----------


def test_a_cant_run_reason_is_about_the_rules_fact_and_listed_once(
    pack: PolicyPackProcess,
) -> None:
    """The endpoint is unknown (from a load balancer) and three unrelated grants have unknown
    members: push-endpoint-https names only the endpoint's reason, once."""
    lb_urn = urn("gcp:compute/globalAddress:GlobalAddress", "lb")
    lb = resource("gcp:compute/globalAddress:GlobalAddress", "lb", {"address": UNKNOWN})
    sub = subscription(
        pushConfig=push_config(endpoint=UNKNOWN),
        deps={"pushConfig": (lb_urn,)},
        deadLetterPolicy={"deadLetterTopic": f"projects/{PROJECT}/topics/dead"},
    )
    grants = [
        resource(
            "gcp:pubsub/topicIAMMember:TopicIAMMember",
            "dead-publisher",
            {
                "topic": f"projects/{PROJECT}/topics/dead",
                "role": "roles/pubsub.publisher",
                "member": UNKNOWN,
            },
            property_dependencies={"member": (lb_urn,)},
        ),
        resource(
            "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember",
            "sub-subscriber",
            {"subscription": "orders", "role": "roles/pubsub.subscriber", "member": UNKNOWN},
            property_dependencies={"member": (lb_urn,)},
        ),
        resource(
            "gcp:projects/iAMMember:IAMMember",
            "project-viewer",
            {"project": PROJECT, "role": "roles/viewer", "member": UNKNOWN},
            property_dependencies={"member": (lb_urn,)},
        ),
    ]
    pack.configure({})
    found = [
        d
        for d in everything(pack, [sub, lb, account(), *grants])
        if d.policy == "push-endpoint-https"
    ]
    assert len(found) == 1, found
    message = found[0].message
    assert message.count("gcp:compute/globalAddress:GlobalAddress 'lb'") == 1, message
    assert "grant's member" not in message, message


def test_an_invoker_reason_is_listed_once(pack: PolicyPackProcess) -> None:
    """The invoker target's grants hold a member not known yet; so do grants on the account,
    the project and the subscription: push-invoker-binding says why once."""
    pack.configure({})
    unknown_member = {"member": (ACCOUNT_URN,)}
    resources = [
        run_sub(),
        run_service(),
        account(),
        run_invoker(member=UNKNOWN, deps={"name": (RUN_URN,), **unknown_member}),
        resource(
            "gcp:projects/iAMMember:IAMMember",
            "project-viewer",
            {"project": PROJECT, "role": "roles/viewer", "member": UNKNOWN},
            property_dependencies={
                "member": (urn("gcp:compute/globalAddress:GlobalAddress", "lb"),)
            },
        ),
    ]
    found = [d for d in everything(pack, resources) if d.policy == "push-invoker-binding"]
    assert len(found) <= 1, found
    for d in found:
        assert d.message.count("a grant's member is computed") <= 1, d.message
