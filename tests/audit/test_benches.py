"""The Spark benchmarks run at their smallest size, so that none rots (figures are not checked:
bench/RESULTS.md). They share one small export, written by ``audit_bench.py --keep``. Kept among
the audit's tests so that the test workers start them early, beside other files (about six
minutes of Spark on one worker)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_benches import BENCH, run_bench


def test_the_spark_benchmarks_run_at_their_smallest_size(tmp_path: Path) -> None:
    table = run_bench("audit_bench.py", "--sizes", "1000", "--runs", "1", "--keep", str(tmp_path))
    assert "| 1,000 |" in table
    assert run_bench("audit_read_bench.py", str(tmp_path / "export-1000"), "--rounds", "1").strip()
    copies = run_bench("audit_copies_bench.py", str(tmp_path / "export-1000"), "--rounds", "1")
    assert "the same fates, snapshots and exports: True" in copies
    stacks = run_bench("stacks_bench.py", "--lines", "1000", "--stacks", "2")
    assert '"lines": 1000' in stacks


def test_the_audit_s_measuring_tools_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39's tools: the JSON-source checks print their tables; an audit recorded with its
    event log on compares equal to itself and its queries are listed."""
    spec = importlib.util.spec_from_file_location("audit_bench", BENCH / "audit_bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.generate(tmp_path / "export-1000", 1000)
    checks = run_bench("audit_json_source.py")
    assert "| none | all but arrays |" in checks
    # the audit's one parse tells "exactly one JSON object" as its two parses did, and reads
    # the same identity, on every kind of line (the last table); ancestors typed in the
    # array element would not
    rows = [line.split(" | ") for line in checks.split("| line | one JSON object")[1].splitlines()]
    kinds = [row for row in rows[2:] if len(row) == 6]
    assert len(kinds) >= 37
    assert all(row[2] == row[1] and row[5] == "True |" for row in kinds), kinds
    assert "| ancestors not an array | False | False | True (differs) |" in checks
    events = tmp_path / "events"
    events.mkdir()
    monkeypatch.setenv(
        "PYSPARK_SUBMIT_ARGS",
        f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file:{events} pyspark-shell",
    )
    run_bench("audit_outputs.py", "record", str(tmp_path / "rec"), str(tmp_path / "export-1000"))
    assert (tmp_path / "rec" / "export-1000" / "findings.jsonl").stat().st_size > 0
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "rec", copy)
    same = run_bench("audit_outputs.py", "compare", str(tmp_path / "rec"), str(copy))
    assert ", 0 differences" in same
    findings = copy / "export-1000" / "findings.jsonl"
    findings.write_bytes(findings.read_bytes().replace(b"violation", b"Violation", 1))
    changed = subprocess.run(
        [
            sys.executable,
            str(BENCH / "audit_outputs.py"),
            "compare",
            str(tmp_path / "rec"),
            str(copy),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert changed.returncode == 1
    assert "differs: export-1000/findings.jsonl" in changed.stdout
    (log,) = events.glob("*/events_*")
    assert "collect at audit/scan.py" in run_bench("audit_events.py", str(log))


def _outputs_module() -> object:
    spec = importlib.util.spec_from_file_location("audit_outputs", BENCH / "audit_outputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parquet(table: object) -> bytes:
    import io

    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_two_recordings_differ_only_in_what_is_not_the_audit_s() -> None:
    """Findings stamped with two runs' times are one table; findings that differ in anything
    else, or whose ``run_time`` is not one time, are not. The tree's root is taken out of text."""
    import pyarrow as pa

    outputs: object = _outputs_module()
    rows = {"rule": ["push-auth-oidc", "push-endpoint-https"], "asset_name": ["a", "b"]}
    at = {name: pa.table({**rows, "run_time": [t, t]}) for name, t in (("one", 1), ("two", 2))}
    compare = outputs._same_table  # type: ignore[attr-defined]
    assert compare(_parquet(at["one"]), _parquet(at["two"]))
    other = pa.table({**rows, "asset_name": ["a", "c"], "run_time": [2, 2]})
    assert not compare(_parquet(at["one"]), _parquet(other))
    mixed = pa.table({**rows, "run_time": [2, 3]})
    assert not compare(_parquet(at["one"]), _parquet(mixed))
    tree = str(BENCH.parent).encode()
    normalised = outputs._normalised(b'{"path": "' + tree + b'/tests/x"}', "")  # type: ignore[attr-defined]
    assert normalised == b'{"path": "TREE/tests/x"}'
