"""OrgGuardrails in a team's stack through ``pushguard preview``: the platform team's guardrails
stack is judged like any other (the pack passes it), and a bad input fails the preview naming it
with none of the guardrails registered."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.engine.conftest import preview

ORG = "123456789012"
CONSTRAINT = "gcp:orgpolicy/customConstraint:CustomConstraint"
POLICY = "gcp:orgpolicy/policy:Policy"

PROGRAM = """\
import pulumi
from pushguard.components import OrgGuardrails

guardrails = OrgGuardrails("guardrails", {{"organization_id": {org!r}, "enforce": True}})
pulumi.export("constraints", guardrails.constraint_names)
"""


def test_a_guardrails_stack_is_previewed_and_passes(team_project: Callable[..., Path]) -> None:
    run = preview(team_project(PROGRAM.format(org=ORG)), "-f", "json")
    assert run.code == 0, run.stderr
    report = run.json()
    types = [r["type"] for r in report["resources"]]
    assert types.count(CONSTRAINT) >= 5, types
    # every constraint but the perimeter rule's (no perimeter project configured) is attached
    assert types.count(POLICY) == types.count(CONSTRAINT) - 1
    assert not report["violations"] and not report["notChecked"], report


def test_a_bad_organization_id_fails_the_preview_naming_the_input(
    team_project: Callable[..., Path],
) -> None:
    run = preview(team_project(PROGRAM.format(org="organizations/acme")), "-f", "json")
    assert run.code == 2, run.stderr
    assert "organization_id" in run.stderr, run.stderr
    types = [r["type"] for r in run.json()["resources"]]
    assert CONSTRAINT not in types and POLICY not in types
