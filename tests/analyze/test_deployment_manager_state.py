"""Issue 34 in `pushguard analyze` as users run it: a state file holding Deployment Manager
deployments. The push subscriptions a deployment's configuration declares are judged, each on
the deployment; a deployment whose configuration cannot be read (a template import, a reference
in the push endpoint, YAML that does not parse, a push config set by an action, a configuration
that stays encrypted in the state) fails the run (exit 2) naming why. One analysis for the
module."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY
from pushguard.gate.result import ResourceRecord
from tests.deployment_manager import (
    DEPLOYMENT,
    PROJECT,
    TWO_SUBSCRIPTIONS,
    UNREADABLE,
    target,
    urn,
)
from tests.routes import deployed_state, write_policy_config

ROOT = "urn:pulumi:dev::team::pulumi:pulumi:Stack::team-dev"
ENCRYPTED = {SIG_KEY: SECRET_SIG, "ciphertext": "v1:AAAAENpYWhlcnRleHQtb2YtdGhlLWNvbmZpZw=="}
"""A secret as a state exported without --show-secrets holds it."""


def _deployment(name: str, inputs: dict[str, Any]) -> ResourceRecord:
    # pulumi-gcp's state echoes the inputs and fills in the provider's project
    outputs = {**inputs, "project": PROJECT, "deploymentId": f"{name}-id"}
    return ResourceRecord(
        urn=urn(name),
        type=DEPLOYMENT,
        name=name,
        parent=ROOT,
        custom=True,
        provider="",
        inputs=inputs,
        dependencies=(),
        property_dependencies={},
        outputs=outputs,
    )


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("dm-state")
    records = [_deployment(case, inputs) for case, (inputs, _) in sorted(UNREADABLE.items())]
    records += [
        _deployment("sealed", target(ENCRYPTED)),
        _deployment("orders", target(TWO_SUBSCRIPTIONS)),
    ]
    state = folder / "dev.json"
    state.write_text(json.dumps(deployed_state(records, {"gcp:project": PROJECT})))
    config = write_policy_config(folder)
    result = CliRunner().invoke(
        app, ["analyze", str(state), "--policy-config", str(config), "-f", "json"]
    )
    return result.exit_code, json.loads(result.stdout)


def test_each_deployment_that_cannot_be_read_fails_the_run_naming_why(analyzed) -> None:
    code, report = analyzed
    assert code == 2
    message = json.dumps(report["error"])
    for case, (_, why) in UNREADABLE.items():
        assert f"{DEPLOYMENT} '{case}'" in message and why in message, (case, message)
    assert f"{DEPLOYMENT} 'sealed'" in message
    assert "target.config.content is not known offline" in message
    (stack,) = report["stacks"]
    for case in (*UNREADABLE, "sealed"):
        levels = {
            v["policy"]: v["level"]
            for v in stack["violations"]
            if v["urn"] == urn(case) and "cannot be checked" in v["message"]
        }
        assert levels.get("push-endpoint-https") == "mandatory", (case, stack["violations"])


def test_each_subscription_of_a_deployment_in_state_is_judged(analyzed) -> None:
    _, report = analyzed
    (stack,) = report["stacks"]
    https = [
        v
        for v in stack["violations"]
        if v["policy"] == "push-endpoint-https" and v["urn"] == urn("orders")
    ]
    named = sorted(v["message"].rsplit("\n", 1)[-1].split(":", 1)[0] for v in https)
    assert named == ["orders/first", "orders/second"], https
    assert all(v["level"] == "mandatory" for v in https)
