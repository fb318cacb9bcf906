"""Issue 34 item 4 in `pushguard analyze` as users run it: a state file holding Eventarc
triggers of every route (the scenario of :mod:`tests.eventarc`, created under the mocks as
`pulumi up` would) fails on the attacker's trigger, passes the compliant ones without a word and
names a Cloud Run destination's endpoint as not checked: Google manages it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from tests.eventarc import CONFIG, assert_trigger_findings, deployed, policy_config, urn_of
from tests.routes import deployed_state


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("eventarc-state")
    state = folder / "dev.json"
    state.write_text(json.dumps(deployed_state(deployed(), CONFIG), indent=4))
    config = folder / "policy-config.json"
    config.write_text(json.dumps(policy_config()))
    result = CliRunner().invoke(
        app, ["analyze", str(state), "--policy-config", str(config), "-f", "json"]
    )
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    return result.exit_code, json.loads(result.stdout)


def test_the_triggers_in_a_state_file(analyzed) -> None:
    code, report = analyzed
    (stack,) = report["stacks"]
    assert code == 1  # mandatory violations: the run fails
    assert_trigger_findings(
        [(v["policy"], v["level"], v["urn"]) for v in stack["violations"]],
        [(n["policy"], n["urn"], n["reason"]) for n in stack["notChecked"]],
    )


def test_the_attackers_trigger_is_named_in_the_state(analyzed) -> None:
    _, report = analyzed
    (stack,) = report["stacks"]
    said = {(v["policy"], v["urn"]): v["message"] for v in stack["violations"]}
    assert "uses http://" in said[("push-endpoint-https", urn_of("native-attacker"))]
    assert "acme-shared" in said[("push-sa-same-project", urn_of("native-attacker"))]
