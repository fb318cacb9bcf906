"""The engine's dry-run answers: what a provider plans for a new resource, and what an invoke
returns, offline.

Both come from the provider knowledge of :class:`pushguard.preview.mocks.GcpMocks` (the inputs
after the provider's ``Check``, computed outputs unknown at preview, ``project`` and auto-names
filled in; ``getProject`` from the configured project numbers, ``kubernetes:yaml:decode`` parsed
as the provider parses it), used here outside the SDK's runtime: the engine is always in
preview, and an explicit provider's configuration is what the engine recorded for that
provider's URN.

Any other function reads the cloud, which an offline preview cannot: its answer is never
certain, and what it returns is unknown, never absent (each token recorded in
:attr:`~pushguard.preview.mocks.GcpMocks.unknown_calls`). Its outputs are found through the
function's own definition in its installed SDK (:mod:`pushguard.preview.functions`, never by
mangling the token into a module name):

- a function the table has: its arguments, and each output a plain value can carry as unknown
  (strings, lists, blocks) as one; booleans and numbers cannot be carried (the SDK's typed
  result takes only a boolean or a number), so the engine keeps their wire names and, on every
  resource registered after that answer, judges a property of the same name the program left
  unset as unknown (:meth:`EngineMocks.unknown_where_uncarried`): what copying a data source's
  setting (``enable_exactly_once_delivery=src.enable_exactly_once_delivery``) gives, in the plain
  form, the output form and an ``apply``. A data source's attributes are its resource's, by name:
  the Terraform provider behind pulumi-gcp builds them with ``DatasourceSchemaFromResourceSchema``
  (hashicorp/terraform-provider-google, ``google/tpgresource/datasource_helpers.go``; e.g.
  ``google/services/pubsub/data_source_pubsub_subscription.go``, commit 160dc8274a1e). A value
  the program built from such an output in another way is not seen (see ``docs/preview.md``);
- a function no installed SDK defines: wholly unknown, ``ResourceInvokeResponse.unknown``, which
  the SDK resolves as an unknown result (``pulumi/runtime/invoke.py``: ``if resp.unknown``; added
  in pulumi 3.256.0, #24040); its arguments are the ``return`` an older SDK reads instead.

Values are in wire form (``google.protobuf.json_format.MessageToDict`` of the request's
``Struct``): unknowns as Pulumi's unknown sentinel, secrets as secret envelopes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from pushguard.crossguard.urn import provider_urn
from pushguard.preview.functions import UNKNOWN, PreviewAnswer, answer_at_preview
from pushguard.preview.kubernetes_invokes import UNANSWERABLE, YAML_DECODE
from pushguard.preview.mocks import GET_PROJECT, GcpMocks, State

CERTAIN = frozenset({GET_PROJECT, YAML_DECODE})
"""The functions whose answer offline is the provider's: ``getProject`` from the configured
project numbers, ``kubernetes:yaml:decode`` a pure parse."""


@dataclass(frozen=True)
class InvokeAnswer:
    """An invoke's answer: ``values`` (wire form), ``unknown`` when the result is wholly unknown
    (``ResourceInvokeResponse.unknown``)."""

    values: State
    unknown: bool = False


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
        self._lock = threading.Lock()
        self.uncarried: dict[str, set[str]] = {}
        """Function token -> the wire names of its boolean and number outputs answered absent."""
        self.left_absent: dict[str, set[str]] = {}
        """Function token -> the wire names of its other outputs answered absent (maps, types
        not resolved)."""
        self.wholly_unknown: set[str] = set()
        """The function tokens no installed SDK defines, answered wholly unknown."""

    def answered(self, token: str, answer: PreviewAnswer | None) -> None:
        """Record an answer not certain offline, ``None`` for a wholly unknown one (thread-safe:
        invokes arrive on many threads)."""
        with self._lock:
            self.unknown_calls.add(token)
            if answer is None:
                self.wholly_unknown.add(token)
                return
            if answer.uncarried:
                self.uncarried.setdefault(token, set()).update(answer.uncarried)
            if answer.absent:
                self.left_absent.setdefault(token, set()).update(answer.absent)

    def unknown_where_uncarried(self, inputs: State) -> tuple[State, list[str]]:
        """``inputs`` of a resource being registered with each top-level property that shares
        its wire name with an output answered absent (:attr:`uncarried`) and is unset
        (absent or ``None``) made unknown; and those names."""
        with self._lock:
            names = set().union(*self.uncarried.values()) if self.uncarried else set()
        marked = sorted(name for name in names if inputs.get(name) is None)
        if not marked:
            return inputs, []
        return {**inputs, **dict.fromkeys(marked, UNKNOWN)}, marked

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


def answer_invoke(mocks: EngineMocks, token: str, args: State, provider: str) -> InvokeAnswer:
    """The result of invoking ``token`` with ``args`` (see the module's docstring). The
    provider functions that would create resources (:data:`~pushguard.preview.
    kubernetes_invokes.UNANSWERABLE`) answer their arguments: the preview fails on them anyway,
    naming them."""
    if token in CERTAIN or token in UNANSWERABLE:
        call = pulumi.runtime.MockCallArgs(token=token, args=args, provider=provider)
        return InvokeAnswer(dict(mocks.call(call)))
    echoed = {key: value for key, value in args.items() if value is not None}
    answer = answer_at_preview(token, args)
    mocks.answered(token, answer)
    if answer is None:
        return InvokeAnswer(echoed, unknown=True)
    return InvokeAnswer(answer.values)
