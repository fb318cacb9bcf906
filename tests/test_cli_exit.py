"""One report-and-exit path for the gate commands: an unexpected failure is exit 2 with one
paragraph (the traceback only with --debug), and a requested report is still written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pushguard.analyze.runner
import pushguard.audit.command
import pushguard.preview.runner
from pushguard.cli import app

ROOT = Path(__file__).resolve().parents[1]


def _boom(*args: object, **kwargs: object) -> object:
    raise RuntimeError("boom in the middle")


COMMANDS = {
    "preview": (pushguard.preview.runner, "run_preview", ["preview", "--stack", "dev"]),
    "analyze": (pushguard.analyze.runner, "run_analyze", ["analyze", "state.json"]),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unexpected_failure_is_exit_2_with_one_paragraph_and_the_report(
    command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    module, name, args = COMMANDS[command]
    monkeypatch.setattr(module, name, _boom)
    monkeypatch.chdir(ROOT)
    report = tmp_path / "report.json"
    result = CliRunner().invoke(app, [*args, "--format", "json", "--output", str(report)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1] == (
        f"pushguard {command}: error: pushguard {command} failed: RuntimeError: boom in the middle"
    )
    assert "Traceback" not in result.stderr
    written = json.loads(report.read_text())
    assert written["summary"]["exitCode"] == 2
    assert "boom in the middle" in json.dumps(written)


@pytest.mark.parametrize("command", COMMANDS)
def test_debug_shows_the_traceback(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module, name, args = COMMANDS[command]
    monkeypatch.setattr(module, name, _boom)
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, [*args, "--debug"])
    assert result.exit_code == 2
    assert "Traceback" in result.stderr and "_boom" in result.stderr


def test_the_audit_fails_closed_on_an_unexpected_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pushguard.audit.command, "run", _boom)
    result = CliRunner().invoke(app, ["audit", "export.json", "--out", "out"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "pushguard audit: error: RuntimeError: boom in the middle"
