"""The coverage table, as ``pushguard guardrails`` prints it and docs/guardrails.md shows it
(tests/guardrails/test_docs.py checks the docs' copy against :func:`coverage_markdown`)."""

from __future__ import annotations

from pushguard.guardrails.compiler import iter_coverage
from pushguard.guardrails.model import Guardrails, Status


def coverage_table(guardrails: Guardrails) -> str:
    """Plain text: one line per rule with both targets' statuses, then each reason once."""
    rows = [("rule", "constraint", "sha")]
    reasons: list[str] = []
    for rule_id, constraint, sha in iter_coverage(guardrails):
        rows.append((rule_id, constraint.status.value, sha.status.value))
        for cov in (constraint, sha):
            if cov.status is Status.COMPILED or not cov.reason:
                continue
            same = cov is sha and sha.reason == constraint.reason
            if not same:
                target = "" if constraint.reason == sha.reason else f" ({cov.target})"
                reasons.append(f"  {rule_id}{target}: {cov.reason}")
    width = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(width[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    return "\n".join([*lines, "", "why:", *reasons, ""]) + "\n"


def coverage_markdown(guardrails: Guardrails) -> str:
    """A Markdown table: rule, constraint, SHA module, and the reason (the constraint's; the
    module's where it differs)."""
    lines = ["| Rule | Constraint | SHA module | What is left out, and why |", "|---|---|---|---|"]
    for rule_id, constraint, sha in iter_coverage(guardrails):
        reason = constraint.reason or "nothing"
        if sha.reason != constraint.reason:
            reason += f" (SHA: {sha.reason or 'nothing'})"
        lines.append(f"| `{rule_id}` | {constraint.status.value} | {sha.status.value} | {reason} |")
    return "\n".join(lines) + "\n"
