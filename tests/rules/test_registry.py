"""The rule registry: every rule module ``pushguard/rules/push_*.py`` is in ``RULES``, under the ID
its name spells, in the public order; and nothing is listed that has no module.

``RULES`` stays an explicit tuple (its order is a public contract: reports, the docs and the
audit's columns follow it). What makes forgetting a rule impossible is :func:`registry_problems`,
which finds the rule modules on disk with :mod:`pkgutil`: the tests below run it on the real
package, and on temporary packages that show it fails, naming the module, for each mistake.
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest

import pushguard.rules
from pushguard.rules import RULES, EnforcementLevel, Rule

RULE_MODULE_PREFIX = "push_"

PUBLIC_ORDER = (
    "push-endpoint-https",
    "push-auth-oidc",
    "push-sa-same-project",
    "push-vpcsc-default-url",
    "push-no-exactly-once",
    "push-agent-token-creator",
    "push-invoker-binding",
    "push-dead-letter-iam",
    "push-no-query-token",
    "push-audience-explicit",
    "push-sa-broad-grants",
    "push-shared-iam-binding",
    "push-unmanaged",
    "push-state-drift",
    "push-target-requires-auth",
)
"""The order of ``RULES``: mandatory rules first, then advisory ones, each in the order they were
added. A new rule goes at the end of its level's group."""


def rule_modules(package: ModuleType) -> list[str]:
    """The names of the rule modules in ``package``'s folder, found on disk."""
    found = pkgutil.iter_modules(package.__path__)
    return sorted(m.name for m in found if m.name.startswith(RULE_MODULE_PREFIX) and not m.ispkg)


def registry_problems(package: ModuleType, rules: Sequence[Rule]) -> list[str]:
    """What is wrong between the rule modules of ``package`` and its registry ``rules``; each
    problem names the module. Empty when every module's ``RULE`` is registered under the ID its
    module name spells (``push_x_y.py`` -> ``push-x-y``) and every registered rule has a module."""
    problems: list[str] = []
    on_disk = rule_modules(package)
    registered = {rule.id: rule for rule in rules}
    for name in on_disk:
        module = importlib.import_module(f"{package.__name__}.{name}")
        rule = getattr(module, "RULE", None)
        expected_id = name.replace("_", "-")
        if not isinstance(rule, Rule):
            problems.append(f"{name}.py defines no RULE")
        elif rule.id != expected_id:
            problems.append(
                f"{name}.py: RULE.id is {rule.id!r}, its module name says {expected_id!r}"
            )
        elif rule.check.__module__ != module.__name__:
            problems.append(f"{name}.py: RULE.check is defined in {rule.check.__module__}")
        elif registered.get(rule.id) is not rule:
            problems.append(f"{name}.py: its RULE is not in RULES ({package.__name__}.RULES)")
    for rule in rules:
        name = rule.id.replace("-", "_")
        if name not in on_disk:
            problems.append(f"RULES lists {rule.id!r}, but there is no module {name}.py")
    counts = Counter(rule.id for rule in rules)
    problems += [f"RULES lists {rule_id!r} twice" for rule_id, n in counts.items() if n > 1]
    return problems


# --- the real package ---------------------------------------------------------------------------


def test_every_rule_module_is_registered_under_its_name() -> None:
    assert rule_modules(pushguard.rules), "no rule module found: discovery is broken"
    assert registry_problems(pushguard.rules, RULES) == []


def test_rules_keep_their_public_order() -> None:
    assert tuple(rule.id for rule in RULES) == PUBLIC_ORDER
    levels = [rule.default_level for rule in RULES]
    mandatory_first = sorted(levels, key=lambda level: level is not EnforcementLevel.MANDATORY)
    assert levels == mandatory_first


@pytest.mark.parametrize("left_out", range(len(RULES)), ids=lambda n: RULES[n].id)
def test_a_rule_left_out_of_the_real_registry_is_named(left_out: int) -> None:
    rules = RULES[:left_out] + RULES[left_out + 1 :]
    name = RULES[left_out].id.replace("-", "_")
    assert registry_problems(pushguard.rules, rules) == [
        f"{name}.py: its RULE is not in RULES (pushguard.rules.RULES)"
    ]


