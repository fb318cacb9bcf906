"""pushguard's own remote component, constructed as the engine has its plugin construct it.

For a ``RegisterResource`` with ``remote`` the engine sends the package's provider plugin a
``Construct`` request (``pkg/resource/deploy/source_eval.go`` of pulumi/pulumi, commit
1b5949891b3c: ``resmon.RegisterResource``, the ``remote`` branch) carrying the program's
request, the project, stack, config, ``dryRun`` and the monitor's address; the plugin registers
the component and its children with that monitor and answers the component's URN and outputs.

For ``pushguard:index:PushSubscription`` the plugin is ``components/``, a
:class:`pulumi.provider.experimental.component.ComponentProvider` served by the SDK's
:class:`pulumi.provider.server.ProviderServicer` (:func:`pushguard.preview.remote._provider`).
Here that servicer's ``Construct`` RPC is called in pushguard's process, in a thread of its own
with its own event loop, with the request the engine would send; its SDK registers the children
over gRPC with this engine's monitor (a server of its own, so the program's waiting
registration never starves it). One construction at a time
(:data:`pushguard.preview.remote._CONSTRUCTING`: the SDK's settings are process-wide).
A refusal of bad inputs (``PushSubscriptionInputError``) is raised as
:class:`ConstructRefusedError`, so the preview can report its rule violations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi.runtime.proto import provider_pb2

from pushguard.engine.runtime import parallel
from pushguard.preview.remote import _construct_request, _provider, construct_alone


class ConstructRefusedError(Exception):
    """The component raised while it was constructed: ``inner`` is its error (a
    ``PushSubscriptionInputError`` has ``component`` and ``problems``)."""

    def __init__(self, inner: BaseException) -> None:
        super().__init__(str(inner))
        self.inner = inner


class _Context:
    """The servicer context ``Construct`` may abort with (invalid input properties)."""

    async def abort_with_status(self, status: Any) -> None:
        raise ConstructRefusedError(ValueError(getattr(status, "message", str(status))))


def _inner(error: BaseException) -> BaseException:
    """The component's own error behind the servicer's wrapping (``ComponentInitError.inner``,
    reached through the re-raised exception's context)."""
    current: BaseException | None = error
    while current is not None:
        inner = getattr(current, "inner", None)
        if isinstance(inner, BaseException):
            return inner
        current = current.__cause__ or current.__context__
    return error


def construct(
    address: str,
    request: Any,
    *,
    project: str,
    stack: str,
    config: Mapping[str, str],
    secret_keys: list[str],
) -> provider_pb2.ConstructResponse:
    """Construct the component of the program's ``request`` (a ``RegisterResourceRequest``)
    against the monitor and engine at ``address``.

    Raises:
        ConstructRefusedError: the component raised (its ``inner`` error).
    """
    from pulumi.provider.server import ProviderServicer  # noqa: PLC0415 - only when needed

    construct_request = _construct_request(request)
    construct_request.project, construct_request.stack = project, stack
    construct_request.config.update(dict(config))
    construct_request.configSecretKeys.extend(secret_keys)
    construct_request.dryRun = True
    construct_request.parallel = parallel()
    construct_request.monitorEndpoint = address
    servicer = ProviderServicer(_provider(), [], address)
    try:  # the monitor's thread waits: one construction at a time
        return construct_alone(
            lambda: servicer.Construct(construct_request, _Context()), request.name
        )
    except BaseException as error:
        raise ConstructRefusedError(_inner(error)) from None
