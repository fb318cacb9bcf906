"""Every rule has one case file, ``tests/rules/cases/<rule module>.py``, holding pass and fail cases
at both levels: the facts (``FACT_CASES``) and the wire (``WIRE_CASES``). Adding a rule is one
rule module and one case file; this test names what is missing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from types import ModuleType

import pytest

from pushguard.rules import RULES
from tests.rules.cases import CASE_MODULES, FACT_CASES, WIRE_CASES, module_name
from tests.rules.cases._build import FactCase, WireCase, fact, wire

NO_WIRE_CASES: Mapping[str, str] = {
    "push-unmanaged": "needs the live side: applies only in the audit with --stacks",
    "push-state-drift": "needs the live side: applies only in the audit with --stacks",
}
"""Rules allowed to have no wire-level cases, each with the reason. An entry for a rule that
does have wire cases, or for no rule, is an error."""

EXPECTS = {"pass", "fail"}


def _rule_of(case: FactCase | WireCase) -> str:
    return case.rule if isinstance(case, FactCase) else case.policy


def case_file_problems(
    rule_ids: Iterable[str], modules: Mapping[str, ModuleType], no_wire: Mapping[str, str]
) -> list[str]:
    """What is missing or wrong in the case files ``modules`` (by module name) for the rules
    ``rule_ids``; each problem names the rule or the file."""
    rule_ids = list(rule_ids)
    problems: list[str] = []
    for rule_id in rule_ids:
        name = module_name(rule_id)
        module = modules.get(name)
        if module is None:
            problems.append(f"{rule_id}: no case file tests/rules/cases/{name}.py")
            continue
        if getattr(module, "RULE_ID", None) != rule_id:
            problems.append(f"{name}.py: RULE_ID should be {rule_id!r}")
        for level in ("fact", "wire"):
            cases = list(getattr(module, f"{level.upper()}_CASES", ()))
            if level == "wire" and rule_id in no_wire:
                if cases:
                    problems.append(f"{rule_id} is in NO_WIRE_CASES but {name}.py has wire cases")
                continue
            missing = EXPECTS - {c.expect for c in cases}
            problems += [f"{name}.py: no {level}-level {e!r} case" for e in sorted(missing)]
            problems += [
                f"{name}.py: {level}-level case {c.id!r} is not about {rule_id}"
                for c in cases
                if _rule_of(c) != rule_id
            ]
    names = {module_name(rule_id) for rule_id in rule_ids}
    problems += [f"{name}.py: no rule of that name" for name in modules if name not in names]
    problems += [f"NO_WIRE_CASES names an unknown rule {r!r}" for r in no_wire if r not in rule_ids]
    return problems


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_the_rule_has_a_case_file_with_pass_and_fail_cases_at_both_levels(rule) -> None:
    name = module_name(rule.id)
    modules = {name: CASE_MODULES[name]} if name in CASE_MODULES else {}
    no_wire = {r: why for r, why in NO_WIRE_CASES.items() if r == rule.id}
    assert case_file_problems([rule.id], modules, no_wire) == []


def test_every_case_file_is_about_a_rule() -> None:
    assert CASE_MODULES, "no case file found: discovery is broken"
    assert case_file_problems([r.id for r in RULES], CASE_MODULES, NO_WIRE_CASES) == []


@pytest.mark.parametrize("cases", [FACT_CASES, WIRE_CASES], ids=["fact", "wire"])
def test_case_ids_are_unique_and_expectations_known(cases: list[FactCase | WireCase]) -> None:
    assert [i for i, n in Counter(c.id for c in cases).items() if n > 1] == []
    assert {c.expect for c in cases} <= EXPECTS


def test_the_runners_get_every_case_of_every_file() -> None:
    in_files = sum(len(m.FACT_CASES) + len(m.WIRE_CASES) for m in CASE_MODULES.values())
    assert len(FACT_CASES) + len(WIRE_CASES) == in_files


# --- the check itself fails on what it should --------------------------------------------------


def _case_file(rule_id: str, fact_cases: list[FactCase], wire_cases: list[WireCase]) -> ModuleType:
    module = ModuleType(module_name(rule_id))
    module.RULE_ID = rule_id  # type: ignore[attr-defined]
    module.FACT_CASES = fact_cases  # type: ignore[attr-defined]
    module.WIRE_CASES = wire_cases  # type: ignore[attr-defined]
    return module


def _complete(rule_id: str) -> ModuleType:
    return _case_file(
        rule_id,
        [fact(rule_id, "pass", "p"), fact(rule_id, "fail", "f")],
        [wire(rule_id, "pass", "p"), wire(rule_id, "fail", "f")],
    )


def test_the_check_names_a_rule_without_a_case_file() -> None:
    modules = {"push_a": _complete("push-a")}
    assert case_file_problems(["push-a", "push-b"], modules, {}) == [
        "push-b: no case file tests/rules/cases/push_b.py"
    ]


def test_the_check_names_a_missing_level_or_expectation() -> None:
    module = _case_file("push-a", [fact("push-a", "pass", "p")], [wire("push-b", "fail", "f")])
    assert case_file_problems(["push-a"], {"push_a": module}, {}) == [
        "push_a.py: no fact-level 'fail' case",
        "push_a.py: no wire-level 'pass' case",
        "push_a.py: wire-level case 'push-b:fail:f' is not about push-a",
    ]


def test_the_check_honours_and_polices_the_allow_list() -> None:
    no_wire = _case_file("push-a", _complete("push-a").FACT_CASES, [])
    assert case_file_problems(["push-a"], {"push_a": no_wire}, {"push-a": "why"}) == []
    assert case_file_problems(["push-a"], {"push_a": no_wire}, {}) == [
        "push_a.py: no wire-level 'fail' case",
        "push_a.py: no wire-level 'pass' case",
    ]
    assert case_file_problems(["push-a"], {"push_a": _complete("push-a")}, {"push-a": "why"}) == [
        "push-a is in NO_WIRE_CASES but push_a.py has wire cases"
    ]
    assert case_file_problems(
        ["push-a"], {"push_a": _complete("push-a"), "push_z": _complete("push-z")}, {"push-y": "?"}
    ) == [
        "push_z.py: no rule of that name",
        "NO_WIRE_CASES names an unknown rule 'push-y'",
    ]
