"""Issue 35 item 1 over the pack's Analyzer protocol, as the Pulumi CLI calls it: a team that
imports the subscription Google made for a Cloud Build Pub/Sub trigger or a 1st-gen Cloud
Function (``pulumi import``, as the public Terraform exports do) is not blocked. Neither half
reports a diagnostic on it; ``AnalyzeStack`` answers it, for every policy, as not applicable
with the product (the protocol's ``PolicyNotApplicable``), which the preview and analyze read
back as Google-managed. A subscription that merely looks like Google's is judged as usual."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from pulumi.runtime import proto

from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from pushguard.rules import RULES
from tests.crossguard.wire import PROJECT, UNKNOWN, resource, subscription

HASH, TENANT = "474bedd44042ac656468400cd405245b", "wd98ee21ff09809b5p"
GCB = "rpc://name:CloudBuildPushEndpoint:gslb:google.pubsub.v1.cloudbuildpushendpoint-prod-global"
TERRAFORM = "google:index/pubsubSubscription:PubsubSubscription"


def gcf(topic: str, host: str = f"{HASH}-dot-{TENANT}-tp.appspot.com") -> str:
    return (
        f"https://{host}/_ah/push-handlers/pubsub/projects/{PROJECT}/topics/{topic}"
        "?pubsub_trigger=true"
    )


def imported(name: str, endpoint: Any, topic: Any, **kw: Any) -> AnalyzerResource:
    """A subscription as ``pulumi import`` writes it: the name, the full topic, the endpoint
    and no OIDC token."""
    full = topic if topic is UNKNOWN else f"projects/{PROJECT}/topics/{topic}"
    return subscription(
        name, topic=full, pushConfig={"pushEndpoint": endpoint}, ackDeadlineSeconds=600, **kw
    )


GOOGLES = {
    "gcb-deploy-on-release": (imported("gcb-deploy-on-release", GCB, "releases"), "Cloud Build"),
    "gcf-hype-bot-v1-europe-west1-hype-bot-v1": (
        imported("gcf-hype-bot-v1-europe-west1-hype-bot-v1", gcf("hype-bot-v1"), "hype-bot-v1"),
        "Cloud Functions (1st gen)",
    ),
    "tf-gcb": (
        resource(
            TERRAFORM,
            "tf-gcb",
            {
                "name": "gcb-nightly",
                "topic": f"projects/{PROJECT}/topics/nightly",
                "pushConfig": {"pushEndpoint": GCB},
            },
        ),
        "Cloud Build",
    ),
}
LOOK_ALIKES = {
    "gcf-evil-europe-west1-uploads": (
        imported(
            "gcf-evil-europe-west1-uploads",
            gcf("uploads", host=f"{HASH}-dot-{TENANT}-tp.appspot.com.evil.example"),
            "uploads",
        ),
        "push-auth-oidc",
    ),
    "gcb-exfil": (
        imported("gcb-exfil", "https://collector.evil.example/push", "releases"),
        "push-auth-oidc",
    ),
    "gcb-other-target": (
        imported("gcb-other-target", GCB.replace("CloudBuildPushEndpoint", "Evil"), "releases"),
        "push-endpoint-https",
    ),
    "gcf-userinfo-europe-west1-uploads": (
        imported(
            "gcf-userinfo-europe-west1-uploads",
            gcf("uploads", host=f"{HASH}-dot-{TENANT}-tp.appspot.com@evil.example"),
            "uploads",
        ),
        "push-endpoint-https",
    ),
    "gcf-other-topic-europe-west1-uploads": (
        imported("gcf-other-topic-europe-west1-uploads", gcf("payments"), "uploads"),
        "push-auth-oidc",
    ),
}
PACK_POLICIES = {rule.id for rule in RULES if "pack" in rule.enforcement_points}


@pytest.fixture(scope="module")
def answers(pack: PolicyPackProcess) -> tuple[list[Any], list[Any], Any]:
    """Each resource's ``Analyze`` diagnostics, then ``AnalyzeStack``'s: as decoded by the
    client the preview and analyze use, and the raw protocol answer."""
    stack = [r for r, _ in GOOGLES.values()] + [r for r, _ in LOOK_ALIKES.values()]
    pack.configure({})
    # The engine attributes an Analyze diagnostic without a URN to the analysed resource.
    found = [replace(d, urn=d.urn or r.urn) for r in stack for d in pack.analyze(r)]
    found += pack.analyze_stack(stack)
    decoded = (list(pack.google_managed), list(pack.not_applicable))
    raw = pack.stub.AnalyzeStack(
        proto.AnalyzeStackRequest(resources=[r.stack_resource() for r in stack])
    )
    return found, list(decoded), raw


def test_no_policy_reports_a_diagnostic_on_googles_subscriptions(answers) -> None:
    found, _, _ = answers
    on_google = [d for d in found if d.urn in {r.urn for r, _ in GOOGLES.values()}]
    assert on_google == []


def test_each_is_read_back_as_google_managed_with_its_product(answers) -> None:
    _, (managed, not_checked), _ = answers
    by_urn = {m.urn: m for m in managed}
    assert set(by_urn) == {r.urn for r, _ in GOOGLES.values()}
    for name, (r, product) in GOOGLES.items():
        assert by_urn[r.urn].product == product, name
    assert (
        "the Pub/Sub trigger 'deploy-on-release' in global"
        in by_urn[GOOGLES["gcb-deploy-on-release"][0].urn].reason
    )
    assert (
        "the Pub/Sub function 'hype-bot-v1' in europe-west1"
        in by_urn[GOOGLES["gcf-hype-bot-v1-europe-west1-hype-bot-v1"][0].urn].reason
    )
    assert not [n for n in not_checked if n.urn in by_urn], "not listed as not checked too"


def test_the_protocol_answer_is_policy_not_applicable_for_every_policy(answers) -> None:
    """The raw ``AnalyzeStack`` answer: no diagnostic, one ``PolicyNotApplicable`` per policy
    the pack runs, naming the subscription and the product, the URN at the end."""
    _, _, raw = answers
    urn = GOOGLES["gcb-deploy-on-release"][0].urn
    entries = [n for n in raw.not_applicable if n.reason.endswith(f" [{urn}]")]
    assert {n.policy_name for n in entries} == PACK_POLICIES
    assert all(
        n.reason.startswith("gcb-deploy-on-release: google-managed by Cloud Build: ")
        for n in entries
    )
    assert not [d for d in raw.diagnostics if d.urn == urn]


def test_look_alikes_are_judged_at_both_halves(pack: PolicyPackProcess, answers) -> None:
    found, (managed, _), _ = answers
    judged = {(d.policy, d.urn, d.level) for d in found}
    for name, (r, rule) in LOOK_ALIKES.items():
        assert (rule, r.urn, "mandatory") in judged, name
        assert r.urn not in {m.urn for m in managed}
        pack.configure({})
        alone = {(d.policy, d.level) for d in pack.analyze(r)}
        assert (rule, "mandatory") in alone, (name, alone)


def test_a_topic_not_known_at_preview_is_never_presumed_googles(pack: PolicyPackProcess) -> None:
    """At preview, a topic computed from a resource not created yet could be any topic: the
    subscription is judged (here: no OIDC token), never set aside as Google's."""
    sub = imported(
        "gcf-hype-bot-v1-europe-west1-hype-bot-v1",
        gcf("hype-bot-v1"),
        UNKNOWN,
        deps={"topic": (resource("gcp:pubsub/topic:Topic", "t", {}).urn,)},
    )
    pack.configure({})
    found = {(d.policy, d.level) for d in pack.analyze(sub) + pack.analyze_stack([sub])}
    assert ("push-auth-oidc", "mandatory") in found
    assert pack.google_managed == []
