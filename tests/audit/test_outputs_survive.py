"""Issue 22: the audit's outputs survive a failed or stopped run, and usage errors come before
Spark starts.

A run writes into a staging folder and publishes it as --out at the end (with `_COMPLETE`
written last); a run that fails or is stopped in any phase leaves the previous outputs
byte-identical and says so in one paragraph. Usage errors are tested with no `java` on PATH: they
must be found before Spark (and its JVM) would start.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from contextlib import redirect_stdout
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

from pushguard.audit import command, job
from pushguard.audit.publish import MARKER
from pushguard.audit.summary import AuditSummary
from pushguard.policy.exceptions import utc_today
from pushguard.rules import RULES
from pushguard.rules.identity import cause, finding_id

from . import cai
from .conftest import write_lines
from .test_inputs import GOOD


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir() if p.name != folder.name)


@pytest.fixture(scope="module")
def previous(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A completed audit's --out (published as users run it)."""
    base = tmp_path_factory.mktemp("survive")
    export = write_lines(base / "in" / "export.json", [GOOD])
    out = base / "work" / "out"
    code = command.run([str(export)], str(out), stderr=io.StringIO())
    assert code == 1
    return out


def test_a_completed_run_is_published_with_its_marker_last(previous: Path) -> None:
    files = _tree(previous)
    assert {"findings.jsonl", "findings.parquet", "summary.json", "report.html", MARKER} <= set(
        files
    )
    marker = json.loads(files[MARKER])
    assert marker["runId"] and marker["runTime"].endswith("Z")
    newest = max(p.stat().st_mtime_ns for p in previous.rglob("*") if p.name != MARKER)
    assert (previous / MARKER).stat().st_mtime_ns >= newest
    assert _siblings(previous) == [], "no staging folder left beside --out"


def _stop_in(monkeypatch: pytest.MonkeyPatch, target: str, how: str) -> None:
    def stopped(*_: object, **__: object) -> None:
        if how == "SIGTERM":
            os.kill(os.getpid(), signal.SIGTERM)  # through the audit's own handler
        if how == "SIGINT":
            raise KeyboardInterrupt
        if how == "SIGINT in py4j":  # what py4j raises in place of it (CI at stop 44)
            try:
                os.kill(os.getpid(), signal.SIGINT)
            except KeyboardInterrupt:
                raise Py4JError("Gateway must be connected to send cancel cmd.") from None
        raise RuntimeError("the JVM went away")

    monkeypatch.setattr(job, target, stopped)


