"""``summary.json``'s ``guardrails``: per constraint, what it would deny, and the constraints
and files not evaluated with why. Built on the driver from a few count rows
(:func:`pushguard.audit.guardrails.spark.write_guardrails`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from pushguard.audit.guardrails.model import Constraint, Guardrails


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class ConstraintCounts(_Part):
    """One custom constraint of ``--guardrails``."""

    name: str
    """Its full name (``organizations/O/customConstraints/custom.X``)."""
    file: str
    """The file it was read from."""
    display_name: str = ""
    action: str
    """``DENY`` or ``ALLOW``."""
    methods: list[str]
    """The methods it is checked on (``CREATE``, ``UPDATE``)."""
    policies: list[str] = []
    """The policies of ``policies/`` that configure it (sorted)."""
    evaluated: bool
    """Whether its condition was evaluated over the export's subscriptions."""
    not_evaluated: str = ""
    """Why it was not (empty when it was)."""
    denied: dict[str, int] = {}
    """Subscriptions it would deny, per mode (``enforced``: the request is refused;
    ``dry-run``: only logged); absent modes: none."""
    unknown: int = 0
    """Subscriptions its condition denies where whether a policy applies is undecided (tags, or
    ancestors the export does not give)."""
    errors: int = 0
    """Subscriptions its condition errs on (each listed in ``guardrails.jsonl``)."""
    google_managed: int = 0
    """Of the listed subscriptions (denied, unknown, error), those Google made for its own
    products: a constraint that denies them breaks the product."""
    allowed: int = 0
    """Subscriptions in a policy's scope that its condition allows."""
    out_of_scope: int = 0
    """Subscriptions no policy of it applies to."""


class GuardrailsSummary(_Part):
    """``--guardrails``: the custom constraints evaluated over the export."""

    folder: str
    """``DIR`` as given."""
    constraints: dict[str, ConstraintCounts]
    """Per constraint (``custom.X``)."""
    denied: int = 0
    """Listed rows with status ``denied`` (all constraints)."""
    unknown: int = 0
    """Listed rows with status ``unknown``."""
    errors: int = 0
    """Listed rows with status ``error``."""
    scc_modules_not_evaluated: list[str] = []
    """The Security Health Analytics module files of ``scc/``: not evaluated by the audit."""


def _base(constraint: Constraint, guardrails: Guardrails, reason: str = "") -> ConstraintCounts:
    return ConstraintCounts(
        name=constraint.name,
        file=constraint.file,
        display_name=constraint.display_name,
        action=constraint.action,
        methods=list(constraint.methods),
        policies=sorted(p.name for p in guardrails.policies_of(constraint.short)),
        evaluated=not reason,
        not_evaluated=reason,
    )


def summarise(guardrails: Guardrails, rows: Iterable[Mapping[str, Any]]) -> GuardrailsSummary:
    """The summary from count rows (``constraint``, ``status``, ``mode``, ``managed``,
    ``count``)."""
    counts: dict[str, dict[str, Any]] = {
        c.short: _base(c, guardrails).model_dump() for c in guardrails.constraints
    }
    totals = {"denied": 0, "unknown": 0, "error": 0}
    for row in rows:
        entry, status, number = counts[row["constraint"]], row["status"], int(row["count"])
        if status == "denied":
            entry["denied"][row["mode"]] = entry["denied"].get(row["mode"], 0) + number
        elif status == "error":
            entry["errors"] += number
        else:
            key = status.replace("-", "_")
            entry[key] += number
        if status in totals:
            totals[status] += number
            entry["google_managed"] += number if row["managed"] else 0
    for skipped in guardrails.not_evaluated:
        base = _base(skipped.constraint, guardrails, skipped.reason)
        counts[skipped.constraint.short] = base.model_dump()
    return GuardrailsSummary(
        folder=guardrails.folder,
        constraints={k: ConstraintCounts(**v) for k, v in sorted(counts.items())},
        denied=totals["denied"],
        unknown=totals["unknown"],
        errors=totals["error"],
        scc_modules_not_evaluated=list(guardrails.scc_files),
    )


def said(summary: GuardrailsSummary | None) -> str:
    """The summary line's part: ``; guardrails: N denied, N unknown, N errors over K
    constraints (M not evaluated)``; empty without ``--guardrails``."""
    if summary is None:
        return ""
    skipped = sum(1 for c in summary.constraints.values() if not c.evaluated)
    evaluated = len(summary.constraints) - skipped
    return (
        f"; guardrails: {summary.denied:,} denied, {summary.unknown:,} unknown, "
        f"{summary.errors:,} errors over {evaluated} constraint{'' if evaluated == 1 else 's'}"
        f" ({skipped} not evaluated: summary.json guardrails)"
    )
