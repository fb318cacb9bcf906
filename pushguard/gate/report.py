"""Reports of one stack's gate run (a preview or an analysed state) for people and machines:
text (a resource tree and the violations by enforcement level) and JSON; SARIF is in
:mod:`pushguard.gate.sarif`. What differs between a preview and a state (where a finding about
the whole stack points, the wording) is the result's :class:`~pushguard.gate.result.Origin`.

Every report renders :func:`pushguard.gate.redact.redact_result` of the result, never the
result itself: values are shown in wire form with a secret as ``[secret]``, a value unknown until
the resource is created as ``[unknown]`` (Pulumi's "known after apply"), and every URL without
its userinfo, query and fragment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from pushguard.crossguard.urn import STACK_TYPE, stack_urn
from pushguard.gate.redact import redact_result
from pushguard.gate.result import ResourceRecord, StackResult, Violation

LEVELS = ("mandatory", "advisory")

_UNPRINTABLE = re.compile(
    r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029"
    r"\u2066-\u2069]"
)
"""Control characters (but the tab), line and paragraph separators (U+2028, U+2029), and
bidirectional marks and overrides."""


def _escaped(text: str) -> str:
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def shown(text: str) -> str:
    """``text`` as the text report prints it: rich markup escaped, and control characters and
    bidirectional overrides written as ``\\uXXXX``, so a name from a program or a state file
    cannot move the cursor, recolour a CI log or reorder what a reviewer reads."""
    return escape(_escaped(text))


def unprintable_names(result: StackResult) -> list[str]:
    """The URNs and names of ``result``'s resources that hold a control character, longest
    first (for :func:`message_lines`)."""
    names = {n for r in result.resources for n in (r.urn, r.name) if _UNPRINTABLE.search(n)}
    return sorted(names, key=lambda n: (-len(n), n))


def message_text(message: str, names: Iterable[str]) -> str:
    """``message`` for JSON and SARIF: each of ``names`` (:func:`unprintable_names`) written
    escaped, so a name's own line break cannot start a line of the message where a viewer
    renders it (a fake "passed" line); the message's own line breaks are kept."""
    return "\n".join(message_lines(message, names))


def message_lines(message: str, names: Iterable[str] = ()) -> list[str]:
    """The lines of a pack message as the text report prints them (each then passed through
    :func:`shown`): split at ``\\n`` only, after each of ``names`` (resource names and URNs
    that hold control characters, :func:`unprintable_names`) is written escaped, so a name
    cannot start a line of its own (a fake "Preview passed." line); other line breaks (U+2028,
    a vertical tab) stay in the line, where :func:`shown` escapes them."""
    for name in names:
        message = message.replace(name, _escaped(name))
    return message.split("\n")


def repository_root(path: Path) -> Path | None:
    """The git top level that holds ``path`` (the nearest folder with a ``.git`` entry), or
    ``None`` outside a repository."""
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None


def relative_path(path: Path) -> str:
    """:func:`_relative`, for the other reports (SARIF)."""
    return _relative(path)


def _relative(path: Path) -> str:
    """``path`` relative to its repository's top level (how code scanning resolves SARIF URIs,
    whatever folder the command ran from); outside a repository, relative to the working
    directory when under it, else absolute."""
    base = repository_root(path.parent) or Path.cwd().resolve()
    if path.is_relative_to(base):
        return path.relative_to(base).as_posix()
    return str(path)


_INDEX: list[tuple[list[ResourceRecord], int, dict[str, ResourceRecord]]] = []
"""The last resources list indexed by URN (the list itself, its length, the index)."""


def _by_urn(result: StackResult) -> dict[str, ResourceRecord]:
    """``result``'s resources by URN, built once per resources list (a report looks up every
    finding's resource: rebuilding it per finding made 20,000 subscriptions quadratic)."""
    resources = result.resources
    if _INDEX and _INDEX[0][0] is resources and _INDEX[0][1] == len(resources):
        return _INDEX[0][2]
    index = {r.urn: r for r in resources}
    _INDEX[:] = [(resources, len(resources), index)]
    return index


def location(result: StackResult, urn: str, where: str | None = None) -> tuple[str, int]:
    """Where a finding belongs in the team's code, as ``(path, line)``: ``where`` (``path:line``
    relative to the project folder) when given, else the constructor call of the resource, or of
    its nearest ancestor, inside the program's folder (a component's children point at the
    component's use); the stack config file for the whole stack. For analysed state, the
    resource's line in the state file (the stack resource's line for the whole stack)."""
    if where:
        file, _, line = where.rpartition(":")
        return _relative(result.origin.project_file(file)), max(int(line or 1), 1)
    code = result.origin.code_folder()
    by_urn = _by_urn(result)
    record = by_urn.get(urn)
    while record is not None and code is not None:
        if record.source is not None:
            path = Path(record.source[0]).resolve()
            if path.is_relative_to(code):
                return _relative(path), max(record.source[1], 1)
        record = by_urn.get(record.parent)
    stack_file, stack_line = result.origin.stack_location()
    return _relative(stack_file), max(stack_line, 1)


