"""Record the audit's outputs and compare two recordings byte for byte (issue 39).

A change that only makes the audit faster must leave what it writes unchanged. This records
``findings.jsonl``, ``findings.parquet``, ``evaluated.parquet``, ``quarantine/``, ``summary.json``
and ``report.html`` of every audit a run makes, and compares two recordings file by file:

- **as a pytest plugin** (``-p audit_outputs`` with ``bench`` on ``PYTHONPATH`` and
  ``PUSHGUARD_RECORD`` set to a folder): every audit the tests run in process (through
  :func:`pushguard.audit.job.run_audit`, which the conftest and the console command import) is
  copied under ``PUSHGUARD_RECORD/<test id>/<n>/`` when it returns;
- **on the bench's exports** (``python bench/audit_outputs.py record OUT EXPORT...``): one
  in-process audit of each export, the export's shards one snapshot read at the bench's
  ``READ_TIME``, as ``bench/audit_bench.py`` runs it;
- ``python bench/audit_outputs.py compare A B``: every recorded file of ``A`` equal to ``B``'s,
  and the same files; exit 1 naming the first differences. Parquet files are equal when only
  their footers' lists of encodings are in another order (:func:`same_parquet`: parquet-mr's
  hash-set order changes from JVM to JVM, so two runs of the same code can differ there).

What legitimately differs between two runs is taken out when recording, nothing else: the
wall-time ``timings_s`` of ``summary.json`` (and the report's line that shows them, if any), the
run's time stamp (the console command stamps each finding with it), the pytest worker in a
temporary path (``popen-gwN``) and the root of the source tree that ran (the tests' fixtures are
read from it: ``TREE``). Run both recordings with the same ``--basetemp``. A Parquet file cannot
be edited so: ``compare`` also takes two tables equal when they differ only in a ``run_time``
column that holds one value per file (:func:`same_but_run_time`).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

RECORDED = (
    "findings.jsonl",
    "findings.parquet",
    "evaluated.parquet",
    "quarantine",
    "summary.json",
    "report.html",
)
_WORKER = re.compile(r"popen-gw\d+")
_COUNTS: dict[str, int] = {}
_TREE = str(Path(__file__).resolve().parents[1])


def _normalised(data: bytes, run_time: str) -> bytes:
    """``data`` with the run's time stamp, the source tree's root and the pytest worker's name
    taken out."""
    if run_time:
        data = data.replace(run_time.encode(), b"RUN_TIME")
    data = data.replace(_TREE.encode(), b"TREE")
    return _WORKER.sub("popen-gw", data.decode("utf-8", "surrogateescape")).encode(
        "utf-8", "surrogateescape"
    )


def _summary(data: bytes) -> bytes:
    """``summary.json`` without its wall times (same layout otherwise)."""
    value = json.loads(data)
    value.pop("timings_s", None)
    return json.dumps(value, indent=2, sort_keys=False).encode()


def record(out: Path, target: Path, run_time: str = "") -> None:
    """Copy the :data:`RECORDED` outputs of the audit folder ``out`` to ``target``, normalised."""
    if not out.is_dir():
        return
    for name in RECORDED:
        source = out / name
        files = (
            [source]
            if source.is_file()
            else sorted(p for p in source.rglob("*") if p.is_file() and not p.name.startswith("."))
        )
        for path in files:
            data = path.read_bytes()
            if path.name == "summary.json":
                data = _summary(data)
            if path.suffix != ".parquet":
                data = _normalised(data, run_time)
            copy = target / path.relative_to(out)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(data)


def _install() -> None:
    """Wrap :func:`pushguard.audit.job.run_audit` so that each run is recorded under
    ``PUSHGUARD_RECORD`` (before the tests' conftest imports it)."""
    folder = os.environ.get("PUSHGUARD_RECORD")
    if not folder:
        return
    from pushguard.audit import job

    original = job.run_audit

    def recorded(spark: Any, options: Any, progress: Any = None) -> Any:
        result = original(spark, options, progress)
        test = os.environ.get("PYTEST_CURRENT_TEST", "run").split(" ")[0]
        key = re.sub(r"[^A-Za-z0-9_.-]+", "_", test)
        _COUNTS[key] = _COUNTS.get(key, 0) + 1
        record(Path(options.out), Path(folder) / key / str(_COUNTS[key]), options.run_time)
        return result

    job.run_audit = recorded  # type: ignore[assignment]


_install()


def compare(first: Path, second: Path) -> list[str]:
    """The differences between two recordings: files only in one, files that differ."""
    a = {p.relative_to(first) for p in first.rglob("*") if p.is_file()}
    b = {p.relative_to(second) for p in second.rglob("*") if p.is_file()}
    problems = [f"only in {first}: {p}" for p in sorted(a - b)]
    problems += [f"only in {second}: {p}" for p in sorted(b - a)]
    for path in sorted(a & b):
        one, other = (first / path).read_bytes(), (second / path).read_bytes()
        if one != other and not (path.suffix == ".parquet" and _same_table(one, other)):
            problems.append(f"differs: {path}")
    return problems


def _same_table(one: bytes, other: bytes) -> bool:
    return same_parquet(one, other) or same_but_run_time(one, other)


def same_but_run_time(one: bytes, other: bytes) -> bool:
    """Two Parquet files of findings whose tables (schema, Spark's metadata and rows) are
    equal once their ``run_time`` column is dropped, each holding one time: the console
    command stamps every finding with the run's time."""

    def table(data: bytes) -> Any:
        read = pq.read_table(io.BytesIO(data))
        if "run_time" not in read.column_names or len(read["run_time"].unique()) > 1:
            return None
        return read.drop_columns(["run_time"])

    first, second = table(one), table(other)
    return (
        first is not None
        and second is not None
        and first.equals(second, check_metadata=True)
        and pq.read_schema(io.BytesIO(one)).equals(pq.read_schema(io.BytesIO(other)))
    )


def same_parquet(one: bytes, other: bytes) -> bool:
    """Two Parquet files whose bytes differ only where parquet-mr's own output is not
    deterministic: the order of each column chunk's ``encodings`` in the footer (parquet-mr
    gathers them in a hash set of enum values, whose order changes from one JVM to the next).
    The same bytes up to the footer (every page), and the same footer once each list is
    sorted (schema, key-value metadata with Spark's schema, row groups, statistics)."""

    def pages(data: bytes) -> bytes:
        return data[: len(data) - 8 - int.from_bytes(data[-8:-4], "little")]

    def footer(data: bytes) -> tuple[Any, Any]:
        meta = pq.ParquetFile(io.BytesIO(data)).metadata
        layout = meta.to_dict()
        for group in layout["row_groups"]:
            for column in group["columns"]:
                column["encodings"] = sorted(column["encodings"])
        return layout, meta.metadata

    return pages(one) == pages(other) and footer(one) == footer(other)


def _record_exports(out: Path, exports: list[Path]) -> None:
    """One in-process audit of each bench export (its shards one snapshot), recorded."""
    from datetime import datetime

    from pushguard.audit.command import session
    from pushguard.audit.job import run_audit
    from pushguard.audit.options import AuditOptions

    sys.path.insert(0, str(Path(__file__).parent))
    from audit_bench import READ_TIME

    spark = session(None)
    read_time = datetime.fromisoformat(READ_TIME.replace("Z", "+00:00"))
    for export in exports:
        work = out / "work" / export.name
        options = AuditOptions([str(export)], str(work), snapshot_times={str(export): read_time})
        run_audit(spark, options)
        record(work, out / export.name)
        shutil.rmtree(work)
    shutil.rmtree(out / "work", ignore_errors=True)
    spark.stop()


def main() -> None:
    """``record OUT EXPORT...`` or ``compare A B``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("exports", type=Path, nargs="+")
    cmp = sub.add_parser("compare")
    cmp.add_argument("first", type=Path)
    cmp.add_argument("second", type=Path)
    options = parser.parse_args()
    if options.command == "record":
        _record_exports(options.out, options.exports)
        return
    problems = compare(options.first, options.second)
    files = sum(1 for p in options.first.rglob("*") if p.is_file())
    print(f"{files} files compared, {len(problems)} differences")
    for problem in problems[:50]:
        print(problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
