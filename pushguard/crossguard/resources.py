"""One resource as a policy sees it, whichever Analyzer call it came from.

pulumi-policy hands a resource policy a ``ResourceValidationArgs`` (one resource, its inputs, its
provider) and a stack policy ``PolicyResource`` objects (every resource, with parents and
dependencies). :class:`WireResource` is the common, plain form: properties as dicts and lists in
Pulumi's wire names, unknown-value sentinels kept (see :mod:`pushguard.crossguard.wire`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import PolicyResource, ResourceValidationArgs

from pushguard.crossguard.wire import UNKNOWN, Unknown, get_str, plain
from pushguard.state.subscriptions import GCP_SUBSCRIPTION

SUBSCRIPTION_TYPE = GCP_SUBSCRIPTION
"""The pulumi-gcp type token of a Pub/Sub subscription (a public contract of the pack)."""


@dataclass(frozen=True)
class WireResource:
    """A resource in wire form.

    ``props`` are the inputs (resource policies) or the outputs as far as known (stack policies)
    with camelCase keys (after :func:`pushguard.crossguard.routes.canonical`, pulumi-gcp's
    names whatever the route); ``provider_props`` the provider's configuration (its ``project``) or
    ``None``; ``property_dependencies`` maps a top-level property name to the URNs it was computed
    from.
    """

    urn: str
    type: str
    name: str
    props: Mapping[str, Any]
    provider_props: Mapping[str, Any] | None = None
    parent: str | None = None
    dependencies: tuple[str, ...] = ()
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    no_project: str | None = None
    """Set by a route adapter (:mod:`pushguard.crossguard.routes`) whose project sources differ
    from pulumi-gcp's: why the project is not known when it is absent (the rules that need it
    are then listed as not checked with this reason)."""
    unknown_reason: str | None = None
    """Set by a route adapter whose resource leaves values unknown for a reason of its own (a
    Config Connector patch: a field it does not set keeps the existing object's value): the
    reason given for an unknown value that is computed from no resource."""
    no_default_project: bool = False
    """Set by a route adapter when the resource's placement chooses its project (a Config
    Connector object in a namespace the program or its provider named): the policy config's
    ``defaultProject`` (for a resource that chooses none) does not stand in for it."""
    reported_on: str | None = None
    """Set by a route adapter whose resource is declared inside another (a subscription in a
    Deployment Manager deployment's configuration, whose :attr:`urn` is the deployment's with
    ``#NAME``): the URN of the stack's resource its findings are placed on."""

    @property
    def report_urn(self) -> str:
        """Where findings about this resource are placed: :attr:`reported_on`, else
        :attr:`urn`."""
        return self.reported_on or self.urn

    @classmethod
    def from_args(cls, args: ResourceValidationArgs) -> WireResource:
        """From a resource policy's arguments."""
        return cls(
            urn=args.urn,
            type=args.resource_type,
            name=args.name,
            props=plain(args.props),
            provider_props=plain(args.provider.props) if args.provider else None,
            parent=args.opts.parent if args.opts else None,
        )

    @classmethod
    def from_policy_resource(cls, resource: PolicyResource) -> WireResource:
        """From one resource of a stack policy's arguments."""
        return cls(
            urn=resource.urn,
            type=resource.resource_type,
            name=resource.name,
            props=plain(resource.props),
            provider_props=plain(resource.provider.props) if resource.provider else None,
            parent=resource.parent.urn if resource.parent else None,
            dependencies=tuple(d.urn for d in resource.dependencies),
            property_dependencies={
                key: tuple(d.urn for d in deps)
                for key, deps in resource.property_dependencies.items()
            },
        )

    def depends_through(self, prop: str) -> tuple[str, ...]:
        """URNs the top-level property ``prop`` was computed from."""
        return self.property_dependencies.get(prop, ())

    def project(self, default: str | None) -> str | Unknown | None:
        """The resource's project: its ``project`` property, else its provider's ``project``,
        else ``default`` (policy config ``defaultProject``) unless :attr:`no_default_project`;
        :data:`UNKNOWN` if not known yet.

        Raises :class:`~pushguard.crossguard.wire.WireShapeError` for a non-string project.
        """
        own = get_str(self.props, "project")
        if own is not None:
            return own
        if self.provider_props is not None:
            provider = get_str(self.provider_props, "project")
            if provider is UNKNOWN:
                return UNKNOWN
            if provider:
                return provider
        return None if self.no_default_project else default
