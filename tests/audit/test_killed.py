"""Issue 22, "Done when": a real ``pushguard audit`` (the console script, as users run it) is
killed while it runs into an --out that holds a previous completed run.

SIGINT and SIGTERM are sent to the command when it prints a phase line on stderr; SIGKILL goes to
its JVM (the ``java`` process under it). Each time the previous outputs stay byte-identical, the
run ends with one ``pushguard audit: error:`` paragraph and exit code 130 (SIGINT) or 2, and
stderr holds no Python traceback and no Java trace. One previous run (written in-process on the
tests' shared Spark session) serves every case; each case costs one JVM start.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from pushguard.audit import command

from . import cai
from .conftest import write_lines

PUSHGUARD = shutil.which("pushguard", path=str(Path(sys.executable).parent))


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def previous(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A completed audit's --out over a small export (40 subscriptions, a third of them over
    http), published as users run it; the export is beside it in ``in/``."""
    base = tmp_path_factory.mktemp("killed")
    assets = [
        cai.subscription(
            "acme-orders",
            "123456789012",
            f"sub-{n}",
            f"{'http' if n % 3 == 0 else 'https'}://orders.example.com/push/{n}",
        )
        for n in range(40)
    ]
    export = write_lines(base / "in" / "export.json", assets)
    out = base / "out"
    assert command.run([str(export)], str(out), stderr=io.StringIO()) == 1
    return out


def _descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (from /proc: each process's parent)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _java_under(pid: int) -> int:
    for child in _descendants(pid):
        try:
            if Path(f"/proc/{child}/comm").read_text().strip() == "java":
                return child
        except OSError:
            continue
    raise AssertionError(f"no java process under {pid}")


@pytest.mark.skipif(PUSHGUARD is None, reason="the pushguard console script is not installed")
@pytest.mark.parametrize(
    ("how", "phase", "code"),
    [
        ("SIGINT", "reading", 130),
        ("SIGTERM", "writing findings", 2),
        ("SIGKILL of the JVM", "writing findings", 2),
    ],
)
def test_a_killed_audit_leaves_the_previous_outputs_byte_identical(
    previous: Path, how: str, phase: str, code: int
) -> None:
    before = _tree(previous)
    export = previous.parent / "in" / "export.json"
    env = dict(os.environ, SPARK_DRIVER_MEMORY="1g", SPARK_LOCAL_IP="127.0.0.1")
    process = subprocess.Popen(
        [str(PUSHGUARD), "audit", str(export), "--out", str(previous), "--master", "local[1]"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None and process.stdout is not None
    lines: list[str] = []
    sent = threading.Event()
    watchdog = threading.Timer(240, process.kill)  # a hung run fails the test, not CI
    watchdog.start()
    try:
        for line in process.stderr:
            lines.append(line)
            if not sent.is_set() and line.strip() == f"pushguard audit: {phase}":
                if how == "SIGKILL of the JVM":
                    os.kill(_java_under(process.pid), signal.SIGKILL)
                else:
                    process.send_signal(getattr(signal, how))
                sent.set()
        got = process.wait()
    finally:
        watchdog.cancel()
    stdout = process.stdout.read()
    stderr = "".join(lines)
    assert sent.is_set(), f"the run never printed 'pushguard audit: {phase}':\n{stderr}"
    assert got == code, stderr
    assert _tree(previous) == before, "the previous outputs are byte-identical"
    errors = [line for line in lines if line.startswith("pushguard audit: error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], stderr
    assert f"the previous outputs in {previous} are as they were" in errors[0]
    if how != "SIGKILL of the JVM":
        assert f"stopped by {how} while " in errors[0]
    assert sorted(p.name for p in previous.parent.iterdir()) == ["in", "out"], (
        "no staging folder left beside --out"
    )
    for trace in ("Traceback", "py4j", "at org.apache", "Exception in thread", "ERROR"):
        assert trace not in stderr, stderr
    assert stdout == ""
