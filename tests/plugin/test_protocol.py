"""The ``components/`` plugin over the provider gRPC protocol, as a program in another language
reaches it through the Pulumi engine: the schema it serves, the graph a ``Construct`` registers
(the same as the Python component's under Pulumi's mocks) and what it refuses."""

from __future__ import annotations

import os
import re
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import errors_pb2, provider_pb2_grpc, status_pb2

from pushguard.components import PushSubscription
from pushguard.components.ids import account_id
from pushguard.preview.mocks import GET_PROJECT, GcpMocks
from pushguard.rules.accounts import pubsub_service_agent_email
from tests.helpers import NUMBER, PROJECT, run
from tests.plugin.harness import (
    PluginProcess,
    RecordingEngine,
    RecordingMonitor,
    construct_request,
    provider_stub,
    running_plugin,
)

TOKEN = "pushguard:index:PushSubscription"
SUB = "gcp:pubsub/subscription:Subscription"
RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
SERVICE_URL = "https://orders-3kq2x7ab9c-ew.a.run.app"
CONFIG = {"gcp:project": PROJECT}
OTHER = "urn:pulumi:dev::pushguard::gcp:cloudrunv2/service:Service::orders"
"""A resource in the consumer's program whose output feeds an input (``inputDependencies``)."""

Provider = provider_pb2_grpc.ResourceProviderStub
Monitor = tuple[RecordingMonitor, str]

INPUTS: dict[str, Any] = {
    "topic": "orders",
    "pushEndpoint": "https://hooks.example.com/push",
    "target": {"kind": "external"},
}

EVERYTHING: dict[str, Any] = {
    "topic": "orders",
    "pushEndpoint": RUN_URL,
    "target": {"kind": "cloud-run", "name": "orders", "location": "europe-west1"},
    "ackDeadlineSeconds": 60,
    "labels": {"team": "orders", "cost_center": "cc-42"},
    "retryPolicy": {"minimumBackoff": "10s", "maximumBackoff": "300s"},
    "deadLetter": {"maxDeliveryAttempts": 7},
    "deployers": ["group:platform@example.com"],
    "attributes": {"x-goog-version": "v1"},
}
"""Every input that changes the graph the same way hosted and in Python. Not
``tokenCreatorGrant: "project"``: a Python program shares that grant between its components
(one top-level ``pushguard-grant-HASH``), a hosted component holds its own (a construct has no
program to share with)."""


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def python_args(inputs: dict[str, Any]) -> dict[str, Any]:
    """The same inputs as a Python program writes them: snake_case names, for the inputs and the
    fields of the nested input objects (not for the keys of ``labels`` or ``attributes``)."""
    nested = {"target", "deadLetter", "retryPolicy"}
    return {
        snake(key): ({snake(k): v for k, v in value.items()} if key in nested else value)
        for key, value in inputs.items()
    }


def construct(provider: Provider, monitor: Monitor, name: str, inputs: dict[str, Any], **kw: Any):
    return provider.Construct(
        construct_request(monitor[0], monitor[1], name, inputs, config=CONFIG, **kw), timeout=30
    )


def failed_construct(
    provider: Provider, monitor: Monitor, name: str, inputs: dict[str, Any], **kw: Any
) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        construct(provider, monitor, name, inputs, **kw)
    return caught.value


# -- GetSchema ---------------------------------------------------------------------------------


def test_schema_names_the_package_and_its_component(schema: dict[str, Any]) -> None:
    assert schema["name"] == "pushguard"
    assert set(schema["resources"]) == {TOKEN, "pushguard:index:OrgGuardrails"}
    assert schema["resources"][TOKEN]["isComponent"] is True


def test_schema_inputs_are_camel_case_with_the_three_required(schema: dict[str, Any]) -> None:
    resource = schema["resources"][TOKEN]
    assert set(resource["inputProperties"]) == {
        "topic", "pushEndpoint", "target", "project", "projectNumber", "subscriptionName",
        "pushAuthServiceAccountEmail", "pushAuthAccountId", "audience", "attributes",
        "noWrapper", "writeMetadata", "ackDeadlineSeconds", "messageRetentionDuration",
        "retainAckedMessages", "expirationTtl", "filter", "enableMessageOrdering", "retryPolicy",
        "labels", "paused", "tokenCreatorGrant", "deployers", "deadLetter", "inServicePerimeter",
        "acceptBacklogLoss", "grantInvoker",
    }  # fmt: skip
    assert set(resource["requiredInputs"]) == {"topic", "pushEndpoint", "target"}
    assert resource["inputProperties"]["ackDeadlineSeconds"]["type"] == "integer"
    assert resource["inputProperties"]["labels"]["additionalProperties"]["type"] == "string"
    assert set(resource["properties"]) == {
        "subscriptionName", "subscriptionId", "subscriptionPath", "pushAuthServiceAccountEmail",
        "audience", "serviceAgentEmail", "deadLetterTopic", "deadLetterSubscription",
    }  # fmt: skip


