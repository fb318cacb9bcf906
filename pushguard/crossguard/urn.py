"""Pulumi's wire facts about resource identity, for the pack: re-exported from
:mod:`pushguard.state.urn`, their one definition (a layer the audit can import too)."""

from __future__ import annotations

from pushguard.state.urn import (
    PROVIDER_TYPE_PREFIX,
    STACK_TYPE,
    Urn,
    is_stack_urn,
    package_of,
    parse_urn,
    provider_urn,
    stack_urn,
    urn_name,
)

__all__ = [
    "PROVIDER_TYPE_PREFIX",
    "STACK_TYPE",
    "Urn",
    "is_stack_urn",
    "package_of",
    "parse_urn",
    "provider_urn",
    "stack_urn",
    "urn_name",
]
