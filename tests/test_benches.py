"""Every benchmark in bench/ runs at its smallest size, so that none rots.

The figures are not checked here (speed targets live in bench/RESULTS.md, measured on a quiet
machine): each script must run to its end and print its table. The Spark benchmarks are in
tests/audit/test_benches.py (scheduled early, beside other files).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"

QUICK = {
    "receiver_bench.py": ["--runs", "1", "--tokens", "20"],
    "preview_bench.py": ["--sizes", "1", "--runs", "1"],
    "pack_stack_bench.py": ["--components", "1", "--runs", "1"],
    "analyze_bench.py": ["--stacks", "1"],
    "redact_bench.py": [],
    "code_size.py": ["--top", "3"],
}


def run_bench(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_every_benchmark_is_run_here() -> None:
    spark = {
        "audit_bench.py",
        "audit_read_bench.py",
        "audit_copies_bench.py",
        "stacks_bench.py",
        "audit_json_source.py",
        "audit_outputs.py",
        "audit_events.py",
    }
    assert {p.name for p in BENCH.glob("*.py")} == set(QUICK) | spark


@pytest.mark.parametrize("script", sorted(QUICK))
def test_a_benchmark_runs_at_its_smallest_size(script: str) -> None:
    assert run_bench(script, *QUICK[script]).strip()