def test_schema_nested_inputs_and_enums(schema: dict[str, Any]) -> None:
    types = schema["types"]
    inputs = schema["resources"][TOKEN]["inputProperties"]
    assert inputs["target"]["$ref"] == "#/types/pushguard:index:PushTargetArgs"
    assert inputs["target"]["plain"] is True
    target = types["pushguard:index:PushTargetArgs"]
    assert set(target["properties"]) == {
        "kind", "name", "location", "project", "url", "customAudiences",
    }  # fmt: skip
    assert target["required"] == ["kind"]
    assert set(types["pushguard:index:DeadLetterArgs"]["properties"]) == {
        "topic",
        "maxDeliveryAttempts",
        "subscription",
        "messageRetentionDuration",
    }
    kinds = types["pushguard:index:TargetKind"]
    assert kinds["type"] == "string"
    assert [e["value"] for e in kinds["enum"]] == [
        "cloud-run", "cloud-function-v1", "cloud-function-v2", "external"]  # fmt: skip
    grants = types["pushguard:index:TokenCreatorGrant"]["enum"]
    assert [e["value"] for e in grants] == ["service-account", "project", "none"]


# -- Construct ---------------------------------------------------------------------------------


def graph(records: Any) -> dict[str, tuple[str, str, dict[str, Any], frozenset[str]]]:
    """URN -> (type, parent URN, inputs after the provider's ``Check``, dependencies).

    The mock monitor records inputs after ``Check`` (auto-names filled in); the recording monitor
    records them as sent, so ``Check`` is applied here, the same way.
    """
    return {
        r.urn: (
            r.type,
            r.parent,
            GcpMocks.check(r.type, r.name, r.inputs),
            frozenset(r.dependencies),
        )
        for r in records
    }


@pytest.mark.parametrize(
    "inputs",
    [INPUTS, EVERYTHING, {**EVERYTHING, "projectNumber": NUMBER, "tokenCreatorGrant": "none"}],
    ids=["minimal", "everything", "number-given"],
)
def test_construct_registers_what_the_python_component_registers(
    provider: Provider, monitor: Monitor, inputs: dict[str, Any]
) -> None:
    """Same URNs, types, parents, inputs (with the values computed from other resources' outputs)
    and dependencies as ``PushSubscription`` in a Python program under Pulumi's mocks."""
    response = construct(provider, monitor, "orders", inputs)
    hosted = monitor[0].registrations
    mocked = run(lambda: PushSubscription("orders", python_args(inputs)), preview=False).records
    assert graph(hosted) == graph(mocked)
    assert len(hosted) >= 4
    assert response.urn == f"urn:pulumi:dev::pushguard::{TOKEN}::orders"
    assert hosted[0].parent == monitor[0].stack_urn
    assert all(r.parent == response.urn for r in hosted[1:])

    number_lookups = [args for tok, args in monitor[0].invokes if tok == GET_PROJECT]
    assert number_lookups == ([] if "projectNumber" in inputs else [{"projectId": PROJECT}])

    state = dict(response.state)
    account = account_id(PROJECT, response.urn)
    assert state["pushAuthServiceAccountEmail"] == f"{account}@{PROJECT}.iam.gserviceaccount.com"
    assert state["serviceAgentEmail"] == pubsub_service_agent_email(NUMBER)
    external = inputs["target"]["kind"] == "external"
    assert state["audience"] == (inputs["pushEndpoint"] if external else SERVICE_URL)
    assert (
        state["subscriptionPath"] == f"projects/{PROJECT}/subscriptions/{state['subscriptionName']}"
    )


def test_advisory_findings_reach_the_engine_log(
    provider: Provider, monitor: Monitor, engine: tuple[RecordingEngine, str]
) -> None:
    construct(
        provider,
        monitor,
        "orders",
        {**INPUTS, "pushEndpoint": INPUTS["pushEndpoint"] + "?token=abc"},
    )
    warnings = [message for severity, message in engine[0].logs if severity == "WARNING"]
    assert any("[push-no-query-token]" in w and "'orders'" in w for w in warnings), engine[0].logs
    assert any(r.type == SUB for r in monitor[0].registrations)  # advisory: still created


