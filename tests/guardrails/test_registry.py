"""The guardrails registry has one entry per rule of ``RULES``, and nothing else: a new rule
without a declaration of what the subscription resource decides of it fails here, by name."""

from __future__ import annotations

from pushguard.guardrails.model import Status
from pushguard.guardrails.registry import ENTRIES, Entry
from pushguard.rules import RULES


def registry_problems(rule_ids: list[str], entries: dict[str, Entry]) -> list[str]:
    """What is wrong between the rule IDs and the registry, naming each rule."""
    problems = [f"{r}: no guardrails entry" for r in rule_ids if r not in entries]
    problems += [f"{e}: an entry for no rule" for e in entries if e not in rule_ids]
    for rule_id, entry in entries.items():
        if (entry.build is None) != (entry.status is Status.NOT_COMPILED):
            problems.append(f"{rule_id}: a builder exactly when compiled or partial")
        if entry.status is not Status.COMPILED and not entry.reason:
            problems.append(f"{rule_id}: {entry.status.value} without a reason")
    return problems


def test_every_rule_has_an_entry() -> None:
    assert registry_problems([r.id for r in RULES], dict(ENTRIES)) == []


def test_a_missing_entry_is_named() -> None:
    entries = dict(ENTRIES)
    del entries["push-auth-oidc"]
    assert registry_problems([r.id for r in RULES], entries) == [
        "push-auth-oidc: no guardrails entry"
    ]


def test_an_entry_for_no_rule_and_a_silent_gap_are_named() -> None:
    entries = {**ENTRIES, "push-new": Entry(Status.PARTIAL)}
    problems = registry_problems([r.id for r in RULES], entries)
    assert "push-new: an entry for no rule" in problems
    assert "push-new: partial without a reason" in problems
