"""Whether a ``--baseline`` was computed on what this run computes: the same organisations and
the same policy settings. Plain Python (no Spark).

A baseline from another organisation turns every finding of this run into ``new`` and would list
the other organisation's findings as gone; one computed with other settings
(``exemptEndpointPrefixes``, ``perimeterProjects``...) finds other things in the very same
export. Either is refused (exit 2, naming what differs) unless ``--accept-baseline-mismatch``
is given, which ``summary.json`` records. Enforcement levels and exceptions are not compared:
a level change is a finding's own ``change`` (``level-raised``, ``level-lowered``), a disabled
rule's findings are ``not-rechecked``, and an exception shows as the finding's status.

What is compared comes from the baseline's ``summary.json``: ``coverage.organizations`` and
``settings.policy_settings`` (:func:`settings_digests`), and
``settings.include_dry_run_perimeters``. A baseline written before they existed lacks them: what
it lacks is listed as unverified (``baseline.unverified``, the summary line), never presumed
equal in silence; its findings still resolve only where this run evaluated their asset and rule.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pushguard.policy.settings import PackSettings

NOT_JUDGING = frozenset(
    {"exceptions", "exception_max_days", "unknown_at_preview", "default_project"}
)
"""The :class:`~pushguard.policy.settings.PackSettings` fields that do not change what a rule
finds in an export: exceptions (a finding under one stays, with status ``excepted``), how far
they may reach, and what the preview does with unknown values or resources without a project.
Every other field does, and a new field is compared until it is listed here."""

ACCEPT_FLAG = "--accept-baseline-mismatch"


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def settings_digests(settings: Mapping[str, PackSettings]) -> dict[str, dict[str, str]]:
    """Per rule ID, per setting (its camelCase name) that is not at its default and is not in
    :data:`NOT_JUDGING`, the first 16 hex digits of the SHA-256 of its canonical JSON. Rules with
    none are absent. Digests, not values: ``summary.json`` never repeats the policy config."""
    defaults = PackSettings().model_dump(mode="json", by_alias=True)
    digests: dict[str, dict[str, str]] = {}
    for rule_id in sorted(settings):
        values = settings[rule_id].model_dump(mode="json", by_alias=True)
        own = {
            alias: _digest(value)
            for name, field in PackSettings.model_fields.items()
            if name not in NOT_JUDGING
            for alias in [field.alias or name]
            if (value := values[alias]) != defaults[alias]
        }
        if own:
            digests[rule_id] = own
    return digests


def policy_differences(
    previous: Mapping[str, Any], digests: Mapping[str, Mapping[str, str]], include_dry_run: bool
) -> tuple[list[str], list[str]]:
    """``(differences, unverified)`` between a baseline's ``summary.json`` (``previous``, parsed)
    and this run's settings: each difference names a setting and its rules (``policy config:
    exemptEndpointPrefixes differs for push-endpoint-https``), or the dry-run perimeters option;
    ``unverified`` is ``["policy settings"]`` when the baseline does not record them."""
    settings = previous.get("settings") or {}
    differences: list[str] = []
    dry_run = settings.get("include_dry_run_perimeters")
    if dry_run is not None and bool(dry_run) != include_dry_run:
        differences.append(
            "--include-dry-run-perimeters: given for the baseline, not for this run"
            if dry_run
            else "--include-dry-run-perimeters: given for this run, not for the baseline"
        )
    recorded = settings.get("policy_settings")
    if recorded is None:
        return differences, ["policy settings"]
    rules_by_setting: dict[str, list[str]] = {}
    for rule_id in sorted({*recorded, *digests}):
        theirs, ours = recorded.get(rule_id, {}), digests.get(rule_id, {})
        for name in sorted(k for k in {*theirs, *ours} if theirs.get(k) != ours.get(k)):
            rules_by_setting.setdefault(name, []).append(rule_id)
    for name, rules in sorted(rules_by_setting.items()):
        which = ", ".join(rules) if len(rules) <= 3 else f"{len(rules)} rules"
        differences.append(f"policy config: {name} differs for {which}")
    return differences, []


def organization_differences(
    previous: Mapping[str, Any], organizations: list[str]
) -> tuple[list[str], list[str]]:
    """``(differences, unverified)`` between a baseline's organisations
    (``coverage.organizations`` of its ``summary.json``) and this run's: one difference naming
    both sets when they are not equal; ``unverified`` is ``["organizations"]`` when the baseline
    does not record them."""
    recorded = (previous.get("coverage") or {}).get("organizations")
    if recorded is None:
        return [], ["organizations"]
    if sorted(recorded) == sorted(organizations):
        return [], []
    theirs = ", ".join(sorted(recorded)) or "none known"
    ours = ", ".join(sorted(organizations)) or "none known"
    return [f"organizations: the baseline's {theirs}, this run's {ours}"], []


def refusal(baseline: str, differences: list[str]) -> str:
    """The message of a refused baseline: what differs, and the two ways on."""
    return (
        f"--baseline {baseline}: it was computed on another organisation or policy config "
        f"({'; '.join(differences)}), so its findings cannot be compared with this run's; give "
        f"the --out of an audit of the same organisation with the same policy config, or "
        f"compare anyway with {ACCEPT_FLAG} (recorded in summary.json)"
    )