def call_stack(result: StackResult, urn: str) -> list[tuple[str, int]]:
    """The program's frames (``(path, line)``, outermost first, paths as :func:`location`
    gives them) that constructed the resource a finding is about, or its nearest ancestor with
    frames; ``[]`` when there is only the one line :func:`location` already names."""
    by_urn = _by_urn(result)
    while urn:
        frames = result.call_stacks.get(urn)
        if frames:
            listed = [(_relative(Path(path).resolve()), line) for path, line in frames]
            return listed if len(listed) > 1 else []
        record = by_urn.get(urn)
        urn = record.parent if record is not None else ""
    return []


def resource_label(result: StackResult, urn: str) -> str:
    """``type name`` of the resource a URN names (``type name (import)`` for one the engine
    imports), or ``stack`` for ``""``."""
    if not urn:
        return f"stack {result.project}-{result.stack}"
    record = _by_urn(result).get(urn)
    if record is None:
        return urn
    imported = " (import)" if operation(result, record) == IMPORT else ""
    return f"{record.type} {record.name}{imported}"


IMPORT = "import"
"""The operation of a resource the engine imports (``OpImport``, ``pkg/resource/deploy/step.go``
in pulumi/pulumi: shown ``=``, counted "to import")."""


def operation(result: StackResult, record: ResourceRecord | None = None) -> str:
    """The operation as Pulumi names it: the resources' (``create`` in a preview, ``same`` for
    resources already in the state), or, for ``record``, ``import`` when a preview's resource
    is imported (:attr:`~pushguard.gate.result.ResourceRecord.imported`)."""
    base = result.origin.operation
    if record is not None and record.imported and base == "create":
        return IMPORT
    return base


def urn_operation(result: StackResult, urn: str) -> str:
    """:func:`operation` of the resource ``urn`` names (the resources' for the stack or an
    unknown URN)."""
    return operation(result, _by_urn(result).get(urn))


def summary(result: StackResult) -> dict[str, int]:
    """Counts: resources by operation (the stack included; ``import`` only when a resource is
    imported), violations by level (not counting those under an active exception),
    ``excepted`` (under an active exception), ``expiredExceptions`` (counted again, their
    exception expired), ``unjudged`` (only when a policy could not judge what the config asked
    it to: :attr:`~pushguard.gate.result.StackResult.unjudged`), ``googleManaged`` (subscriptions
    Google manages, which no policy judged; only when there are some), exit code."""
    counting = [v for v in result.violations if v.counts]
    counts = {level: sum(v.level == level for v in counting) for level in LEVELS}
    imports = sum(operation(result, r) == IMPORT for r in result.resources)
    return {
        operation(result): len(result.resources) + 1 - imports,
        **({IMPORT: imports} if imports else {}),
        **counts,
        "excepted": len(result.violations) - len(counting),
        "expiredExceptions": sum(
            v.excepted is not None and not v.excepted.active for v in result.violations
        ),
        **({"unjudged": len(result.unjudged)} if result.unjudged else {}),
        **({"googleManaged": len(result.google_managed)} if result.google_managed else {}),
        "exitCode": result.exit_code,
    }


def disabled_policies(result: StackResult) -> list[str]:
    """The pack's policies the policy config turned off (level ``disabled``), by name: they
    judged nothing, so a report says which (a rule switched off is not a rule passed)."""
    return sorted(name for name, meta in result.policies.items() if meta.level == "disabled")


VERDICTS = {0: "passed", 1: "FAILED", 2: "INCOMPLETE"}
"""The summary line's last word by exit code: 2 when a policy could not judge what it was asked
to (never "passed" then)."""


def summary_line(result: StackResult) -> str:
    """One line: resources and violations by level, then the verdict (:data:`VERDICTS`; an
    incomplete run says how many checks could not run)."""
    counts = summary(result)
    verdict = VERDICTS[result.exit_code]
    if result.unjudged:
        verdict += f" ({len(result.unjudged)} check(s) could not judge a value)"
    resources = result.origin.resources_phrase(counts[operation(result)])
    if counts.get(IMPORT):
        resources += f", {counts[IMPORT]} to import"
    run = result.origin.run_name
    excepted = f", {counts['excepted']} excepted" if counts["excepted"] else ""
    google = counts.get("googleManaged", 0)
    excepted += f"; {google} Google-managed subscription(s) not judged" if google else ""
    return (
        f"Resources: {resources}. Policy violations: {counts['mandatory']} mandatory, "
        f"{counts['advisory']} advisory{excepted}. {run} {verdict}."
    )


