"""Issue 34, "the pack passes nothing it has not judged", over the pack's Analyzer protocol as the
Pulumi CLI calls it: a resource of a type no route maps whose properties are shaped like a push
configuration, and a subscription of a known type pushguard does not map, are "cannot be checked"
at the mandatory level even with every policy set to advisory (the preview's and analyze's end
is in tests/preview/test_unjudged.py and tests/analyze/test_unjudged_state.py)."""

from __future__ import annotations

from typing import Any

from pushguard.gate.analyzer import AnalyzerResource, Diagnostic, PolicyPackProcess
from pushguard.rules import RULES
from tests.routes import policy_config

HTTP = "http://hooks.example.com/push"
ADVISORY = policy_config(enforcementLevel="advisory")
ENABLED = {rule.id for rule in RULES if "pack" in rule.enforcement_points}


def resource(kind: str, name: str, props: dict[str, Any], **kw: Any) -> AnalyzerResource:
    """A resource with its package's provider (a custom resource), unless ``provider=None``."""
    kw.setdefault("provider", {})
    kw.setdefault("provider_type", f"pulumi:providers:{kind.split(':', 1)[0]}")
    return AnalyzerResource(
        urn=f"urn:pulumi:dev::team::{kind}::{name}", type=kind, name=name, properties=props, **kw
    )


THING = resource(
    "kubernetes:example.com/v1:Thing",
    "thing",
    {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "thing"},
     "spec": {"x": [{"push_endpoint": HTTP}]}},
)  # fmt: skip
PUSH_SCHEMA = {"properties": {"pushConfig": {"type": "object"}}}
QUEUE = resource(
    "acme:index/queue:Queue", "queue", {"name": "orders", "PushConfig": {"Endpoint": HTTP}}
)


def _analyze(pack: PolicyPackProcess, *resources: AnalyzerResource) -> list[Diagnostic]:
    return [d for r in resources for d in pack.analyze(r)]


def test_a_push_shaped_resource_of_an_unknown_type_is_mandatory_with_every_policy_advisory(
    pack: PolicyPackProcess,
) -> None:
    """Before: no diagnostic at all (the server did not even pass the request on)."""
    pack.configure(ADVISORY)
    for found, path in ((THING, "spec.x[0].push_endpoint"), (QUEUE, "PushConfig")):
        diagnostics = _analyze(pack, found)
        assert {d.policy for d in diagnostics} == ENABLED, found.type
        assert {d.level for d in diagnostics} == {"mandatory"}
        assert all(f"cannot be checked: {found.type}" in d.message for d in diagnostics)
        assert all(f"({path})" in d.message for d in diagnostics)


def test_a_known_unmapped_subscription_type_is_mandatory_with_every_policy_advisory(
    pack: PolicyPackProcess,
) -> None:
    """Before: the policies' level, advisory: the CLI passed it with a warning."""
    pack.configure(ADVISORY)
    b2 = resource(
        "google-native:pubsub/v1beta2:Subscription",
        "b2",
        {"project": "acme-web", "subscriptionId": "b2", "topic": "t",
         "pushConfig": {"pushEndpoint": HTTP}},
    )  # fmt: skip
    diagnostics = _analyze(pack, b2)
    assert {d.policy for d in diagnostics} == ENABLED
    assert {d.level for d in diagnostics} == {"mandatory"}


def test_a_disabled_policy_is_silent_and_the_others_still_fail_the_run(
    pack: PolicyPackProcess,
) -> None:
    config = policy_config(enforcementLevel="advisory")
    config["push-endpoint-https"] = {"enforcementLevel": "disabled"}
    pack.configure(config)
    diagnostics = _analyze(pack, THING)
    assert {d.policy for d in diagnostics} == ENABLED - {"push-endpoint-https"}
    assert {d.level for d in diagnostics} == {"mandatory"}


def test_only_what_may_make_a_push_subscription_is_reported(pack: PolicyPackProcess) -> None:
    """A component (no provider: its children are judged), pushguard's own remote component and
    pulumi-kubernetes' ConfigGroup, a CustomResourceDefinition declaring a ``pushConfig`` field,
    an application's environment variable ``PUSH_ENDPOINT`` and a ``ConfigMap`` key are not push
    subscriptions; the resource beside them is."""
    quiet = [
        resource("acme:index:Queue", "component", {"pushEndpoint": HTTP}, provider=None),
        resource("pushguard:index:PushSubscription", "remote", {"pushEndpoint": HTTP}),
        resource(  # its objects are registered as children, each judged on its own
            "kubernetes:yaml/v2:ConfigGroup",
            "group",
            {"objs": [{"kind": "Subscription", "spec": {"forProvider": {"pushConfig": {}}}}]},
        ),
        resource(
            "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
            "crd",
            {"spec": {"versions": [{"schema": {"openAPIV3Schema": PUSH_SCHEMA}}]}},
        ),
        resource(
            "gcp:cloudfunctions/function:Function",
            "fn",
            {"name": "fn", "environmentVariables": {"PUSH_ENDPOINT": HTTP}},
        ),
        resource("kubernetes:core/v1:ConfigMap", "cm", {"data": {"pushEndpoint": HTTP}}),
    ]
    pack.configure(policy_config())
    diagnostics = _analyze(pack, *quiet, THING)
    assert {d.urn for d in diagnostics} == {""}  # Analyze: about the analysed resource
    assert len(diagnostics) == len(ENABLED)  # THING's, once per policy
    assert all("kubernetes:example.com/v1:Thing" in d.message for d in diagnostics)


def test_the_stack_half_reads_the_outputs(pack: PolicyPackProcess) -> None:
    """A push configuration only in the outputs (a field the provider or the cluster filled in,
    read back from state) is reported by ``AnalyzeStack``, on the resource."""
    pack.configure(ADVISORY)
    outputs = {"spec": {"x": 1}, "status": {"atProvider": {"pushConfig": [{"pushEndpoint": HTTP}]}}}
    shaped = resource("kubernetes:example.com/v1:Thing", "outputs-only", outputs)
    diagnostics = [d for d in pack.analyze_stack([shaped]) if d.urn == shaped.urn]
    assert {d.policy for d in diagnostics} == ENABLED
    assert {d.level for d in diagnostics} == {"mandatory"}
    assert "(status.atProvider.pushConfig[0].pushEndpoint)" in diagnostics[0].message


def test_a_resource_too_deep_to_search_is_never_a_pass(pack: PolicyPackProcess) -> None:
    """A push key below the depth the search reads: what was not read is not presumed empty."""
    deep: dict[str, Any] = {"pushEndpoint": HTTP}
    for _ in range(150):
        deep = {"next": deep}
    pack.configure(ADVISORY)
    diagnostics = _analyze(pack, resource("acme:index/thing:Thing", "deep", {"spec": deep}))
    assert {d.level for d in diagnostics} == {"mandatory"}
    assert len(diagnostics) == len(ENABLED)
    assert "nested more than 100 levels deep" in diagnostics[0].message
