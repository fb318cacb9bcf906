"""The short Markdown job summary of the GitHub Action, written from the gate's JSON reports.

GitHub shows what a step appends to the file named by ``GITHUB_STEP_SUMMARY`` (GitHub Flavored
Markdown, at most 1 MiB per step) on the run's summary page: "Adding a job summary" in
https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#adding-a-job-summary.

The summary says the verdict and the exit code, a table of the stacks (mandatory and advisory
violations, excepted findings, checks not run), then the findings that count: new ones first
(against an ``analyze --baseline``; without a baseline every finding is listed under
"Findings"), mandatory before advisory, at most :data:`MAX_FINDINGS` of them, then the errors of
failed runs. Findings under an active exception are counted, not listed. Every text that comes
from the reports (names, messages, paths: a pull request's author chooses them) is escaped, so it
renders as the text it is, never as Markdown or HTML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushguard.state.urn import parse_urn

MAX_FINDINGS = 30
"""Findings listed at most; the rest are counted (the SARIF and JSON reports have them all)."""

MAX_TEXT = 300
"""Characters of a message shown at most."""

VERDICTS = {0: "passed", 1: "FAILED", 2: "FAILED (the run failed or could not judge)"}
"""The summary's verdict by exit code."""

RESULTS = {0: "passed", 1: "mandatory violation", 2: "error"}
"""A stack's result cell by its exit code."""

_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+")


@dataclass(frozen=True)
class GateRun:
    """One run of the gate: what it was asked to judge (``label``: the stack as given, or the
    state paths), its exit code, and its JSON report (``None`` when none was written or it is not
    a JSON object)."""

    label: str
    exit_code: int
    report: Mapping[str, Any] | None


