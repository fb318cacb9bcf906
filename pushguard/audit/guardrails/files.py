"""Reading ``--guardrails DIR``, before Spark starts: every file checked against what Google
accepts, and a file Google would refuse is a usage error (exit 2) naming the file and field.

Layout (what ``pushguard guardrails -o DIR`` writes): ``DIR/constraints/*.yaml`` (custom
constraints), ``DIR/policies/*.yaml`` (policies), ``DIR/scc/*.yaml`` (Security Health Analytics
modules: found and counted, not evaluated). ``.json`` files are read too (JSON is YAML); a file
with another extension (not hidden) is an error rather than skipped unread.

What is checked, with its source:

- a constraint (:mod:`~pushguard.audit.guardrails.constraint_file`): the ``CustomConstraint``
  fields, its name and limits, a condition that parses;
- a policy (:mod:`~pushguard.audit.guardrails.policy_file`): the ``Policy`` and ``PolicySpec``
  fields, the boolean-policy rule requirements, tag conditions only, a constraint ``DIR``
  defines, one policy per constraint and node.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pushguard.audit.guardrails.condition import unread_fields
from pushguard.audit.guardrails.constraint_file import read_constraint
from pushguard.audit.guardrails.errors import GuardrailsError
from pushguard.audit.guardrails.model import (
    SUBSCRIPTION,
    Constraint,
    Guardrails,
    NotEvaluated,
    Policy,
)
from pushguard.audit.guardrails.policy_file import read_policy

__all__ = ["GuardrailsError", "load_guardrails"]

SUFFIXES = (".yaml", ".yml", ".json")


def _files(folder: Path) -> list[Path]:
    """The YAML files of ``folder`` (sorted; none when it does not exist).

    Raises:
        GuardrailsError: a file of another kind, or a sub-folder.
    """
    if not folder.exists():
        return []
    if not folder.is_dir():
        raise GuardrailsError(str(folder), None, "is not a folder")
    found = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir() or path.suffix.lower() not in SUFFIXES:
            raise GuardrailsError(
                str(path), None, f"not a YAML file ({', '.join(SUFFIXES)}); remove it or rename it"
            )
        found.append(path)
    return found


def read_yaml(path: Path) -> dict[str, Any]:
    """The one YAML mapping in ``path``.

    Raises:
        GuardrailsError: unreadable, not YAML, several documents, or not a mapping.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise GuardrailsError(str(path), None, f"cannot be read: {error}") from None
    except yaml.YAMLError as error:
        text = " ".join(str(error).split())
        raise GuardrailsError(str(path), None, f"is not YAML: {text}") from None
    if not isinstance(data, dict):
        raise GuardrailsError(str(path), None, "is not a YAML mapping of fields")
    return data


def _not_evaluated(constraint: Constraint, policies: list[Policy]) -> str | None:
    """Why ``constraint`` is not evaluated, or ``None``."""
    if SUBSCRIPTION not in constraint.resource_types:
        return (
            f"its resourceTypes ({', '.join(constraint.resource_types)}) do not include "
            f"{SUBSCRIPTION}: the audit evaluates subscriptions only"
        )
    unread = unread_fields(constraint.condition)
    if unread:
        return (
            f"its condition reads {', '.join(unread)}, which the audit does not read from the "
            "export (it would see it absent)"
        )
    if not any(p.constraint == constraint.short for p in policies):
        return "no policy in policies/ uses it: a constraint alone enforces nothing"
    return None


def load_guardrails(folder: str | Path) -> Guardrails:
    """Read and check ``folder`` (``--guardrails DIR``).

    Raises:
        GuardrailsError: ``folder`` is missing or not a folder, has no ``constraints/`` with a
            constraint in it, or a file is malformed or refused (the file and the field named).
    """
    root = Path(folder)
    if not root.is_dir():
        raise GuardrailsError(str(root), None, "does not exist or is not a folder")
    constraint_files = _files(root / "constraints")
    if not constraint_files:
        raise GuardrailsError(
            str(root / "constraints"), None, "holds no constraint file: nothing to evaluate"
        )
    constraints: dict[str, Constraint] = {}
    for path in constraint_files:
        constraint = read_constraint(path, read_yaml(path))
        if constraint.short in constraints:
            first = constraints[constraint.short].file
            raise GuardrailsError(
                str(path), "name", f"{constraint.short} is defined by {first} too"
            )
        constraints[constraint.short] = constraint
    policies: dict[str, Policy] = {}
    for path in _files(root / "policies"):
        policy = read_policy(path, read_yaml(path), constraints)
        if policy.name in policies:
            first = policies[policy.name].file
            raise GuardrailsError(str(path), "name", f"{policy.name} is set by {first} too")
        policies[policy.name] = policy
    evaluated, skipped = [], []
    for short in sorted(constraints):
        reason = _not_evaluated(constraints[short], list(policies.values()))
        if reason is None:
            evaluated.append(constraints[short])
        else:
            skipped.append(NotEvaluated(constraints[short], reason))
    return Guardrails(
        folder=str(root),
        constraints=tuple(evaluated),
        not_evaluated=tuple(skipped),
        policies=tuple(policies[name] for name in sorted(policies)),
        scc_files=tuple(path.name for path in _files(root / "scc")),
    )
