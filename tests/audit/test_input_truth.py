"""The audit reads exactly what is in the export folder (issue 21): the newest copy of a
duplicated asset, every line of a newline-delimited file whatever line 1 holds, JSON documents
after decompression, blank lines counted as blank, skipped files listed; and the command's
redirected stderr carries no Spark stage bars."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from pushguard.audit.read import DOCUMENT, LINES, InputError, file_shape

from . import cai
from .conftest import Audit, audit, write_lines

ORDERS, ORDERS_N = "acme-orders", "123456789012"
HTTP, HTTPS = "http://orders.example.com/push", "https://orders.example.com/push"
SUBSCRIPTION = "pubsub.googleapis.com/Subscription"
READ_TIME = datetime(2024, 7, 1, tzinfo=UTC)
"""The export folder is one snapshot: every file in it read at this time."""


def _sub(name: str, endpoint: str, update_time: str | None = None) -> dict[str, Any]:
    asset = cai.subscription(ORDERS, ORDERS_N, name, endpoint)
    if update_time is not None:
        asset["update_time"] = update_time
    return asset


def build(root: Path) -> Path:
    """An export folder with one case of each input problem the issue lists."""
    export = root / "export"
    # 1. duplicates in one snapshot (the folder is given with one read time): two files of
    # different dates (the older first by file order), and one file with the same subscription
    # twice (older line first); the asset's newest change wins; camelCase updateTime too
    write_lines(
        export / "2024-01" / "assets.json",
        [
            cai.project(ORDERS, ORDERS_N),
            _sub("fixed-since", HTTP, "2024-01-05T10:00:00Z"),
            _sub("broken-since", HTTPS, "2024-01-05T10:00:00.123456Z"),
        ],
    )
    write_lines(
        export / "2024-06" / "assets.json",
        [
            _sub("fixed-since", HTTPS, "2024-06-01T00:00:00Z"),
            _sub("broken-since", HTTP, "2024-06-01T00:00:00+02:00"),
            _sub("twice", HTTP, "2024-03-01T00:00:00Z"),
            dict(_sub("twice", HTTPS), updateTime="2024-03-02T00:00:00Z"),
        ],
    )
    # 2. a newline-delimited file whose first line is a JSON array
    (export / "first-line-array.json").write_text(
        "[1, 2, 3]\n" + cai.line(_sub("after-array", HTTP)) + "\n"
    )
    # 3. a gzip-compressed JSON array (gcloud asset list --format=json | gzip), and a
    # pretty-printed single asset
    (export / "gcloud.json.gz").write_bytes(
        gzip.compress(json.dumps([_sub("gzipped", HTTP)], indent=2).encode())
    )
    (export / "one-asset.json").write_text(json.dumps(_sub("pretty", HTTP), indent=2) + "\n")
    # 4. blank lines (empty, spaces, a tab, CRLF) around lines, and a corrupt line after them
    (export / "blank-lines.json").write_text(
        "\n"
        + cai.line(_sub("between-blanks", HTTP))
        + "\n   \n\t\r\n\n"
        + "{not json\n"
        + cai.line(_sub("after-blanks", HTTP))
        + "\n\n"
    )
    # 5. hidden and marker files: skipped, and listed
    (export / "_SUCCESS").write_text("")
    write_lines(export / ".hidden.json", [_sub("hidden", HTTP)])
    return export


@pytest.fixture(scope="module")
def truth_run(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[Audit, bool]:
    """The audit of :func:`build`, and whether Spark's cache was empty right after it."""
    root = tmp_path_factory.mktemp("truth")
    spark.catalog.clearCache()
    context = spark.sparkContext._jsc.sc()
    blocks_before = context.getPersistentRDDs().size()
    export = build(root)
    result = audit(spark, [export], root / "out", snapshot_times={str(export): READ_TIME})
    released = (
        bool(spark._jsparkSession.sharedState().cacheManager().isEmpty())
        and context.getPersistentRDDs().size() == blocks_before  # its checkpoints too
    )
    return result, released


def test_reliable_checkpoints_are_deleted_when_the_run_ends(
    spark: SparkSession, tmp_path: Path
) -> None:
    """With a checkpoint folder (spark.checkpoint.dir), the audit's checkpoints are files there:
    they hold the inventory's rows unredacted (endpoint tokens), so none outlives the run."""
    export = write_lines(
        tmp_path / "export" / "cai.json",
        [
            cai.subscription(
                "acme-orders", "123456789012", "leaky", "https://h.example/p?token=s3cr3t"
            )
        ],
    )
    context = spark.sparkContext._jsc.sc()
    folder = tmp_path / "checkpoints"
    spark.sparkContext.setCheckpointDir(str(folder))
    try:
        result = audit(spark, [export], tmp_path / "out")
    finally:  # the session is shared: back to local checkpoints
        getattr(context, "checkpointDir_$eq")(spark.sparkContext._jvm.scala.Option.apply(None))
    assert "push-no-query-token" in result.violations("leaky")
    written = [p for p in folder.rglob("*") if p.is_file()]
    assert written == [], written
    assert any(folder.rglob("*")), "the run did not use the checkpoint folder"


