"""The engine's dry-run answers: what a provider plans for a new resource, and what an invoke
returns, offline.

Both come from the provider knowledge of :class:`pushguard.preview.mocks.GcpMocks` (the inputs
after the provider's ``Check``, computed outputs unknown at preview, ``project`` and auto-names
filled in; ``getProject`` from the configured project numbers, ``kubernetes:yaml:decode`` parsed
as the provider parses it, any other function's computed outputs unknown, never absent), used
here outside the SDK's runtime: the engine is always in preview, and an explicit provider's
configuration is what the engine recorded for that provider's URN.

Values are in wire form (``google.protobuf.json_format.MessageToDict`` of the request's
``Struct``): unknowns as Pulumi's unknown sentinel, secrets as secret envelopes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pulumi

from pushguard.crossguard.urn import provider_urn
from pushguard.preview.mocks import GcpMocks, State


class EngineMocks(GcpMocks):
    """:class:`GcpMocks` for the engine: always a preview; an explicit provider's
    configuration from ``provider_state(urn)`` (the engine's record of that provider), the
    resources registered so far from ``registered()`` (their planned states)."""

    def __init__(
        self,
        provider_state: Callable[[str], Mapping[str, Any] | None],
        registered: Callable[[], Sequence[Mapping[str, Any]]] = list,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self._provider_state, self._registered = provider_state, registered

    def registered_states(self) -> list[Mapping[str, Any]]:
        """The planned states the engine recorded so far (``registered()``)."""
        return list(self._registered())

    def dry_run(self) -> bool:
        """Always: the engine runs ``pulumi preview``."""
        return True

    def _provider_config(self, reference: str, package: str = "gcp") -> State:
        urn = provider_urn(reference)
        if not urn:
            return super()._provider_config(reference, package)
        state = self._provider_state(urn)
        return dict(state) if state is not None else {}


def plan_resource(mocks: EngineMocks, request: Any, inputs: State) -> tuple[State, str, State]:
    """``(checked inputs, ID, planned outputs)`` of a new resource (``request`` a
    ``RegisterResourceRequest``, ``inputs`` its wire-form properties). A component has no
    outputs of its own until it registers them; at preview every custom resource's ID is
    unknown (``""``)."""
    if not request.custom:
        return inputs, "", {}
    checked = mocks.check(request.type, request.name, inputs)
    args = pulumi.runtime.MockResourceArgs(
        typ=request.type,
        name=request.name,
        inputs=inputs,
        provider=request.provider,
        resource_id="",
        custom=True,
    )
    _, state = mocks.new_resource(args)
    return checked, "", state


def answer_invoke(mocks: EngineMocks, token: str, args: State, provider: str) -> State:
    """The result of invoking ``token`` with ``args`` (see the module's docstring)."""
    call = pulumi.runtime.MockCallArgs(token=token, args=args, provider=provider)
    return dict(mocks.call(call))
