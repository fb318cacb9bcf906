"""``report.html``: one self-contained page (no scripts, no external assets; works offline).

Bar charts are inline SVG; all text is HTML-escaped (asset names and messages come from the
export, which an attacker may influence).
"""

from __future__ import annotations

from html import escape
from typing import Any

from pushguard.audit.coverage import INPUTS_BY_KEY
from pushguard.audit.guardrails.report import section as guardrails_section
from pushguard.audit.summary import AuditSummary, BaselineCounts
from pushguard.rules import RULES_BY_ID
from pushguard.rules.redaction import redact_urls

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


def _text(value: str | None) -> str:
    """Text from the export or the policy config, for the page: URLs redacted
    (:func:`pushguard.rules.redaction.redact_urls`), then HTML-escaped."""
    return escape(redact_urls(value or ""))


def _exception(row: dict[str, Any]) -> str:
    """A finding's exception: ``excepted until DATE: REASON`` while it holds; once it expired
    the finding is not excepted but counted again, and says so."""
    state = row.get("exception_state")
    if not state:
        return ""
    expires = escape(row.get("exception_expires") or "")
    reason = _text(row.get("exception_reason"))
    if state == "active":
        return f"excepted until {expires}: {reason}"
    return f"exception expired {expires} (counted again): {reason}"


_STATUS = {"unknown": "undecided"}
"""How the report names a status (``unknown``: the rule could not decide from the export)."""


def _findings(summary: AuditSummary, rows: list[dict[str, Any]] | None) -> str:
    """The findings table: with a baseline, the change of each (new first) and the resolved
    count."""
    if rows is None:
        return ""
    found = summary.findings
    total = (
        sum(found.violations_by_level.values())
        + found.excepted
        + found.undecided
        + found.google_managed
    )
    changes = summary.baseline
    head = (
        f"<h2>Findings</h2><p>{found.violations:,} violations, {found.excepted:,} excepted, "
        f"{found.undecided:,} undecided (the export lacks what the rule needs to decide), "
        f"{found.google_managed:,} Google-managed (not judged).</p>"
    )
    if changes is not None:
        head += _against(changes)
    else:
        head += "<p>No baseline was given: what changed since a previous audit is not known.</p>"
    if len(rows) < total:
        head += (
            f"<p>The first {len(rows):,} of {total:,}; every finding is in "
            "<code>findings.jsonl</code>.</p>"
        )
    change_head = "<th>change</th>" if changes is not None else ""
    body = []
    for row in rows:
        change = row.get("change") if changes is not None else None
        css = f"finding {escape(change)}" if change else "finding"
        if row.get("status") == "unknown":  # not counted against the baseline
            css = "finding undecided"
        cell = f"<td>{escape(change)}</td>" if change else ""
        level = escape(row.get("level") or "")
        body.append(
            f'<tr class="{css}">{cell}<td><code>{_text(row.get("asset_name"))}</code></td>'
            f"<td><code>{escape(row.get('rule_id') or '')}</code></td>"
            f"<td class={level}>{level}</td><td>{escape(_status(row.get('status')))}</td>"
            f"<td>{_text(row.get('message'))}<br>{_exception(row)}</td></tr>"
        )
    return (
        f"{head}<table><tr>{change_head}<th>subscription</th><th>rule</th><th>level</th>"
        f"<th>status</th><th>message</th></tr>{''.join(body)}</table>"
    )


def _against(changes: BaselineCounts) -> str:
    """The findings' head with a baseline: the changes, the resolved and the not rechecked
    findings (with their reasons), what differed and was accepted, what it does not record."""
    reasons = "".join(
        f"<li><code>{escape(reason)}</code>: {count:,}</li>"
        for reason, count in changes.not_rechecked_by_reason.items()
    )
    text = (
        f"<p>Against the baseline <code>{escape(changes.path)}</code>: {changes.new:,} new, "
        f"{changes.level_raised:,} raised to a higher level, {changes.level_lowered:,} lowered, "
        f"{changes.existing:,} existing, {changes.resolved:,} resolved (listed in "
        "<code>resolved.jsonl</code>: their asset and rule were evaluated again), "
        f"{changes.not_rechecked:,} not rechecked (listed in <code>not_rechecked.jsonl</code> "
        "with the reason; never counted as resolved). New and raised findings first.</p>"
    )
    if reasons:
        text += f"<p>Not rechecked, by reason:</p><ul>{reasons}</ul>"
    if changes.mismatch_accepted:
        text += (
            "<p>Compared with --accept-baseline-mismatch although "
            f"{escape('; '.join(changes.mismatch_accepted))}.</p>"
        )
    if changes.unverified:
        text += (
            f"<p>The baseline does not record its {escape(' or '.join(changes.unverified))} "
            "(written by an older pushguard): they were not compared.</p>"
        )
    return text


