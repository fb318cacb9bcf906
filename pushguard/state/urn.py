"""Pulumi's wire facts about resource identity: URNs, the stack resource, provider references.

Every enforcement point that speaks Pulumi's protocols (the pack, the preview, analyze) names
resources by URN, ``urn:pulumi:STACK::PROJECT::QUALIFIED_TYPE::NAME``, where the qualified type
is the resource's type prefixed by its parents' types (``parent$child``) and the name may itself
hold ``::`` (https://www.pulumi.com/docs/iac/concepts/resources/names/#urns;
``sdk/go/common/resource/urn.go``). A custom resource's provider is referenced as
``PROVIDER_URN::PROVIDER_ID`` (``sdk/go/common/resource/providers/reference.go``), so the
provider's URN is everything before the *last* ``::``. This module is the one place that parses
them.
"""

from __future__ import annotations

from typing import Final, NamedTuple

STACK_TYPE: Final = "pulumi:pulumi:Stack"
"""The type of the stack resource, the root of every stack's resources."""

PROVIDER_TYPE_PREFIX: Final = "pulumi:providers:"
"""Provider resources' types: ``pulumi:providers:PACKAGE``."""

_PREFIX: Final = "urn:pulumi:"
_SHAPE: Final = "urn:pulumi:STACK::PROJECT::TYPE::NAME"


class Urn(NamedTuple):
    """The four parts of a URN: ``stack``, ``project``, ``qualified_type`` (``parent$type``
    for a child of a component) and ``name`` (may hold ``::``)."""

    stack: str
    project: str
    qualified_type: str
    name: str

    @property
    def type(self) -> str:
        """The resource's own type: the last ``$``-separated part of the qualified type."""
        return self.qualified_type.rsplit("$", 1)[-1]


def parse_urn(urn: str) -> Urn:
    """The parts of ``urn`` (see :class:`Urn`).

    Raises:
        ValueError: ``urn`` is not ``urn:pulumi:STACK::PROJECT::TYPE::NAME`` with all four parts.
    """
    if not urn.startswith(_PREFIX):
        raise ValueError(f"{urn!r} is not a Pulumi URN ({_SHAPE})")
    parts = urn[len(_PREFIX) :].split("::", 3)
    if len(parts) != 4 or not all(parts):
        raise ValueError(f"{urn!r} is not a Pulumi URN ({_SHAPE})")
    return Urn(*parts)


def urn_name(urn: str) -> str:
    """The resource name of ``urn`` (``URN.Name()``; a name may hold ``::``), or ``urn`` itself
    when it is not a URN (a diagnostic must name something, never raise)."""
    try:
        return parse_urn(urn).name
    except ValueError:
        return urn


def stack_urn(project: str, stack: str) -> str:
    """The URN of the stack resource (``pulumi:pulumi:Stack`` named ``PROJECT-STACK``), the
    parent of the program's top-level resources."""
    return f"{_PREFIX}{stack}::{project}::{STACK_TYPE}::{project}-{stack}"


def is_stack_urn(urn: str) -> bool:
    """True when ``urn`` names a stack resource."""
    try:
        return parse_urn(urn).qualified_type == STACK_TYPE
    except ValueError:
        return False


def provider_urn(reference: str) -> str:
    """The provider's URN in a provider reference ``PROVIDER_URN::PROVIDER_ID`` (``""`` for an
    empty reference: a component, or a default provider the runtime did not name)."""
    return reference.rsplit("::", 1)[0] if reference else ""


def package_of(resource_type: str) -> str:
    """The package of a resource type (``gcp`` of ``gcp:pubsub/subscription:Subscription``)."""
    return resource_type.split(":", 1)[0]
