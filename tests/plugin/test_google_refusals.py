"""Issue 36, item 1, over the ``components/`` plugin's gRPC ``Construct`` as a TypeScript, Go or
YAML program reaches it through the engine: what Google would refuse, or deploy other than the
team meant, fails the construct and registers nothing; a camelCase 2nd-gen function is granted on
its service; subscriptions never expire by default; every filter of Google's "Filter messages"
page is accepted (the cases of ``tests/component/test_google_refusals.py``, camelCase inputs)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.component.test_google_refusals import DOCUMENTED, ELSEWHERE, FILTER_PAGE
from tests.helpers import NUMBER
from tests.plugin.test_protocol import (
    EVERYTHING,
    OTHER,
    SUB,
    TOKEN,
    Monitor,
    Provider,
    construct,
    failed_construct,
)

RUN_MEMBER = "gcp:cloudrunv2/serviceIamMember:ServiceIamMember"
RENDER = {"kind": "cloud-function-v2", "name": "renderInvoice", "location": "europe-west1"}


def inputs(**overrides: Any) -> dict[str, Any]:
    return {**EVERYTHING, **overrides}


def refusal(provider: Provider, monitor: Monitor, **overrides: Any) -> str:
    """The details of a construct refused before it registered anything."""
    error = failed_construct(provider, monitor, "orders", inputs(**overrides))
    assert "PushSubscription 'orders' has invalid inputs" in (error.details() or "")
    assert monitor[0].registrations == [], "nothing may be registered for bad inputs"
    return error.details() or ""


def registered(monitor: Monitor, type_: str) -> list[Any]:
    return [r for r in monitor[0].registrations if r.type == type_]


def test_an_expiration_shorter_than_the_retention_fails_construct(
    provider: Provider, monitor: Monitor
) -> None:
    details = refusal(provider, monitor, expirationTtl="86400s")
    assert "expiration_ttl: must not be shorter than the message retention duration" in details
    assert "604800s, Pub/Sub's default" in details


def test_the_subscription_never_expires_by_default(provider: Provider, monitor: Monitor) -> None:
    construct(provider, monitor, "orders", inputs())
    expirations = [r.inputs.get("expirationPolicy") for r in registered(monitor, SUB)]
    assert expirations and all(e == {"ttl": ""} for e in expirations), expirations


@pytest.mark.parametrize(
    ("overrides", "said"),
    [
        ({"pushEndpoint": ELSEWHERE}, "target.location: is 'europe-west1' but"),
        (
            {"pushEndpoint": "https://orders-210987654321.europe-west1.run.app/push",
             "projectNumber": NUMBER},
            "target.project: is not set to another project",
        ),
    ],
    ids=["region", "project-number"],
)  # fmt: skip
def test_a_deterministic_url_of_another_region_or_project_fails_construct(
    provider: Provider, monitor: Monitor, overrides: dict[str, Any], said: str
) -> None:
    assert said in refusal(provider, monitor, **overrides)


def test_a_2nd_gen_functions_cloudfunctions_net_url_fails_construct(
    provider: Provider, monitor: Monitor
) -> None:
    endpoint = "https://europe-west1-acme-orders.cloudfunctions.net/renderInvoice"
    details = refusal(provider, monitor, pushEndpoint=endpoint, target=RENDER)
    assert "push_endpoint: is the cloudfunctions.net URL" in details
    assert "service_config.uri" in details


def test_a_2nd_gen_functions_url_from_another_resource_registers_nothing_of_the_component(
    provider: Provider, monitor: Monitor
) -> None:
    """``pushEndpoint: fn.url`` in a TypeScript program: the value comes from another resource
    and is checked when it resolves, before any child of the component is registered."""
    endpoint = "https://europe-west1-acme-orders.cloudfunctions.net/renderInvoice"
    error = failed_construct(
        provider,
        monitor,
        "orders",
        inputs(pushEndpoint=endpoint, target=RENDER),
        input_dependencies={"pushEndpoint": [OTHER]},
    )
    assert "service_config.uri" in (error.details() or "")
    assert [r.type for r in monitor[0].registrations] == [TOKEN]


def test_a_camel_case_2nd_gen_function_is_granted_on_its_service(
    provider: Provider, monitor: Monitor
) -> None:
    endpoint = "https://renderinvoice-3kq2x7ab9c-ew.a.run.app/push"
    construct(provider, monitor, "orders", inputs(pushEndpoint=endpoint, target=RENDER))
    [invoker] = registered(monitor, RUN_MEMBER)
    assert invoker.inputs["name"] == "renderinvoice"


@pytest.mark.parametrize(
    "expression",
    ['eventType = "order.paid"', "attributes.eventType = order.paid",
     'attributes.eventType IN ("order.paid", "order.refunded")'],
    ids=["not-an-attribute", "unquoted-value", "in"],
)  # fmt: skip
def test_the_issues_filters_fail_construct(
    provider: Provider, monitor: Monitor, expression: str
) -> None:
    details = refusal(provider, monitor, filter=expression)
    assert "filter: is not a Pub/Sub filter" in details and FILTER_PAGE in details
    assert expression not in details, "the filter is never repeated"


@pytest.mark.parametrize("expression", DOCUMENTED)
def test_every_documented_filter_is_accepted(
    provider: Provider, monitor: Monitor, expression: str
) -> None:
    construct(provider, monitor, "orders", inputs(filter=expression))
    [sub] = [r for r in registered(monitor, SUB) if "pushConfig" in r.inputs]
    assert sub.inputs["filter"] == expression
