"""``OrgGuardrails`` over the ``components/`` plugin, as a TypeScript or YAML program reaches it:
its schema, the graph a ``Construct`` registers (the Python component's under Pulumi's mocks) and
what it refuses, with nothing registered."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2_grpc

from pushguard.components import OrgGuardrails
from tests.helpers import run
from tests.plugin.harness import RecordingMonitor, construct_request
from tests.plugin.test_protocol import CONFIG, graph

TOKEN = "pushguard:index:OrgGuardrails"
ORG = "123456789012"

Provider = provider_pb2_grpc.ResourceProviderStub
Monitor = tuple[RecordingMonitor, str]


def construct(provider: Provider, monitor: Monitor, inputs: dict[str, Any]) -> Any:
    request = construct_request(
        monitor[0], monitor[1], "guardrails", inputs, config=CONFIG, type_token=TOKEN
    )
    return provider.Construct(request, timeout=120)


def test_schema_has_the_guardrails_inputs(schema: dict[str, Any]) -> None:
    resource = schema["resources"][TOKEN]
    assert set(resource["inputProperties"]) == {
        "organizationId", "policyConfig", "enforce", "methodTypes", "perimeterTag",
        "securityHealthAnalytics",
    }  # fmt: skip
    assert resource["requiredInputs"] == ["organizationId"]
    methods = schema["types"]["pushguard:index:GuardrailMethods"]["enum"]
    assert [e["value"] for e in methods] == ["create", "create-update"]


@pytest.mark.parametrize(
    ("inputs", "python_args"),
    [
        ({"organizationId": ORG}, {"organization_id": ORG}),
        (
            {"organizationId": ORG, "enforce": True, "methodTypes": "create"},
            {"organization_id": ORG, "enforce": True, "method_types": "create"},
        ),
    ],
    ids=["defaults", "enforced-on-create"],
)
def test_construct_registers_what_the_python_component_registers(
    provider: Provider, monitor: Monitor, inputs: dict[str, Any], python_args: dict[str, Any]
) -> None:
    response = construct(provider, monitor, inputs)
    hosted = monitor[0].registrations
    mocked = run(lambda: OrgGuardrails("guardrails", python_args), preview=False).records
    assert graph(hosted) == graph(mocked)
    assert len(hosted) > 10
    assert response.urn == f"urn:pulumi:dev::pushguard::{TOKEN}::guardrails"
    state = dict(response.state)
    assert len(state["constraintNames"]) >= 5
    assert all(
        n.startswith(f"organizations/{ORG}/customConstraints/custom.pushguard")
        for n in state["constraintNames"]
    )


def test_a_bad_organization_is_refused_naming_the_input(
    provider: Provider, monitor: Monitor
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        construct(provider, monitor, {"organizationId": "acme", "perimeterTag": "oops"})
    assert "organization_id:" in caught.value.details()
    assert "perimeter_tag: must be KEY=VALUE" in caught.value.details()
    assert monitor[0].registrations == []
