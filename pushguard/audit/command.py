"""The audit as a command: options in, a Spark session, the run, an exit code out.

Used by ``pushguard audit`` and by ``spark-submit`` (``python -m pushguard.audit`` /
``pushguard/audit/__main__.py``), so both take the same options and behave the same.
"""

from __future__ import annotations

import json
import os
import re
import sys
import traceback
import uuid
from collections.abc import Collection, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from pyspark.sql import SparkSession

from pushguard.audit.baseline import BaselineError, check_baseline, compare
from pushguard.audit.baseline_scope import settings_digests
from pushguard.audit.bigquery import BigQueryInputError, parse_input
from pushguard.audit.causes import java_cause
from pushguard.audit.coverage import BLIND_MODES
from pushguard.audit.exception_use import exceptions_said
from pushguard.audit.guardrails.counts import said as guardrails_said
from pushguard.audit.guardrails.errors import GuardrailsError
from pushguard.audit.job import run_audit
from pushguard.audit.options import FAIL_ON, AuditOptions, AuditResult
from pushguard.audit.outputs import OutputFolder
from pushguard.audit.parse import DEFAULT_MAX_LINE_BYTES
from pushguard.audit.progress import ConsoleProgress
from pushguard.audit.publish import (
    OutputUsageError,
    PublishError,
    check_local_inputs,
    check_out,
    discard,
    out_target,
    publish,
    staging_path,
)
from pushguard.audit.quiet import py4j_quiet, quiet_accumulators
from pushguard.audit.read import InputError
from pushguard.audit.report import render
from pushguard.audit.snapshots import SnapshotUsageError, snapshot_times
from pushguard.audit.stacks import StacksInputError, state_files
from pushguard.audit.stopping import (
    Stopped,
    reclaim_sigint,
    register,
    starting,
    stopped_by,
    stopped_by_signals,
)
from pushguard.audit.summary import AuditSummary
from pushguard.audit.summary_text import changes_text, unseen
from pushguard.policy.config_file import PolicyConfigError, load_rule_config

DEFAULT_MASTER = "local[*]"
MAX_DRIVER_MEMORY_GIB = 16
"""Local mode's default ``spark.driver.memory`` is half the machine's memory, at most this."""

