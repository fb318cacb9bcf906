"""One custom constraint file, as ``gcloud org-policies set-custom-constraint`` takes it.

Its fields are the ``CustomConstraint`` resource's
(https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/organizations.customConstraints):
``name`` ``organizations/ORG/customConstraints/custom.X`` (at most 70 characters, the prefix
before ``custom.`` not counted), ``resourceTypes``, ``methodTypes`` (``CREATE``, ``UPDATE``;
"UPDATE only custom constraints are not supported. Use CREATE or CREATE, UPDATE"),
``condition`` (CEL, at most 1,000 characters), ``actionType`` (``ALLOW`` or ``DENY``),
``displayName`` (at most 200) and ``description`` (at most 2,000); ``updateTime`` is output
only and ignored. The Pub/Sub page (https://cloud.google.com/pubsub/docs/custom-constraints):
the name starts with ``custom.`` and holds only letters and digits after it; ``DELETE`` is not a
method Pub/Sub's custom constraints support.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pushguard.audit.guardrails.condition import ConditionError, parse
from pushguard.audit.guardrails.errors import GuardrailsError, check_fields
from pushguard.audit.guardrails.model import Constraint
from pushguard.guardrails import limits

FIELDS = (
    "name",
    "resourceTypes",
    "methodTypes",
    "condition",
    "actionType",
    "displayName",
    "description",
    "updateTime",
)
REQUIRED = ("name", "resourceTypes", "methodTypes", "condition", "actionType")
METHODS = ("CREATE", "UPDATE")
ACTIONS = ("ALLOW", "DENY")
NAME = re.compile(r"^(organizations/[0-9]+)/customConstraints/(custom\.[A-Za-z0-9]+)$")
RESOURCE_TYPE = re.compile(r"^[a-z0-9.-]+\.googleapis\.com/[A-Za-z0-9]+$")
LIMITS = {
    "condition": limits.CONDITION_MAX,
    "displayName": limits.DISPLAY_NAME_MAX,
    "description": limits.DESCRIPTION_MAX,
}
"""Google's documented limits, as the compiler enforces them
(:mod:`pushguard.guardrails.limits`)."""
NAME_LIMIT = limits.CONSTRAINT_ID_MAX


def _string(data: dict[str, Any], key: str, file: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise GuardrailsError(file, key, f"a string, not {type(value).__name__}")
    limit = LIMITS.get(key)
    if limit is not None and len(value) > limit:
        raise GuardrailsError(file, key, f"{len(value)} characters; at most {limit}")
    return value


def _strings(data: dict[str, Any], key: str, file: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise GuardrailsError(file, key, "a non-empty list of strings")
    return tuple(value)


def _name(data: dict[str, Any], file: str) -> tuple[str, str, str]:
    name = _string(data, "name", file)
    found = NAME.match(name)
    if found is None:
        raise GuardrailsError(
            file,
            "name",
            f"{name!r} is not organizations/ORGANIZATION_ID/customConstraints/custom.NAME "
            "(NAME: letters and digits)",
        )
    if len(found.group(2)) > NAME_LIMIT:
        raise GuardrailsError(
            file,
            "name",
            f"{found.group(2)} has {len(found.group(2))} characters; at most {NAME_LIMIT}",
        )
    return name, found.group(2), found.group(1)


def _methods(data: dict[str, Any], file: str) -> tuple[str, ...]:
    methods = _strings(data, "methodTypes", file)
    for method in methods:
        if method not in METHODS:
            raise GuardrailsError(
                file, "methodTypes", f"{method!r}: one of {', '.join(METHODS)} for Pub/Sub"
            )
    if "CREATE" not in methods:
        raise GuardrailsError(
            file, "methodTypes", "UPDATE only is not supported: CREATE, or CREATE and UPDATE"
        )
    return tuple(m for m in METHODS if m in methods)


def read_constraint(path: Path, data: dict[str, Any]) -> Constraint:
    """The constraint of one file's fields ``data``.

    Raises:
        GuardrailsError: an unknown or missing field, a value Google refuses, or a condition
            that does not parse.
    """
    file = str(path)
    check_fields(data, FIELDS, file)
    for key in REQUIRED:
        if key not in data:
            raise GuardrailsError(file, key, "missing (required)")
    name, short, organization = _name(data, file)
    resource_types = _strings(data, "resourceTypes", file)
    for resource_type in resource_types:
        if not RESOURCE_TYPE.match(resource_type):
            raise GuardrailsError(
                file, "resourceTypes", f"{resource_type!r} is not SERVICE.googleapis.com/Kind"
            )
    action = _string(data, "actionType", file)
    if action not in ACTIONS:
        raise GuardrailsError(file, "actionType", f"{action!r}: one of {', '.join(ACTIONS)}")
    condition = _string(data, "condition", file)
    try:
        parse(condition)
    except ConditionError as error:
        raise GuardrailsError(file, "condition", f"not CEL: {error}") from None
    return Constraint(
        name=name,
        short=short,
        organization=organization,
        file=file,
        resource_types=resource_types,
        methods=_methods(data, file),
        condition=condition,
        action=action,
        display_name=_string(data, "displayName", file),
        description=_string(data, "description", file),
    )
