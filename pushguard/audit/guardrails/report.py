"""``report.html``'s section for ``--guardrails``: per constraint what it would deny, by mode,
and the constraints not evaluated with why. Every text is HTML-escaped (names come from
files a user gives)."""

from __future__ import annotations

from html import escape

from pushguard.audit.guardrails.counts import GuardrailsSummary


def section(summary: GuardrailsSummary | None) -> str:
    """The section's HTML; empty without ``--guardrails``."""
    if summary is None:
        return ""
    rows = []
    for short, c in summary.constraints.items():
        if c.evaluated:
            cells = (
                f"<td class=num>{c.denied.get('enforced', 0):,}</td>"
                f"<td class=num>{c.denied.get('dry-run', 0):,}</td>"
                f"<td class=num>{c.unknown:,}</td><td class=num>{c.errors:,}</td>"
                f"<td class=num>{c.google_managed:,}</td><td class=num>{c.allowed:,}</td>"
            )
        else:
            cells = f"<td colspan=6>not evaluated: {escape(c.not_evaluated)}</td>"
        rows.append(
            f"<tr><td><code>{escape(short)}</code><br>{escape(c.display_name)}</td>"
            f"<td>{escape(c.action)} on {escape(', '.join(c.methods))}</td>{cells}</tr>"
        )
    scc = (
        f"<p>{len(summary.scc_modules_not_evaluated)} Security Health Analytics module file(s) "
        "in <code>scc/</code> were not evaluated.</p>"
        if summary.scc_modules_not_evaluated
        else ""
    )
    return f"""<h2>Guardrails: what the custom constraints would deny</h2>
<p>Constraints of <code>{escape(summary.folder)}</code> over the export's subscriptions:
{summary.denied:,} denied, {summary.unknown:,} undecided (tags or ancestors the export does not
hold), {summary.errors:,} condition errors; each in <code>guardrails.jsonl</code>. Existing
subscriptions are not touched by a new constraint: these are refused (enforced) or logged (dry
run) on their next request of the constraint's methods.</p>
<table><tr><th>constraint</th><th>action</th><th class=num>denied (enforced)</th>
<th class=num>denied (dry run)</th><th class=num>undecided</th><th class=num>errors</th>
<th class=num>Google-managed</th><th class=num>allowed</th></tr>{"".join(rows)}</table>
{scc}"""
