"""Issue 15: the audit runs where users run it (a cron job or CI step with the virtual environment
not activated), checks its executors before the first real stage, and every failed run exits 2
with a one-paragraph message (a traceback only with ``--debug``)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from py4j.protocol import Py4JNetworkError
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from pushguard.audit import command
from pushguard.audit.command import default_driver_memory, local_defaults, missing_module
from pushguard.cli import app

from .conftest import write_lines
from .test_inputs import GOOD

SCRIPT = Path(sys.executable).parent / "pushguard"
GIB = 1024**3


def _bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """What a cron job has: no activated venv, no PYTHONPATH, PATH of the system only."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    if os.environ.get("JAVA_HOME"):
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    env.update(extra)
    return env


def _run_script(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    export = write_lines(tmp_path / "export.json", [GOOD])
    return subprocess.run(
        [str(SCRIPT), "audit", str(export), "--out", str(tmp_path / "out")],
        env=env,
        cwd=tmp_path,  # not the checkout: the workers must not find pushguard in the cwd
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_console_script_runs_without_an_activated_venv(tmp_path: Path) -> None:
    done = _run_script(tmp_path, _bare_env(tmp_path))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert (tmp_path / "out" / "findings.jsonl").is_file()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["lines"]["parsed"] == 1


def _system_python_lacks_pushguard(tmp_path: Path) -> bool:
    if not Path("/usr/bin/python3").exists():
        return False
    done = subprocess.run(
        ["/usr/bin/python3", "-c", "import pushguard"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        check=False,
    )
    return done.returncode != 0


def test_executors_without_pushguard_stop_the_run_with_exit_2(tmp_path: Path) -> None:
    if not _system_python_lacks_pushguard(tmp_path):
        pytest.skip("/usr/bin/python3 can import pushguard")
    done = _run_script(tmp_path, _bare_env(tmp_path, PYSPARK_PYTHON="/usr/bin/python3"))
    assert done.returncode == 2, done.stderr[-3000:]
    assert "pushguard audit: error:" in done.stderr
    assert "'pushguard'" in done.stderr
    assert "--py-files" in done.stderr and "spark.archives" in done.stderr
    # Spark's own log shows the failed task; the command adds no traceback of its own
    assert str(SCRIPT) not in done.stderr
    assert "pushguard audit: error:" in done.stderr.rstrip().splitlines()[-1]
    assert not (tmp_path / "out" / "findings.jsonl").exists()


def test_driver_memory_is_half_the_machine_within_bounds() -> None:
    assert default_driver_memory(24 * GIB) == "12g"
    assert default_driver_memory(23 * GIB + 500 * 1024**2) == "11g"
    assert default_driver_memory(64 * GIB) == "16g"
    assert default_driver_memory(1 * GIB) == "1g"
    assert default_driver_memory(3 * GIB) == "1g"
    assert default_driver_memory(0) == "1g"


def test_local_defaults_respect_what_the_user_set() -> None:
    exe = "/opt/venv/bin/python"
    everything = local_defaults({}, executable=exe, memory_bytes=8 * GIB)
    assert everything == {
        "spark.pyspark.python": exe,
        "spark.pyspark.driver.python": exe,
        "spark.driver.memory": "4g",
    }
    assert (
        local_defaults(
            {"PYSPARK_PYTHON": "/usr/bin/python3", "SPARK_DRIVER_MEMORY": "2g"},
            executable=exe,
            memory_bytes=8 * GIB,
        )
        == {}
    )
    assert local_defaults(
        {}, executable=exe, memory_bytes=8 * GIB, configured={"spark.pyspark.python", "x"}
    ) == {"spark.driver.memory": "4g"}


def test_missing_module_is_read_from_the_worker_error() -> None:
    text = (
        "An error occurred while calling o42.collect.\n: org.apache.spark.SparkException: ...\n"
        '  File "<frozen importlib._bootstrap>", line 1140\n'
        "ModuleNotFoundError: No module named 'pydantic'\n\tat org.apache.spark..."
    )
    assert missing_module(text) == "pydantic"
    assert missing_module("py4j.protocol.Py4JNetworkError: Answer from Java side is empty") is None


def test_unwritable_output_folder_exits_2_without_a_traceback(
    spark: SparkSession, tmp_path: Path
) -> None:
    export = write_lines(tmp_path / "export.json", [GOOD])
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = CliRunner().invoke(app, ["audit", str(export), "--out", str(blocker / "out")])
    assert result.exit_code == 2, result.output
    assert "pushguard audit: error:" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "error",
    [
        Py4JNetworkError("Answer from Java side is empty"),
        ConnectionRefusedError(111, "Connection refused"),
        RuntimeError("something else"),
    ],
)
def test_any_failed_run_exits_2_with_one_paragraph(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise error

    monkeypatch.setattr(command, "run_audit", broken)
    (tmp_path / "in").mkdir()
    stderr = io.StringIO()
    code = command.run([str(tmp_path / "in")], str(tmp_path / "out"), stderr=stderr)
    assert code == 2
    message = stderr.getvalue()
    assert "Traceback" not in message
    errors = [line for line in message.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("pushguard audit: error:")
    assert message.rstrip().splitlines()[-1] == errors[0]  # after the phases, one paragraph

    stderr = io.StringIO()
    code = command.run([str(tmp_path / "in")], str(tmp_path / "out"), stderr=stderr, debug=True)
    assert code == 2
    assert "Traceback" in stderr.getvalue()


def test_cli_has_a_debug_option(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise Py4JNetworkError("Answer from Java side is empty")

    monkeypatch.setattr(command, "run_audit", broken)
    (tmp_path / "in").mkdir()
    result = CliRunner().invoke(
        app, ["audit", str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--debug"]
    )
    assert result.exit_code == 2, result.output
    assert "Traceback" in result.output and "Py4JNetworkError" in result.output


def test_a_run_shows_its_phases_on_stderr(spark: SparkSession, tmp_path: Path) -> None:
    export = write_lines(tmp_path / "export.json", [GOOD])
    result = CliRunner().invoke(app, ["audit", str(export), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    for phase in ("reading", "parsing", "joining", "evaluating", "writing findings"):
        assert f"pushguard audit: {phase}" in result.stderr
    assert "pushguard audit: parsing" not in result.stdout
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["lines"]["read"] == 1