SHIPPING_HINT = (
    "The Spark executors need pushguard and its dependencies (pyarrow, pydantic, idna): ship "
    "pushguard as a wheel with --py-files, or a packed environment with spark.archives (see "
    "the README, 'On a cluster'); in local mode, run the pushguard of an environment that has "
    "them, or unset PYSPARK_PYTHON."
)


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
    debug: bool = False,
    inputs: list[str] | None = None,
    baseline: str | None = None,
    stacks: list[str] | None = None,
    snapshots: list[str] | None = None,
    accept_baseline_mismatch: bool = False,
    fail_on_blind: str = "nothing-read",
    guardrails: str | None = None,
) -> int:
    """Run the audit; return 0, 1 (violations at or above ``fail_on``) or 2 (bad usage, failed
    run, or a blind run under ``fail_on_blind``: :data:`~pushguard.audit.coverage.BLIND_MODES`).
    Messages go to ``stderr`` (default ``sys.stderr``); the summary line to stdout.
    ``snapshots`` are ``--snapshot TIME=PATH`` values: exports with their read time, read after
    ``paths`` (:mod:`pushguard.audit.snapshots`).

    ``inputs`` are the ``--input`` values, BigQuery tables (``bigquery:PROJECT.DATASET.TABLE``
    or ``bigquery:PROJECT.DATASET.PREFIX*``), read after ``paths``; at least one of the two.
    ``baseline`` is a previous audit's ``--out`` (:mod:`pushguard.audit.baseline`), refused when
    of another organisation or policy config unless ``accept_baseline_mismatch``.
    ``stacks`` are Pulumi state files or folders (``--stacks``, :mod:`pushguard.audit.stacks`).
    ``guardrails`` is ``--guardrails DIR``: custom constraints and policies, read and checked
    before Spark starts, then evaluated over the export (:mod:`pushguard.audit.guardrails`;
    what they would deny does not change the exit code).

    Any failure of the run (Spark, the JVM, the executors, the output folder...) is one
    paragraph on ``stderr`` and exit code 2; ``debug`` adds the traceback."""
    stderr = stderr or sys.stderr
    try:
        options = audit_options(
            [*paths, *(inputs or ())],
            out,
            policy_config=policy_config,
            fail_on=fail_on,
            include_dry_run=include_dry_run,
            max_line_bytes=max_line_bytes,
            inputs=inputs or [],
            stacks=stacks or [],
            snapshots=snapshots or [],
            guardrails=guardrails,
        )
        check_comparison(options, baseline, fail_on_blind, accept=accept_baseline_mismatch)
    except (
        AuditUsageError,
        BigQueryInputError,
        PolicyConfigError,
        OutputUsageError,
        StacksInputError,
        GuardrailsError,
    ) as error:
        print(f"pushguard audit: error: {error}", file=stderr)
        return 2
    progress = ConsoleProgress(stderr)  # phases on stderr: live on a terminal, else lines
    kept = f"the previous outputs in {out} are as they were; nothing was published"
    try:
        with stopped_by_signals(), py4j_quiet(not debug):
            result = _run_on_spark(
                master, options, progress, baseline, debug=debug, accept=accept_baseline_mismatch
            )
    except (KeyboardInterrupt, Stopped, Exception) as error:
        progress.close()
        if debug:
            traceback.print_exception(error, file=stderr)
        name = stopped_by()  # py4j may raise its own error in place of the signal's
        if name is not None or isinstance(error, KeyboardInterrupt | Stopped):
            name = name or (error.name if isinstance(error, Stopped) else "SIGINT")
            phase = progress_phase(progress)
            print(f"pushguard audit: error: stopped by {name} while {phase}; {kept}", file=stderr)
            return 130 if name == "SIGINT" else 2
        if isinstance(error, PublishError):  # says itself where the outputs are
            print(f"pushguard audit: error: {error}", file=stderr)
            return 2
        known = isinstance(error, InputError | AuditRunError | BaselineError)
        print(f"pushguard audit: error: {error if known else describe(error)}; {kept}", file=stderr)
        return 2
    progress.close()
    for name, reason in result.summary.inputs.files_unreadable.items():
        print(f"pushguard audit: not read: {name}: {reason}", file=stderr)
    print(summary_line(result.summary, out))
    blind = result.blind(fail_on, fail_on_blind)
    if blind is not None:
        print(f"pushguard audit: error: {blind}; {BLIND_PUBLISHED.format(out=out)}", file=stderr)
    return result.exit_code(fail_on, fail_on_blind)


BLIND_PUBLISHED = (
    "the outputs in {out} were published and say so (summary.json coverage, report.html); "
    "to report without failing, give --fail-on-blind never"
)
"""The end of the error paragraph of a blind run (exit 2, outputs published)."""


def check_comparison(
    options: AuditOptions, baseline: str | None, fail_on_blind: str, *, accept: bool
) -> None:
    """Before Spark starts: ``fail_on_blind`` is one of
    :data:`~pushguard.audit.coverage.BLIND_MODES`, and a ``baseline`` is a completed audit with
    the same policy settings as ``options`` unless ``accept``
    (:func:`~pushguard.audit.baseline.check_baseline`).

    Raises:
        AuditUsageError: ``fail_on_blind`` is not a mode.
        OutputUsageError: the baseline cannot be compared with.
    """
    if fail_on_blind not in BLIND_MODES:
        raise AuditUsageError(
            f"--fail-on-blind: one of {', '.join(BLIND_MODES)}, not {fail_on_blind!r}"
        )
    if baseline is not None:
        check_baseline(
            baseline,
            policy_settings=settings_digests(options.settings),
            include_dry_run=options.include_dry_run,
            accept_mismatch=accept,
        )


