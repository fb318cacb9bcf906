"""Issue 34 item 4 over the pack's Analyzer protocol, as the Pulumi CLI calls it at `pulumi up`
(every output known): ``Analyze`` per resource with its inputs, then ``AnalyzeStack`` with the
outputs. Eventarc triggers of every route (the scenario of :mod:`tests.eventarc`): an HTTP
endpoint destination and the trigger's service account are checked, a Cloud Run destination's
endpoint stays Google's, and no rule that does not judge triggers says anything of them."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from pushguard.policy.exceptions import utc_today
from tests.crossguard.wire import PROJECT as WIRE_PROJECT
from tests.crossguard.wire import resource
from tests.eventarc import (
    CONFIG,
    GCP,
    KCC,
    NATIVE,
    OTHER_SA,
    assert_trigger_findings,
    deployed,
    policy_config,
    urn_of,
)
from tests.routes import provider_config
from tests.rules.cases._build import eventarc_trigger


def _resource(record: Any, *, outputs: bool = False) -> AnalyzerResource:
    package = record.type.split(":", 1)[0]
    provider = provider_config(CONFIG, package) if record.custom else None
    return AnalyzerResource.from_record(
        record, provider, provider_type=f"pulumi:providers:{package}", outputs=outputs
    )


@pytest.fixture(scope="module")
def answers(pack: PolicyPackProcess) -> tuple[list[Any], list[Any]]:
    """The pack's diagnostics and not-checked entries for the deployed triggers."""
    records = deployed()
    pack.configure(policy_config())
    inputs = [_resource(r) for r in records]
    # The engine attributes an Analyze diagnostic without a URN to the analysed resource.
    found = [replace(d, urn=d.urn or r.urn) for r in inputs for d in pack.analyze(r)]
    found += pack.analyze_stack([_resource(r, outputs=True) for r in records])
    return found, list(pack.not_applicable)


def test_every_routes_triggers_over_the_analyzer_protocol(answers) -> None:
    diagnostics, not_applicable = answers
    assert_trigger_findings(
        [(d.policy, d.level, d.urn) for d in diagnostics],
        [(n.policy, n.urn, n.reason) for n in not_applicable],
    )


def test_the_attackers_trigger_is_told_what_is_wrong(answers) -> None:
    diagnostics, _ = answers
    said = {(d.policy, d.urn): d.message for d in diagnostics}
    for name in ("gcp-attacker", "native-attacker", "kcc-attacker"):
        endpoint = said[("push-endpoint-https", urn_of(name))]
        assert f"{name}: The trigger's HTTP endpoint uses http://" in endpoint
        account = said[("push-sa-same-project", urn_of(name))]
        assert (
            "pusher@acme-shared.iam.gserviceaccount.com belongs to project acme-shared" in account
        )
        assert "not to the trigger's project acme-web" in account


@pytest.mark.parametrize("kind", [GCP, NATIVE, KCC])
def test_the_resource_half_alone_blocks_each_routes_attacker(pack, kind: str) -> None:
    """``Analyze`` (one resource, its inputs) already fails the attacker's trigger, before any
    subscription Eventarc would create for it exists."""
    [record] = [r for r in deployed() if r.type == kind and r.name.endswith("-attacker")]
    pack.configure(policy_config())
    found = {(d.policy, d.level) for d in pack.analyze(_resource(record))}
    assert found == {("push-endpoint-https", "mandatory"), ("push-sa-same-project", "mandatory")}


def test_an_exception_names_a_trigger_by_its_path(pack) -> None:
    """An organisation that keeps its accounts in one project records the trigger as an
    exception by its path: the finding stays visible, as advisory, at both halves."""
    foreign = eventarc_trigger(
        destination={"cloudRunService": {"service": "orders", "region": "europe-west1"}},
        account=OTHER_SA,
    )
    path = f"projects/{WIRE_PROJECT}/locations/europe-west1/triggers/orders"
    until = (utc_today() + timedelta(days=30)).isoformat()
    pack.configure(
        {
            "push-sa-same-project": {
                "exceptions": [{"resource": path, "reason": "central accounts", "expires": until}]
            }
        }
    )
    found = pack.analyze(foreign) + pack.analyze_stack([foreign])
    levels = {d.level for d in found if d.policy == "push-sa-same-project"}
    assert levels == {"advisory"}, found


def test_a_trigger_property_google_native_would_not_send_fails_closed(pack) -> None:
    """``service_account`` is not google-native's name: the account would not be sent, so the
    rules that judge triggers cannot pass it (the others say nothing)."""
    trigger = resource(
        NATIVE,
        "native-snake",
        {"triggerId": "t", "location": "europe-west1", "service_account": OTHER_SA,
         "destination": {"httpEndpoint": {"uri": "https://10.0.0.5/"}}},
    )  # fmt: skip
    pack.configure(policy_config())
    found = {d.policy: d for d in pack.analyze(trigger)}
    assert set(found) == {"push-endpoint-https", "push-no-query-token", "push-sa-same-project"}
    assert "Cannot read Eventarc trigger 'native-snake'" in found["push-sa-same-project"].message
    assert "'service_account' is not 'serviceAccount'" in found["push-sa-same-project"].message
