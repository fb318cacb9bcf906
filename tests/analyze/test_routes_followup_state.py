"""Follow-ups on issue 25 in `pushguard analyze` as users run it: a state file holding a push
subscription of a type pushguard cannot read fails the run (exit 2) naming the type, and a
pulumi-gcp subscription whose state holds snake_case keys is read as the Terraform bridge reads
them. One analysis for the module."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.gate.result import ResourceRecord
from tests.routes import deployed_state, write_policy_config

ROOT = "urn:pulumi:dev::team::pulumi:pulumi:Stack::team-dev"


def _record(kind: str, name: str, props: dict[str, Any]) -> ResourceRecord:
    return ResourceRecord(
        urn=f"urn:pulumi:dev::team::{kind}::{name}",
        type=kind,
        name=name,
        parent=ROOT,
        custom=True,
        provider="",
        inputs=props,
        dependencies=(),
        property_dependencies={},
        outputs=props,
    )


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("followup-state")
    http = {"pushEndpoint": "http://hooks.example.com/push"}
    records = [
        _record(
            "google-native:pubsub/v1beta2:Subscription",
            "b2",
            {"project": "acme-web", "subscriptionId": "b2", "topic": "t", "pushConfig": http},
        ),
        _record(
            "gcp:pubsub/subscription:Subscription",
            "snake",
            {
                "project": "acme-web",
                "name": "snake",
                "topic": "t",
                "push_config": {"push_endpoint": http["pushEndpoint"]},
            },
        ),
    ]
    state = folder / "dev.json"
    state.write_text(json.dumps(deployed_state(records, {"gcp:project": "acme-web"})))
    config = write_policy_config(folder)
    result = CliRunner().invoke(
        app, ["analyze", str(state), "--policy-config", str(config), "-f", "json"]
    )
    return result.exit_code, json.loads(result.stdout)


def test_an_unmapped_subscription_type_in_state_fails_the_run(analyzed) -> None:
    code, report = analyzed
    assert code == 2
    assert "google-native:pubsub/v1beta2:Subscription" in json.dumps(report["error"])


def test_snake_case_keys_in_state_are_read_and_the_findings_kept(analyzed) -> None:
    _, report = analyzed
    (stack,) = report["stacks"]
    found = {(v["policy"], v["urn"].rsplit("::", 1)[-1]) for v in stack["violations"]}
    assert ("push-endpoint-https", "snake") in found
    assert ("push-endpoint-https", "b2") in found  # the pack: cannot be checked