# --- temporary packages: each mistake fails, naming the module --------------------------------

RULE_MODULE = '''\
"""A rule for the registry tests."""

from pushguard.rules.base import EnforcementLevel, Rule


def check(facts):
    return ()


RULE = Rule(
    id={rule_id!r},
    title="A rule",
    default_level=EnforcementLevel.ADVISORY,
    remediation="Fix it.",
    check=check,
)
'''

_package_numbers = itertools.count()


@pytest.fixture
def make_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[dict[str, str], str], ModuleType]]:
    """Writes a rule package to ``tmp_path`` (rule modules, an ``__init__`` with its ``RULES``)
    and imports it; the modules are dropped from :data:`sys.modules` afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made: list[str] = []

    def make(modules: dict[str, str], init: str) -> ModuleType:
        package = f"pushguard_registry_test_{next(_package_numbers)}"
        made.append(package)
        folder = tmp_path / package
        folder.mkdir()
        for name, source in modules.items():
            (folder / f"{name}.py").write_text(source)
        (folder / "__init__.py").write_text(textwrap.dedent(init).format(package=package))
        importlib.invalidate_caches()
        return importlib.import_module(package)

    yield make
    for name in [m for m in sys.modules if m.split(".")[0] in made]:
        del sys.modules[name]


def rule_module(rule_id: str) -> str:
    return RULE_MODULE.format(rule_id=rule_id)


def test_a_fully_registered_package_has_no_problem(make_package) -> None:
    package = make_package(
        {
            "push_alpha": rule_module("push-alpha"),
            "push_beta": rule_module("push-beta"),
            "helpers": "X = 1\n",
        },
        """\
        from {package} import push_alpha, push_beta
        RULES = (push_alpha.RULE, push_beta.RULE)
        """,
    )
    assert registry_problems(package, package.RULES) == []


def test_an_unregistered_rule_module_fails_naming_it(make_package) -> None:
    package = make_package(
        {"push_alpha": rule_module("push-alpha"), "push_forgotten": rule_module("push-forgotten")},
        """\
        from {package} import push_alpha
        RULES = (push_alpha.RULE,)
        """,
    )
    assert registry_problems(package, package.RULES) == [
        f"push_forgotten.py: its RULE is not in RULES ({package.__name__}.RULES)"
    ]


def test_a_rule_id_that_is_not_its_module_name_fails_naming_it(make_package) -> None:
    package = make_package(
        {"push_alpha": rule_module("push-alpha"), "push_gamma": rule_module("push-delta")},
        """\
        from {package} import push_alpha, push_gamma
        RULES = (push_alpha.RULE, push_gamma.RULE)
        """,
    )
    assert registry_problems(package, package.RULES) == [
        "push_gamma.py: RULE.id is 'push-delta', its module name says 'push-gamma'",
        "RULES lists 'push-delta', but there is no module push_delta.py",
    ]


def test_a_registered_rule_without_a_module_fails_naming_it(make_package) -> None:
    package = make_package(
        {"push_alpha": rule_module("push-alpha")},
        """\
        from pushguard.rules.base import EnforcementLevel, Rule
        from {package} import push_alpha
        GHOST = Rule("push-ghost", "A ghost", EnforcementLevel.ADVISORY, "-", push_alpha.check)
        RULES = (push_alpha.RULE, GHOST)
        """,
    )
    assert registry_problems(package, package.RULES) == [
        "RULES lists 'push-ghost', but there is no module push_ghost.py"
    ]


def test_a_rule_module_without_rule_fails_naming_it(make_package) -> None:
    package = make_package(
        {"push_alpha": rule_module("push-alpha"), "push_empty": '"""No rule yet."""\n'},
        """\
        from {package} import push_alpha
        RULES = (push_alpha.RULE, push_alpha.RULE)
        """,
    )
    assert registry_problems(package, package.RULES) == [
        "push_empty.py defines no RULE",
        "RULES lists 'push-alpha' twice",
    ]
