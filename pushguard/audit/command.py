"""The audit as a command: options in, a Spark session, the run, an exit code out.

Used by ``pushguard audit`` and by ``spark-submit`` (``python -m pushguard.audit`` /
``pushguard/audit/__main__.py``), so both take the same options and behave the same.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TextIO

from pyspark.sql import SparkSession

from pushguard.audit.job import FAIL_ON, AuditOptions, run_audit
from pushguard.audit.parse import DEFAULT_MAX_LINE_BYTES
from pushguard.audit.read import InputError
from pushguard.policy.config_file import PolicyConfigError, load_rule_config

DEFAULT_MASTER = "local[*]"


class AuditUsageError(ValueError):
    """Bad options: exit code 2, with this message."""


def run(
    paths: list[str],
    out: str,
    *,
    master: str | None = None,
    policy_config: Path | None = None,
    fail_on: str = "mandatory",
    include_dry_run: bool = False,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    stderr: TextIO | None = None,
) -> int:
    """Run the audit; return 0, 1 (violations at or above ``fail_on``) or 2 (bad usage, failed
    run). Messages go to ``stderr`` (default ``sys.stderr``); the summary line to stdout."""
    stderr = stderr or sys.stderr
    try:
        if fail_on not in FAIL_ON:
            raise AuditUsageError(f"--fail-on: one of {', '.join(FAIL_ON)}, not {fail_on!r}")
        if max_line_bytes < 1024:
            raise AuditUsageError("--max-line-bytes: at least 1024")
        rules = load_rule_config(policy_config)
    except (AuditUsageError, PolicyConfigError) as error:
        print(f"pushguard audit: error: {error}", file=stderr)
        return 2
    spark = session(master)
    try:
        result = run_audit(
            spark,
            AuditOptions(
                paths=paths,
                out=out,
                levels=dict(rules.levels),
                settings=dict(rules.settings),
                include_dry_run=include_dry_run,
                max_line_bytes=max_line_bytes,
            ),
        )
    except InputError as error:
        print(f"pushguard audit: error: {error}", file=stderr)
        return 2
    summary = result.summary
    lines = summary.lines
    subscriptions = summary.subscriptions
    print(
        f"pushguard audit: {lines.read:,} lines read, {lines.parsed:,} parsed, "
        f"{lines.quarantined:,} quarantined; {subscriptions.evaluated:,} "
        f"subscriptions ({subscriptions.push:,} push); violations by level "
        f"{json.dumps(summary.findings.violations_by_level, sort_keys=True)}; outputs in {out}"
    )
    return result.exit_code(fail_on)


def session(master: str | None) -> SparkSession:
    """The Spark session: the running one (under ``spark-submit``), else a new one on
    ``master`` (default ``local[*]``)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName("pushguard-audit")
    if master or not _submitted():
        builder = builder.master(master or DEFAULT_MASTER)
        if (master or DEFAULT_MASTER).startswith("local"):  # stay on loopback
            builder = builder.config("spark.driver.host", "127.0.0.1").config(
                "spark.driver.bindAddress", "127.0.0.1"
            )
    return builder.getOrCreate()


def _submitted() -> bool:
    """True under ``spark-submit``, which sets the master through ``spark.master``."""
    return "PYSPARK_GATEWAY_PORT" in os.environ or "SPARK_SUBMIT_OPTS" in os.environ
