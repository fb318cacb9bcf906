"""The in-process construction of pushguard's remote ``PushSubscription`` under the SDK's mock
runtime, for the test harness (:mod:`tests.mock_runtime.engine`). ``pushguard preview`` constructs
it over the provider's ``Construct`` RPC instead (:mod:`pushguard.engine.construct`).
"""

from __future__ import annotations

import logging
from typing import Any

from pulumi.runtime import config as pulumi_config
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.proto import resource_pb2

from pushguard.preview.remote import (  # noqa: F401 - expands: re-exported for the harness
    NOT_EXPANDED_MARK,
    _construct_request,
    _provider,
    construct_alone,
    expands,
)

_LOGGER = "pushguard.preview.program"


async def _construct(monitor: Any, request: Any, settings: dict[str, Any]) -> Any:
    from pulumi.provider.server import ProviderServicer
    from pulumi.runtime.stack import wait_for_rpcs

    pulumi_settings.configure(
        pulumi_mocks.MockSettings(  # type: ignore[no-untyped-call]
            monitor=monitor,
            engine=pulumi_mocks.MockEngine(logging.getLogger(_LOGGER)),
            project=settings["project"],
            stack=settings["stack"],
            dry_run=settings["dry_run"],
            organization=settings["organization"],
            callbacks=None,
        )
    )
    pulumi_config.set_all_config(settings["config"], settings["secret_keys"])
    # The monitor's features, asked as the plugin's SDK asks its monitor (which settings field
    # keeps them depends on the SDK: ``monitor_features`` from pulumi 3.258.0, #24308).
    await pulumi_settings._load_monitor_feature_support()
    construct = _construct_request(request)
    servicer = ProviderServicer(_provider(), [], "")
    inputs = await servicer._construct_inputs(construct.inputs, construct.inputDependencies)
    result = _provider().construct(
        name=construct.name,
        resource_type=construct.type,
        inputs=inputs,
        options=servicer._construct_options(construct),
    )
    response = await servicer._construct_response(result)
    await wait_for_rpcs(await_all_outstanding_tasks=False)
    return response


def construct_in_place(monitor: Any, request: Any) -> Any:
    """Construct pushguard's remote ``PushSubscription`` as its plugin would, registering the
    component and its children with ``monitor``; returns the ``RegisterResourceResponse`` the
    engine gives the program (the component's URN and its outputs).

    Raises:
        Exception: what the component raised (its refusal of bad inputs, a missing required
            input), as the failed registration of the program's component.
    """
    settings = {
        "project": pulumi_settings.get_project(),
        "stack": pulumi_settings.get_stack(),
        "organization": pulumi_settings.get_organization(),
        "dry_run": pulumi_settings.is_dry_run(),
        # the stack's config, as the engine sends it with ``Construct``
        "config": dict(monitor.config),
        "secret_keys": list(monitor.secret_keys),
    }
    try:
        response = construct_alone(lambda: _construct(monitor, request, settings), request.name)
    except BaseException as error:
        inner = getattr(error, "inner", None)  # the provider's ComponentInitError
        if isinstance(inner, BaseException):
            raise inner from None
        raise
    return resource_pb2.RegisterResourceResponse(urn=response.urn, object=response.state)


def not_expanded_log(type_token: str, urn: str) -> None:
    """Log (to the program's log) that the remote component ``urn`` of ``type_token`` was not
    expanded."""
    logging.getLogger(_LOGGER).warning("%s%s\t%s", NOT_EXPANDED_MARK, type_token, urn)