def audit_options(
    paths: list[str],
    out: str,
    *,
    policy_config: Path | None,
    fail_on: str,
    include_dry_run: bool,
    max_line_bytes: int,
    inputs: list[str],
    stacks: list[str] | None = None,
    snapshots: list[str] | None = None,
    guardrails: str | None = None,
) -> AuditOptions:
    """The checked options of a run: ``paths`` are the export paths followed by the ``inputs``
    (BigQuery tables), the levels and settings those of ``policy_config``.

    Raises:
        AuditUsageError: ``fail_on`` is not one of :data:`FAIL_ON`, ``max_line_bytes`` is below
            1024, or there is nothing to audit.
        BigQueryInputError: an ``inputs`` value is not a BigQuery table reference.
        PolicyConfigError: the policy config cannot be read.
        OutputUsageError: a local export path does not exist, or ``out`` cannot be used
            (:func:`pushguard.audit.publish.check_out`).
        StacksInputError: a ``stacks`` path does not exist or holds no state file (checked
            again, with every state read, by the run).
        AuditUsageError: a ``snapshots`` value is not ``TIME=PATH``, or a path is given twice.
        GuardrailsError: ``guardrails`` cannot be used (the file and field named).
    """
    if fail_on not in FAIL_ON:
        raise AuditUsageError(f"--fail-on: one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    if max_line_bytes < 1024:
        raise AuditUsageError("--max-line-bytes: at least 1024")
    for value in inputs:
        parse_input(value, "--input")
    try:
        times = snapshot_times(paths, snapshots or [])
    except SnapshotUsageError as error:
        raise AuditUsageError(str(error)) from None
    paths = [*paths, *times]
    if not paths:
        raise AuditUsageError(
            "nothing to audit: give an EXPORT_PATH or --input, or --snapshot TIME=PATH"
        )
    check_local_inputs(paths)
    check_out(out, paths)
    if stacks:
        state_files(stacks)  # a missing --stacks path is a usage error, before Spark starts
    rules = load_rule_config(policy_config)
    checked = None
    if guardrails is not None:  # the guardrails extra (celpy, PyYAML): imported only then
        from pushguard.audit.guardrails.files import load_guardrails  # noqa: PLC0415

        checked = load_guardrails(guardrails)
    return AuditOptions(
        paths=paths,
        out=out,
        levels=dict(rules.levels),
        settings=dict(rules.settings),
        include_dry_run=include_dry_run,
        max_line_bytes=max_line_bytes,
        stacks=list(stacks or ()),
        snapshot_times=times,
        guardrails=checked,
    )


def _run_on_spark(
    master: str | None,
    options: AuditOptions,
    progress: ConsoleProgress,
    baseline: str | None = None,
    *,
    debug: bool = False,
    accept: bool = False,
) -> AuditResult:
    """Start (or join) the session, check the executors, run the audit into a staging folder
    and publish it as ``options.out`` (:mod:`pushguard.audit.publish`); a run that fails or is
    stopped discards its staging folder."""
    progress.phase("starting Spark")
    with starting():
        spark = session(master)
        register(spark)
        reclaim_sigint()  # a new SparkContext installs its own SIGINT handler
    if not debug:
        quiet_accumulators(spark)
    progress.attach(spark.sparkContext)
    check_executors(spark)
    run_time = datetime.now(UTC)
    run_id = run_time.strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]
    target = out_target(options.out)
    staging = staging_path(target, run_id)
    try:
        stamp = run_time.strftime("%Y-%m-%dT%H:%M:%SZ")
        result = run_audit(spark, replace(options, out=staging, run_time=stamp), progress)
        if baseline is not None:
            progress.phase("comparing with the baseline")
            folder = OutputFolder(spark, staging)
            summary, listed = compare(
                spark, folder, staging, baseline, result.summary, accept_mismatch=accept
            )
            folder.write_text("summary.json", summary.to_json())
            folder.write_text("report.html", render(summary, result.offenders or {}, listed))
            result = AuditResult(summary, result.offenders)
        progress.phase("publishing")
        publish(spark, staging, target, run_id, run_time)
    except PublishError as error:
        if not error.keeps_staging:
            discard(spark, staging)
        raise
    except BaseException:
        discard(spark, staging)
        raise
    return result