def _unseen(summary: AuditSummary) -> str:
    """The section on what the run could not see: nothing read, or the parts of the export a
    rule needed and the run read none of (:mod:`pushguard.audit.coverage`)."""
    coverage = summary.coverage
    if coverage.nothing_read:
        return (
            '<h2 class="blind">What the audit could not see</h2><p class="mandatory"><b>Nothing '
            f"could be read</b>: none of the {summary.lines.read:,} lines is a Cloud Asset "
            "Inventory asset (see the quarantine below). No rule was evaluated; this report "
            "says nothing of the organisation.</p>"
        )
    if not coverage.missing:
        return ""
    rows = "".join(
        f"<tr><td>{escape(INPUTS_BY_KEY[key].what)}</td>"
        f"<td><code>gcloud asset export {escape(INPUTS_BY_KEY[key].export)}</code></td>"
        f"<td>{escape(', '.join(rules))}</td></tr>"
        for key, rules in coverage.missing.items()
    )
    return (
        '<h2 class="blind">What the audit could not see</h2><p>The export holds none of these, '
        "so the rules that need them could not fire: no finding of theirs means nothing.</p>"
        "<table><tr><th>not read</th><th>export it with</th><th>rules</th></tr>"
        f"{rows}</table>"
    )


def _status(status: str | None) -> str:
    return _STATUS.get(status or "", status or "")


def _other_results(summary: AuditSummary) -> str:
    """Excepted and undecided results per rule (the violations have their own chart)."""
    found = summary.findings
    rules = sorted({*found.excepted_by_rule, *found.undecided_by_rule})
    rows = "".join(
        f"<tr><td><code>{escape(rule)}</code></td><td>{escape(_title(rule))}</td>"
        f"<td class=num>{found.excepted_by_rule.get(rule, 0):,}</td>"
        f"<td class=num>{found.undecided_by_rule.get(rule, 0):,}</td></tr>"
        for rule in rules
    )
    return (
        f"<h2>Excepted and undecided by rule</h2><p>{found.excepted:,} excepted (under an "
        f"active exception, not counted as violations), {found.undecided:,} undecided (not "
        "checked: the export lacks what the rule needs).</p>"
        "<table><tr><th>rule</th><th>what it checks</th><th class=num>excepted</th>"
        f"<th class=num>undecided</th></tr>{rows}</table>"
    )


def _unused_exceptions(summary: AuditSummary) -> str:
    """The policy config's exceptions that matched nothing, with why (nothing without
    exceptions)."""
    use = summary.exceptions
    if not use.given:
        return ""
    rows = "".join(
        f"<tr><td><code>{escape(u.policy)}</code></td><td><code>{_text(u.resource)}</code></td>"
        f"<td>{escape(u.expires)}</td><td>{escape(u.why)}</td></tr>"
        for u in use.unused
    )
    return (
        f"<h2>Exceptions</h2><p>{use.matched:,} of {use.given:,} exceptions in the policy "
        f"config matched a finding; {len(use.unused):,} matched nothing.</p>"
        "<table><tr><th>policy</th><th>resource</th><th>expires</th><th>why it matched "
        f"nothing</th></tr>{rows}</table>"
    )


