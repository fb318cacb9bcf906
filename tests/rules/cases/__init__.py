"""Every rule's pass and fail cases, one file per rule, each at both levels.

``push_<rule>.py`` here holds the cases of rule ``push-<rule>`` (the module of the same name in
``pushguard/rules/``): ``RULE_ID``, ``FACT_CASES`` (over ``SubscriptionFacts``, run by
tests/rules/test_rule_cases.py) and ``WIRE_CASES`` (Pulumi resources as the CrossGuard pack
receives them, run by tests/crossguard/test_pack_cases.py). The files are found on disk, so a new
rule needs no registration here; tests/rules/test_case_files.py checks that every rule has one,
with pass and fail cases at both levels. The cases are joined in the order of
:data:`pushguard.rules.RULES` (files of unknown rules last, by name, for that test to report).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from pushguard.rules import RULES
from tests.rules.cases._build import BASE, FactCase, WireCase


def _discover() -> dict[str, ModuleType]:
    """The case modules of this package by module name (``_*`` modules are helpers)."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    return {name: importlib.import_module(f"{__name__}.{name}") for name in names}


def module_name(rule_id: str) -> str:
    """The name of a rule's module and of its case file: ``push-x-y`` -> ``push_x_y``."""
    return rule_id.replace("-", "_")


CASE_MODULES: dict[str, ModuleType] = _discover()
"""Every case file, by module name."""

_ORDER = {module_name(rule.id): n for n, rule in enumerate(RULES)}
_IN_ORDER = sorted(
    CASE_MODULES.items(), key=lambda item: (_ORDER.get(item[0], len(_ORDER)), item[0])
)

FACT_CASES: list[FactCase] = [c for _, m in _IN_ORDER for c in getattr(m, "FACT_CASES", ())]
WIRE_CASES: list[WireCase] = [c for _, m in _IN_ORDER for c in getattr(m, "WIRE_CASES", ())]

__all__ = [
    "BASE",
    "CASE_MODULES",
    "FACT_CASES",
    "WIRE_CASES",
    "FactCase",
    "WireCase",
    "module_name",
]
