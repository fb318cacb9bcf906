"""Issue 34 item 4: the Eventarc trigger adapters on their own (every route into pulumi-gcp's
trigger, then its facts); the end-to-end checks are in test_eventarc_protocol.py,
tests/preview/test_eventarc.py and tests/analyze/test_eventarc_state.py."""

from __future__ import annotations

from typing import Any

import pytest

from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.routes import canonical, canonical_stack
from pushguard.crossguard.routes.eventarc import KCC_TRIGGER, NATIVE_TRIGGER, TRIGGER
from pushguard.crossguard.routes.names import SpellingError
from pushguard.crossguard.triggers import trigger_facts, trigger_path
from pushguard.crossguard.wire import UNKNOWN
from pushguard.policy.settings import PackSettings

SA = "events@acme-web.iam.gserviceaccount.com"
URI = "https://orders.acme.internal/push"
SETTINGS = PackSettings()


def wire(kind: str, props: dict[str, Any], **kw: Any) -> WireResource:
    return WireResource(
        urn=f"urn:pulumi:dev::team::{kind}::t", type=kind, name="t", props=props, **kw
    )


def kcc(spec: dict[str, Any]) -> WireResource:
    return wire(
        KCC_TRIGGER,
        {"metadata": {"name": "t", "namespace": "team"}, "spec": {"location": "eu", **spec}},
    )


ROUTES = {
    "gcp": wire(
        TRIGGER,
        {"project": "acme-web", "location": "eu", "name": "t", "service_account": SA,
         "destination": {"http_endpoint": {"uri": URI}}},
    ),
    "google-native": wire(
        NATIVE_TRIGGER,
        {"project": "acme-web", "location": "eu", "triggerId": "t", "serviceAccount": SA,
         "destination": {"httpEndpoint": {"uri": URI}}},
    ),
    "config-connector": kcc(
        {"projectRef": {"external": "projects/acme-web"}, "serviceAccountRef": {"external": SA},
         "destination": {"httpEndpoint": {"uri": URI}}}
    ),
}  # fmt: skip


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_routes_trigger_reads_as_pulumi_gcps(route: str) -> None:
    [trigger] = canonical(ROUTES[route])
    assert trigger.type == TRIGGER
    read = trigger_facts(trigger, SETTINGS)
    facts = read.facts
    assert facts.is_trigger and facts.trigger_destination == "httpEndpoint"
    assert (facts.push_endpoint, facts.push_auth_account, facts.project_id) == (
        URI,
        SA,
        "acme-web",
    )
    assert trigger_path(trigger, read) == "projects/acme-web/locations/eu/triggers/t"


def test_a_native_cloud_run_destination_and_a_name_read_back_from_state() -> None:
    props = {
        "name": "projects/acme-web/locations/eu/triggers/t",
        "project": "acme-web",
        "destination": {"cloudRun": {"service": "orders", "region": "eu"}},
    }
    [trigger] = canonical(wire(NATIVE_TRIGGER, props))
    facts = trigger_facts(trigger, SETTINGS).facts
    assert trigger.props["name"] == "t"
    assert facts.trigger_destination == "cloudRunService" and facts.push_endpoint is None
    assert "Google manages the endpoint" in str(facts.google_managed_endpoint())


@pytest.mark.parametrize(
    ("kind", "props", "spelt"),
    [
        (NATIVE_TRIGGER, {"service_account": SA, "destination": {}}, "service_account"),
        (
            NATIVE_TRIGGER,
            {"destination": {"http_endpoint": {"uri": "http://10.0.0.5/"}}},
            "destination.http_endpoint",
        ),
        (
            KCC_TRIGGER,
            {"spec": {"service_account_ref": {"external": SA}}},
            "spec.service_account_ref",
        ),
    ],
)
def test_a_trigger_property_spelt_otherwise_is_refused(kind: str, props, spelt: str) -> None:
    """google-native would not send it and the API server would prune it: what the trigger does
    is then not what the program says, so the pack cannot pass it."""
    with pytest.raises(SpellingError) as error:
        canonical(wire(kind, props))
    assert error.value.path == spelt


def test_an_account_created_in_the_stack_is_resolved_and_one_outside_it_is_named() -> None:
    account = WireResource(
        urn="urn:pulumi:dev::team::kubernetes:iam.cnrm.cloud.google.com/v1beta1:IAMServiceAccount::a",
        type="kubernetes:iam.cnrm.cloud.google.com/v1beta1:IAMServiceAccount",
        name="a",
        props={"metadata": {"name": "events", "namespace": "team",
                            "annotations": {"cnrm.cloud.google.com/project-id": "acme-web"}}},
    )  # fmt: skip
    spec = {"projectRef": {"external": "projects/acme-web"}, "destination": {}}
    inside = kcc({**spec, "serviceAccountRef": {"name": "events"}})
    [trigger] = [r for r in canonical_stack([account, inside]) if r.type == TRIGGER]
    assert trigger.props["serviceAccount"] is UNKNOWN  # status.email: the cluster writes it
    assert trigger.depends_through("serviceAccount") == (account.urn,)
    [outside] = canonical(kcc({**spec, "serviceAccountRef": {"name": "elsewhere"}}))
    read = trigger_facts(outside, SETTINGS)
    assert "push_auth_account" in read.facts.unknown
    assert "this stack does not declare" in read.reasons["push_auth_account"]


def test_a_trigger_without_a_project_is_not_configured_not_passed() -> None:
    read = trigger_facts(wire(TRIGGER, {"serviceAccount": SA, "destination": {}}), SETTINGS)
    assert read.unconfigured["project_id"].startswith("the trigger's project is not known")
    assert read.facts.trigger_destination is None
