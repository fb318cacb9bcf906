"""Grants the components of one program share: one resource per IAM binding.

An ``*IAMMember`` manages one (resource, role, member) binding: two resources holding the same
binding both remove it when either is deleted
(https://www.pulumi.com/registry/packages/gcp/api-docs/projects/iammember/). Components that need
the same binding on something none of them creates (the project, an existing account or topic)
therefore share one resource, made by the first that needs it, whichever Google provider each
component uses: a binding is the same binding through any provider.

A component whose project comes from an explicit provider (no ``project`` input) does not know
that project while it registers its resources (it is an Output of the provider). Its keys then
hold :data:`PROVIDER_PROJECT` in place of the project: the components using that provider object
share one grant, and when the provider's project resolves, a binding also held through another
provider (or the default one) is refused naming ``project``, never duplicated silently.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi

from pushguard.components.spec import PushSubscriptionInputError

PROVIDER_PROJECT = "{provider-project}"
"""Stands for the project of the component's explicit provider in a grant's key while that
project is not known (an Output)."""


@dataclass
class _Program:
    """The shared grants of one program run."""

    grants: dict[tuple[Any, ...], pulumi.Resource] = field(default_factory=dict)
    """By registry key: the provider scope (``None``, or the ``id`` of the provider the key's
    project stands for) and the binding."""
    names: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """Grant name -> the registry key it was made for."""
    holders: dict[tuple[str, ...], set[tuple[Any, ...]]] = field(default_factory=dict)
    """Binding with its project resolved -> the registry keys holding it."""


_SHARED: weakref.WeakKeyDictionary[pulumi.Resource, _Program] = weakref.WeakKeyDictionary()
"""Per program run (keyed by its root stack resource): the grants components share."""


def _digest(scope: str, key: tuple[str, ...]) -> str:
    return hashlib.sha256("\x00".join((scope, *key)).encode()).hexdigest()[:12]


def _describe(key: tuple[str, ...]) -> str:
    role, resource, member = (*key, "", "", "")[:3]
    if member.startswith("agent-of:"):
        member = f"the Pub/Sub service agent of {member.removeprefix('agent-of:')}"
    return f"{role} for {member} on {resource}"


def _hold(
    program: _Program, component: str, resolved: tuple[str, ...], holder: tuple[Any, ...]
) -> None:
    holders = program.holders.setdefault(resolved, set())
    holders.add(holder)
    if len(holders) > 1:
        raise PushSubscriptionInputError(
            component,
            [
                (
                    "project",
                    f"the grant {_describe(resolved)} would be held by {len(holders)} resources "
                    "(components using different gcp providers of the same project, at least one "
                    "without the project input): set the project input on these components so "
                    "they share one grant (its value is in the binding above)",
                )
            ],
        )


def _hold_when_resolved(
    program: _Program,
    component: str,
    key: tuple[str, ...],
    registry_key: tuple[Any, ...],
    provider_project: pulumi.Output[str],
) -> pulumi.Output[bool]:
    """:func:`_hold` the binding ``key`` once ``provider_project`` resolves (standing for
    :data:`PROVIDER_PROJECT` in it): an Output of ``True``, failing when the binding is held
    twice."""

    def resolved(project: str) -> bool:
        bound = tuple(part.replace(PROVIDER_PROJECT, project) for part in key)
        _hold(program, component, bound, registry_key)
        return True

    return provider_project.apply(resolved)


def shared_grant(
    component: str,
    key: tuple[str, ...],
    provider: pulumi.ProviderResource | None,
    make: Callable[[str, pulumi.ResourceOptions], pulumi.Resource],
    *,
    provider_project: pulumi.Output[str] | None = None,
    checks: list[pulumi.Output[Any]] | None = None,
) -> pulumi.Resource | None:
    """The one resource of a program that holds the binding ``key`` names (role, resource,
    member, as plain strings), made by ``make(name, opts)`` the first time a component needs it,
    with the first component's ``provider``.

    It is a top-level resource (not a child of any component) named ``pushguard-grant-HASH``, the
    hash over the binding only, so it stays as long as one component of the stack needs it, keeps
    its URN whichever component or provider registers it first, and two providers of the same name
    (under parents of different types) never give two resources one URN. Grants of pushguard
    before 0.3 hashed the provider's name too; those names are given as ``aliases`` so the grant
    is not replaced.

    When ``key`` holds :data:`PROVIDER_PROJECT` (``component``'s project is ``provider``'s, still
    an Output, passed as ``provider_project``), the grant is shared only by the components using
    that provider object, its hash also covers the provider's name, and the binding is checked
    once the project resolves: that check is appended to ``checks`` (an Output of ``True``), which
    the caller must make an input of a resource, so that a failed check fails the program.

    ``None`` when the program has no root stack resource (a component hosted in the plugin, where
    each construct runs on its own): each component then holds its own grant.

    Raises:
        PushSubscriptionInputError: (``project``) two provider objects of the same name both
            stand for their project in the same binding, or a binding would be held twice once
            the provider's project resolved (raised then, failing the program).
    """
    root = pulumi.runtime.get_root_resource()
    if root is None:
        return None
    program = _SHARED.setdefault(root, _Program())
    scoped = any(PROVIDER_PROJECT in part for part in key)
    provider_name = "" if provider is None else str(getattr(provider, "_name", ""))
    registry_key: tuple[Any, ...] = (id(provider) if scoped else None, *key)
    found = program.grants.get(registry_key)
    if found is not None:
        return found
    name = f"pushguard-grant-{_digest(provider_name if scoped else '', key)}"
    if program.names.get(name, registry_key) != registry_key:
        message = (
            f"is required with this gcp provider: two providers named {provider_name!r} both "
            f"give the project of components needing {_describe(key)}; set the project input"
        )
        raise PushSubscriptionInputError(component, [("project", message)])
    if scoped:
        if provider_project is None:
            raise ValueError("a key holding PROVIDER_PROJECT needs provider_project")
        check = _hold_when_resolved(program, component, key, registry_key, provider_project)
        if checks is not None:
            checks.append(check)
    else:
        _hold(program, component, key, registry_key)
    aliases: list[Any] = []
    old = f"pushguard-grant-{_digest(provider_name, key)}"
    if old != name:
        aliases.append(pulumi.Alias(name=old))
    found = make(name, pulumi.ResourceOptions(provider=provider, aliases=aliases or None))
    program.grants[registry_key] = found
    program.names[name] = registry_key
    return found
