"""Reports of ``pushguard analyze``: each stack's report as the preview writes it (text, JSON,
SARIF; :mod:`pushguard.gate.report`, :mod:`pushguard.gate.sarif`), with a summary across
stacks and the files that could not be read. Deterministic: stacks in the order of their files,
nothing timed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pushguard.analyze.baseline import resolved_json
from pushguard.analyze.origin import StateOrigin
from pushguard.analyze.runner import AnalysisRun
from pushguard.gate.redact import PLAIN, Redactor, redact_result
from pushguard.gate.report import LEVELS, repository_root, resource_label, shown, to_json
from pushguard.gate.report import render_text as render_stack
from pushguard.gate.report import summary as stack_summary
from pushguard.gate.sarif import automation_id, to_sarif


def summary(run: AnalysisRun) -> dict[str, int]:
    """Counts across stacks: ``stacks`` analysed, ``unreadable`` files, violations by level
    (not those under an active exception), ``excepted``, ``expiredExceptions``, with a baseline
    ``new``, ``existing`` and ``resolved``, ``unjudged`` (checks that could not judge a value
    under ``unknownAtPreview: enforce``, only when there are some), ``googleManaged``
    (subscriptions Google manages, which no policy judged, only when there are some), stacks
    that fail (a mandatory violation or an unjudged check) and the exit code."""
    found = [v for r in run.stacks for v in r.violations]
    counts = {level: sum(v.level == level and v.counts for v in found) for level in LEVELS}
    changes = (
        {
            "new": sum(v.change == "new" for v in found),
            "existing": sum(v.change == "existing" for v in found),
            "resolved": len(run.resolved),
        }
        if run.baseline is not None
        else {}
    )
    return {
        "stacks": len(run.stacks),
        "unreadable": len(run.unreadable),
        **counts,
        "excepted": sum(not v.counts for v in found),
        "expiredExceptions": sum(v.excepted is not None and not v.excepted.active for v in found),
        **changes,
        **(
            {"unjudged": unjudged} if (unjudged := sum(len(r.unjudged) for r in run.stacks)) else {}
        ),
        **(
            {"googleManaged": google}
            if (google := sum(len(r.google_managed) for r in run.stacks))
            else {}
        ),
        "failing": sum(r.exit_code != 0 for r in run.stacks),
        "exitCode": run.exit_code,
    }


def redactor(run: AnalysisRun) -> Redactor:
    """The redaction of what the run says beyond its stacks (errors, unreadable and skipped
    files): with the secrets of every stack analysed (an error may quote any of them); built
    only when there is such a text (:data:`~pushguard.gate.redact.PLAIN` otherwise)."""
    if run.error is None and not run.unreadable and not run.skipped:
        return PLAIN
    return Redactor.for_results(run.stacks)


def _unreadable(run: AnalysisRun, r: Redactor) -> list[dict[str, str]]:
    return [
        {"path": e.path, "message": r.text(e.message)}
        for e in sorted(run.unreadable, key=lambda e: e.path)
    ]


def _skipped(run: AnalysisRun, r: Redactor) -> list[dict[str, str]]:
    return [
        {"path": e.path, "reason": r.text(e.message)}
        for e in sorted(run.skipped, key=lambda e: e.path)
    ]


def state_key(path: Path) -> str:
    """A short stable key of a state file: the first 12 hex digits of the SHA-256 of its path
    as the reports write it (relative to the git top level; outside a repository, to the
    working directory when under it, else absolute), so the same file gives the same key on
    every machine and two files of one stack give two keys."""
    resolved = path.resolve()
    base = repository_root(resolved.parent) or Path.cwd().resolve()
    shown_path = (
        resolved.relative_to(base).as_posix() if resolved.is_relative_to(base) else str(resolved)
    )
    return hashlib.sha256(shown_path.encode()).hexdigest()[:12]


def to_json_report(run: AnalysisRun) -> dict[str, Any]:
    """``stacks`` (each stack's preview-shaped JSON report, with ``state``: the file, its
    deployment version and the Pulumi version that wrote it), ``unreadable`` (``path``,
    ``message``), ``skipped`` (files found in a folder that are not Pulumi state: ``path``,
    ``reason``), with ``--baseline`` ``resolved`` (the baseline's findings gone: ``project``,
    ``stack``, ``policy``, ``urn``, ``findingId``, ``level``, ``message``), ``error`` (when
    the run stopped) and ``summary``."""
    r = redactor(run)
    report: dict[str, Any] = {
        "stacks": [to_json(result) for result in run.stacks],
        "unreadable": _unreadable(run, r),
        "skipped": _skipped(run, r),
    }
    if run.baseline is not None:
        report["resolved"] = resolved_json(run.resolved)
    if run.error is not None:
        report["error"] = {"message": r.text(run.error)}
    report["summary"] = summary(run)
    return report


def render_json(run: AnalysisRun) -> str:
    """:func:`to_json_report` as indented JSON text."""
    return json.dumps(to_json_report(run), indent=2) + "\n"


def render_sarif(run: AnalysisRun) -> str:
    """One SARIF log with a run per stack (``automationDetails.id``
    ``pushguard-analyze/PROJECT/STACK/KEY/``, KEY the :func:`state_key` of its file, so the
    same stack from two files is two categories), and a last run naming each unreadable file
    and the error that stopped the analysis (errors), and each skipped file (notes), if any."""
    runs = []
    for result in run.stacks:
        stack_run = to_sarif(result)["runs"][0]
        if isinstance(result.origin, StateOrigin):
            key = state_key(result.origin.path)
            project = (
                f"{result.organization}/{result.project}" if result.organization else result.project
            )
            stack_run["automationDetails"] = {
                "id": automation_id(result.origin.tool, project, result.stack, key)
            }
        runs.append(stack_run)
    r = redactor(run)
    problems = [f"{e['path']}: {e['message']}" for e in _unreadable(run, r)]
    if run.error is not None:
        problems.append(r.text(run.error))
    skipped = [f"skipped {e['path']}: {e['reason']}" for e in _skipped(run, r)]
    if problems or skipped or not runs:
        failed = to_sarif(None)["runs"][0]
        failed["automationDetails"] = {"id": "pushguard-analyze/"}
        failed["invocations"] = [
            {
                "executionSuccessful": not problems,
                "exitCode": run.exit_code,
                "toolExecutionNotifications": [
                    *({"level": "error", "message": {"text": text}} for text in problems),
                    *({"level": "note", "message": {"text": text}} for text in skipped),
                ],
            }
        ]
        runs.append(failed)
    log = to_sarif(None)
    log["runs"] = runs
    return json.dumps(log, indent=2) + "\n"


_VERDICT_CELLS = {0: "passed", 1: "[red]FAILED[/]", 2: "[red]INCOMPLETE[/]"}


def render_text(run: AnalysisRun, console: Console) -> None:
    """Each stack's text report, then the unreadable files and a table across stacks."""
    for index, result in enumerate(run.stacks):
        if index:
            console.rule()
        render_stack(result, console)
    r = redactor(run)
    if run.unreadable:
        console.print(f"\n[bold red]Unreadable state files ({len(run.unreadable)})[/]")
        for item in _unreadable(run, r):
            console.print(f"  {shown(item['path'])}: {shown(item['message'])}")
    if run.skipped:
        console.print(f"\n[bold]Skipped files, not Pulumi state ({len(run.skipped)})[/]")
        for item in _skipped(run, r):
            console.print(f"  {shown(item['path'])}: {shown(item['reason'])}")
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
                _VERDICT_CELLS[result.exit_code],
            )
        for item in _unreadable(run, r):
            table.add_row(shown(item["path"]), "", "", "", "[red]unreadable[/]")
        console.print()
        console.print(table)
    totals = summary(run)
    skipped = f", {len(run.skipped)} file(s) skipped" if run.skipped else ""
    console.print(
        f"\nStacks: {totals['stacks']} analysed, {totals['unreadable']} unreadable{skipped}, "
        f"{totals['failing']} failing. Policy violations: {totals['mandatory']} mandatory, "
        f"{totals['advisory']} advisory, {totals['excepted']} excepted."
        + (
            f" {totals['googleManaged']} Google-managed subscription(s) not judged."
            if totals.get("googleManaged")
            else ""
        )
    )
    if run.baseline is not None:
        console.print(
            f"Against the baseline: {totals['new']} new, {totals['existing']} existing, "
            f"{totals['resolved']} resolved."
        )
    else:
        console.print(
            "No baseline given: new and resolved findings are not computed "
            "(--baseline PREVIOUS.json, an earlier 'pushguard analyze -f json' report)."
        )


