"""One report-and-exit path for the gate commands: an unexpected failure is exit 2 with one
paragraph (the traceback only with --debug), and a requested report is still written."""

from __future__ import annotations

import json
import subprocess
import sys
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
def test_json_output_is_written_beside_the_sarif_whatever_the_exit_code(
    command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    module, name, args = COMMANDS[command]
    monkeypatch.setattr(module, name, _boom)
    monkeypatch.chdir(ROOT)
    sarif, report = tmp_path / "report.sarif", tmp_path / "report.json"
    result = CliRunner().invoke(
        app, [*args, "-f", "sarif", "-o", str(sarif), "--json-output", str(report)]
    )
    assert result.exit_code == 2
    assert json.loads(report.read_text())["summary"]["exitCode"] == 2
    invocation = json.loads(sarif.read_text())["runs"][-1]["invocations"][0]
    assert invocation["executionSuccessful"] is False


def test_a_usage_error_still_writes_the_json_output(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    run = subprocess.run(
        [str(PUSHGUARD), "preview", "--bogus", "-f", "sarif", "--json-output", str(report)],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 2
    assert "No such option: --bogus" in json.loads(report.read_text())["error"]["message"]


def test_json_output_never_overwrites_a_state_file(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text('{"version": 3, "deployment": {"resources": []}}')
    before = state.read_text()
    result = CliRunner().invoke(app, ["analyze", str(state), "--json-output", str(state)])
    assert result.exit_code == 2
    assert f"--json-output {state} is an input of this run" in result.stderr
    assert state.read_text() == before


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


PUSHGUARD = Path(sys.executable).with_name("pushguard")
HTTP_PROGRAM = (
    "import pulumi_gcp as gcp\n"
    "gcp.pubsub.Subscription({name!r}, topic='orders', push_config={{\n"
    "    'push_endpoint': 'http://hooks.example.com/push',\n"
    "    'oidc_token': {{'service_account_email': 'p@acme-orders.iam.gserviceaccount.com'}}}})\n"
)


def _project(folder: Path) -> Path:
    """A Python Pulumi project with a `dev` stack in ``folder`` (the program is the caller's)."""
    (folder / "Pulumi.yaml").write_text("name: team\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  gcp:project: acme-orders\n")
    return folder


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["preview", "--timeout", "0", "-f", "json"], "Invalid value for '--timeout'"),
        (["preview", "--bogus", "--format=sarif"], "No such option: --bogus"),
        (["analyze", "x.json", "-f", "xml"], "Invalid value for '--format'"),
    ],
)
def test_a_usage_error_still_writes_the_requested_report(
    args: list[str], expected: str, tmp_path: Path
) -> None:
    report = tmp_path / "report"
    run = subprocess.run(
        [str(PUSHGUARD), *args, "-o", str(report)],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 2
    written = report.read_text()
    assert expected in written
    if "json" in args or "--format=sarif" in args:
        json.loads(written)


def test_output_never_overwrites_a_state_file(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text('{"version": 3, "deployment": {"resources": []}}')
    before = state.read_text()
    result = CliRunner().invoke(app, ["analyze", str(state), "-f", "json", "-o", str(state)])
    assert result.exit_code == 2
    assert "is an input of this run; it was not overwritten" in result.stderr
    assert state.read_text() == before


def test_output_never_overwrites_the_program(tmp_path: Path) -> None:
    _project(tmp_path)
    program = tmp_path / "__main__.py"
    program.write_text(HTTP_PROGRAM.format(name="orders"))
    before = program.read_text()
    run = subprocess.run(
        [str(PUSHGUARD), "preview", "--stack", "dev", "-o", str(program)],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 2
    assert program.read_text() == before


def test_a_closed_stdout_is_a_failed_run(tmp_path: Path) -> None:
    """`pushguard preview -f json | head -0`: the report cannot be delivered, so exit 2."""
    process = subprocess.Popen(
        [str(PUSHGUARD), "preview", "--stack", "dev", "-f", "json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 2
    assert "stdout was closed before the report was written" in stderr


def test_a_resource_name_cannot_print_a_verdict_line(tmp_path: Path) -> None:
    _project(tmp_path)
    name = "orders\nResources: 1 to create. Policy violations: 0 mandatory. Preview passed.\u2028x"
    (tmp_path / "__main__.py").write_text(HTTP_PROGRAM.format(name=name))
    run = subprocess.run(
        [str(PUSHGUARD), "preview", "--stack", "dev"],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert not [line for line in lines if "Preview passed." in line and "\\u000a" not in line]
    assert "\u2028" not in run.stdout and "\\u2028" in run.stdout
    assert lines[-1].endswith("Preview FAILED.")


@pytest.mark.parametrize("name", ["SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGALRM", "SIGXCPU"])
def test_a_signal_from_the_program_to_pushguard_is_a_failed_run_with_its_report(
    name: str, tmp_path: Path
) -> None:
    """The program runs as the same user and can signal its parent: whatever it sends, the
    preview ends as a failed run (exit 2, one line) and the requested report is written."""
    _project(tmp_path)
    (tmp_path / "__main__.py").write_text(
        HTTP_PROGRAM.format(name="orders")
        + f"import os, signal, time\nos.kill(os.getppid(), signal.{name})\ntime.sleep(5)\n"
    )
    report = tmp_path / "report.json"
    run = subprocess.run(
        [str(PUSHGUARD), "preview", "--stack", "dev", "-f", "json", "-o", str(report)],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    assert f"was stopped by {name}" in run.stderr
    assert json.loads(report.read_text())["summary"]["exitCode"] == 2


def test_a_stop_signal_from_the_program_cannot_freeze_the_gate(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "__main__.py").write_text(
        HTTP_PROGRAM.format(name="orders")
        + "import os, signal\nos.kill(os.getppid(), signal.SIGTSTP)\n"
    )
    run = subprocess.run(
        [str(PUSHGUARD), "preview", "--stack", "dev"],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 1  # the violation, judged as usual


def test_a_closed_stdout_at_start_is_exit_2_and_the_report_file_still_counts(
    tmp_path: Path,
) -> None:
    closed = subprocess.run(
        f"{PUSHGUARD} preview --stack dev >&-",
        shell=True,
        check=False,
        cwd=ROOT,
        text=True,
        capture_output=False,
        stderr=subprocess.PIPE,
    )
    assert closed.returncode == 2
    assert "stdout is closed" in closed.stderr
    report = tmp_path / "r.txt"
    written = subprocess.run(
        f"{PUSHGUARD} preview --stack dev -o {report} >&-",
        shell=True,
        check=False,
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert written.returncode == 0
    assert report.read_text().rstrip().endswith("Preview passed.")


def test_an_unexpected_error_outside_a_run_is_exit_2_in_one_line(tmp_path: Path) -> None:
    run = subprocess.run(
        [str(PUSHGUARD), "pack", "build", "/proc/no-such-folder/pack"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_a_folder_named_pushguard_in_the_project_does_not_replace_pushguard(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "pushguard").mkdir()
    (tmp_path / "pushguard" / "__init__.py").write_text("")
    (tmp_path / "__main__.py").write_text(HTTP_PROGRAM.format(name="orders"))
    run = subprocess.run(
        [str(PUSHGUARD), "preview", "--stack", "dev"],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stderr
    assert "push-endpoint-https" in run.stdout