def load_run(label: str, exit_code: int, path: Path) -> GateRun:
    """The :class:`GateRun` of a run whose JSON report is ``path`` (missing or unreadable:
    ``report`` is ``None``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    return GateRun(label, exit_code, data if isinstance(data, dict) else None)


def escape(text: str) -> str:
    """``text`` as Markdown that renders as itself: control characters and line breaks become
    one space, every ASCII punctuation character is backslash-escaped (CommonMark: "Any ASCII
    punctuation character may be backslash-escaped"), long texts are cut at :data:`MAX_TEXT`."""
    flat = _CONTROL.sub(" ", text).strip()
    if len(flat) > MAX_TEXT:
        flat = flat[: MAX_TEXT - 1] + "…"
    return _PUNCTUATION.sub(r"\\\1", flat)


@dataclass(frozen=True)
class _Stack:
    name: str
    exit_code: int
    report: Mapping[str, Any]


def _stacks(run: GateRun) -> list[_Stack]:
    """The stacks a run judged: a preview's one, or each of an analyze's ``stacks``."""
    report = run.report or {}
    if "stacks" in report:  # pushguard analyze
        return [
            _Stack(_name(s, run.label), int(s.get("summary", {}).get("exitCode", 2)), s)
            for s in report["stacks"]
            if isinstance(s, dict)
        ]
    if not report.get("stack"):
        return []
    return [_Stack(_name(report, run.label), run.exit_code, report)]


def _name(report: Mapping[str, Any], label: str) -> str:
    project, stack = report.get("project"), report.get("stack")
    return f"{project}/{stack}" if project and stack else label


def _errors(run: GateRun) -> list[str]:
    """A failed run's causes: its error, its unreadable files; or that no report was written."""
    if run.exit_code not in (0, 1) and run.report is None:
        return [f"{run.label}: no JSON report was written (exit code {run.exit_code})"]
    report = run.report or {}
    found = []
    if isinstance(report.get("error"), dict):
        found.append(f"{run.label}: {report['error'].get('message', '')}")
    found.extend(
        f"{item.get('path', '')}: {item.get('message', '')}"
        for item in report.get("unreadable", [])
        if isinstance(item, dict)
    )
    return found


def _table(stacks: Sequence[_Stack]) -> list[str]:
    rows = [
        "| Stack | Result | Mandatory | Advisory | Excepted | Not checked |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for s in stacks:
        counts = s.report.get("summary", {})
        rows.append(
            f"| {escape(s.name)} | {RESULTS.get(s.exit_code, 'error')} "
            f"| {int(counts.get('mandatory', 0))} | {int(counts.get('advisory', 0))} "
            f"| {int(counts.get('excepted', 0))} | {len(s.report.get('notChecked', []))} |"
        )
    return rows


_CHANGE_ORDER = {"new": 0, "": 1, "existing": 2}
_LEVEL_ORDER = {"mandatory": 0, "advisory": 1}


def _counted(violation: Mapping[str, Any]) -> bool:
    """Whether a violation counts: no exception, or an expired one."""
    exception = violation.get("exception")
    return not (isinstance(exception, dict) and exception.get("state") == "active")


def _finding_line(stack: _Stack, v: Mapping[str, Any]) -> str:
    urn = str(v.get("urn", ""))
    try:
        parsed = parse_urn(urn)  # a name may hold "::": parsed from the left
        resource = f"{parsed.type} {parsed.name}"
    except ValueError:
        resource = urn
    location = v.get("location") or {}
    where = f"{location.get('path', '')}:{location.get('line', '')}" if location else ""
    message = str(v.get("message", "")).strip().splitlines()
    change = "new, " if v.get("change") == "new" else ""
    return (
        f"- **{escape(str(v.get('level', '')))}** ({change}{escape(stack.name)}) "
        f"{escape(str(v.get('policy', '')))}: {escape(resource)} at {escape(where)}: "
        f"{escape(message[-1] if message else '')}"
    )


def _findings(stacks: Sequence[_Stack]) -> list[str]:
    """The listed findings, new first, under their headings."""
    found = [
        (
            _CHANGE_ORDER.get(str(v.get("change", "")), 1),
            _LEVEL_ORDER.get(str(v.get("level")), 2),
            index,
            _finding_line(s, v),
        )
        for index, s in enumerate(stacks)
        for v in s.report.get("violations", [])
        if isinstance(v, dict) and _counted(v)
    ]
    found.sort(key=lambda item: item[:3])
    if not found:
        return []
    with_baseline = any(item[0] != 1 for item in found)
    lines: list[str] = []
    titles = {0: "New findings", 1: "Findings", 2: "Existing findings"}
    shown = found[:MAX_FINDINGS]
    for change in sorted({item[0] for item in shown}):
        group = [item[3] for item in shown if item[0] == change]
        total = sum(item[0] == change for item in found)
        title = titles[change] if with_baseline else "Findings"
        lines += ["", f"### {title} ({total})", "", *group]
    if len(found) > MAX_FINDINGS:
        lines += ["", f"… and {len(found) - MAX_FINDINGS} more in the SARIF and JSON reports."]
    return lines


def _disabled(stacks: Sequence[_Stack]) -> list[str]:
    """A line per stack whose policy config disabled policies (the report's
    ``disabledPolicies``): a rule switched off judged nothing, and a pull request may be what
    switched it off."""
    lines = []
    for s in stacks:
        names = [str(n) for n in s.report.get("disabledPolicies", []) if isinstance(n, str)]
        if names:
            lines.append(
                f"- {escape(s.name)}: disabled by the policy config: "
                + ", ".join(escape(n) for n in names)
            )
    return ["", "### Disabled policies", "", *lines] if lines else []


def job_summary(command: str, runs: Sequence[GateRun], exit_code: int) -> str:
    """The Markdown summary of ``runs`` of ``pushguard COMMAND`` (``preview`` or ``analyze``)
    whose combined exit code (:func:`pushguard.cli.runs.combined_exit_code`) is ``exit_code``."""
    stacks = [s for run in runs for s in _stacks(run)]
    lines = [
        f"## pushguard {command}: {VERDICTS.get(exit_code, VERDICTS[2])}",
        "",
        f"Exit code {exit_code}, the worst of {len(runs)} run(s) "
        "(0 passed, 1 a mandatory violation, 2 a failed run).",
    ]
    if stacks:
        lines += ["", *_table(stacks)]
    lines += _disabled(stacks)
    lines += _findings(stacks)
    errors = [error for run in runs for error in _errors(run)]
    if errors:
        lines += ["", f"### Errors ({len(errors)})", "", *(f"- {escape(e)}" for e in errors)]
    return "\n".join(lines) + "\n"
