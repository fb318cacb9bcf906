"""Issue 25 over the pack's Analyzer protocol, as the Pulumi CLI calls it at `pulumi up` (every
output known): ``Analyze`` per resource with its inputs, then ``AnalyzeStack`` with the outputs,
each resource with its default provider's configuration. The scenarios of every route are
in :mod:`tests.routes`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from tests.routes import (
    ROUTES,
    all_routes,
    assert_route_findings,
    deployed,
    policy_config,
    provider_config,
)


@pytest.fixture(scope="module")
def answers(pack: PolicyPackProcess) -> tuple[list[Any], list[Any]]:
    """The pack's diagnostics and not-checked entries for every route's deployed scenario."""
    _, config = all_routes()
    inputs, outputs = [], []
    for record in deployed():
        package = record.type.split(":", 1)[0]
        provider = provider_config(config, package) if record.custom else None
        kind = f"pulumi:providers:{package}"
        inputs.append(AnalyzerResource.from_record(record, provider, provider_type=kind))
        outputs.append(
            AnalyzerResource.from_record(record, provider, provider_type=kind, outputs=True)
        )
    pack.configure(policy_config())
    # The engine attributes an Analyze diagnostic without a URN to the analysed resource.
    found = [replace(d, urn=d.urn or r.urn) for r in inputs for d in pack.analyze(r)]
    found += pack.analyze_stack(outputs)
    return found, list(pack.not_applicable)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_route_over_the_analyzer_protocol(answers, route: str) -> None:
    diagnostics, not_applicable = answers
    assert_route_findings(
        route,
        [(d.policy, d.level, d.urn) for d in diagnostics],
        [(n.policy, n.urn, n.reason) for n in not_applicable],
    )


def test_the_resource_half_alone_blocks_each_routes_http_endpoint(pack) -> None:
    """``Analyze`` (one resource, its inputs) already fails each route's http subscription."""
    pack.configure(policy_config())
    _, config = all_routes()
    for route, (_, _, types) in ROUTES.items():
        [record] = [r for r in deployed(route) if r.name == "http" and r.type == types["http"]]
        provider = provider_config(config, record.type.split(":", 1)[0])
        found = {(d.policy, d.level) for d in pack.analyze(AnalyzerResource.from_record(
            record, provider, provider_type="pulumi:providers:x"))}  # fmt: skip
        assert ("push-endpoint-https", "mandatory") in found, (route, found)


def test_grants_through_an_unmapped_iam_resource_leave_the_grant_rules_not_checked(pack) -> None:
    """A token-creator grant on the organization (bridged Terraform), which pushguard does not
    map, may be the one the rule looks for: the grant rules are listed as not checked for every
    subscription, the mandatory rules still run."""
    _, config = all_routes()
    records = deployed("terraform")
    org = AnalyzerResource(
        urn="urn:pulumi:dev::team::google:index/organizationIamMember:OrganizationIamMember::org",
        type="google:index/organizationIamMember:OrganizationIamMember",
        name="org",
        properties={"orgId": "123", "role": "roles/iam.serviceAccountTokenCreator",
                    "member": "serviceAccount:service-1@gcp-sa-pubsub.iam.gserviceaccount.com"},
    )  # fmt: skip
    stack = [
        AnalyzerResource.from_record(
            r, provider_config(config, r.type.split(":", 1)[0]), outputs=True
        )
        for r in records
    ] + [org]
    pack.configure(policy_config())
    found = {(d.policy, d.urn.rsplit("::", 1)[-1]) for d in pack.analyze_stack(stack)}
    unread = {(n.policy, n.urn.rsplit("::", 1)[-1]): n.reason for n in pack.not_applicable}
    for rule in ("push-agent-token-creator", "push-invoker-binding", "push-target-requires-auth"):
        assert (rule, "ungranted") not in found
        assert "organizationIamMember" in unread[(rule, "ungranted")]
        assert (rule, "ok") in unread
    assert ("push-endpoint-https", "http") in found