@pytest.fixture
def truth(truth_run: tuple[Audit, bool]) -> Audit:
    return truth_run[0]


def test_a_run_releases_what_it_persisted(truth_run: tuple[Audit, bool]) -> None:
    """What an audit persists is unpersisted when it ends (the CI session once needed 4 GiB)."""
    assert truth_run[1], "frames an audit persisted are still cached after it ended"


def _endpoint_violation(result: Audit, name: str) -> bool:
    return "push-endpoint-https" in result.violations(name)


def test_the_newest_copy_of_a_duplicated_asset_is_evaluated(truth: Audit) -> None:
    assert not _endpoint_violation(truth, "fixed-since")  # fixed in the newer copy
    assert _endpoint_violation(truth, "broken-since")  # broken in the newer copy
    assert not _endpoint_violation(truth, "twice")  # the later line of one file is newer


def test_two_different_copies_of_one_time_are_never_decided_by_name(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Same update_time, different content, one snapshot: nothing says which is current, so
    the run stops naming the asset (it used to take the first by file and line)."""
    export = tmp_path / "export"
    write_lines(export / "a.json", [_sub("tie", HTTP, "2024-03-01T00:00:00Z")])
    write_lines(export / "b.json", [_sub("tie", HTTPS, "2024-03-01T00:00:00Z")])
    with pytest.raises(InputError, match="cannot tell") as raised:
        audit(spark, [export], tmp_path / "out", snapshot_times={str(export): READ_TIME})
    assert "subscriptions/tie" in str(raised.value)


def test_superseded_copies_are_counted_and_never_evaluated(truth: Audit) -> None:
    assert truth.summary["superseded_by_type"] == {SUBSCRIPTION: 3}
    names = [f["asset_name"] for f in truth.findings if f["rule_id"] == "push-endpoint-https"]
    assert len(names) == len(set(names))  # each subscription once
    # fixed-since, broken-since, twice, after-array, gzipped, pretty, between-blanks,
    # after-blanks (the hidden file is not read)
    assert truth.summary["subscriptions"]["evaluated"] == 8


def test_every_line_after_a_first_line_array_is_evaluated(truth: Audit) -> None:
    assert _endpoint_violation(truth, "after-array")
    array_line = [q for q in truth.quarantined if q["source"].endswith("first-line-array.json")]
    assert [(q["line"], q["text"]) for q in array_line] == [(1, "[1, 2, 3]")]


def test_json_documents_are_read_after_decompression(truth: Audit) -> None:
    assert _endpoint_violation(truth, "gzipped")
    assert _endpoint_violation(truth, "pretty")
    assert not [
        q for q in truth.quarantined if q["source"].endswith(("gcloud.json.gz", "one-asset.json"))
    ]
    assert truth.summary["inputs"]["json_array_files"] == 2


def test_blank_lines_are_counted_not_quarantined(truth: Audit) -> None:
    assert _endpoint_violation(truth, "between-blanks")
    assert _endpoint_violation(truth, "after-blanks")
    lines = truth.summary["lines"]
    assert lines["blank"] == 5
    assert lines["read"] == lines["parsed"] + lines["quarantined"] + lines["blank"]
    blank_file = [q for q in truth.quarantined if q["source"].endswith("blank-lines.json")]
    assert [(q["line"], q["reason"]) for q in blank_file] == [(6, "not JSON")]
    assert len(truth.quarantined) == 2  # the array line and '{not json'


def test_skipped_hidden_and_marker_files_are_listed(truth: Audit) -> None:
    skipped = truth.summary["inputs"]["files_skipped"]
    assert [Path(p).name for p in skipped] == [".hidden.json", "_SUCCESS"]
    assert not truth.violations("hidden")
    assert truth.summary["inputs"]["files"] == 6


def test_redirected_stderr_has_no_spark_stage_bars(truth: Audit, tmp_path: Path) -> None:
    """The console script as a user runs it, stderr to a file: phase lines only."""
    script = Path(sys.executable).with_name("pushguard")
    stderr = tmp_path / "stderr.log"
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON",)}
    with stderr.open("w") as err:
        done = subprocess.run(
            [
                str(script),
                "audit",
                "--snapshot",
                f"{READ_TIME.isoformat()}={truth.out.parent / 'export'}",
                "--out",
                str(tmp_path / "o"),
            ],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            timeout=600,
            check=False,
            env=env,
        )
    text = stderr.read_text()
    assert done.returncode == 1, text[-2000:]
    assert "[Stage" not in text and "\r" not in text, text[-2000:]
    assert "pushguard audit: summarising" in text.splitlines()
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["lines"] == truth.summary["lines"]

    def rows(path: Path) -> list[dict[str, object]]:
        """The findings without ``run_time``: the run's own start time (issue 22)."""
        lines = path.read_text().splitlines()
        return [{k: v for k, v in json.loads(x).items() if k != "run_time"} for x in lines]

    assert rows(tmp_path / "o" / "findings.jsonl") == rows(truth.out / "findings.jsonl")


SUB = cai.line(_sub("s", HTTP))


@pytest.mark.parametrize(
    ("name", "content", "shape"),
    [
        ("lines.json", f"{SUB}\n{SUB}\n", LINES),
        ("broken-first.json", f'{{"name": "//x\n{SUB}\n', LINES),  # a truncated first line
        ("array-first.json", f"[1, 2]\n{SUB}\n", LINES),
        ("one-line-array.json", f"[{SUB},{SUB}]\n\n", DOCUMENT),
        ("pretty.json", json.dumps([_sub("s", HTTP)], indent=2), DOCUMENT),
        ("pretty-object.json", "\ufeff" + json.dumps(_sub("s", HTTP), indent=1), DOCUMENT),
        ("blank-first.json", f"\n\n  \n{SUB}\n", LINES),
        ("empty.json", "", LINES),
        ("text.json", "# a comment\n[\n", LINES),
        ("pretty.json.gz", json.dumps([_sub("s", HTTP)], indent=2), DOCUMENT),
        ("lines.json.bz2", f"{SUB}\n", LINES),
        ("pretty.json.bz2", json.dumps([_sub("s", HTTP)], indent=2), DOCUMENT),
    ],
)
def test_file_shape_after_decompression(
    spark: SparkSession, tmp_path: Path, name: str, content: str, shape: str
) -> None:
    path = tmp_path / name
    data = content.encode()
    if name.endswith(".gz"):
        data = gzip.compress(data)
    elif name.endswith(".bz2"):
        data = bz2.compress(data)
    path.write_bytes(data)
    assert file_shape(spark, str(path)) == shape


def _gzip_with_a_long_line(path: Path, mib: int, after: str) -> None:
    """A gzip file whose first line is a JSON object of ``mib`` MiB, then ``after``: a series
    of gzip members (RFC 1952, section 2.2: "A gzip file consists of a series of members"), the
    long line's 64 MiB runs compressed once, so the file stays under a megabyte."""
    run = gzip.compress(b"x" * (64 << 20), compresslevel=1)
    with path.open("wb") as out:
        out.write(gzip.compress(b'{"padding":"'))
        for _ in range(mib // 64):
            out.write(run)
        out.write(gzip.compress(b'"}\n' + after.encode() + b"\n"))


@pytest.mark.skipif(
    not (Path(sys.executable).parent / "pushguard").exists(),
    reason="the pushguard console script is not installed",
)
def test_a_line_larger_than_the_jvm_heap_never_ends_the_audit(tmp_path: Path) -> None:
    """Issue 35, item 7: a 768 MiB line (a gzip file of 0.8 MB) read by a JVM of 512 MiB, as
    ``pushguard audit`` runs (SPARK_DRIVER_MEMORY). The line is never held whole: its file is
    listed with the reason, and the other file is audited."""
    export = tmp_path / "export"
    export.mkdir()
    _gzip_with_a_long_line(export / "huge.json.gz", 768, cai.line(_sub("in-huge", HTTP)))
    write_lines(export / "small.json", [_sub("small", HTTP)])
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    env.update(SPARK_DRIVER_MEMORY="512m", SPARK_LOCAL_IP="127.0.0.1")
    script = str(Path(sys.executable).parent / "pushguard")
    done = subprocess.run(
        [script, "audit", str(export), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    assert done.returncode == 1, done.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    unread = {Path(name).name: why for name, why in summary["inputs"]["files_unreadable"].items()}
    assert list(unread) == ["huge.json.gz"]
    assert "line longer than --max-line-bytes (4194304 bytes)" in unread["huge.json.gz"]
    findings = (tmp_path / "out" / "findings.jsonl").read_text()
    assert "/subscriptions/small" in findings and "in-huge" not in findings
