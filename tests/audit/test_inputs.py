"""Corrupt input lands in quarantine with its reason, file and line; other layouts and
spellings of real exports are read; the result does not depend on partitioning."""

from __future__ import annotations

import gzip
import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from pushguard.audit import command
from pushguard.cli import app

from . import cai
from .conftest import Audit, audit, write_lines

GOOD = cai.subscription("acme-orders", "123456789012", "good", "http://orders.example.com/push")


def _named(name: str, **extra: str) -> dict[str, object]:
    """GOOD under another name (another subscription)."""
    return dict(GOOD, name=GOOD["name"].replace("good", name), **extra)


@pytest.fixture(scope="module")
def corrupt(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Audit:
    root = tmp_path_factory.mktemp("corrupt")
    good = json.dumps(GOOD)
    wrong_types = dict(GOOD, ancestors="projects/123456789012")
    bad_data = json.loads(good)
    bad_data["resource"]["data"]["pushConfig"] = "https://evil.example/push"
    bad_iam = cai.iam(GOOD)
    bad_iam["iam_policy"] = {"bindings": {"role": "roles/owner"}}
    lines = [
        good.encode(),
        good[: len(good) // 2].encode(),  # truncated
        bytes(b for b in range(256) if b not in b"\r\n") * 4,  # binary garbage
        json.dumps(wrong_types).encode(),
        json.dumps(bad_data).encode(),
        json.dumps(bad_iam).encode(),
        json.dumps({"name": "//x/y"}).encode(),  # no asset type
        b"[1, 2, 3]",
        json.dumps(_named("padded", padding="x" * 3_000_000)).encode(),  # 3 MB: several splits
        json.dumps(_named("second")).encode(),
    ]
    export = root / "export.json"
    export.write_bytes(b"\n".join(lines) + b"\n")
    return audit(spark, [export], root / "out")


def test_accounting_holds_on_corrupt_input(corrupt: Audit) -> None:
    assert corrupt.summary["lines"] == {"read": 10, "parsed": 3, "quarantined": 7, "blank": 0}


def test_each_bad_line_is_quarantined_with_its_reason_and_line(corrupt: Audit) -> None:
    reasons = {entry["line"]: entry["reason"] for entry in corrupt.quarantined}
    assert reasons == {
        2: "not JSON",
        3: "invalid UTF-8",  # the first reason that applies (docs/audit.md, Quarantine)
        4: "JSON that does not fit the Cloud Asset Inventory envelope",
        5: "resource.data does not fit the schema of its asset type",
        6: "iam_policy does not fit the IAM policy schema",
        7: "no asset type (asset_type or assetType)",
        8: "JSON that does not fit the Cloud Asset Inventory envelope",
    }
    assert all(len(entry["text"]) <= 2048 for entry in corrupt.quarantined)
    assert all(entry["source"].endswith("export.json") for entry in corrupt.quarantined)


def test_good_lines_around_bad_ones_are_still_audited(corrupt: Audit) -> None:
    assert corrupt.violations("good") >= {"push-endpoint-https"}
    assert corrupt.violations("padded") >= {"push-endpoint-https"}
    assert corrupt.violations("second") >= {"push-endpoint-https"}


def test_line_numbers_hold_across_splits(spark: SparkSession, tmp_path: Path) -> None:
    """Many small splits of one file: every quarantined line keeps its true line number."""
    good = json.dumps(GOOD)
    rows = [good if n % 97 else "{not json" for n in range(1, 3001)]
    export = tmp_path / "big.json"
    export.write_text("\n".join(rows) + "\n")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(64 * 1024))
    try:
        result = audit(spark, [export], tmp_path / "out")
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert [q["line"] for q in result.quarantined] == [n for n in range(1, 3001) if n % 97 == 0]
    assert result.summary["lines"]["read"] == 3000


def test_per_asset_type_layout_reads_only_the_needed_types(
    spark: SparkSession, tmp_path: Path
) -> None:
    prefix = tmp_path / "export"
    write_lines(prefix / "pubsub.googleapis.com" / "Subscription" / "0", [GOOD])
    write_lines(
        prefix / "cloudresourcemanager.googleapis.com" / "Project" / "0",
        [cai.project("acme-orders", "123456789012")],
    )
    (prefix / "compute.googleapis.com" / "Instance").mkdir(parents=True)
    (prefix / "compute.googleapis.com" / "Instance" / "0").write_text("{this is never read\n")
    result = audit(spark, [prefix], tmp_path / "out")
    assert result.summary["inputs"]["asset_type_folders_skipped"] == [
        "compute.googleapis.com/Instance"
    ]
    assert result.summary["lines"] == {"read": 2, "parsed": 2, "quarantined": 0, "blank": 0}


def test_camel_case_envelope_and_json_array_files(spark: SparkSession, tmp_path: Path) -> None:
    camel = {
        "name": GOOD["name"],
        "assetType": GOOD["asset_type"],
        "resource": GOOD["resource"],
        "ancestors": GOOD["ancestors"],
    }
    (tmp_path / "gcloud.json").write_text(json.dumps([camel], indent=2))
    result = audit(spark, [tmp_path / "gcloud.json"], tmp_path / "out")
    assert result.summary["inputs"]["json_array_files"] == 1
    assert result.violations("good") >= {"push-endpoint-https"}


def test_results_do_not_depend_on_partitioning(
    spark: SparkSession, corrupt: Audit, tmp_path: Path
) -> None:
    export = next(corrupt.out.parent.glob("export.json"))
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(1024 * 1024))  # 4 splits
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    try:
        again = audit(spark, [export], tmp_path / "out")
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.set("spark.sql.shuffle.partitions", "4")
    assert (again.out / "findings.jsonl").read_bytes() == (
        corrupt.out / "findings.jsonl"
    ).read_bytes()
    assert again.quarantined == corrupt.quarantined


