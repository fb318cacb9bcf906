"""Issue 34 in `pushguard analyze` as users run it: a state holding a resource of a type no route
maps whose inputs or outputs are shaped like a push configuration fails the run (exit 2) naming
its type and the field, whatever the policies' levels; a Crossplane subscription in the state
is checked (the scenarios of every route are in tests/analyze/test_routes_state.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.gate.result import ResourceRecord
from tests.routes import deployed_state, policy_config

ROOT = "urn:pulumi:dev::team::pulumi:pulumi:Stack::team-dev"
HTTP = "http://hooks.example.com/push"


def _record(
    kind: str, name: str, inputs: dict[str, Any], outputs: dict[str, Any] | None = None, **kw: Any
) -> ResourceRecord:
    return ResourceRecord(
        urn=f"urn:pulumi:dev::team::{kind}::{name}",
        type=kind,
        name=name,
        parent=ROOT,
        custom=kw.get("custom", True),
        provider="",
        inputs=inputs,
        dependencies=(),
        property_dependencies={},
        outputs=inputs if outputs is None else outputs,
    )


def _analyze(folder: Path, records: list[ResourceRecord]) -> tuple[int, dict[str, Any], str]:
    state = folder / "dev.json"
    state.write_text(json.dumps(deployed_state(records, {})))
    config = folder / "policy-config.json"
    config.write_text(json.dumps(policy_config(enforcementLevel="advisory")))
    result = CliRunner().invoke(
        app, ["analyze", str(state), "--policy-config", str(config), "-f", "json"]
    )
    return result.exit_code, json.loads(result.stdout), result.stdout + result.stderr


def test_a_push_shaped_resource_of_an_unknown_type_fails_the_run(tmp_path: Path) -> None:
    """Before: exit 0 and no finding."""
    thing = {"apiVersion": "example.com/v1", "kind": "Thing", "spec": {"x": [{"a": 1}]}}
    read_back = {**thing, "status": {"x": [{"push_endpoint": HTTP}]}}  # only in the outputs
    records = [
        _record("kubernetes:example.com/v1:Thing", "thing", thing, read_back),
        _record("acme:index/queue:Queue", "queue", {"PushConfig": {"Endpoint": HTTP}}),
        _record("acme:index:Wrapper", "wrapper", {"pushEndpoint": HTTP}, custom=False),
    ]
    code, report, text = _analyze(tmp_path, records)
    assert code == 2, text
    error = json.dumps(report["error"])
    assert "kubernetes:example.com/v1:Thing 'thing' (status.x[0].push_endpoint)" in error
    assert "acme:index/queue:Queue 'queue' (PushConfig)" in error
    assert "wrapper" not in error  # a component: its children are judged
    (stack,) = report["stacks"]
    found = {(v["urn"].rsplit("::", 1)[-1], v["level"]) for v in stack["violations"]}
    assert found == {("thing", "mandatory"), ("queue", "mandatory")}
