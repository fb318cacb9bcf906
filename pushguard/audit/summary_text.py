"""The words of the summary line (:func:`pushguard.audit.command.summary_line`) on the baseline
and on what the run could not see: plain Python over :class:`~pushguard.audit.summary.AuditSummary`.
"""

from __future__ import annotations

from pushguard.audit.coverage import missing_text
from pushguard.audit.summary import AuditSummary, BaselineCounts


def changes_text(changes: BaselineCounts) -> str:
    """The summary line's part on the baseline: the changes, what was not rechecked and why,
    what differed and was accepted, what the baseline does not record."""
    text = (
        f"; against the baseline {changes.new:,} new, {changes.existing:,} existing, "
        f"{changes.level_raised:,} raised to a higher level, {changes.level_lowered:,} lowered, "
        f"{changes.resolved:,} resolved, {changes.not_rechecked:,} not rechecked"
    )
    if changes.not_rechecked_by_reason:
        reasons = ", ".join(f"{k} {v:,}" for k, v in changes.not_rechecked_by_reason.items())
        text += f" ({reasons})"
    if changes.mismatch_accepted:
        text += f"; compared despite {'; '.join(changes.mismatch_accepted)}"
    if changes.unverified:
        text += (
            f"; the baseline does not record its {' or '.join(changes.unverified)} "
            "(an older pushguard), so they were not compared"
        )
    return text


def unseen(summary: AuditSummary) -> str:
    """The summary line's part on what the run could not see (empty when it saw every part)."""
    coverage = summary.coverage
    if coverage.nothing_read:
        return "; NOTHING COULD BE READ: no line of the export is an asset"
    if coverage.missing:
        return f"; not seen: {missing_text(coverage.missing)}"
    return ""
