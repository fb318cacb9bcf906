"""Issue 25 in `pushguard analyze` as users run it: a state file holding push subscriptions
made with Google Cloud Native, Config Connector and the bridged Terraform providers (the
scenarios of :mod:`tests.routes`, created under the mocks as `pulumi up` would) gives each
route's findings."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from tests.routes import (
    ROUTES,
    all_routes,
    assert_route_findings,
    deployed,
    deployed_state,
    write_policy_config,
)


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("routes-state")
    state = folder / "dev.json"
    state.write_text(json.dumps(deployed_state(deployed(), all_routes()[1]), indent=4))
    config = write_policy_config(folder)
    result = CliRunner().invoke(
        app, ["analyze", str(state), "--policy-config", str(config), "-f", "json"]
    )
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_route_in_a_state_file(analyzed, route: str) -> None:
    code, report = analyzed
    (stack,) = report["stacks"]
    assert code == 1
    assert_route_findings(
        route,
        [(v["policy"], v["level"], v["urn"]) for v in stack["violations"]],
        [(n["policy"], n["urn"], n["reason"]) for n in stack["notChecked"]],
    )


def test_an_unmapped_subscription_type_in_state_is_named(analyzed) -> None:
    _, report = analyzed
    (stack,) = report["stacks"]
    named = {n["policy"] for n in stack["notChecked"] if n["urn"].endswith("::orders-trigger")}
    assert "push-endpoint-https" in named, stack["notChecked"]
