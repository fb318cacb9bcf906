"""Reports of ``pushguard analyze``: each stack's report as the preview writes it (text, JSON,
SARIF; :mod:`pushguard.gate.report`, :mod:`pushguard.gate.sarif`), with a summary across
stacks and the files that could not be read. Deterministic: stacks in the order of their files,
nothing timed."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table

from pushguard.analyze.origin import StateOrigin
from pushguard.analyze.runner import AnalysisRun
from pushguard.gate.redact import PLAIN
from pushguard.gate.report import LEVELS, shown, to_json
from pushguard.gate.report import render_text as render_stack
from pushguard.gate.report import summary as stack_summary
from pushguard.gate.sarif import to_sarif


def summary(run: AnalysisRun) -> dict[str, int]:
    """Counts across stacks: ``stacks`` analysed, ``unreadable`` files, violations by level,
    stacks that fail (a mandatory violation) and the exit code."""
    counts = {
        level: sum(v.level == level for r in run.stacks for v in r.violations) for level in LEVELS
    }
    return {
        "stacks": len(run.stacks),
        "unreadable": len(run.unreadable),
        **counts,
        "failing": sum(r.exit_code for r in run.stacks),
        "exitCode": run.exit_code,
    }


def _unreadable(run: AnalysisRun) -> list[dict[str, str]]:
    return [
        {"path": e.path, "message": PLAIN.text(e.message)}
        for e in sorted(run.unreadable, key=lambda e: e.path)
    ]


def to_json_report(run: AnalysisRun) -> dict[str, Any]:
    """``stacks`` (each stack's preview-shaped JSON report, with ``state``: the file, its
    deployment version and the Pulumi version that wrote it), ``unreadable`` (``path``,
    ``message``), ``error`` (when the run stopped) and ``summary``."""
    report: dict[str, Any] = {
        "stacks": [to_json(result) for result in run.stacks],
        "unreadable": _unreadable(run),
    }
    if run.error is not None:
        report["error"] = {"message": PLAIN.text(run.error)}
    report["summary"] = summary(run)
    return report


def render_json(run: AnalysisRun) -> str:
    """:func:`to_json_report` as indented JSON text."""
    return json.dumps(to_json_report(run), indent=2) + "\n"


def render_sarif(run: AnalysisRun) -> str:
    """One SARIF log with a run per stack (``automationDetails.id``
    ``pushguard-analyze/PROJECT/STACK/``), and a failed run naming each unreadable file and the
    error that stopped the analysis, if any."""
    runs = [to_sarif(result)["runs"][0] for result in run.stacks]
    problems = [f"{e['path']}: {e['message']}" for e in _unreadable(run)]
    if run.error is not None:
        problems.append(PLAIN.text(run.error))
    if problems or not runs:
        failed = to_sarif(None)["runs"][0]
        failed["automationDetails"] = {"id": "pushguard-analyze/"}
        failed["invocations"] = [
            {
                "executionSuccessful": not problems,
                "exitCode": run.exit_code,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": text}} for text in problems
                ],
            }
        ]
        runs.append(failed)
    log = to_sarif(None)
    log["runs"] = runs
    return json.dumps(log, indent=2) + "\n"


def render_text(run: AnalysisRun, console: Console) -> None:
    """Each stack's text report, then the unreadable files and a table across stacks."""
    for index, result in enumerate(run.stacks):
        if index:
            console.rule()
        render_stack(result, console)
    if run.unreadable:
        console.print(f"\n[bold red]Unreadable state files ({len(run.unreadable)})[/]")
        for item in _unreadable(run):
            console.print(f"  {shown(item['path'])}: {shown(item['message'])}")
    if len(run.stacks) > 1 or run.unreadable:
        table = Table(title="Stacks", title_justify="left")
        for column in ("state file", "project/stack", "mandatory", "advisory", "verdict"):
            table.add_column(column)
        for result in run.stacks:
            counts = stack_summary(result)
            table.add_row(
                shown(str(result.origin.path if isinstance(result.origin, StateOrigin) else "")),
                shown(f"{result.project}/{result.stack}"),
                str(counts["mandatory"]),
                str(counts["advisory"]),
                "[red]FAILED[/]" if result.exit_code else "passed",
            )
        for item in _unreadable(run):
            table.add_row(shown(item["path"]), "", "", "", "[red]unreadable[/]")
        console.print()
        console.print(table)
    totals = summary(run)
    console.print(
        f"\nStacks: {totals['stacks']} analysed, {totals['unreadable']} unreadable, "
        f"{totals['failing']} failing. Policy violations: {totals['mandatory']} mandatory, "
        f"{totals['advisory']} advisory."
    )


def error_message(run: AnalysisRun) -> str | None:
    """The one paragraph on stderr for an exit 2: the run's error and the unreadable files."""
    parts = [PLAIN.text(run.error)] if run.error else []
    parts += [f"{e['path']}: {e['message']}" for e in _unreadable(run)]
    return "; ".join(parts) or None
