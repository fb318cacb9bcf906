"""``report.html``: one self-contained page (no scripts, no external assets; works offline).

Bar charts are inline SVG; all text is HTML-escaped (asset names and messages come from the
export, which an attacker may influence).
"""

from __future__ import annotations

from html import escape
from typing import Any

from pushguard.audit.summary import AuditSummary
from pushguard.rules import RULES_BY_ID

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;color:#1b1f24}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;width:100%}td,th{padding:.3rem .5rem;border-bottom:1px solid #ddd;
text-align:left;vertical-align:top}th{background:#f4f5f7}.num{text-align:right}
.cards{display:flex;gap:1rem;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:6px;
padding:.6rem 1rem;min-width:9rem}.card b{display:block;font-size:1.4rem}
.mandatory{color:#b00020}.advisory{color:#8a5a00}code{font-size:.9em}
"""


def _bars(rows: list[tuple[str, int, str]], width: int = 640) -> str:
    """A horizontal bar chart: (label, value, css class) per bar."""
    if not rows:
        return "<p>None.</p>"
    top = max(value for _, value, _ in rows) or 1
    height = 22 * len(rows) + 4
    parts = [
        f'<svg role="img" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for n, (label, value, css) in enumerate(rows):
        y = 22 * n + 2
        length = max(2, int((width - 330) * value / top))
        color = "#b00020" if css == "mandatory" else "#d08c00" if css == "advisory" else "#3d6fb6"
        parts.append(
            f'<text x="0" y="{y + 14}" font-size="12">{escape(label[:48])}</text>'
            f'<rect x="300" y="{y + 3}" width="{length}" height="14" fill="{color}"/>'
            f'<text x="{305 + length}" y="{y + 14}" font-size="12">{value:,}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _title(rule_id: str) -> str:
    rule = RULES_BY_ID.get(rule_id)
    return rule.title if rule else ""


def render(summary: AuditSummary, offenders: dict[str, list[dict[str, Any]]]) -> str:
    """The report's HTML."""
    lines = summary.lines
    found = summary.findings
    levels = {rule: level.value for rule, level in summary.settings.levels.items()}
    by_rule = sorted(found.violations_by_rule.items(), key=lambda item: (-item[1], item[0]))
    rule_rows = [(rule, count, levels.get(rule, "")) for rule, count in by_rule]
    project_rows = [
        (r["key"] or "(unknown project)", r["violations"], "") for r in offenders["by_project"]
    ]
    folder_rows = [(r["key"], r["violations"], "") for r in offenders["by_folder"]]
    worst = "".join(
        f"<tr><td><code>{escape(r['asset_name'])}</code></td><td class=num>{r['mandatory']}</td>"
        f"<td class=num>{r['violations']}</td><td>{escape(', '.join(r['rules']))}</td></tr>"
        for r in offenders["worst"]
    )
    rules = "".join(
        f"<tr><td><code>{escape(rule)}</code></td><td class={escape(levels.get(rule, ''))}>"
        f"{escape(levels.get(rule, ''))}</td><td>{escape(_title(rule))}</td>"
        f"<td class=num>{count:,}</td></tr>"
        for rule, count in by_rule
    )
    reasons = "".join(
        f"<tr><td>{escape(reason)}</td><td class=num>{count:,}</td></tr>"
        for reason, count in summary.quarantine_reasons.items()
    )
    cards = [
        ("lines read", lines.read),
        ("quarantined", lines.quarantined),
        ("subscriptions", summary.subscriptions.evaluated),
        ("push subscriptions", summary.subscriptions.push),
        ("mandatory violations", found.violations_by_level.get("mandatory", 0)),
        ("advisory violations", found.violations_by_level.get("advisory", 0)),
    ]
    card_html = "".join(
        f'<div class="card"><b>{value:,}</b>{escape(label)}</div>' for label, value in cards
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pushguard audit</title>
<style>{_STYLE}</style></head><body>
<h1>pushguard audit: Pub/Sub push subscriptions</h1>
<div class="cards">{card_html}</div>
<h2>Violations by rule</h2>{_bars(rule_rows)}
<table><tr><th>rule</th><th>level</th><th>what it checks</th>
<th class=num>violations</th></tr>{rules}</table>
<h2>Violations by project</h2>{_bars(project_rows)}
<h2>Violations by folder</h2>{_bars(folder_rows)}
<h2>Worst offenders</h2>
<table><tr><th>subscription</th><th class=num>mandatory</th><th class=num>all</th>
<th>rules</th></tr>{worst}</table>
<h2>Quarantine</h2>
<p>{lines.quarantined:,} of {lines.read:,} lines could not be used; each is in
<code>quarantine/</code> with its file, line and reason.</p>
<table><tr><th>reason</th><th class=num>lines</th></tr>{reasons}</table>
</body></html>
"""