def error_message(run: AnalysisRun) -> str | None:
    """What stderr says for an exit 2: the run's error, then each unreadable file on a line of
    its own (a file's message may itself hold "; "), then each check that could not judge a
    value under ``unknownAtPreview: enforce``."""
    r = redactor(run)
    parts = [r.text(run.error)] if run.error else []
    unreadable = [f"  {e['path']}: {e['message']}" for e in _unreadable(run, r)]
    if unreadable:
        parts.append(f"{len(unreadable)} file(s) could not be analysed:")
    parts += unreadable
    unjudged = _unjudged_lines(run)
    if unjudged:
        parts.append(
            f"{len(unjudged)} check(s) could not judge a value the state does not show, and "
            "unknownAtPreview is enforce, so these were not checked (export with "
            "`pulumi stack export --show-secrets`, or where the stack's secrets provider is "
            "available, to check them):"
        )
        parts += unjudged
    return "\n".join(parts) or None


def _unjudged_lines(run: AnalysisRun) -> list[str]:
    """One line per check that could not judge a value: the state file, the policy and the
    resource (redacted as the stack's reports show them)."""
    lines = []
    for result in (r for r in run.stacks if r.unjudged):
        redacted = redact_result(result)
        path = result.origin.path if isinstance(result.origin, StateOrigin) else ""
        lines += [
            f"  {path}: {v.policy} on {resource_label(redacted, v.urn)}" for v in redacted.unjudged
        ]
    return lines
