"""One policy file, as ``gcloud org-policies set-policy`` takes it.

Its fields are the ``Policy`` resource's
(https://cloud.google.com/policy-intelligence/docs/reference/policysimulator/rest/Shared.Types/Policy):
``name`` (``projects/{projectNumber}/policies/{constraint}``, ``folders/{folderId}/...``,
``organizations/{organizationId}/...``; a project ID is accepted in requests), ``spec``,
``dryRunSpec`` ("audit-only policy") and ``etag``. A ``PolicySpec``
(https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/organizations.policies)
has ``rules``, ``inheritFromParent`` ("can be set only for policies which configure list
constraints": a custom constraint is boolean), ``reset`` ("If set, rules must be empty and
inherit_from_parent must be set to false"), ``etag`` and ``updateTime``. For boolean constraints
"there must be one and only one policy rule where condition is unset" and the rules with a
condition "must set enforced to the opposite of the policy rule without a condition"; a rule's
condition uses only ``resource.matchTag()``, ``matchTagId()``, ``hasTagKey()``,
``hasTagKeyId()`` (``PolicyRule.condition``); ``values``, ``allowAll`` and ``denyAll`` are for
list constraints only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pushguard.audit.guardrails.condition import TAG_FUNCTIONS, ConditionError, functions
from pushguard.audit.guardrails.errors import GuardrailsError, check_fields
from pushguard.audit.guardrails.model import Constraint, Policy, Rule, Spec

FIELDS = ("name", "spec", "dryRunSpec", "etag")
SPEC_FIELDS = ("rules", "reset", "inheritFromParent", "etag", "updateTime")
RULE_FIELDS = ("enforce", "condition")
CONDITION_FIELDS = ("expression", "title", "description", "location")
LIST_ONLY = ("values", "allowAll", "denyAll")
NAME = re.compile(r"^((projects|folders|organizations)/([^/]+))/policies/([^/]+)$")


def _name(data: dict[str, Any], file: str, constraints: dict[str, Constraint]) -> tuple[str, str]:
    """The node (``projects/P``...) and the constraint (``custom.X``) of the policy's name."""
    name = data.get("name")
    found = NAME.match(name) if isinstance(name, str) else None
    if found is None:
        raise GuardrailsError(
            file,
            "name",
            f"{name!r} is not projects/PROJECT/policies/CONSTRAINT (or folders/FOLDER_ID/..., "
            "organizations/ORGANIZATION_ID/...)",
        )
    kind, node_id, constraint = found.group(2), found.group(3), found.group(4)
    if kind != "projects" and not node_id.isdigit():
        raise GuardrailsError(file, "name", f"{kind}/{node_id}: a {kind[:-1]} is named by its ID")
    if constraint not in constraints:
        known = ", ".join(sorted(constraints))
        raise GuardrailsError(
            file,
            "name",
            f"{constraint} is not a custom constraint of constraints/ (they are: {known}): only "
            "policies of the folder's custom constraints are evaluated",
        )
    return found.group(1), constraint


def _tag_condition(rule: dict[str, Any], file: str, where: str) -> str:
    """A rule's tag condition expression, checked."""
    condition = rule["condition"]
    if not isinstance(condition, dict):
        raise GuardrailsError(file, f"{where}.condition", "a mapping with an expression")
    check_fields(condition, CONDITION_FIELDS, file, f"{where}.condition.")
    expression = condition.get("expression")
    if not isinstance(expression, str) or not expression.strip():
        raise GuardrailsError(file, f"{where}.condition.expression", "missing (required)")
    try:
        called = functions(expression)
    except ConditionError as error:
        raise GuardrailsError(file, f"{where}.condition.expression", f"not CEL: {error}") from None
    if not called or not called <= TAG_FUNCTIONS:
        allowed = ", ".join(f"resource.{name}()" for name in sorted(TAG_FUNCTIONS))
        raise GuardrailsError(
            file,
            f"{where}.condition.expression",
            f"a policy rule's condition may only use {allowed} (tags)",
        )
    return expression


def _rule(rule: Any, file: str, where: str) -> Rule:
    if not isinstance(rule, dict):
        raise GuardrailsError(file, where, "a mapping (enforce, condition)")
    for key in LIST_ONLY:
        if key in rule:
            raise GuardrailsError(
                file, f"{where}.{key}", "for list constraints only: a custom constraint is boolean"
            )
    check_fields(rule, RULE_FIELDS, file, f"{where}.")
    enforce = rule.get("enforce")
    if not isinstance(enforce, bool):
        raise GuardrailsError(file, f"{where}.enforce", "true or false (required)")
    condition = _tag_condition(rule, file, where) if "condition" in rule else None
    return Rule(enforce=enforce, condition=condition)


def _spec(spec: Any, file: str, where: str) -> Spec:
    if not isinstance(spec, dict):
        raise GuardrailsError(file, where, "a mapping (rules, reset)")
    check_fields(spec, SPEC_FIELDS, file, f"{where}.")
    if spec.get("inheritFromParent"):
        raise GuardrailsError(
            file,
            f"{where}.inheritFromParent",
            "can be set only for list constraints: a custom constraint is boolean",
        )
    rules_data = spec.get("rules") or []
    if not isinstance(rules_data, list):
        raise GuardrailsError(file, f"{where}.rules", "a list of rules")
    reset = spec.get("reset", False)
    if not isinstance(reset, bool):
        raise GuardrailsError(file, f"{where}.reset", "true or false")
    if reset:
        if rules_data:
            raise GuardrailsError(file, f"{where}.rules", "must be empty when reset is true")
        return Spec(reset=True)
    rules = tuple(_rule(r, file, f"{where}.rules[{n}]") for n, r in enumerate(rules_data))
    unconditional = [r for r in rules if r.condition is None]
    if len(unconditional) != 1:
        raise GuardrailsError(
            file,
            f"{where}.rules",
            f"{len(unconditional)} rules without a condition: a boolean policy has exactly one",
        )
    for n, rule in enumerate(rules):
        if rule.condition is not None and rule.enforce == unconditional[0].enforce:
            raise GuardrailsError(
                file,
                f"{where}.rules[{n}].enforce",
                "a rule with a condition sets enforce to the opposite of the rule without one",
            )
    return Spec(rules=rules)


def read_policy(path: Path, data: dict[str, Any], constraints: dict[str, Constraint]) -> Policy:
    """The policy of one file's fields ``data``; ``constraints`` are the folder's, by
    ``custom.X``.

    Raises:
        GuardrailsError: an unknown or missing field, a value Google refuses, or a constraint
            the folder does not define.
    """
    file = str(path)
    check_fields(data, FIELDS, file)
    node, constraint = _name(data, file, constraints)
    if data.get("spec") is None and data.get("dryRunSpec") is None:
        raise GuardrailsError(file, "spec", "missing: a policy sets spec, dryRunSpec or both")
    return Policy(
        name=data["name"],
        file=file,
        node=node,
        constraint=constraint,
        spec=_spec(data["spec"], file, "spec") if data.get("spec") is not None else None,
        dry_run=_spec(data["dryRunSpec"], file, "dryRunSpec")
        if data.get("dryRunSpec") is not None
        else None,
    )
