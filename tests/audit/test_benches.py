"""The Spark benchmarks run at their smallest size, so that none rots (figures are not checked:
bench/RESULTS.md). They share one small export, written by ``audit_bench.py --keep``. Kept among
the audit's tests so that the test workers start them early, beside other files (about six
minutes of Spark on one worker)."""

from __future__ import annotations

from pathlib import Path

from tests.test_benches import run_bench


def test_the_spark_benchmarks_run_at_their_smallest_size(tmp_path: Path) -> None:
    table = run_bench("audit_bench.py", "--sizes", "1000", "--runs", "1", "--keep", str(tmp_path))
    assert "| 1,000 |" in table
    assert run_bench("audit_read_bench.py", str(tmp_path / "export-1000"), "--rounds", "1").strip()
    stacks = run_bench("stacks_bench.py", "--lines", "1000", "--stacks", "2")
    assert '"lines": 1000' in stacks
