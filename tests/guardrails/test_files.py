"""The files in the formats gcloud reads, loaded back: the field names of the documents cited in
pushguard/guardrails/files.py, and coverage.json."""

from __future__ import annotations

import json

import yaml

from pushguard.guardrails import Options, compile_guardrails, render
from pushguard.guardrails.resource import evaluate
from tests.guardrails.configs import config, rich_raw

CUSTOM_CONSTRAINT_FIELDS = [
    "name", "resourceTypes", "methodTypes", "condition", "actionType", "displayName", "description",
]  # fmt: skip
"""The ``CustomConstraint`` REST resource's fields, less the output-only ``updateTime``."""
POLICY_FIELDS = {"name", "spec", "dryRunSpec", "etag"}
SHA_FIELDS = ["resource_selector", "predicate", "severity", "description", "recommendation"]


def files(**options):
    return render(compile_guardrails(config(rich_raw()), "123456789012", Options(**options)))


def test_constraint_files() -> None:
    out = files()
    constraints = {k: yaml.safe_load(v) for k, v in out.items() if k.startswith("constraints/")}
    assert len(constraints) == 6
    for path, data in constraints.items():
        assert list(data) == CUSTOM_CONSTRAINT_FIELDS
        assert path == f"constraints/{data['name'].rsplit('/', 1)[1]}.yaml"
        assert data["name"].startswith("organizations/123456789012/customConstraints/custom.")
        assert data["resourceTypes"] == ["pubsub.googleapis.com/Subscription"]
        assert data["methodTypes"] == ["CREATE", "UPDATE"]
        assert data["actionType"] == "DENY"
        assert "pushguard rule push-" in data["description"]
        evaluate(data["condition"], {})  # the YAML round trip keeps a working expression


def test_policy_files_dry_run_and_enforced() -> None:
    dry = {k: yaml.safe_load(v) for k, v in files().items() if k.startswith("policies/")}
    for data in dry.values():
        assert set(data) <= POLICY_FIELDS and set(data) == {"name", "dryRunSpec"}
        assert data["dryRunSpec"] == {"rules": [{"enforce": True}]}
    enforced = {
        k: yaml.safe_load(v) for k, v in files(enforce=True).items() if k.startswith("policies/")
    }
    https = enforced["policies/custom.pushguardPushEndpointHttps.yaml"]
    assert https == {
        "name": "organizations/123456789012/policies/custom.pushguardPushEndpointHttps",
        "spec": {"rules": [{"enforce": True}]},
    }
    advisory = enforced["policies/custom.pushguardPushAudienceExplicit.yaml"]
    assert "spec" not in advisory and "dryRunSpec" in advisory
    assert "policies/custom.pushguardPushVpcscDefaultUrl--acme-orders.yaml" in enforced


def test_a_tag_policy_file() -> None:
    out = files(perimeter_tag=("perimeter", "inside"))
    data = yaml.safe_load(out["policies/custom.pushguardPushVpcscDefaultUrl.yaml"])
    assert data["dryRunSpec"]["rules"] == [
        {
            "condition": {"expression": 'resource.matchTag("123456789012/perimeter", "inside")'},
            "enforce": True,
        },
        {"enforce": False},
    ]


def test_sha_module_files() -> None:
    out = files()
    modules = {k: v for k, v in out.items() if k.startswith("scc/")}
    assert len(modules) == 6
    for text in modules.values():
        data = yaml.safe_load(text)
        assert list(data) == SHA_FIELDS
        assert data["resource_selector"] == {
            "resource_types": ["pubsub.googleapis.com/Subscription"]
        }
        assert data["severity"] in {"CRITICAL", "HIGH", "MEDIUM", "LOW"}
        assert '\ndescription: "' in text and '\nrecommendation: "' in text  # in quotation marks
        evaluate(data["predicate"]["expression"], {})


def test_coverage_json() -> None:
    data = json.loads(files()["coverage.json"])
    assert data["organization"] == "123456789012"
    assert "ModifyPushConfig" in data["notes"]["modifyPushConfig"]
    assert [r["rule"] for r in data["rules"]][:2] == ["push-endpoint-https", "push-auth-oidc"]
    statuses = {r["rule"]: (r["constraint"]["status"], r["sha"]["status"]) for r in data["rules"]}
    assert statuses["push-audience-explicit"] == ("compiled", "compiled")
    assert statuses["push-sa-broad-grants"] == ("not-compiled", "not-compiled")  # disabled
    for rule in data["rules"]:
        for target in ("constraint", "sha"):
            entry = rule[target]
            assert entry["status"] == "compiled" or entry["reason"], (rule["rule"], target)