@pytest.mark.parametrize(
    ("phase", "target", "how", "code"),
    [
        ("reading", "discover", "SIGINT", 130),
        ("parsing", "assets_and_quarantine", "SIGTERM", 2),
        ("writing quarantine", "write_quarantine", "SIGINT", 130),
        ("reading", "discover", "SIGINT in py4j", 130),
        ("summarising", "render", "SIGTERM", 2),
        ("joining", "subscription_facts", "failure", 2),
    ],
)
def test_a_stopped_or_failed_run_leaves_the_previous_outputs_byte_identical(
    spark: SparkSession,
    previous: Path,
    monkeypatch: pytest.MonkeyPatch,
    phase: str,
    target: str,
    how: str,
    code: int,
) -> None:
    before = _tree(previous)
    export = previous.parents[1] / "in" / "export.json"
    _stop_in(monkeypatch, target, how)
    stderr = io.StringIO()
    try:
        got = command.run([str(export)], str(previous), stderr=stderr)
    finally:
        spark.sparkContext.setLogLevel("ERROR")  # a signal silences the JVM's log
    assert got == code
    assert _tree(previous) == before
    assert _siblings(previous) == [], "the staging folder is removed"
    lines = stderr.getvalue().splitlines()
    errors = [line for line in lines if line.startswith("pushguard audit: error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], lines
    assert "Traceback" not in stderr.getvalue()
    assert f"the previous outputs in {previous} are as they were" in errors[0]
    if how != "failure":
        assert f"stopped by {how.split(maxsplit=1)[0]} while {phase}" in errors[0]


def _no_java_env(tmp_path: Path) -> dict[str, str]:
    """PATH with this interpreter's folder and the basic tools, but no java; no JAVA_HOME."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(bin_dir)])
    return env


def test_usage_errors_exit_2_before_spark_starts(tmp_path: Path) -> None:
    export = write_lines(tmp_path / "in" / "export.json", [GOOD])
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    others = tmp_path / "others"
    others.mkdir()
    (others / "notes.txt").write_text("keep me")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    bad_config = tmp_path / "config.json"
    bad_config.write_text(
        json.dumps(
            {
                "push-endpoint-https": {
                    "exceptions": [{"resource": "projects/p/subscriptions/s", "reason": "r"}]
                }
            }
        )
    )
    cases = [
        ([str(tmp_path / "missing"), "--out", str(tmp_path / "o1")], "does not exist"),
        ([str(export), "--out", str(a_file)], "is a file, not a folder"),
        ([str(export), "--out", str(a_file / "out")], "is a file, so the folder cannot be made"),
        ([str(export.parent), "--out", str(tmp_path / "in" / "out")], "is inside the export"),
        ([str(export), "--out", str(others)], "is not an audit's output folder"),
        ([str(export), "--out", str(dangling)], "is a link to"),
        # refused by trying, not by asking: os.access lets root "write" to /proc
        ([str(export), "--out", "/proc/pushguard-out"], "/proc is not writable"),
        (
            [str(export), "--out", str(tmp_path / "o2"), "--policy-config", str(bad_config)],
            "'expires' is a required property",
        ),
    ]
    # one fresh process (no Spark session to join) runs the command for every case
    script = (
        "import io, json, sys\n"
        "from typer.testing import CliRunner\n"
        "from pushguard.cli import app\n"
        "out = []\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    r = CliRunner().invoke(app, ['audit', *args])\n"
        "    out.append([r.exit_code, r.stderr, r.stdout])\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps([args for args, _ in cases])],
        capture_output=True,
        text=True,
        env=_no_java_env(tmp_path),
        timeout=300,
        check=True,
    )
    results = json.loads(done.stdout)
    for (args, expected), (code, stderr, _) in zip(cases, results, strict=True):
        assert code == 2, (args, stderr)
        assert expected in stderr, (args, stderr)
        assert stderr.startswith("pushguard audit: error:"), stderr
        assert "java" not in stderr.lower(), stderr
    assert (others / "notes.txt").read_text() == "keep me"
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()


def test_the_summary_line_says_when_change_is_not_computed(previous: Path) -> None:
    summary = AuditSummary.model_validate_json((previous / "summary.json").read_text())
    line = command.summary_line(summary, str(previous))
    assert "no baseline given, so new and resolved findings are not computed" in line
    assert "against the baseline" not in line


def test_rows_carry_the_finding_id_of_asset_rule_and_cause(previous: Path) -> None:
    rows = [json.loads(line) for line in (previous / "findings.jsonl").read_text().splitlines()]
    assert rows
    marker = json.loads((previous / MARKER).read_text())
    for row in rows:
        assert row["run_time"] == marker["runTime"][:19] + "Z"
        why = cause(row["field"], row.get("evidence") or {})
        assert row["finding_id"] == finding_id(row["asset_name"], row["rule_id"], why)
        assert row["finding_id"] == finding_id(
            row["asset_name"].removeprefix("//pubsub.googleapis.com/"), row["rule_id"], why
        )


def test_exceptions_in_the_audit(spark: SparkSession, previous: Path, tmp_path: Path) -> None:
    export = previous.parents[1] / "in" / "export.json"
    path = "projects/acme-orders/subscriptions/good"
    today = utc_today()
    config: dict[str, object] = {
        rule.id: {
            "exceptions": [
                {"resource": path, "reason": "expired", "expires": str(today - timedelta(days=1))}
            ]
        }
        for rule in RULES
    }
    config["push-endpoint-https"] = {
        "exceptions": [
            {
                "resource": path,
                "reason": "partner moves off https://bob:hunter2@old.example.com/h?token=s3cr3t",
                "expires": str(today + timedelta(days=9)),
            }
        ]
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    out = tmp_path / "out"
    code = command.run(
        [str(export)], str(out), policy_config=tmp_path / "config.json", stderr=io.StringIO()
    )
    rows = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    [https] = [r for r in rows if r["rule_id"] == "push-endpoint-https"]
    assert https["status"] == "excepted"
    assert https["exception_state"] == "active"
    assert https["exception_reason"].startswith("partner moves")
    report = (out / "report.html").read_text()
    assert "partner moves off https://[redacted]@old.example.com/h?[redacted]" in report
    assert "hunter2" not in report and "s3cr3t" not in report
    others = [r for r in rows if r["status"] == "violation"]
    assert all(r["exception_state"] == "expired" for r in others)
    summary = json.loads((out / "summary.json").read_text())["findings"]
    assert summary["excepted"] == 1 and summary["excepted_by_rule"] == {"push-endpoint-https": 1}
    assert summary["expired_exceptions"] == len(others)
    assert "push-endpoint-https" not in summary["violations_by_rule"]
    assert code == int(any(r["level"] == "mandatory" for r in others))


def test_baseline_marks_new_and_existing_and_lists_resolved(
    spark: SparkSession, previous: Path, tmp_path: Path
) -> None:
    before = [json.loads(line) for line in (previous / "findings.jsonl").read_text().splitlines()]
    gone = [r for r in before if r["rule_id"] == "push-endpoint-https"]
    assert gone, before
    # `good` now pushes over https (its https finding resolved); `fresh` is a new subscription
    fixed = cai.subscription("acme-orders", "123456789012", "good", "https://orders.example.com/p")
    fresh = cai.subscription("acme-orders", "123456789012", "fresh", "http://fresh.example.com/p")
    export = write_lines(tmp_path / "in" / "export.json", [fixed, fresh])
    out = tmp_path / "out"
    stdout = io.StringIO()
    with redirect_stdout(stdout):
        command.run([str(export)], str(out), baseline=str(previous), stderr=io.StringIO())
    rows = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    ids_before = {r["finding_id"] for r in before}
    for row in rows:
        expected = "existing" if row["finding_id"] in ids_before else "new"
        assert row["change"] == expected, row
    assert {r["change"] for r in rows if "/subscriptions/fresh" in r["asset_name"]} == {"new"}
    resolved = [json.loads(line) for line in (out / "resolved.jsonl").read_text().splitlines()]
    assert {r["finding_id"] for r in resolved} == {r["finding_id"] for r in gone}
    counted = [r for r in rows if r["status"] in ("violation", "excepted")]
    summary = json.loads((out / "summary.json").read_text())["baseline"]
    assert summary == {
        "path": str(previous),
        "new": sum(r["change"] == "new" for r in counted),
        "existing": sum(r["change"] == "existing" for r in counted),
        "resolved": len(gone),
        "level_raised": 0,
        "level_lowered": 0,
        "not_rechecked": 0,
        "not_rechecked_by_reason": {},
        "mismatch_accepted": [],
        "unverified": [],
    }
    assert "against the baseline" in stdout.getvalue()
    # report.html lists the findings new first, each with its change
    report = (out / "report.html").read_text()
    listed = re.findall(
        r'<tr class="finding (new|existing)"><td>\1</td>.*?<code>([^<]*)</code>', report
    )
    assert [change for change, _ in listed] == sorted(
        (r["change"] for r in counted), key=lambda change: change != "new"
    )
    assert {asset for change, asset in listed if change == "new"} >= {
        r["asset_name"] for r in counted if "/subscriptions/fresh" in r["asset_name"]
    }
    assert f"{len(gone)} resolved" in report


def test_a_baseline_that_is_not_a_completed_audit_is_a_usage_error(tmp_path: Path) -> None:
    export = write_lines(tmp_path / "in" / "export.json", [GOOD])
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "findings.jsonl").write_text("")
    for baseline in (tmp_path / "missing", tmp_path / "half"):
        stderr = io.StringIO()
        code = command.run(
            [str(export)], str(tmp_path / "out"), baseline=str(baseline), stderr=stderr
        )
        assert code == 2
        assert stderr.getvalue().startswith(f"pushguard audit: error: --baseline {baseline}")


def test_an_out_given_as_a_link_stays_a_link(spark: SparkSession, tmp_path: Path) -> None:
    """Issue 35, item 8: ``--out`` is a symbolic link to the folder the outputs belong in (a
    volume, a shared folder): both runs publish into the folder it points to."""
    export = write_lines(tmp_path / "in" / "export.json", [GOOD])
    target = tmp_path / "volumes" / "audit"
    target.mkdir(parents=True)
    link = tmp_path / "out"
    link.symlink_to(target)
    for _ in range(2):  # the second run replaces the first one's outputs
        stderr = io.StringIO()
        assert command.run([str(export)], str(link), stderr=stderr) == 1, stderr.getvalue()
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert {"findings.jsonl", "summary.json", MARKER} <= set(_tree(target))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out", "volumes"]
    assert _siblings(target) == [], "no staging or previous folder left beside the target"


def _namespaces() -> bool:
    """Whether this user can make a user and mount namespace (``unshare -rm``), where it may
    mount a tmpfs: a real mount point, or a real full disk, without root."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    done = subprocess.run([unshare, "-rm", "true"], capture_output=True, check=False)
    return done.returncode == 0


_IN_NAMESPACE = """
import contextlib, io, json, os, subprocess, sys
from pathlib import Path
from pushguard.audit import command

volume, read_only, full, first, second, crowded = sys.argv[1:]

def mount(path, options):
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path], check=True)

def audit(export, out):
    stderr, stdout = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = command.run([export], out, stderr=stderr)
    return {"code": code, "stderr": stderr.getvalue()}

def listing(folder):
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*"))

mount(volume, "size=64m")
mount(read_only, "ro,size=1m")
mount(full, "size=16k")
report = {"read_only": audit(first, read_only)}  # before any Spark session exists
for run, export in (("first", first), ("second", second)):
    report[run] = audit(export, volume)
    report[run]["mounted"] = os.path.ismount(volume)
    report[run]["tree"] = listing(volume)
    summary = Path(volume) / "summary.json"
    report[run]["summary"] = json.loads(summary.read_text()) if summary.exists() else None
    report[run]["beside"] = sorted(os.listdir(Path(volume).parent))
report["full"] = audit(crowded, os.path.join(full, "out"))
report["full"]["left"] = listing(full)
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def mounted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``pushguard audit`` (the command, in a fresh process) in a user and mount namespace,
    on real tmpfs mounts: ``--out`` on an empty volume, twice (two exports); ``--out`` on a
    read-only volume; ``--out`` inside a volume of 16 KiB, filled by the outputs."""
    if not _namespaces():
        pytest.skip("no user and mount namespaces here (unshare -rm): mount points untested")
    base = tmp_path_factory.mktemp("mounted")
    folders = [base / "volume", base / "read-only", base / "full"]
    for folder in folders:
        folder.mkdir()
    first = write_lines(base / "in" / "first.json", [GOOD])
    second = write_lines(
        base / "in" / "second.json",
        [
            GOOD,
            cai.subscription("acme-orders", "123456789012", "added", "https://a.example/p"),
        ],
    )
    crowded = write_lines(
        base / "in" / "crowded.json",
        [
            cai.subscription("acme-orders", "123456789012", f"sub-{n}", f"http://h{n}.example/p")
            for n in range(400)
        ],
    )
    args = [*map(str, folders), str(first), str(second), str(crowded)]
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_DRIVER_MEMORY="1g")
    done = subprocess.run(
        ["unshare", "-rm", sys.executable, "-c", _IN_NAMESPACE, *args],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]), base=str(base))


