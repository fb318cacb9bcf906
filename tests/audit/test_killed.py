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
import time
import uuid
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


def _processes_with(marker: str) -> list[int]:
    """The processes whose environment holds ``marker`` (this test's run and its children)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(PUSHGUARD is None, reason="the pushguard console script is not installed")
def test_a_run_stopped_while_spark_starts_leaves_no_jvm_and_no_trace(
    previous: Path, tmp_path: Path
) -> None:
    """Issue 35, item 8: SIGTERM while PySpark waits for the JVM it started (the command said
    it is starting Spark, and its ``java`` process exists). Everything written to stderr, also
    after the command exited, is read until the last writer closes it."""
    marker = f"PUSHGUARD_TEST_RUN={uuid.uuid4().hex}"
    name, value = marker.split("=")
    env = dict(os.environ, SPARK_DRIVER_MEMORY="1g", SPARK_LOCAL_IP="127.0.0.1", **{name: value})
    export = previous.parent / "in" / "export.json"
    process = subprocess.Popen(
        [str(PUSHGUARD), "audit", str(export), "--out", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    starting, closed = threading.Event(), threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if line.strip() == "pushguard audit: starting Spark":
                starting.set()
        closed.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert starting.wait(timeout=240), "".join(lines)
        _java_under_soon(process.pid)
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=240)
        closed.wait(timeout=90)  # a JVM left behind keeps stderr open, and writes to it
    finally:
        left = [pid for pid in _processes_with(marker) if pid != os.getpid()]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    stderr = "".join(lines)
    assert code == 2, stderr
    assert left == [], f"processes left running after the command exited:\n{stderr}"
    errors = [line for line in lines if line.startswith("pushguard audit: error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], stderr
    assert "stopped by SIGTERM while starting Spark" in errors[0]
    for trace in ("Exception in thread", "\tat ", "Traceback"):
        assert trace not in stderr, stderr


def _java_under_soon(pid: int) -> int:
    """The ``java`` process under ``pid``, as soon as it exists (at most two minutes)."""
    for _ in range(1200):
        try:
            return _java_under(pid)
        except AssertionError:
            time.sleep(0.1)
    return _java_under(pid)


_NOISY_RUN = """
import sys
from pyspark.sql import SparkSession
from pushguard.audit import command, job

collect = job.collect_aggregates

def collect_among_scheduler_records(*args, **kwargs):
    jvm = SparkSession.getActiveSession().sparkContext._jvm
    scheduler = jvm.org.slf4j.LoggerFactory.getLogger("org.apache.spark.scheduler.DAGScheduler")
    gone = jvm.org.apache.spark.SparkException(
        "[_LEGACY_ERROR_TEMP_3024] Attempted to access non-existent accumulator 7"
    )
    scheduler.error("Failed to update accumulator 7 (Unknown class) for task 0", gone)
    scheduler.error("A scheduler error of another kind")
    return collect(*args, **kwargs)

job.collect_aggregates = collect_among_scheduler_records
sys.exit(command.run(sys.argv[1:2], sys.argv[2]))
"""


def test_a_successful_run_prints_no_accumulator_trace(previous: Path, tmp_path: Path) -> None:
    """Issue 35, item 8: Spark's scheduler logs ``Failed to update accumulator N (...) for
    task M`` with a Java trace when a task reports metrics whose accumulator the driver has
    already collected (``DAGScheduler.updateAccumulators``); successful runs printed dozens.
    That race needs more cores than the test machines have, so the run (the command, in a fresh
    process) is given the scheduler's record through the scheduler's own logger, exactly as
    Spark writes it, with another scheduler error that must still show."""
    export = previous.parent / "in" / "export.json"
    env = dict(os.environ, SPARK_DRIVER_MEMORY="1g", SPARK_LOCAL_IP="127.0.0.1")
    done = subprocess.run(
        [sys.executable, "-c", _NOISY_RUN, str(export), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    assert done.returncode == 1, done.stderr[-3000:]
    assert "A scheduler error of another kind" in done.stderr
    assert "accumulator" not in done.stderr, done.stderr
    assert "\tat " not in done.stderr, done.stderr
    # the filter keeps the scheduler at Spark's level: its INFO records once flooded stderr
    assert " INFO DAGScheduler" not in done.stderr, done.stderr[-3000:]
