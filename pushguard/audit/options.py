"""What an audit is asked to do (:class:`AuditOptions`) and what it answers (:class:`AuditResult`,
the exit code for ``--fail-on``).

Plain Python, no Spark: :mod:`pushguard.audit.job` runs the audit with these, and
:mod:`pushguard.audit.command` and ``__main__`` turn options into them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pushguard.audit.coverage import blindness
from pushguard.audit.guardrails.model import Guardrails
from pushguard.audit.parse import DEFAULT_MAX_LINE_BYTES
from pushguard.audit.summary import AuditSummary
from pushguard.policy.settings import PackSettings
from pushguard.rules import RULES, EnforcementLevel

FAIL_ON = ("mandatory", "advisory", "never")
"""The ``--fail-on`` values: the lowest level whose violations make the exit code 1."""

_FAILING_LEVELS = {"mandatory": ("mandatory",), "advisory": ("mandatory", "advisory"), "never": ()}


@dataclass
class AuditOptions:
    """What to audit and how.

    Attributes:
        paths: export files or folders (local, ``file:``, ``gs://`` with the connector).
        out: the output folder, local or a URI (created; existing outputs in it are replaced).
        levels: enforcement level per rule ID (default: each rule's own).
        settings: pack settings per rule ID (from the policy config).
        include_dry_run: also count dry-run (``spec``) perimeters.
        max_line_bytes: longer lines are quarantined.
        run_time: when the run started (UTC, ``YYYY-MM-DDTHH:MM:SSZ``), written in every finding
            row (``""``: no run time, the rows' ``run_time`` is null).
        stacks: Pulumi state files or folders (``--stacks``; :mod:`pushguard.audit.stacks`);
            empty: ``push-unmanaged`` and ``push-state-drift`` are not checked.
        snapshot_times: the read time (UTC) of each of ``paths`` given with ``--snapshot
            TIME=PATH`` (:mod:`pushguard.audit.snapshots`).
        guardrails: the custom constraints and policies of ``--guardrails DIR``, read and
            checked (:mod:`pushguard.audit.guardrails`); ``None``: not evaluated.
    """

    paths: list[str]
    out: str
    levels: Mapping[str, EnforcementLevel] = field(default_factory=dict)
    settings: Mapping[str, PackSettings] = field(default_factory=dict)
    include_dry_run: bool = False
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    run_time: str = ""
    stacks: list[str] = field(default_factory=list)
    snapshot_times: Mapping[str, datetime] = field(default_factory=dict)
    guardrails: Guardrails | None = None

    def rule_levels(self) -> dict[str, EnforcementLevel]:
        """The enforcement level of every rule, in rule order: ``levels`` where given, else the
        rule's default."""
        return {rule.id: self.levels.get(rule.id, rule.default_level) for rule in RULES}


@dataclass
class AuditResult:
    """The summary (as written to ``summary.json``) and the exit code for ``fail_on``."""

    summary: AuditSummary
    offenders: dict[str, list[dict[str, Any]]] | None = None
    """The report's tables (:func:`pushguard.audit.summarise.offenders`), to render the report
    again after a baseline comparison."""

    def exit_code(self, fail_on: str = "mandatory", fail_on_blind: str = "nothing-read") -> int:
        """2 when the run was blind under ``fail_on_blind`` (:meth:`blind`), else 1 when a
        violation is at or above ``fail_on`` (one of :data:`FAIL_ON`), else 0. Whether a
        finding is new to a baseline does not matter: a violation raised to mandatory fails
        ``--fail-on mandatory`` like any other.

        Raises:
            KeyError: ``fail_on`` is not one of :data:`FAIL_ON`, or ``fail_on_blind`` not one of
                :data:`~pushguard.audit.coverage.BLIND_MODES`.
        """
        if self.blind(fail_on, fail_on_blind) is not None:
            return 2
        by_level = self.summary.findings.violations_by_level
        return int(any(by_level.get(level, 0) for level in _FAILING_LEVELS[fail_on]))

    def blind(self, fail_on: str = "mandatory", fail_on_blind: str = "nothing-read") -> str | None:
        """Why the run fails closed for what it could not see (``--fail-on-blind``,
        :func:`~pushguard.audit.coverage.blindness`; ``missing-inputs`` counts the rules at the
        levels ``fail_on`` gates), or ``None``.

        Raises:
            KeyError: as :meth:`exit_code`.
        """
        coverage = self.summary.coverage
        return blindness(
            nothing_read=coverage.nothing_read,
            missing=coverage.missing,
            levels=self.summary.settings.levels,
            failing_levels=_FAILING_LEVELS[fail_on],
            mode=fail_on_blind,
        )
