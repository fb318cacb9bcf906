"""The service behind a push endpoint is never guessed from grants that merely sit next to the
subscription, and a public member is recognised however it is spelled.

A top-level resource's parent is the stack: every invoker grant of the stack is then a sibling of
every subscription. Picking one of them by the order of a frozenset made the verdict depend on
Python's hash seed (a public service reported in one run, nothing in the next).
"""

from __future__ import annotations

import dataclasses

from pushguard.gate.analyzer import PolicyPackProcess
from pushguard.rules import RULES
from pushguard.state.urn import stack_urn
from tests.crossguard.test_pack_cases import violations
from tests.crossguard.wire import RUN_URL, push_config, resource, run_invoker, run_service
from tests.crossguard.wire import subscription as raw_subscription
from tests.rules.cases._build import WireCase, wire

RULE = "push-target-requires-auth"
STACK = stack_urn("team", "dev")


def _public(service: str, member: str = "allUsers") -> object:
    return resource(
        "gcp:cloudrunv2/serviceIamMember:ServiceIamMember",
        f"{service}-public",
        {
            "name": service,
            "location": "europe-west1",
            "role": "roles/run.invoker",
            "member": member,
        },
    )


def _top_level(case: WireCase) -> list[object]:
    return [dataclasses.replace(r, parent=STACK) for r in case.resources]  # type: ignore[type-var]


def _analyze(pack: PolicyPackProcess, resources: list[object]) -> list[object]:
    pack.configure({rule.id: {} for rule in RULES})
    found: list[object] = []
    for item in resources:
        found += pack.analyze(item)  # type: ignore[arg-type]
    found += pack.analyze_stack(resources)  # type: ignore[arg-type]
    return found


def test_a_literal_endpoint_is_not_pinned_on_whichever_service_holds_a_grant(
    pack: PolicyPackProcess,
) -> None:
    case = wire(
        RULE,
        "pass",
        "two services, one public, a literal endpoint in neither",
        raw_subscription(pushConfig=push_config(RUN_URL)),
        run_service("orders"),
        _public("orders"),  # type: ignore[arg-type]
        run_service("billing"),
        run_invoker("billing"),
    )
    diagnostics = _analyze(pack, _top_level(case))
    assert violations(diagnostics, RULE) == []  # type: ignore[arg-type]
    for policy in (RULE, "push-invoker-binding"):  # said, not passed: the service is not known
        reasons = [n.reason for n in pack.not_applicable if n.policy == policy]
        assert any("service behind the push endpoint is not known" in r for r in reasons), (
            pack.not_applicable
        )


def test_a_public_member_in_lower_case_is_still_public(pack: PolicyPackProcess) -> None:
    case = wire(
        RULE,
        "fail",
        "allusers",
        raw_subscription(pushConfig=push_config(RUN_URL)),
        run_service("orders", uri="https://orders-3kq2x7ab9c-ew.a.run.app"),
        run_invoker("orders"),
        _public("orders", member="allusers"),  # type: ignore[arg-type]
    )
    hits = violations(_analyze(pack, _top_level(case)), RULE)  # type: ignore[arg-type]
    assert hits and all("to allUsers" in d.message for d in hits)


DETERMINISTIC_URL = "https://orders-123456789012.europe-west1.run.app/push"
"""Cloud Run's deterministic URL of service ``orders``: the rule names the service from it."""


def test_a_service_the_stack_does_not_declare_is_not_passed(pack: PolicyPackProcess) -> None:
    """Only the stack's own grant on ``orders`` is seen; the service's IAM policy is kept outside
    the stack, so whether it is public is said to be not checked, never passed."""
    resources = [
        raw_subscription(pushConfig=push_config(DETERMINISTIC_URL)),
        run_invoker("orders"),
    ]
    assert violations(_analyze(pack, resources), RULE) == []  # type: ignore[arg-type]
    reasons = [n.reason for n in pack.not_applicable if n.policy == RULE]
    assert any("the IAM policy of orders is not in the stack" in r for r in reasons), reasons


def test_a_public_grant_on_a_service_the_stack_does_not_declare_is_found(
    pack: PolicyPackProcess,
) -> None:
    resources = [
        raw_subscription(pushConfig=push_config(DETERMINISTIC_URL)),
        run_invoker("orders"),
        _public("orders"),
    ]
    hits = violations(_analyze(pack, resources), RULE)  # type: ignore[arg-type]
    assert hits and all("to allUsers" in d.message for d in hits)
    assert not [n for n in pack.not_applicable if n.policy == RULE]


def test_a_declared_service_without_public_grants_passes(pack: PolicyPackProcess) -> None:
    resources = [
        raw_subscription(pushConfig=push_config(DETERMINISTIC_URL)),
        run_service("orders"),
        run_invoker("orders"),
    ]
    assert violations(_analyze(pack, resources), RULE) == []  # type: ignore[arg-type]
    assert not [n for n in pack.not_applicable if n.policy == RULE], pack.not_applicable