def error_json(message: str, result: StackResult | None) -> dict[str, Any]:
    """The JSON report of a run that failed (exit 2): what :func:`to_json` knows of
    ``result`` (when the project was read), ``error`` (``message``) and ``summary.exitCode``
    2."""
    report: dict[str, Any] = (
        to_json(result) if result is not None else {"resources": [], "violations": []}
    )
    report["error"] = {"message": message}
    report["summary"] = {**report.get("summary", {}), "exitCode": 2}
    return report


def to_json(result: StackResult) -> dict[str, Any]:
    """The JSON report: ``resources`` (``urn``, ``type``, ``name``, ``parent``, ``inputs``,
    ``operation``, ``dependencies``, ``provider``, ``options``; the stack first, then by URN;
    see :func:`_resources_json`), ``violations`` (``policy``, ``level``, ``urn``,
    ``findingId``, ``message``, ``remediation``, ``location``, ``exception``: ``null`` or
    ``state``/``reason``/``expires``, and ``change`` against a baseline; by level, policy and
    URN), ``notChecked``, ``googleManaged`` (``urn``, ``product``, ``reason``, ``location``:
    the subscriptions Google manages, which no policy judged), ``unknownOffline`` (``kind``,
    ``name``, ``message``, ``location`` or ``null``: what the real preview would know,
    :mod:`pushguard.gate.unknowns`), ``outputs``
    (the stack outputs), ``programOutput`` (``stdout``, ``stderr``, ``truncated``), ``notes``,
    ``logs`` and ``summary``; ``disabledPolicies`` (names) when the policy config disabled
    any. Deterministic: the same preview gives the same bytes (timings are
    not part of it)."""
    result = redact_result(result)
    names = unprintable_names(result)
    return {
        "project": result.project,
        "stack": result.stack,
        **result.origin.report_fields(_relative),
        "policyPack": {"name": result.pack_name, "version": result.pack_version},
        **({"disabledPolicies": disabled} if (disabled := disabled_policies(result)) else {}),
        "resources": _resources_json(result),
        "violations": [_violation_json(result, v, names) for v in result.violations],
        "notChecked": [
            {
                "policy": n.policy,
                "urn": n.urn,
                "reason": message_text(n.reason, names),
                "location": dict(zip(("path", "line"), location(result, n.urn), strict=True)),
            }
            for n in result.not_checked
        ],
        "googleManaged": [
            {
                "urn": m.urn,
                "product": m.product,
                "reason": message_text(m.reason, names),
                "location": dict(zip(("path", "line"), location(result, m.urn), strict=True)),
            }
            for m in result.google_managed
        ],
        "unknownOffline": [
            u.to_json(_relative, lambda text: message_text(text, names))
            for u in result.unknown_offline
        ],
        "outputs": result.outputs,
        "programOutput": {
            "stdout": result.program_output.stdout,
            "stderr": result.program_output.stderr,
            "truncated": result.program_output.truncated,
        },
        "notes": result.notes,
        "logs": [{"level": level, "message": message} for level, message in result.logs],
        "summary": summary(result),
    }


def _resources_json(result: StackResult) -> list[dict[str, Any]]:
    """The stack resource, then every resource (by URN), as the JSON report lists them.

    Besides its inputs, each resource gives what a reviewer checks of its registration:
    ``dependencies`` (URNs, sorted: the SDK sends them in no fixed order; what is created before
    it), ``provider``
    (the provider reference ``PROVIDER_URN::PROVIDER_ID``; for a resource of a preview that names
    no provider, the URN of the default provider the engine makes for its package and version,
    ``pulumi:providers:PACKAGE::default_VERSION`` with ``_`` for ``.``, whose ID is not known
    before it exists, https://github.com/pulumi/pulumi/blob/master/developer-docs/architecture/providers.md#default-providers;
    ``""`` for a component or the stack) and ``options`` (``protect``, ``deleteBeforeReplace``,
    ``replaceOnChanges``, ``ignoreChanges``, and ``import``, the import ID, ``""`` for none, as
    the Pulumi engine receives them in ``RegisterResourceRequest``:
    https://github.com/pulumi/pulumi/blob/master/proto/pulumi/resource.proto). ``operation`` is
    ``create``, ``import`` (a preview's resource with an import ID) or ``same`` (analyze).
    """
    root = ResourceRecord(
        urn=stack_urn(result.project, result.stack),
        type=STACK_TYPE,
        name=f"{result.project}-{result.stack}",
        parent="",
        custom=False,
        provider="",
        inputs={},
        dependencies=(),
        property_dependencies={},
    )
    return [
        {
            "urn": r.urn,
            "type": r.type,
            "name": r.name,
            "parent": r.parent,
            "inputs": dict(r.inputs),
            "operation": operation(result, r),
            "dependencies": sorted(r.dependencies),
            "provider": _provider(result, r),
            "options": {
                "protect": r.protect,
                "deleteBeforeReplace": r.delete_before_replace,
                "replaceOnChanges": list(r.replace_on_changes),
                "ignoreChanges": list(r.ignore_changes),
                "import": r.import_id,
            },
        }
        for r in (root, *result.resources)
    ]


