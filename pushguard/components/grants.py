"""Grants the components of one program share: one resource per IAM binding.

An ``*IAMMember`` manages one (resource, role, member) binding: two resources holding the same
binding both remove it when either is deleted
(https://www.pulumi.com/registry/packages/gcp/api-docs/projects/iammember/). Components that need
the same binding on something none of them creates (the project, an existing account or topic)
therefore share one resource, made by the first that needs it.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable
from typing import Any

import pulumi

_SHARED: weakref.WeakKeyDictionary[pulumi.Resource, dict[tuple[Any, ...], pulumi.Resource]] = (
    weakref.WeakKeyDictionary()
)
"""Per program run (keyed by its root stack resource): the grants components share."""


def shared_grant(
    key: tuple[str, ...],
    provider: pulumi.ProviderResource | None,
    make: Callable[[str, pulumi.ResourceOptions], pulumi.Resource],
) -> pulumi.Resource | None:
    """The one resource of a program that holds the binding ``key`` names (role, resource,
    member, as plain strings), made by ``make(name, opts)`` the first time a component needs it.

    It is a top-level resource (not a child of any component), named ``pushguard-grant-HASH``
    from the binding and the provider's name, so it stays as long as one component of the stack
    needs it and keeps its URN whichever component registers it first. ``None`` when the program
    has no root stack resource (a component hosted in the plugin, where each construct runs on its
    own): each component then holds its own grant.
    """
    root = pulumi.runtime.get_root_resource()
    if root is None:
        return None
    provider_name = "" if provider is None else str(getattr(provider, "_name", ""))
    registry = _SHARED.setdefault(root, {})
    found = registry.get((id(provider), *key))
    if found is None:
        digest = hashlib.sha256("\x00".join((provider_name, *key)).encode()).hexdigest()[:12]
        found = make(f"pushguard-grant-{digest}", pulumi.ResourceOptions(provider=provider))
        registry[(id(provider), *key)] = found
    return found