def test_out_on_a_mount_point_is_published_inside_it(mounted: dict[str, Any]) -> None:
    """Issue 35, item 8: a Docker or Kubernetes volume cannot be renamed or replaced; the run
    publishes inside it, the first time (empty) and the next (previous outputs replaced); a
    volume that cannot be written is refused before Spark starts (the first run, before any
    session existed)."""
    for run, subscriptions in (("first", 1), ("second", 2)):
        result = mounted[run]
        assert result["code"] == 1, result["stderr"]
        assert result["mounted"]
        assert {"findings.jsonl", "summary.json", "report.html", MARKER} <= set(result["tree"])
        assert not [p for p in result["tree"] if ".pushguard-" in p], result["tree"]
        assert result["summary"]["subscriptions"]["evaluated"] == subscriptions
        assert result["beside"] == ["full", "in", "read-only", "volume"]  # nothing hidden beside
    refused = mounted["read_only"]
    assert refused["code"] == 2
    assert refused["stderr"].startswith("pushguard audit: error: --out ")
    assert "is not writable" in refused["stderr"], refused["stderr"]


def test_a_full_disk_is_named(mounted: dict[str, Any]) -> None:
    """Issue 35, item 8: the outputs fill a 16 KiB volume; the paragraph names the cause."""
    result = mounted["full"]
    assert result["code"] == 2, result["stderr"]
    lines = result["stderr"].splitlines()
    errors = [line for line in lines if line.startswith("pushguard audit: error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], lines
    assert "No space left on device" in errors[0]
    assert "are as they were; nothing was published" in errors[0]
    assert result["left"] == [], "the staging folder is removed"
