"""The plumbing every child of :class:`~pushguard.components.push_subscription.PushSubscription`
goes through: validated inputs (plain, or gated Outputs), child options that depend on the
validation, IDs generated from the component's URN, and grants shared by the program's
components (:func:`~pushguard.components.grants.shared_grant`)."""

from collections.abc import Callable
from typing import Any

import pulumi

from pushguard.components.grants import PROVIDER_PROJECT, shared_grant
from pushguard.components.spec import PushSubscriptionSpec

NEVER_EXPIRES = ""
"""The expiration TTL of every subscription the component makes unless ``expiration_ttl`` says
otherwise: never. Pub/Sub deletes a subscription after 31 days of subscriber inactivity by default
(open connections, active pulls or successful pushes are activity;
https://cloud.google.com/pubsub/docs/subscription-overview), so a push subscription whose filter
matches rare events, or whose endpoint fails for a month, would be deleted with its backlog; "If
expiration_policy is set, but expiration_policy.ttl is not set, the subscription never expires"
(https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions), which pulumi-gcp
writes as ``expiration_policy`` with ``ttl=""`` ("If it is set but ttl is "", the resource never
expires", ``gcp.pubsub.Subscription``)."""


class ChildPlumbing(pulumi.ComponentResource):
    """The component's state its children are built from, set by
    :class:`~pushguard.components.push_subscription.PushSubscription` before it builds them:
    ``_name`` (the component's name), ``_spec`` (the validated inputs), ``_provider`` (an
    explicit ``gcp`` provider or ``None``), ``_gated`` (each deferred input's gated Output, by
    path), ``_validated`` (the validation of the deferred inputs, or ``None``), ``_checks``
    (shared grants' checks) and ``_project_key`` (the project in shared grants' keys)."""

    _name: str
    _spec: PushSubscriptionSpec
    _provider: pulumi.ProviderResource | None
    _gated: dict[tuple[str, ...], pulumi.Output[Any]]
    _validated: pulumi.Output[Any] | None
    _checks: list[pulumi.Output[Any]]
    _project_key: str | None

    def _input(self, *path: str) -> Any:
        """A validated input: the plain value, or the gated Output for a deferred one."""
        if path in self._gated:
            return self._gated[path]
        value: Any = self._spec
        for part in path:
            value = getattr(value, part) if value is not None else None
        return value

    def _child(self, **extra: Any) -> pulumi.ResourceOptions:
        """Options of a child: parented to the component, depending on the validation of the
        deferred inputs (:meth:`_gate`) besides ``extra["depends_on"]``."""
        depends_on = [*extra.pop("depends_on", []), *self._validation()]
        return pulumi.ResourceOptions(parent=self, depends_on=depends_on or None, **extra)

    def _validation(self) -> list[pulumi.Output[Any]]:
        """The validation of the deferred inputs, for a ``depends_on`` (empty without any): an
        Output of ``None``, which the SDK's ``depends_on`` skips once it resolves."""
        return [] if self._validated is None else [self._validated]

    def _generated_id(self, project: Any, make: Callable[[str, str], str]) -> pulumi.Output[str]:
        """An ID generated from ``(project, the component's URN)`` by ``make`` (see
        :mod:`pushguard.components.ids`)."""
        # The URN's value without the component as a dependency: a dependency on a component
        # means one on its children, so a child's input carrying it would be a cycle.
        urn: pulumi.Output[str | None] = pulumi.Output.from_input(self.urn.future())
        return pulumi.Output.all(project, urn).apply(lambda pair: make(pair[0], pair[1]))

    def _grant(
        self,
        suffix: str,
        key: tuple[Any, ...] | None,
        make: Callable[[str, pulumi.ResourceOptions], pulumi.Resource],
    ) -> pulumi.Resource:
        """A grant the component needs: shared with the program's other components
        (:func:`shared_grant`) when ``key`` names its binding in plain strings, else the
        component's own child ``NAME-SUFFIX``."""
        if key is not None and all(isinstance(part, str) for part in key):
            provider_project = None
            if any(PROVIDER_PROJECT in part for part in key):
                provider_project = pulumi.Output.from_input(self._input("project"))
            validation = pulumi.ResourceOptions(depends_on=self._validation() or None)

            def gated(name: str, opts: pulumi.ResourceOptions) -> pulumi.Resource:
                return make(name, pulumi.ResourceOptions.merge(opts, validation))

            shared = shared_grant(
                self._name,
                key,
                self._provider,
                gated,
                provider_project=provider_project,
                checks=self._checks,
            )
            if shared is not None:
                return shared
        return make(f"{self._name}-{suffix}", self._child())

    def _plain(self, *path: str) -> str | None:
        """The input's value when it is a plain string (not deferred), else ``None``."""
        value = self._input(*path)
        return value if isinstance(value, str) else None
