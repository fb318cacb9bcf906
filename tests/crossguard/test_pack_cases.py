"""Every policy's wire-level pass and fail fixtures (tests/rules/cases/, one file per rule), sent
to the running pack over the Analyzer protocol."""

from __future__ import annotations

import pytest

from pushguard.gate.analyzer import Diagnostic, PolicyPackProcess
from pushguard.rules import RULES
from tests.rules.cases import WIRE_CASES, WireCase

PREVIEW_PREFIX = "can't run policy"


def analyze_all(pack: PolicyPackProcess, case: WireCase) -> list[Diagnostic]:
    """Configure every policy with the case's settings, then Analyze each resource and
    AnalyzeStack once, as the engine does."""
    pack.configure({rule.id: dict(case.settings) for rule in RULES})
    found: list[Diagnostic] = []
    for resource in case.resources:
        found += pack.analyze(resource)
    found += pack.analyze_stack(case.resources)
    return found


def violations(diagnostics: list[Diagnostic], policy: str) -> list[Diagnostic]:
    return [
        d for d in diagnostics if d.policy == policy and not d.message.startswith(PREVIEW_PREFIX)
    ]


@pytest.mark.parametrize("case", WIRE_CASES, ids=lambda c: c.id)
def test_case(pack: PolicyPackProcess, case: WireCase) -> None:
    diagnostics = analyze_all(pack, case)
    hits = violations(diagnostics, case.policy)
    if case.expect == "fail":
        assert hits, diagnostics
        # each finding once: by the resource half or by the stack half, never both
        assert len({d.message for d in hits}) == len(hits), hits
        rule = next(r for r in RULES if r.id == case.policy)
        assert {d.level for d in hits} == {rule.default_level.value}
        assert {d.urn for d in hits} <= {"", case.resources[0].urn}
        for text in case.message:
            assert all(text in d.message for d in hits), (text, hits)
    else:
        assert hits == [], hits
    assert all(d.message for d in diagnostics)