def render(
    summary: AuditSummary,
    offenders: dict[str, list[dict[str, Any]]],
    findings: list[dict[str, Any]] | None = None,
) -> str:
    """The report's HTML. ``findings`` are the listed findings
    (:func:`pushguard.audit.listing.report_rows`, with ``change`` against a baseline), shown in
    their order after the summary cards; ``None`` leaves the table out."""
    lines = summary.lines
    found = summary.findings
    levels = {rule: level.value for rule, level in summary.settings.levels.items()}
    by_rule = sorted(found.violations_by_rule.items(), key=lambda item: (-item[1], item[0]))
    rule_rows = [(rule, count, levels.get(rule, "")) for rule, count in by_rule]
    project_rows = [
        (r["key"] or "(unknown project)", r["violations"], "")
        for r in offenders.get("by_project", [])
    ]
    folder_rows = [(r["key"], r["violations"], "") for r in offenders.get("by_folder", [])]
    worst = "".join(
        f"<tr><td><code>{escape(r['asset_name'])}</code></td><td class=num>{r['mandatory']}</td>"
        f"<td class=num>{r['violations']}</td><td>{escape(', '.join(r['rules']))}</td></tr>"
        for r in offenders.get("worst", [])
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
        ("excepted", found.excepted),
        ("undecided", found.undecided),
        ("Google-managed", found.google_managed),
    ]
    card_html = "".join(
        f'<div class="card"><b>{value:,}</b>{escape(label)}</div>' for label, value in cards
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pushguard audit</title>
<style>{_STYLE}</style></head><body>
<h1>pushguard audit: Pub/Sub push subscriptions</h1>
<div class="cards">{card_html}</div>
{_unseen(summary)}
{_findings(summary, findings)}
<h2>Violations by rule</h2>{_bars(rule_rows)}
<table><tr><th>rule</th><th>level</th><th>what it checks</th>
<th class=num>violations</th></tr>{rules}</table>
{_other_results(summary)}
{_unused_exceptions(summary)}
<h2>Violations by project</h2>{_bars(project_rows)}
<h2>Violations by folder</h2>{_bars(folder_rows)}
<h2>Worst offenders</h2>
<table><tr><th>subscription</th><th class=num>mandatory</th><th class=num>all</th>
<th>rules</th></tr>{worst}</table>
{_google_managed(summary)}{guardrails_section(summary.guardrails)}
{_stacks(summary)}
<h2>Quarantine</h2>
<p>{lines.quarantined:,} of {lines.read:,} lines could not be used; each is in
<code>quarantine/</code> with its file, line and reason.</p>
<table><tr><th>reason</th><th class=num>lines</th></tr>{reasons}</table>
{_unread(summary)}
</body></html>
"""


def _google_managed(summary: AuditSummary) -> str:
    """The Google-managed subscriptions per product: set aside, never judged, never counted as
    violations (:mod:`pushguard.rules.google_managed`)."""
    found = summary.findings
    rows = "".join(
        f"<tr><td>{escape(product)}</td><td class=num>{count:,}</td></tr>"
        for product, count in found.google_managed_by_product.items()
    )
    return f"""<h2>Google-managed subscriptions</h2>
<p>{found.google_managed:,} push subscriptions that Google creates and configures for its own
products (a Cloud Build Pub/Sub trigger's, a 1st-gen Cloud Function's), recognised by their
name and their whole push configuration: no rule judged them and none is a violation. Each is
in <code>findings.jsonl</code> with status <code>google-managed</code>, naming the product and
the trigger or function.</p>
<table><tr><th>product</th><th class=num>subscriptions</th></tr>{rows}</table>"""


def _stacks(summary: AuditSummary) -> str:
    """The ``--stacks`` section: managed and unmanaged push subscriptions per project, drifted
    and deleted ones per stack; without ``--stacks``, that neither rule was checked."""
    stacks = summary.stacks
    if not stacks.checked:
        return f"<h2>Stacks</h2><p>{escape(stacks.note)}.</p>"
    projects = "".join(
        f"<tr><td><code>{escape(name or '(unknown project)')}</code></td>"
        f"<td class=num>{counts.managed:,}</td><td class=num>{counts.unmanaged:,}</td></tr>"
        for name, counts in stacks.by_project.items()
    )
    names = sorted({*stacks.drifted_by_stack, *stacks.deleted_by_stack})
    drifted = "".join(
        f"<tr><td><code>{escape(name)}</code></td>"
        f"<td class=num>{stacks.drifted_by_stack.get(name, 0):,}</td>"
        f"<td class=num>{stacks.deleted_by_stack.get(name, 0):,}</td></tr>"
        for name in names
    )
    return f"""<h2>Stacks</h2>
<p>{stacks.states:,} stack states read: {stacks.managed:,} push subscriptions managed by a stack,
{stacks.unmanaged:,} by none (push-unmanaged).</p>
<table><tr><th>project</th><th class=num>managed</th><th class=num>unmanaged</th></tr>{projects}
</table>
<h2>Drift per stack</h2>
<table><tr><th>stack</th><th class=num>drifted</th><th class=num>deleted out of band</th></tr>
{drifted}</table>{_stack_snapshots(summary)}"""


def _stack_snapshots(summary: AuditSummary) -> str:
    """The subscriptions several stacks manage, and the stacks given by several state files:
    the file used and those ignored (:mod:`pushguard.audit.stack_snapshots`)."""
    stacks = summary.stacks
    rows = "".join(
        f"<tr><td><code>{escape(s.stack)}</code></td><td><code>{escape(s.used)}</code> "
        f"({escape(s.manifest_time or 'no manifest.time')})</td>"
        f"<td>{'<br>'.join(f'<code>{escape(f)}</code>' for f in s.ignored)}</td></tr>"
        for s in stacks.snapshots
    )
    claimed = (
        f"<p>{stacks.claimed_by_several_stacks:,} push subscriptions are managed by more than "
        "one stack (push-state-drift, <code>claimed</code>).</p>"
    )
    if not rows:
        return claimed
    return f"""{claimed}
<h2>Stacks given more than once</h2>
<table><tr><th>stack</th><th>state used (latest manifest.time)</th><th>ignored</th></tr>
{rows}</table>"""


def _unread(summary: AuditSummary) -> str:
    """The files that were not read (``inputs.files_unreadable``), each with its reason."""
    unread = summary.inputs.files_unreadable
    if not unread:
        return ""
    rows = "".join(
        f"<tr><td><code>{escape(name)}</code></td><td>{escape(reason)}</td></tr>"
        for name, reason in unread.items()
    )
    return (
        f"<h3>Files not read</h3><p>{len(unread):,} files were not audited; their lines are not "
        f"counted above.</p><table><tr><th>file</th><th>reason</th></tr>{rows}</table>"
    )