def progress_phase(progress: ConsoleProgress) -> str:
    """The phase a stopped run was in, as words."""
    return progress.current or "starting"


def summary_line(summary: AuditSummary, out: str) -> str:
    """The line printed on stdout after a run: lines (and the files not read), subscriptions,
    violations by level, the
    Google-managed subscriptions set aside (when there are some), what
    changed against the baseline (or that it is not computed without one), the stacks' unmanaged,
    drifted and deleted subscriptions (or that they are not checked without ``--stacks``), the
    exceptions that matched nothing (when the policy config has exceptions) and where the outputs
    are."""
    lines = summary.lines
    subscriptions = summary.subscriptions
    changes = summary.baseline
    against = (
        changes_text(changes)
        if changes is not None
        else "; no baseline given, so new and resolved findings are not computed (--baseline)"
    )
    google = summary.findings.google_managed
    set_aside = f"; {google:,} Google-managed (not judged)" if google else ""
    stacks = summary.stacks
    managed = (
        f"; {stacks.states:,} stacks: {stacks.unmanaged:,} push subscriptions unmanaged, "
        f"{sum(stacks.drifted_by_stack.values()):,} drifted, "
        f"{sum(stacks.deleted_by_stack.values()):,} deleted out of band"
        if stacks.checked
        else "; stacks not checked (--stacks)"
    )
    unread = len(summary.inputs.files_unreadable)
    not_read = (
        f" ({unread:,} file{'' if unread == 1 else 's'} not read: inputs.files_unreadable in "
        "summary.json)"
        if unread
        else ""
    )
    return (
        f"pushguard audit: {lines.read:,} lines read{not_read}, {lines.parsed:,} parsed, "
        f"{lines.quarantined:,} quarantined; {subscriptions.evaluated:,} "
        f"subscriptions ({subscriptions.push:,} push); violations by level "
        f"{json.dumps(summary.findings.violations_by_level, sort_keys=True)}{set_aside}{against}"
        f"{managed}{unseen(summary)}{exceptions_said(summary.exceptions)}"
        f"{guardrails_said(summary.guardrails)}; outputs in {out}"
    )


def session(master: str | None) -> SparkSession:
    """The Spark session: the running one (under ``spark-submit``), else a new one on
    ``master`` (default ``local[*]``)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # Spark's stage bars ([Stage 3:> (0 + 2) / 2], redrawn with carriage returns) are off on
    # every master: on a terminal the audit's own live line replaces them, and in a redirected
    # log they would be glued to its phase lines (spark.ui.showConsoleProgress,
    # https://spark.apache.org/docs/latest/configuration.html#spark-ui)
    builder = SparkSession.builder.appName("pushguard-audit").config(
        "spark.ui.showConsoleProgress", "false"
    )
    if master or not _submitted():
        builder = builder.master(master or DEFAULT_MASTER)
        if (master or DEFAULT_MASTER).startswith("local"):  # stay on loopback
            builder = builder.config("spark.driver.host", "127.0.0.1").config(
                "spark.driver.bindAddress", "127.0.0.1"
            )
            # The driver's web UI binds to $SPARK_LOCAL_IP, else to every interface ("0.0.0.0":
            # WebUI.initServer in core/src/main/scala/org/apache/spark/ui/WebUI.scala); the JVM
            # PySpark starts inherits this environment. A value the user set is kept.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            defaults = local_defaults(os.environ, executable=sys.executable)
            for key, value in defaults.items():
                builder = builder.config(key, value)
            if "spark.pyspark.python" in defaults:
                # PySpark starts its workers with $PYSPARK_PYTHON (else python3 on PATH): this
                # interpreter, the one that has pushguard, also when the venv is not activated.
                os.environ["PYSPARK_PYTHON"] = sys.executable
    return builder.getOrCreate()


def physical_memory() -> int:
    """The machine's memory in bytes (0 when unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def default_driver_memory(memory_bytes: int) -> str:
    """Local mode's ``spark.driver.memory``: half of ``memory_bytes``, in whole GiB, at least
    1g and at most ``MAX_DRIVER_MEMORY_GIB``."""
    gib = memory_bytes // 2 // 1024**3
    return f"{max(1, min(MAX_DRIVER_MEMORY_GIB, gib))}g"


