"""OrgGuardrails under Pulumi's mock runtime: it registers what ``pushguard guardrails`` writes
(the same compiler), dry run first, and refuses bad input before it registers anything."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from pushguard.components import OrgGuardrails, OrgGuardrailsInputError
from pushguard.guardrails import Options, compile_guardrails, render
from pushguard.policy.config_file import load_rule_config
from pushguard.policy.exceptions import utc_today
from pushguard.rules import RULES_BY_ID, EnforcementLevel
from tests.helpers import cause, run, run_failing

ORG = "123456789012"
CONSTRAINT = "gcp:orgpolicy/customConstraint:CustomConstraint"
POLICY = "gcp:orgpolicy/policy:Policy"
MODULE = (
    "gcp:securitycenter/managementOrganizationSecurityHealthAnalyticsCustomModule:"
    "ManagementOrganizationSecurityHealthAnalyticsCustomModule"
)
TOKEN = "pushguard:index:OrgGuardrails"


def program(**args: Any):
    return lambda: OrgGuardrails("guardrails", {"organization_id": ORG, **args})


def files(config: Path | None = None, **options: Any) -> dict[str, Any]:
    """What ``pushguard guardrails`` writes for the same input, parsed."""
    guardrails = compile_guardrails(load_rule_config(config), ORG, Options(**options))
    return {
        path: (json.loads(text) if path.endswith(".json") else yaml.safe_load(text))
        for path, text in render(guardrails).items()
    }


def test_registers_the_constraints_policies_and_modules_the_command_writes() -> None:
    graph = run(program())
    written = files()
    constraints = {r.inputs["name"]: r for r in graph.by_type(CONSTRAINT)}
    expected = {v["name"].rpartition("/")[2]: v for k, v in written.items() if "constraints/" in k}
    assert constraints and set(constraints) == set(expected)
    for cid, record in constraints.items():
        document = expected[cid]
        assert record.inputs["parent"] == f"organizations/{ORG}"
        assert record.inputs["condition"] == document["condition"]
        assert record.inputs["methodTypes"] == document["methodTypes"]
        assert record.inputs["actionType"] == "DENY"
        assert record.inputs["description"] == document["description"]
    modules = {r.inputs["displayName"]: r for r in graph.by_type(MODULE)}
    expected_modules = {
        k.removeprefix("scc/").removesuffix(".yaml"): v
        for k, v in written.items()
        if k.startswith("scc/")
    }
    assert set(modules) == set(expected_modules)
    for display_name, record in modules.items():
        config = record.inputs["customConfig"]
        assert (
            config["predicate"]["expression"]
            == expected_modules[display_name]["predicate"]["expression"]
        )
        assert record.inputs["organization"] == ORG
        assert record.inputs["enablementState"] == "ENABLED"
    component = graph.one(TOKEN)
    assert all(r.parent == component.urn for r in graph.records if r.custom)


def test_policies_are_dry_run_by_default_and_follow_their_constraint() -> None:
    graph = run(program())
    policies = graph.by_type(POLICY)
    assert policies
    for record in policies:
        assert "spec" not in record.inputs
        # a dry-run spec says what the enforced policy would do: deny (enforce) and log
        assert record.inputs["dryRunSpec"]["rules"][0]["enforce"] == "TRUE"
        constraint_urns = {r.urn for r in graph.by_type(CONSTRAINT)}
        assert set(record.property_dependencies["name"]) & constraint_urns


def test_enforce_enforces_only_the_mandatory_rules() -> None:
    graph = run(program(enforce=True))
    enforced, dry = [], []
    for record in graph.by_type(POLICY):
        constraint = record.name.removeprefix("guardrails-").split("--")[0]
        (enforced if "spec" in record.inputs else dry).append(constraint)
        rules = record.inputs.get("spec", record.inputs.get("dryRunSpec"))["rules"]
        assert rules[0]["enforce"] == "TRUE"
    levels = {
        "custom.pushguard" + "".join(w.title() for w in rule_id.split("-")): rule.default_level
        for rule_id, rule in RULES_BY_ID.items()
    }
    assert enforced and all(levels[c] is EnforcementLevel.MANDATORY for c in enforced)
    assert all(levels[c] is not EnforcementLevel.MANDATORY for c in dry)


def test_without_security_health_analytics_no_module_is_registered() -> None:
    graph = run(program(security_health_analytics=False))
    assert graph.by_type(CONSTRAINT) and not graph.by_type(MODULE)


@pytest.mark.parametrize(
    ("args", "field", "allowed"),
    [
        ({"organization_id": "acme"}, "organization_id", "digits"),
        ({"method_types": "update"}, "method_types", "create, create-update"),
        ({"perimeter_tag": "perimeter"}, "perimeter_tag", "KEY=VALUE"),
        ({"perimeter_tag": "a b=c"}, "perimeter_tag", "letters and digits"),
        ({"enforce": "yes"}, "enforce", "true or false"),
    ],
)
def test_bad_inputs_are_refused_before_anything_is_registered(
    args: dict[str, Any], field: str, allowed: str
) -> None:
    graph, error = run_failing(program(**args))
    refused = cause(error, OrgGuardrailsInputError)
    assert isinstance(refused, OrgGuardrailsInputError), error
    assert refused.problems[0][0] == field
    assert allowed in refused.problems[0][1]
    assert graph.records == []


def test_an_expired_exception_is_refused_naming_the_config_field(tmp_path: Path) -> None:
    yesterday = (utc_today() - timedelta(days=1)).isoformat()
    config = tmp_path / "policy-config.json"
    config.write_text(
        json.dumps(
            {
                "push-auth-oidc": {
                    "exceptions": [
                        {
                            "resource": "projects/acme-orders/subscriptions/legacy",
                            "reason": "migrating",
                            "expires": yesterday,
                        }
                    ]
                }
            }
        )
    )
    graph, error = run_failing(program(policy_config=str(config)))
    refused = cause(error, OrgGuardrailsInputError)
    assert isinstance(refused, OrgGuardrailsInputError), error
    assert refused.problems[0][0] == "push-auth-oidc.exceptions[0].expires"
    assert graph.records == []


def test_a_missing_policy_config_names_the_input(tmp_path: Path) -> None:
    graph, error = run_failing(program(policy_config=str(tmp_path / "absent.json")))
    refused = cause(error, OrgGuardrailsInputError)
    assert isinstance(refused, OrgGuardrailsInputError), error
    assert refused.problems[0][0] == "policy_config"
    assert "absent.json" in refused.problems[0][1]
    assert graph.records == []


def test_a_perimeter_project_policy_is_attached_to_that_project(tmp_path: Path) -> None:
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"push-vpcsc-default-url": {"perimeterProjects": ["acme-vpc"]}}))
    graph = run(program(policy_config=str(config)))
    parents = {r.inputs["parent"] for r in graph.by_type(POLICY)}
    assert "projects/acme-vpc" in parents
    written = files(config)
    names = {v["name"].partition("/policies/")[0] for k, v in written.items() if "policies/" in k}
    assert parents == names
