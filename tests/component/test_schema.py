"""Pulumi's component analyzer infers a package schema from PushSubscription, so the component can
be hosted for other languages (``pulumi package add``) without a hand-written schema."""

from __future__ import annotations

from pulumi.provider.experimental.analyzer import Analyzer

from pushguard.components import PushSubscription
from pushguard.components.hosting import analysable


def analyze():
    with analysable():  # what the components/ plugin and the preview analyse with
        return Analyzer("pushguard").analyze([PushSubscription])


def test_schema_has_every_input_and_output_in_camel_case() -> None:
    component = analyze()["component_definitions"]["PushSubscription"]
    assert {
        "topic",
        "pushEndpoint",
        "target",
        "pushAuthServiceAccountEmail",
        "deadLetter",
        "retryPolicy",
        "inServicePerimeter",
        "tokenCreatorGrant",
    } <= set(component.inputs)
    assert set(component.outputs) == {
        "subscriptionName",
        "subscriptionId",
        "subscriptionPath",
        "pushAuthServiceAccountEmail",
        "audience",
        "serviceAgentEmail",
        "deadLetterTopic",
        "deadLetterSubscription",
    }
    required = {k for k, v in component.inputs.items() if not v.optional}
    assert required == {"topic", "pushEndpoint", "target"}


def test_inputs_that_shape_the_graph_are_plain_and_others_accept_outputs() -> None:
    inputs = analyze()["component_definitions"]["PushSubscription"].inputs
    plain = {k for k, v in inputs.items() if v.plain}
    assert plain == {
        "target",
        "paused",
        "noWrapper",
        "tokenCreatorGrant",
        "deployers",
        "deadLetter",
        "inServicePerimeter",
        "retryPolicy",
        "acceptBacklogLoss",
        "grantInvoker",
    }
    assert inputs["pushEndpoint"].description.startswith("The HTTPS URL Pub/Sub pushes to")


def test_enums_are_schema_enums() -> None:
    types = analyze()["type_definitions"]
    assert [e.value for e in types["TargetKind"].enum] == [
        "cloud-run",
        "cloud-function-v1",
        "cloud-function-v2",
        "external",
    ]
    assert [e.value for e in types["TokenCreatorGrant"].enum] == [
        "service-account",
        "project",
        "none",
    ]