def test_cli_exit_codes(spark: SparkSession, tmp_path: Path) -> None:
    export = write_lines(tmp_path / "export.json", [GOOD])
    runner = CliRunner()
    failing = runner.invoke(app, ["audit", str(export), "--out", str(tmp_path / "a")])
    assert failing.exit_code == 1, failing.output
    assert "1 lines read" in failing.output or "lines read" in failing.output
    never = runner.invoke(
        app, ["audit", str(export), "--out", str(tmp_path / "b"), "--fail-on", "never"]
    )
    assert never.exit_code == 0
    missing = runner.invoke(app, ["audit", str(tmp_path / "nope"), "--out", str(tmp_path / "c")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"push-endpoint-htps": "mandatory"}))
    bad = runner.invoke(
        app, ["audit", str(export), "--out", str(tmp_path / "d"), "--policy-config", str(config)]
    )
    assert bad.exit_code == 2 and "push-endpoint-htps" in bad.output
    config.write_text(json.dumps({"push-endpoint-https": "disabled", "push-auth-oidc": "advisory"}))
    disabled = runner.invoke(
        app, ["audit", str(export), "--out", str(tmp_path / "e"), "--policy-config", str(config)]
    )
    assert disabled.exit_code == 0, disabled.output


def test_spark_submit_runs_the_same_job(tmp_path: Path) -> None:
    """The module spark-submit runs: a fresh Spark application, the same options and exit code."""
    import subprocess
    import sys

    import pushguard.audit.__main__ as entry

    submit = Path(sys.executable).with_name("spark-submit")
    export = write_lines(tmp_path / "export.json", [GOOD])
    done = subprocess.run(
        [
            str(submit),
            "--master",
            "local[1]",
            "--conf",
            "spark.ui.enabled=false",
            entry.__file__,
            str(export),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "1 lines read, 1 parsed, 0 quarantined" in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["findings"]["violations_by_level"]["mandatory"] == 2


def _line(name: str, endpoint: str = "http://orders.example.com/push") -> str:
    """A subscription's export line, compact, non-ASCII characters as they are."""
    asset = cai.subscription("acme-orders", "123456789012", name, endpoint)
    return json.dumps(asset, separators=(",", ":"), ensure_ascii=False)


def _command_audit(paths: list[Path], out: Path, **options: Any) -> tuple[Audit, int, str, str]:
    """``pushguard audit`` as the command runs it (in this process: the tests' Spark session),
    with its exit code, stdout and stderr."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stdout(stdout):
        code = command.run([str(p) for p in paths], str(out), stderr=stderr, **options)
    return Audit(out, None), code, stdout.getvalue(), stderr.getvalue()  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def lenient(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Audit:
    """Issue 35, item 6: lines Spark's JSON parser takes in part, in one export file."""
    root = tmp_path_factory.mktemp("lenient")
    plain = _line("plain").encode()
    lines = [
        plain,  # 1
        (_line("first") + _line("hidden")).encode(),  # 2: `cat` of shards, no newline between
        (_line("trailing") + " -- garbage").encode(),  # 3
        _line("nan").replace('"ackDeadlineSeconds":10', '"ackDeadlineSeconds":NaN').encode(),
        _line("infinite")
        .replace('"ackDeadlineSeconds":10', '"ackDeadlineSeconds":-Infinity')
        .encode(),  # 5
        _line("cafe", "https://caf\u00e9.example/push").encode("latin-1"),  # 6: not UTF-8
        b"[" * 3000 + b"]" * 3000,  # 7: nested 3,000 deep, down the file
        (_line("comma") + "," + _line("comma-second")).encode(),  # 8
        (_line("closed") + "] [5").encode(),  # 9: closes what it never opened, then more
        _line("quoted").replace('"', "'").encode(),  # 10: single-quoted strings
        _line("last").encode(),  # 11
    ]
    export = root / "export.json"
    export.write_bytes(b"\n".join(lines) + b"\n")
    result, code, _, stderr = _command_audit([export], root / "out")
    assert code == 1, stderr
    return result


def test_every_line_is_exactly_one_json_value_of_valid_utf8(lenient: Audit) -> None:
    reasons = {q["line"]: q["reason"] for q in lenient.quarantined}
    assert reasons == {
        2: "concatenated values",
        3: "trailing data",
        4: "non-finite number",
        5: "non-finite number",
        6: "invalid UTF-8",
        7: "nested deeper than 999 levels",
        8: "concatenated values",
        9: "trailing data",
        10: "not JSON",
    }
    assert lenient.summary["lines"] == {"read": 11, "parsed": 2, "quarantined": 9, "blank": 0}


def test_no_part_of_a_bad_line_is_evaluated(lenient: Audit) -> None:
    evaluated = {f["asset_name"].rsplit("/", 1)[1] for f in lenient.findings}
    assert evaluated == {"plain", "last"}  # not `first`, nor the `hidden` one after it
    assert not [f for f in lenient.findings if "xn--" in json.dumps(f)]  # never read as Latin-1
    cafe = next(q for q in lenient.quarantined if q["line"] == 6)
    assert "caf\ufffd.example" in cafe["text"]  # the invalid byte shown as such, not as é


@pytest.fixture(scope="module")
def unreadable(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Audit, int, str, str]:
    """Issue 35, item 7: files the audit cannot read whole, beside ones it can, audited with
    ``--max-line-bytes 8192``."""
    export = tmp_path_factory.mktemp("unreadable") / "export"
    export.mkdir()
    deep = "[" * 3000 + "]" * 3000  # 6,000 bytes: read whole, but too deep for any parser here
    (export / "deep-first.json").write_text(f"{deep}\n{_line('after-deep')}\n")
    shards = gzip.compress("".join(_line(f"in-cut-{n}") + "\n" for n in range(40)).encode())
    (export / "cut.json.gz").write_bytes(shards[: len(shards) // 2])  # a copy cut short
    long = json.dumps({"padding": "x" * 20_000})
    (export / "long.json").write_text(f"{_line('before-long')}\n{long}\n{_line('after-long')}\n")
    (export / "other.json").write_text(_line("elsewhere") + "\n")
    # the four files are one export (one read time), as --snapshot says: without it each file
    # would be an export of its own, covering the others' project (docs/audit.md, snapshots)
    snapshot = f"2026-11-20T00:00:00Z={export}"
    return _command_audit([], export.parent / "out", max_line_bytes=8192, snapshots=[snapshot])


def test_one_bad_file_never_ends_the_audit(unreadable: tuple[Audit, int, str, str]) -> None:
    result, code, _, stderr = unreadable
    assert code == 1, stderr  # the violations of the files that were read
    evaluated = {f["asset_name"].rsplit("/", 1)[1] for f in result.findings}
    assert evaluated == {"after-deep", "elsewhere"}
    deep = [q for q in result.quarantined if q["source"].endswith("deep-first.json")]
    assert [(q["line"], q["reason"]) for q in deep] == [(1, "nested deeper than 999 levels")]
    assert result.summary["lines"] == {"read": 3, "parsed": 2, "quarantined": 1, "blank": 0}
    assert result.summary["inputs"]["files"] == 2


def test_each_unread_file_is_named_with_its_reason(
    unreadable: tuple[Audit, int, str, str],
) -> None:
    result, _, stdout, stderr = unreadable
    listed = {Path(k).name: v for k, v in result.summary["inputs"]["files_unreadable"].items()}
    assert set(listed) == {"cut.json.gz", "long.json"}
    assert "java.io.EOFException: Unexpected end of input stream" in listed["cut.json.gz"]
    assert "line longer than --max-line-bytes (8192 bytes)" in listed["long.json"]
    assert "2 files not read" in stdout
    for name in ("cut.json.gz", "long.json"):
        assert any(
            line.startswith("pushguard audit: not read: ") and name in line
            for line in stderr.splitlines()
        ), stderr