def _provider(result: StackResult, record: ResourceRecord) -> str:
    """The record's provider reference, or its default provider's URN (see
    :func:`_resources_json`)."""
    if record.provider or not record.custom:
        return record.provider
    package = record.type.split(":", 1)[0]
    name = f"default_{record.version.replace('.', '_')}" if record.version else "default"
    return f"urn:pulumi:{result.stack}::{result.project}::pulumi:providers:{package}::{name}"


def _violation_json(result: StackResult, v: Violation, names: list[str]) -> dict[str, Any]:
    path, line = location(result, v.urn, v.where)
    entry: dict[str, Any] = {
        "policy": v.policy,
        "level": v.level,
        "urn": v.urn,
        "findingId": v.finding_id,
        "message": message_text(v.message, names),
        "remediation": v.remediation,
        "location": {"path": path, "line": line},
        "callStack": [{"path": p, "line": n} for p, n in call_stack(result, v.urn)],
        "exception": exception_json(v),
    }
    if v.change:
        entry["change"] = v.change
    return entry


def exception_json(v: Violation) -> dict[str, str] | None:
    """A violation's exception in the JSON report: ``state`` (``active``: not counted;
    ``expired``: counted again), ``reason``, ``expires`` (``YYYY-MM-DD``), or ``None``."""
    if v.excepted is None:
        return None
    return {"state": v.excepted.state, "reason": v.excepted.reason, "expires": v.excepted.expires}


def exception_text(v: Violation) -> str:
    """A violation's exception as one line of the text report (``""`` without one)."""
    if v.excepted is None:
        return ""
    if v.excepted.active:
        return f"excepted until {v.excepted.expires}: {v.excepted.reason}"
    return f"exception expired {v.excepted.expires}, counted again: {v.excepted.reason}"


def render_json(result: StackResult | None, error: str | None = None) -> str:
    """:func:`to_json` (or :func:`error_json` when ``error`` is given) as indented JSON text."""
    report = error_json(error, result) if error is not None else to_json(result)  # type: ignore[arg-type]
    return json.dumps(report, indent=2) + "\n"


_OPS = {"create": "[green]+[/]", IMPORT: "[cyan]=[/]", "same": " "}
"""Each operation's mark in the tree."""
_MARKS = {"mandatory": " [red]✗ mandatory[/]", "advisory": " [yellow]! advisory[/]"}


def _tree(result: StackResult) -> Tree:
    """The resources by parent under the stack, each ``+`` (create) or ``=`` (import, with
    its import ID), as the Pulumi CLI marks them (``RawPrefix`` in pulumi/pulumi's
    ``pkg/resource/deploy/step.go``), flagged with the worst level of its violations."""
    root_urn = stack_urn(result.project, result.stack)
    known = {r.urn for r in result.resources} | {root_urn}
    children: dict[str, list[Any]] = {}
    for record in result.resources:
        parent = record.parent if record.parent in known else root_urn
        children.setdefault(parent, []).append(record)
    worst: dict[str, str] = {}
    for v in result.violations:
        if v.counts and worst.get(v.urn) != "mandatory":
            worst[v.urn] = v.level
    root = Tree(
        f"{_OPS[operation(result)]} {STACK_TYPE} {shown(result.project)}-{shown(result.stack)}"
    )

    def add(node: Tree, urn: str) -> None:
        for record in children.get(urn, []):
            mark = _MARKS.get(worst.get(record.urn, ""), "")
            op = operation(result, record)
            what = f" [cyan]import {shown(record.import_id)}[/]" if op == IMPORT else ""
            label = f"{_OPS[op]} {shown(record.type)} {shown(record.name)}{what}{mark}"
            add(node.add(label), record.urn)

    add(root, root_urn)
    return root


