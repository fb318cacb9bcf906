"""The documented limits of each target, checked on every generated value.

Organization Policy custom constraints (the ``CustomConstraint`` REST resource,
:data:`~pushguard.guardrails.sources.CUSTOM_CONSTRAINT_REST`, and the Pub/Sub page "Use custom
organization policies", :data:`~pushguard.guardrails.sources.PUBSUB_CUSTOM_CONSTRAINTS_PAGE`):

- ``name``: "The max length is 70 characters [...] the prefix
  organizations/{organization_id}/customConstraints/ is not counted", so ``custom.X`` is at most 70
  characters (a newer copy of the reference says 71; the stricter 70 is enforced); and it "must
  start with custom., and can only include uppercase letters, lowercase letters, or numbers";
- ``condition``: "The max length of the condition is 1000 characters";
- ``displayName``: at most 200 characters; ``description``: at most 2000 characters;
- ``methodTypes``: "UPDATE only custom constraints are not supported. Use CREATE or CREATE,
  UPDATE" (DELETE: "Not currently supported").

Security Health Analytics custom modules (:data:`~pushguard.guardrails.sources.SHA_CODE_PAGE`,
:data:`~pushguard.guardrails.sources.SHA_CUSTOM_CONFIG_REST`): one to five resource types, none
twice; ``severity`` one of ``CRITICAL``, ``HIGH``, ``MEDIUM``, ``LOW``. The pages read state no
length limit for the predicate; none is invented here.
"""

from __future__ import annotations

import re
from typing import Final

from pushguard.guardrails.model import GuardrailError

CONSTRAINT_PREFIX: Final = "custom."
CONSTRAINT_ID_MAX: Final = 70
CONDITION_MAX: Final = 1000
DISPLAY_NAME_MAX: Final = 200
DESCRIPTION_MAX: Final = 2000
METHOD_TYPES: Final = {"create": ("CREATE",), "create-update": ("CREATE", "UPDATE")}
"""``--method-types``: the two documented sets."""
SHA_RESOURCE_TYPES_MAX: Final = 5
SHA_SEVERITIES: Final = ("CRITICAL", "HIGH", "MEDIUM", "LOW")

_CONSTRAINT_ID = re.compile(r"custom\.[A-Za-z0-9]+")
ORGANIZATION_ID: Final = re.compile(r"[1-9][0-9]{0,19}")
"""An organization ID: digits (``organizations/123456789``, the REST reference's example)."""


def check_constraint_id(constraint_id: str) -> None:
    """Raises :class:`GuardrailError` unless ``constraint_id`` is ``custom.`` and letters or
    digits, at most :data:`CONSTRAINT_ID_MAX` characters."""
    if not _CONSTRAINT_ID.fullmatch(constraint_id):
        raise GuardrailError(
            "constraint name",
            f"{constraint_id!r} must be custom. followed by letters and digits only",
        )
    if len(constraint_id) > CONSTRAINT_ID_MAX:
        raise GuardrailError(
            "constraint name",
            f"{constraint_id!r} has {len(constraint_id)} characters; at most "
            f"{CONSTRAINT_ID_MAX}, custom. included",
        )


def check_length(field: str, value: str, limit: int) -> None:
    """Raises :class:`GuardrailError` naming ``field`` when ``value`` is longer than ``limit``."""
    if len(value) > limit:
        raise GuardrailError(field, f"has {len(value)} characters; at most {limit} are allowed")


def check_organization(organization: str) -> str:
    """The organization ID (``123`` or ``organizations/123`` given); raises
    :class:`GuardrailError` for anything else."""
    plain = organization.strip().removeprefix("organizations/")
    if not ORGANIZATION_ID.fullmatch(plain):
        raise GuardrailError(
            "--organization",
            f"{organization!r} is not an organization ID: digits, such as 123456789012 "
            "(or organizations/123456789012)",
        )
    return plain


def check_sha(resource_types: tuple[str, ...], severity: str) -> None:
    """Raises :class:`GuardrailError` unless there are one to five distinct resource types and
    the severity is one of :data:`SHA_SEVERITIES`."""
    if not 1 <= len(resource_types) <= SHA_RESOURCE_TYPES_MAX:
        raise GuardrailError("resource_selector.resource_types", "one to five resource types")
    if len(set(resource_types)) != len(resource_types):
        raise GuardrailError("resource_selector.resource_types", "a resource type only once")
    if severity not in SHA_SEVERITIES:
        raise GuardrailError("severity", f"one of {', '.join(SHA_SEVERITIES)}, not {severity!r}")