def local_defaults(
    environ: Mapping[str, str],
    *,
    executable: str,
    memory_bytes: int | None = None,
    configured: Collection[str] = (),
) -> dict[str, str]:
    """The Spark settings local mode adds unless the user set them (in ``environ`` or as the
    ``configured`` keys): the Python workers run ``executable`` (this interpreter), and the
    driver (in local mode, also the executor) gets half the machine's memory."""
    defaults: dict[str, str] = {}
    if "PYSPARK_PYTHON" not in environ and "spark.pyspark.python" not in configured:
        defaults["spark.pyspark.python"] = executable
        defaults["spark.pyspark.driver.python"] = executable
    if "SPARK_DRIVER_MEMORY" not in environ and "spark.driver.memory" not in configured:
        memory = physical_memory() if memory_bytes is None else memory_bytes
        defaults["spark.driver.memory"] = default_driver_memory(memory)
    return defaults


class AuditRunError(RuntimeError):
    """The run cannot go on (e.g. the executors lack a module): exit code 2, with this
    message."""


def _probe(_: int) -> str:
    """Runs on an executor: import what the evaluation needs there."""
    import pyarrow  # noqa: F401, PLC0415
    import pydantic  # noqa: F401, PLC0415

    import pushguard.audit.evaluate  # noqa: F401, PLC0415

    return "ok"


def check_executors(spark: SparkSession) -> None:
    """A one-task job before the first real stage: its Python worker imports what the audit
    needs there.

    Raises:
        AuditRunError: a module is missing on the executors (named, with how to ship it).
    """
    try:
        spark.sparkContext.parallelize([0], 1).map(_probe).collect()
    except Exception as error:
        module = missing_module(str(error))
        if module is None:
            raise
        raise AuditRunError(
            f"the Spark executors' Python ({_worker_python(spark)}) cannot import {module!r} "
            f"(ModuleNotFoundError: No module named {module!r}). {SHIPPING_HINT}"
        ) from error


def _worker_python(spark: SparkSession) -> str:
    return str(getattr(spark.sparkContext, "pythonExec", None) or "python3")


_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")


def missing_module(text: str) -> str | None:
    """The module of the first ``ModuleNotFoundError`` in an error's text, if any."""
    found = _MISSING_MODULE.search(text)
    return found.group(1) if found else None


def describe(error: BaseException) -> str:
    """One paragraph for a failed run: the error's type and the first lines of its message,
    without the Java or Python stack, and its innermost cause when the message does not say it
    (a Spark job that failed writing says ``Task failed while writing rows``; the full disk
    behind it is the cause: :func:`pushguard.audit.causes.java_cause`)."""
    lines = []
    for raw in str(error).splitlines():
        line = raw.strip().removeprefix(": ").strip()
        if not line or line.startswith(("An error occurred while calling", "at ", "Traceback")):
            continue
        if line.startswith(("File ", "...", "Caused by:", "Driver stacktrace")):
            break
        lines.append(line)
        if len(lines) == 3:
            break
    text = " ".join(lines) or "(no message)"
    if len(text) > 600:
        text = text[:597] + "..."
    cause = java_cause(error)
    if cause and cause not in text:
        text = f"{text} (cause: {cause[:300]})"
    module = missing_module(str(error))
    hint = f" {SHIPPING_HINT}" if module else ""
    return f"the run failed: {type(error).__name__}: {text}{hint} (--debug shows the traceback)"


def _submitted() -> bool:
    """True under ``spark-submit``, which sets the master through ``spark.master``."""
    return "PYSPARK_GATEWAY_PORT" in os.environ or "SPARK_SUBMIT_OPTS" in os.environ
