"""Issue 34 item 4 through `pushguard preview` as users run it: Eventarc triggers of every route
(pulumi-gcp, Google Cloud Native, Config Connector; the scenario of :mod:`tests.eventarc`) in
one program, previewed once. The attacker's trigger (an ``http://`` endpoint in the VPC network,
an account of another project) fails the preview; a compliant trigger passes without a word; a
Cloud Run destination's endpoint is named as not checked: Google manages it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.preview.mocks import PROJECT_VARIABLES
from tests.eventarc import CONFIG, PROGRAM, assert_trigger_findings, policy_config, urn_of


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (folder / "__main__.py").write_text(PROGRAM)
    (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": CONFIG}))
    return folder


@pytest.fixture(scope="module")
def previewed(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str]:
    """`pushguard preview -f json` of the triggers, and the text report of the same run."""
    folder = tmp_path_factory.mktemp("eventarc")
    project = _project(folder / "project")
    config = folder / "policy-config.json"
    config.write_text(json.dumps(policy_config()))
    args = ["preview", str(project), "--policy-config", str(config)]
    with pytest.MonkeyPatch.context() as env:
        for name in PROJECT_VARIABLES:
            env.delenv(name, raising=False)
        result = CliRunner().invoke(app, [*args, "-f", "json"])
        text = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    return result.exit_code, json.loads(result.stdout), text.stdout


def test_the_triggers_of_every_route_are_checked(previewed) -> None:
    code, report, _ = previewed
    assert code == 1  # mandatory violations: the preview fails
    assert_trigger_findings(
        [(v["policy"], v["level"], v["urn"]) for v in report["violations"]],
        [(n["policy"], n["urn"], n["reason"]) for n in report["notChecked"]],
    )


def test_the_attackers_trigger_fails_the_preview_saying_why(previewed) -> None:
    _, _, text = previewed
    assert "Preview FAILED" in text
    assert "gcp-attacker: The trigger's HTTP endpoint uses http://" in text
    assert (
        "kcc-attacker: The trigger's service account pusher@acme-shared.iam.gserviceaccount.com "
        "belongs to project acme-shared (333333333333), not to the trigger's project acme-web "
        "(111111111111)." in text
    )


def test_an_account_the_stack_creates_is_resolved_at_preview(previewed) -> None:
    """``kcc-ok`` names its account by a reference to an ``IAMServiceAccount`` of the stack,
    whose email is unknown at preview: the stack's graph resolves it (no "could not be
    verified" advisory, no violation)."""
    _, report, _ = previewed
    urn = urn_of("kcc-ok")
    assert not [v for v in report["violations"] if v["urn"] == urn]
    assert not [n for n in report["notChecked"] if n["urn"] == urn]
