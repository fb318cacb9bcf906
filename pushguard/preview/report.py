"""Reports of a preview for people and machines: text (a resource tree and the violations by
enforcement level) and JSON; SARIF is in :mod:`pushguard.preview.sarif`.

Values are shown in wire form with two replacements: a secret is ``[secret]`` and a value
unknown until the resource is created is ``[unknown]`` (Pulumi's "known after apply").
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY, is_unknown
from pushguard.preview.result import STACK_TYPE, PreviewResult, Violation, stack_urn

LEVELS = ("mandatory", "advisory")


def display_value(value: Any) -> Any:
    """``value`` (wire form) with secrets as ``[secret]`` and unknowns as ``[unknown]``."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return "[secret]"
        return {key: display_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [display_value(item) for item in value]
    if is_unknown(value):
        return "[unknown]"
    return value


def _relative(path: Path) -> str:
    """``path`` relative to the working directory when under it (how code scanning wants it)."""
    if path.is_relative_to(Path.cwd()):
        return Path(os.path.relpath(path)).as_posix()
    return str(path)


def location(result: PreviewResult, urn: str) -> tuple[str, int]:
    """Where a finding belongs in the team's code, as ``(path, line)``: the constructor call of
    the resource, or of its nearest ancestor, inside the program's folder (a component's children
    point at the component's use); the stack config file for the whole stack."""
    program_dir = result.project.entry_point.resolve().parent
    by_urn = {r.urn: r for r in result.resources}
    record = by_urn.get(urn)
    while record is not None:
        if record.source is not None:
            path = Path(record.source[0]).resolve()
            if path.is_relative_to(program_dir):
                return _relative(path), max(record.source[1], 1)
        record = by_urn.get(record.parent)
    return _relative(result.project.stack_config_file(result.stack).resolve()), 1


def resource_label(result: PreviewResult, urn: str) -> str:
    """``type name`` of the resource a URN names, or ``stack`` for ``""``."""
    if not urn:
        return f"stack {result.project.name}-{result.stack}"
    for record in result.resources:
        if record.urn == urn:
            return f"{record.type} {record.name}"
    return urn


def summary(result: PreviewResult) -> dict[str, int]:
    """Counts: resources to create (the stack included), violations by level, exit code."""
    counts = {level: sum(v.level == level for v in result.violations) for level in LEVELS}
    return {"create": len(result.resources) + 1, **counts, "exitCode": result.exit_code}


def summary_line(result: PreviewResult) -> str:
    """One line: resources to create and violations by level."""
    counts = summary(result)
    verdict = "FAILED" if result.exit_code else "passed"
    return (
        f"Resources: {counts['create']} to create. Policy violations: "
        f"{counts['mandatory']} mandatory, {counts['advisory']} advisory. Preview {verdict}."
    )


def to_json(result: PreviewResult) -> dict[str, Any]:
    """The JSON report: ``resources`` (``urn``, ``type``, ``name``, ``parent``, ``inputs``,
    ``operation``), ``violations`` (``policy``, ``level``, ``urn``, ``message``,
    ``remediation``, ``location``), ``notes``, ``logs``, ``summary`` and ``timings``
    (seconds per step, see :attr:`PreviewResult.timings`)."""
    resources = [
        {
            "urn": stack_urn(result.project.name, result.stack),
            "type": STACK_TYPE,
            "name": f"{result.project.name}-{result.stack}",
            "parent": "",
            "inputs": {},
            "operation": "create",
        }
    ]
    resources += [
        {
            "urn": r.urn,
            "type": r.type,
            "name": r.name,
            "parent": r.parent,
            "inputs": display_value(dict(r.inputs)),
            "operation": "create",
        }
        for r in result.resources
    ]
    violations = []
    for v in result.violations:
        path, line = location(result, v.urn)
        violations.append(
            {
                "policy": v.policy,
                "level": v.level,
                "urn": v.urn,
                "message": v.message,
                "remediation": v.remediation,
                "location": {"path": path, "line": line},
            }
        )
    return {
        "project": result.project.name,
        "stack": result.stack,
        "policyPack": {"name": result.pack_name, "version": result.pack_version},
        "resources": resources,
        "violations": violations,
        "notes": result.notes,
        "logs": [{"level": level, "message": message} for level, message in result.logs],
        "summary": summary(result),
        "timings": {key: round(seconds, 4) for key, seconds in result.timings.items()},
    }


def render_json(result: PreviewResult) -> str:
    """:func:`to_json` as indented JSON text."""
    return json.dumps(to_json(result), indent=2) + "\n"


_MARKS = {"mandatory": " [red]✗ mandatory[/]", "advisory": " [yellow]! advisory[/]"}


def _tree(result: PreviewResult) -> Tree:
    """The resources by parent under the stack, each ``+`` (create), flagged with the worst
    level of its violations."""
    root_urn = stack_urn(result.project.name, result.stack)
    known = {r.urn for r in result.resources} | {root_urn}
    children: dict[str, list[Any]] = {}
    for record in result.resources:
        parent = record.parent if record.parent in known else root_urn
        children.setdefault(parent, []).append(record)
    worst: dict[str, str] = {}
    for v in result.violations:
        if worst.get(v.urn) != "mandatory":
            worst[v.urn] = v.level
    root = Tree(f"[green]+[/] {STACK_TYPE} {escape(result.project.name)}-{escape(result.stack)}")

    def add(node: Tree, urn: str) -> None:
        for record in children.get(urn, []):
            mark = _MARKS.get(worst.get(record.urn, ""), "")
            label = f"[green]+[/] {escape(record.type)} {escape(record.name)}{mark}"
            add(node.add(label), record.urn)

    add(root, root_urn)
    return root


def _violations(
    console: Console, result: PreviewResult, level: str, found: Iterable[Violation]
) -> None:
    items = list(found)
    if not items:
        return
    colour = "red" if level == "mandatory" else "yellow"
    console.print(f"\n[bold {colour}]{level.capitalize()} violations ({len(items)})[/]")
    for v in items:
        path, line = location(result, v.urn)
        console.print(
            f"  [bold]{escape(v.policy)}[/]  {escape(resource_label(result, v.urn))}"
            f"  [dim]{escape(path)}:{line}[/]"
        )
        for text in v.message.splitlines():
            console.print(f"    {escape(text)}")
        if v.remediation:
            first, *rest = v.remediation.strip().splitlines()
            console.print(f"    [dim]fix: {escape(first)}[/]")
            for text in rest:
                console.print(f"    [dim]     {escape(text)}[/]")


def render_text(result: PreviewResult, console: Console) -> None:
    """Print the report: header, resource tree, violations by level, notes, summary line."""
    console.print(
        f"Previewing stack [bold]{escape(result.stack)}[/] of project "
        f"[bold]{escape(result.project.name)}[/] with policy pack "
        f"{escape(result.pack_name)} {escape(result.pack_version)} (offline, mock runtime)\n"
    )
    console.print(_tree(result))
    for level in LEVELS:
        _violations(console, result, level, (v for v in result.violations if v.level == level))
    for level, message in result.logs:
        if level in ("warning", "error"):
            console.print(f"\n[yellow]program {level}:[/] {escape(message)}")
    for note in result.notes:
        console.print(f"\n[dim]note: {escape(note)}[/]")
    console.print(f"\n{summary_line(result)}")