def test_an_http_endpoint_fails_construct_with_the_rule_and_registers_nothing(
    provider: Provider, monitor: Monitor
) -> None:
    error = failed_construct(
        provider, monitor, "orders", {**INPUTS, "pushEndpoint": "http://hooks.example.com/push"}
    )
    assert "PushSubscription 'orders' has invalid inputs" in error.details()
    assert (
        "push_endpoint: The push endpoint uses http://; Pub/Sub push must use https://. "
        "[push-endpoint-https]" in error.details()
    )
    assert monitor[0].registrations == []


def test_every_problem_is_reported_at_once(provider: Provider, monitor: Monitor) -> None:
    bad = {**INPUTS, "pushEndpoint": "http://hooks.example.com/push", "ackDeadlineSeconds": 5}
    error = failed_construct(provider, monitor, "orders", bad)
    assert "push_endpoint:" in error.details()
    assert "ack_deadline_seconds: must be between 10 and 600 seconds, not 5" in error.details()
    assert monitor[0].registrations == []


def test_numbers_arrive_as_doubles_whole_ones_are_integers(
    provider: Provider, monitor: Monitor
) -> None:
    """Pulumi's wire has one number type: 60 from TypeScript arrives as 60.0 and is accepted (see
    the graph comparison); 30.5 is still no integer."""
    error = failed_construct(provider, monitor, "orders", {**INPUTS, "ackDeadlineSeconds": 30.5})
    assert "ack_deadline_seconds: must be an integer, not float 30.5" in error.details()
    assert monitor[0].registrations == []


def test_an_http_endpoint_from_another_resource_never_reaches_a_subscription(
    provider: Provider, monitor: Monitor
) -> None:
    """An input that is another resource's output is validated when it resolves: the push-auth
    account may exist by then, the subscription never does."""
    inputs = {**INPUTS, "pushEndpoint": "http://hooks.example.com/push"}
    error = failed_construct(
        provider, monitor, "orders", inputs, input_dependencies={"pushEndpoint": [OTHER]}
    )
    assert "[push-endpoint-https]" in error.details()
    assert SUB not in {r.type for r in monitor[0].registrations}


def status_details(error: grpc.RpcError) -> list[tuple[str, str]]:
    """The ``(property path, reason)`` pairs of an ``InputPropertiesError`` status detail."""
    metadata = dict(error.trailing_metadata() or ())
    status = status_pb2.Status.FromString(metadata["grpc-status-details-bin"])
    found = []
    for detail in status.details:
        properties = errors_pb2.InputPropertiesError()
        assert detail.Unpack(properties)
        found += [(e.property_path, e.reason) for e in properties.errors]
    return found


@pytest.mark.parametrize(
    ("inputs", "path"),
    [
        ({k: v for k, v in INPUTS.items() if k != "pushEndpoint"}, "pushEndpoint"),
        ({**INPUTS, "target": {"kind": "cloud-run-v9"}}, "target.kind"),
    ],
    ids=["missing-required", "not-an-enum-value"],
)
def test_schema_violations_name_the_camel_case_property(
    provider: Provider, monitor: Monitor, inputs: dict[str, Any], path: str
) -> None:
    error = failed_construct(provider, monitor, "orders", inputs)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert [p for p, _ in status_details(error)] == [path]
    assert monitor[0].registrations == []


def test_an_integer_input_from_another_resource_is_a_known_pulumi_limit(
    provider: Provider, monitor: Monitor
) -> None:
    """pulumi 3.272's component provider calls int() on integer inputs, which fails for an Output
    (a value from another resource); docs/component.md ('Any language') says so. The day a
    Pulumi release accepts it, this test fails: then expect the input to be accepted and drop
    the limit from the docs. (Asserted, not a strict xfail: formatting the xfail's traceback
    trips a CPython 3.11.7 AST bug in some runs.)"""
    inputs = {**INPUTS, "ackDeadlineSeconds": 30}
    with pytest.raises(grpc.RpcError) as failed:
        construct(
            provider, monitor, "orders", inputs, input_dependencies={"ackDeadlineSeconds": [OTHER]}
        )
    assert "int() argument must be" in (failed.value.details() or "")
    assert "not 'Output'" in (failed.value.details() or "")


# -- the process -------------------------------------------------------------------------------


def test_the_plugin_stops_with_its_whole_process_group(
    engine: tuple[RecordingEngine, str], tmp_path: Any
) -> None:
    with running_plugin(engine[1], cwd=tmp_path) as plugin:
        channel, stub = provider_stub(plugin.address)
        assert stub.GetPluginInfo(empty_pb2.Empty()) is not None
        channel.close()
        group = plugin.process.pid
    assert plugin.process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)


def test_the_module_plugin_printed_only_its_port_on_stdout(plugin: PluginProcess) -> None:
    assert plugin.port > 0
    assert plugin.process.poll() is None, plugin.stderr_text()
