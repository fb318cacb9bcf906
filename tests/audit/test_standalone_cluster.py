"""Issue 15: the audit on a real Spark cluster, shipped as the README's "On a cluster" says.

A Spark standalone master and one worker (1 core, 1 GiB) are started from the pip-installed
PySpark on 127.0.0.1, and the audit is submitted to them with ``spark-submit``:

- **shipped**: pushguard is built as a wheel (``pip wheel --no-deps``), copied to
  ``pushguard.zip`` and passed with ``--py-files``. The driver and the executors run an interpreter
  that has pushguard's dependencies (this virtual environment's site-packages, put on its path by a
  ``.pth`` line, which does not run the editable install's finder) but not pushguard: they can only
  import the shipped copy. Its outputs must be byte-identical to a ``local[*]`` run of the same
  export.
- **not shipped**: the driver has pushguard (the project's interpreter), the executors do not;
  the executor check stops the run in seconds with exit code 2, naming the module.

The master and the worker are stopped by killing their process groups (the worker's executors and
their Python workers are in the worker's group), also when a test fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pyspark
import pytest

from . import cai
from .conftest import FIXTURES, fixture_inputs, write_lines

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).resolve().parent
MAIN_SCRIPT = REPO / "pushguard" / "audit" / "__main__.py"
STARTUP_TIMEOUT_S = 120
SUBMIT_TIMEOUT_S = 420
OUTPUTS = ("findings.jsonl", "quarantine/quarantined.jsonl")


def _without_run_time(path: Path) -> bytes:
    """The file's bytes with each row's ``run_time`` (two runs' start times) blanked."""
    return re.sub(rb'"run_time":"[^"]*"', b'"run_time":""', path.read_bytes())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _base_env(home: Path) -> dict[str, str]:
    """No activated venv, no PYTHONPATH: only what the cluster processes are given here."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_HOSTNAME": "localhost",
        "SPARK_CONF_DIR": str(home / "conf"),  # empty: no spark-defaults from elsewhere
    }
    java = shutil.which("java")
    if os.environ.get("JAVA_HOME"):
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    elif java:  # java on this PATH but maybe not on the one above
        env["JAVA_HOME"] = str(Path(java).resolve().parent.parent)
    (home / "conf").mkdir(exist_ok=True)
    return env


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process started in its own session, and everything in its process group."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):  # children that outlived the leader
        os.killpg(process.pid, signal.SIGKILL)


@dataclass
class Cluster:
    url: str
    ui: str
    env: dict[str, str]
    work: Path

    def workers(self) -> int:
        with urllib.request.urlopen(f"{self.ui}/json/", timeout=5) as answer:
            state: dict[str, Any] = json.load(answer)
        return int(state.get("aliveworkers", 0))


def _wait_until(check: Any, what: str, logs: list[Path]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.5)
    tails = "\n".join(f"--- {log}\n{log.read_text(errors='replace')[-3000:]}" for log in logs)
    raise AssertionError(f"{what} did not happen within {STARTUP_TIMEOUT_S} s\n{tails}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")
    base = tmp_path_factory.mktemp("standalone")
    env = _base_env(base)
    env["SPARK_LOG_DIR"] = str(base / "logs")
    env["SPARK_WORKER_DIR"] = str(base / "worker")
    env["SPARK_PID_DIR"] = str(base / "pids")
    for name in ("logs", "worker", "pids"):
        (base / name).mkdir()
    port, ui_port, worker_port, worker_ui = (_free_port() for _ in range(4))
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    started: list[subprocess.Popen[bytes]] = []
    logs: list[Path] = []

    def start(name: str, *args: str) -> None:
        log = base / "logs" / f"{name}.log"
        logs.append(log)
        with log.open("wb") as sink:
            started.append(
                subprocess.Popen(
                    [spark_class, *args],
                    env=env,
                    cwd=base,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # its own process group, killed as a whole
                )
            )

    try:
        start(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(ui_port),
        )
        result = Cluster(
            url=f"spark://127.0.0.1:{port}", ui=f"http://127.0.0.1:{ui_port}", env=env, work=base
        )
        _wait_until(lambda: result.workers() >= 0, "the master's web UI answering", logs)
        start(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            result.url,
            "--host",
            "127.0.0.1",
            "--port",
            str(worker_port),
            "--webui-port",
            str(worker_ui),
            "--cores",
            "1",
            "--memory",
            "1g",
            "--work-dir",
            str(base / "worker"),
        )
        _wait_until(lambda: result.workers() == 1, "the worker registering", logs)
        yield result
    finally:
        for process in reversed(started):
            _stop(process)
    for process in started:
        assert process.poll() is not None, f"process {process.pid} still running"


def _deps_only_python(where: Path) -> Path:
    """A virtual environment that has pushguard's dependencies but not pushguard: a ``.pth`` line
    puts this environment's site-packages on its path, where the editable install's finder is
    never installed (``.pth`` files are run only in site directories, not in added paths)."""
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "project-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


@pytest.fixture(scope="module")
def deps_only_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("exec-venv")
    python = _deps_only_python(where / "venv")
    probe = subprocess.run(
        [str(python), "-c", "import pyarrow, pydantic, idna, pyspark\nimport pushguard"],
        cwd=where,
        env={"PATH": "/usr/bin:/bin", "HOME": str(where)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert "No module named 'pushguard'" in probe.stderr, probe.stderr  # only shipped, or not
    return python


@pytest.fixture(scope="module")
def shipped_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's shipping step, ``pip wheel --no-deps -w dist . && cp dist/... pushguard.zip``,
    run on a copy of the source (the build writes ``build/`` beside it)."""
    work = tmp_path_factory.mktemp("ship")
    source = work / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(
        REPO / "pushguard", source / "pushguard", ignore=shutil.ignore_patterns("__pycache__")
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", "dist", "."],
        cwd=source,
        check=True,
        timeout=300,
    )
    (wheel,) = (source / "dist").glob("pushguard-*.whl")
    shipped = work / "pushguard.zip"
    shutil.copy2(wheel, shipped)
    return shipped


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real third-party fixtures and a scenario with violations of several rules."""
    root = tmp_path_factory.mktemp("export")
    shutil.copytree(FIXTURES, root / "fixtures")
    account = "push-auth@acme-orders.iam.gserviceaccount.com"
    write_lines(
        root / "scenario" / "resource.json",
        [
            cai.folder(),
            cai.project("acme-orders", "123456789012"),
            cai.service_account("acme-orders", "123456789012", "push-auth", "111"),
            cai.subscription("acme-orders", "123456789012", "clear", "http://orders.example/p"),
            cai.subscription(
                "acme-orders",
                "123456789012",
                "token",
                "https://orders.example/push?token=abc",
                account=account,
            ),
            cai.subscription(
                "acme-orders",
                "123456789012",
                "good",
                "https://orders-3kq2x7ab9c-ew.a.run.app/push",
                account=account,
                audience="orders",
            ),
            cai.run_service(
                "acme-orders", "123456789012", "orders", "https://orders-3kq2x7ab9c-ew.a.run.app"
            ),
        ],
    )
    return root


def audit_inputs(export: Path) -> list[str]:
    """The export's inputs as arguments: the scenario and the fixtures, each tfplan2cai plan
    as a snapshot of its own (:func:`tests.audit.conftest.fixture_inputs`)."""
    paths, times = fixture_inputs(export / "fixtures")
    undated = [p for p in paths if p not in times]
    dated = [f"--snapshot={time.isoformat()}={path}" for path, time in times.items()]
    return [str(export / "scenario"), *undated, *dated]


@dataclass
class _Started:
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path


def _start(command: list[str], env: dict[str, str], cwd: Path, name: str) -> _Started:
    """Start ``command`` in its own process group, its output to files (Spark's INFO log would
    fill a pipe while another run is awaited)."""
    stdout, stderr = cwd / f"{name}.stdout", cwd / f"{name}.stderr"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            command,
            env=env,
            cwd=cwd,  # not the checkout: nothing finds pushguard in the current folder
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return _Started(process, stdout, stderr)


def _finish(started: _Started) -> subprocess.CompletedProcess[str]:
    process = started.process
    try:
        process.wait(timeout=SUBMIT_TIMEOUT_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return subprocess.CompletedProcess(
        process.args,
        process.returncode,
        started.stdout.read_text(errors="replace"),
        started.stderr.read_text(errors="replace"),
    )


def _submit(
    cluster: Cluster,
    *,
    driver_python: Path,
    executor_python: Path,
    py_files: Path | None,
    export: Path,
    out: Path,
) -> _Started:
    """Start ``spark-submit`` of the audit to the cluster, as the README shows."""
    command = [
        str(SPARK_HOME / "bin" / "spark-submit"),
        "--master",
        cluster.url,
        "--conf",
        f"spark.pyspark.python={executor_python}",
        "--conf",
        f"spark.pyspark.driver.python={driver_python}",
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.ui.showConsoleProgress=false",
        "--conf",
        "spark.sql.shuffle.partitions=2",  # one core: Spark's 200 would be 200 tasks a join
        "--executor-memory",
        "1g",
    ]
    if py_files is not None:
        command += ["--py-files", str(py_files)]
    command += [str(MAIN_SCRIPT), *audit_inputs(export), "--out", str(out)]
    out.parent.mkdir(parents=True, exist_ok=True)
    return _start(command, cluster.env, out.parent, "spark-submit")


def _summary_without_timings(out: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    summary.pop("timings_s")
    return summary


def test_without_shipping_the_executor_check_exits_2_naming_the_module(
    cluster: Cluster, deps_only_python: Path, export: Path, tmp_path: Path
) -> None:
    started = time.monotonic()
    done = _finish(
        _submit(
            cluster,
            driver_python=Path(sys.executable),  # the submitting machine has pushguard
            executor_python=deps_only_python,  # the cluster does not, and nothing was shipped
            py_files=None,
            export=export,
            out=tmp_path / "out",
        )
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr[-4000:]
    # spark-submit merges the Python driver's stderr into its stdout (Spark's PythonRunner);
    # Spark's own log (the failed task, with the worker's traceback) is on stderr
    (message,) = [line for line in done.stdout.splitlines() if "pushguard audit: error:" in line]
    assert message.startswith("pushguard audit: error: the Spark executors' Python"), message
    assert "cannot import 'pushguard'" in message
    assert str(deps_only_python) in message  # names the interpreter that lacks it
    assert "--py-files" in message and "spark.archives" in message
    assert not (tmp_path / "out" / "findings.jsonl").exists()
    assert elapsed < 90, f"the check took {elapsed:.0f} s"


def test_shipped_audit_on_the_cluster_matches_local_mode(
    cluster: Cluster,
    deps_only_python: Path,
    shipped_zip: Path,
    export: Path,
    tmp_path: Path,
) -> None:
    on_cluster = tmp_path / "cluster"
    local = tmp_path / "local"
    submitted = _submit(
        cluster,
        driver_python=deps_only_python,
        executor_python=deps_only_python,
        py_files=shipped_zip,
        export=export,
        out=on_cluster,
    )
    # the reference, meanwhile: the same export in local mode (the default master, local[*])
    reference = _finish(
        _start(
            [sys.executable, "-m", "pushguard.audit", *audit_inputs(export), "--out", str(local)],
            {**cluster.env, "PATH": f"{Path(sys.executable).parent}:{cluster.env['PATH']}"},
            tmp_path,
            "local",
        )
    )
    done = _finish(submitted)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # violations
    assert f"outputs in {on_cluster}" in done.stdout
    assert reference.returncode == 1, reference.stderr[-4000:]

    for name in OUTPUTS:
        assert _without_run_time(on_cluster / name) == _without_run_time(local / name), name
    assert (
        pq.read_table(on_cluster / "findings.parquet")
        .drop_columns(["run_time"])
        .equals(pq.read_table(local / "findings.parquet").drop_columns(["run_time"]))
    )
    cluster_summary = _summary_without_timings(on_cluster)
    assert cluster_summary == _summary_without_timings(local)
    findings = [json.loads(line) for line in (local / "findings.jsonl").read_text().splitlines()]
    assert {f["rule_id"] for f in findings if f["status"] == "violation"} >= {
        "push-auth-oidc",
        "push-endpoint-https",
        "push-no-query-token",
    }
    assert cluster_summary["lines"]["quarantined"] > 0  # forseti's comment lines, located alike