def _violations(
    console: Console, result: StackResult, level: str, found: Iterable[Violation]
) -> None:
    items = list(found)
    if not items:
        return
    colour = "red" if level == "mandatory" else "yellow"
    heading = f"{level.capitalize()} violations" if level in LEVELS else level.capitalize()
    console.print(f"\n[bold {colour}]{heading} ({len(items)})[/]")
    names = unprintable_names(result)
    for v in items:
        path, line = location(result, v.urn, v.where)
        console.print(
            f"  [bold]{shown(v.policy)}[/]  {shown(resource_label(result, v.urn))}"
            f"  [dim]{shown(path)}:{line}[/]"
        )
        for text in message_lines(v.message, names):
            console.print(f"    {shown(text)}")
        if v.finding_id or v.change:
            change = f" ({v.change})" if v.change else ""
            console.print(f"    [dim]finding {shown(v.finding_id)}{change}[/]")
        if v.excepted is not None:
            console.print(f"    [bold]{shown(exception_text(v))}[/]")
        if v.remediation:
            first, *rest = v.remediation.strip().split("\n")
            console.print(f"    [dim]fix: {shown(first)}[/]")
            for text in rest:
                console.print(f"    [dim]     {shown(text)}[/]")


def render_text(result: StackResult, console: Console) -> None:
    """Print the report: header, resource tree, violations by level, notes, summary line."""
    result = redact_result(result)
    pack = f"policy pack {shown(result.pack_name)} {shown(result.pack_version)}"
    stack = f"stack [bold]{shown(result.stack)}[/] of project [bold]{shown(result.project)}[/]"
    console.print(result.origin.heading(stack, pack))
    console.print(_tree(result))
    for level in LEVELS:
        _violations(
            console, result, level, (v for v in result.violations if v.level == level and v.counts)
        )
    _violations(console, result, "excepted", (v for v in result.violations if not v.counts))
    for level, message in result.logs:
        if level in ("warning", "error"):
            console.print(f"\n[yellow]program {level}:[/] {shown(message)}")
    if result.not_checked:
        console.print(f"\n[bold]Not checked ({len(result.not_checked)})[/]")
        for n in result.not_checked:
            path, line = location(result, n.urn)
            console.print(f"  [bold]{shown(n.policy)}[/]  [dim]{shown(path)}:{line}[/]")
            console.print(f"    {shown(n.reason)}")
    if result.google_managed:
        console.print(f"\n[bold]Google-managed, not judged ({len(result.google_managed)})[/]")
        for m in result.google_managed:
            path, line = location(result, m.urn)
            console.print(f"  [bold]{shown(m.product)}[/]  [dim]{shown(path)}:{line}[/]")
            console.print(f"    {shown(m.reason)}")
    _unknown_offline(result, console)
    if disabled := disabled_policies(result):
        console.print(f"\n[bold]Disabled by the policy config ({len(disabled)})[/]")
        console.print(f"  {shown(', '.join(disabled))}")
    for note in result.notes:
        console.print(f"\n[dim]note: {shown(note)}[/]")
    render_program_output(result, console)
    if result.outputs:
        console.print("\nOutputs:")
        for name, value in result.outputs.items():
            console.print(f"    {shown(name)}: {shown(json.dumps(value))}")
    console.print(f"\n{summary_line(result)}")


def _unknown_offline(result: StackResult, console: Console) -> None:
    """The "Unknown offline" section (:mod:`pushguard.gate.unknowns`), when there is one."""
    if result.unknown_offline:
        console.print(f"\n[bold]Unknown offline ({len(result.unknown_offline)})[/]")
    for u in result.unknown_offline:
        place = u.location(_relative)
        where = f"  [dim]{shown(place['path'])}:{place['line']}[/]" if place else ""
        console.print(f"  [bold]{shown(u.kind)}[/] {shown(u.name)}{where}")
        console.print(f"    {shown(u.message)}")


def render_program_output(result: StackResult, console: Console) -> None:
    """The program's own stdout and stderr, indented under a heading (nothing if it printed
    nothing)."""
    output = redact_result(result).program_output
    for name, text in (("stdout", output.stdout), ("stderr", output.stderr)):
        if not text.strip():
            continue
        console.print(f"\n[dim]program {name}:[/]")
        for line in text.rstrip("\n").splitlines():
            console.print(f"    {shown(line)}", markup=True)
    if output.truncated:
        console.print("    [dim](program output cut at 1 MiB)[/]")
