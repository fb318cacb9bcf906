"""The offline preview runs programs on Pulumi SDK internals: the mock monitor it subclasses, the
event-loop helpers and the program runner of the language host, the settings it resets, the
output-form invoke it wraps, the unknown sentinel it plans with. None of them is documented API,
so pyproject.toml pins pulumi to the minor tested here; each test names one internal and checks
what pushguard relies on (``pushguard/preview/engine.py``, ``mocks.py``, ``project.py``,
``child.py``; ``pushguard/gate/analyzer.py`` and ``pushguard/crossguard/server.py``;
``pushguard/components``; ``components/__main__.py``). A Pulumi upgrade that breaks one fails
here, by name, not in a customer's ``pushguard preview``. (pulumi-policy's internals are pinned
in ``tests/crossguard/test_private_api.py``.)

The tests use the SDK directly, not pushguard's wrappers, so a failure points at the SDK.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import typing
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import pulumi
import pulumi_gcp
import pytest
from google.protobuf import json_format
from pulumi.provider.experimental import component_provider_host
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import proto, rpc
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.proto import analyzer_pb2_grpc, resource_pb2
from pulumi.runtime.stack import Stack, massage, run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

PREVIEW = True


class Mocks(pulumi.runtime.Mocks):
    """Every resource gets ``state`` as its outputs (default: its inputs); a call returns its
    arguments, as a plain dict (``GcpMocks.call`` returns no failures list either)."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        self.state = state

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", dict(args.inputs if self.state is None else self.state)

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:  # type: ignore[override]
        return dict(args.args)


class Monitor(pulumi_mocks.MockMonitor):
    """A mock monitor that keeps the requests it is sent, as pushguard's recording monitor does."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.registered: list[Any] = []
        self.outputs: list[Any] = []

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        self.registered.append(request)
        return super().RegisterResource(request)  # type: ignore[no-untyped-call]

    def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        self.outputs.append(request)
        return super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]


class Thing(pulumi.CustomResource):
    """A concrete resource class, as generated SDKs define them: the SDK takes a registration's
    source position from the frame that calls the concrete class's constructor."""

    def __init__(
        self,
        name: str,
        props: dict[str, Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("test:index:Thing", name, props or {}, opts)


@pytest.fixture(autouse=True)
def _fresh_runtime() -> Iterator[None]:
    """Each test starts and leaves the SDK's global settings as a program run starts them."""
    pulumi_settings.reset_options()
    pulumi.runtime.set_all_config({})
    yield
    pulumi_settings.reset_options()
    pulumi.runtime.set_all_config({})


def start(monitor: pulumi_mocks.MockMonitor | None = None, **kwargs: Any) -> Monitor:
    """``set_mocks`` as ``pushguard.preview.engine.run_program_capturing`` calls it."""
    monitor = monitor or Monitor(Mocks())
    pulumi.runtime.set_mocks(
        monitor.mocks, project="proj", stack="dev", preview=PREVIEW, monitor=monitor, **kwargs
    )
    assert isinstance(monitor, Monitor)
    return monitor


def run(program: Callable[[], Awaitable[Any] | None]) -> None:
    """Run ``program`` as the engine does: ``_sync_await(run_pulumi_func(program))``."""
    _sync_await(run_pulumi_func(program))


# --- pulumi.runtime.sync_await -------------------------------------------------------------------


def test_ensure_event_loop_returns_the_loop_sync_await_runs_on() -> None:
    """engine.py installs its exception handler on ``_ensure_event_loop()`` and expects the
    program, run by ``_sync_await``, to run on that loop."""
    loop = _ensure_event_loop()  # type: ignore[no-untyped-call]
    assert isinstance(loop, asyncio.AbstractEventLoop)
    assert _ensure_event_loop() is loop  # type: ignore[no-untyped-call]

    async def running_loop() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    assert _sync_await(running_loop()) is loop


def test_sync_await_returns_the_result_and_raises_the_error() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    async def fail() -> None:
        raise KeyError("boom")

    assert _sync_await(answer()) == 42
    with pytest.raises(KeyError, match="boom"):
        _sync_await(fail())


# --- pulumi.runtime.stack ------------------------------------------------------------------------


def test_run_pulumi_func_runs_sync_and_async_programs() -> None:
    assert list(inspect.signature(run_pulumi_func).parameters) == ["func"]
    start()
    ran: list[str] = []

    def now() -> None:
        ran.append("sync")

    async def later() -> None:
        await asyncio.sleep(0)
        ran.append("async")

    run(now)
    run(later)
    assert ran == ["sync", "async"]


@pytest.mark.parametrize("error", [ValueError("bad program"), SystemExit(3)], ids=type)
def test_run_pulumi_func_reraises_what_the_program_raised(error: BaseException) -> None:
    """The engine reports a program's error (``sys.exit`` included) after its RPCs finished."""
    start()

    def program() -> None:
        raise error

    with pytest.raises(type(error)) as raised:
        run(program)
    assert raised.value is error


def test_the_root_stack_keeps_exports_and_registers_massaged_outputs() -> None:
    """engine.py's ``_in_stack``: after the program, the root :class:`Stack` (from
    ``settings.get_root_resource``) registers ``massage(stack.outputs, [])``."""
    monitor = start()
    stack = pulumi_settings.get_root_resource()
    assert isinstance(stack, Stack)

    async def program() -> None:
        pulumi.export("plain", {"nested": [1, "two", {"three": True}]})
        pulumi.export("output", pulumi.Output.from_input("later"))
        assert isinstance(stack, Stack)
        assert set(stack.outputs) == {"plain", "output"}
        stack.register_outputs(massage(stack.outputs, []))

    run(program)
    [request] = [r for r in monitor.outputs if r.urn.split("::")[2] == "pulumi:pulumi:Stack"][-1:]
    assert json_format.MessageToDict(request.outputs) == {
        "plain": {"nested": [1, "two", {"three": True}]},
        "output": "later",
    }


def test_massage_keeps_plain_values_and_outputs() -> None:
    start()
    value = {"a": {"b": [1, "x", None]}, "c": (True, 2.5)}
    assert massage(value, []) == {"a": {"b": [1, "x", None]}, "c": [True, 2.5]}
    assert isinstance(massage({"o": pulumi.Output.from_input(1)}, [])["o"], pulumi.Output)


# --- pulumi.runtime.settings and config ----------------------------------------------------------


def test_reset_options_forgets_the_root_stack() -> None:
    """engine.py calls ``reset_options()`` before ``set_mocks`` so each run has a new stack."""
    start()
    assert pulumi_settings.get_root_resource() is not None
    pulumi_settings.reset_options()
    assert pulumi_settings.get_root_resource() is None


@pytest.mark.parametrize("preview", [True, False])
def test_is_dry_run_is_set_mocks_preview(preview: bool) -> None:
    monitor = Monitor(Mocks())
    pulumi.runtime.set_mocks(monitor.mocks, preview=preview, monitor=monitor)
    assert pulumi_settings.is_dry_run() is preview
    assert pulumi.runtime.is_dry_run() is preview


def test_set_all_config_sets_values_and_secret_keys() -> None:
    pulumi.runtime.set_all_config({"gcp:project": "acme", "app:token": "t"}, ["app:token"])
    assert pulumi.Config("gcp").get("project") == "acme"
    assert pulumi.runtime.is_config_secret("app:token")
    assert not pulumi.runtime.is_config_secret("gcp:project")


# --- pulumi.runtime.mocks: set_mocks and MockMonitor ---------------------------------------------


def test_set_mocks_takes_a_monitor_and_a_logger() -> None:
    parameters = inspect.signature(pulumi.runtime.set_mocks).parameters
    assert {"mocks", "project", "stack", "preview", "logger", "monitor"} <= set(parameters)
    logger = logging.getLogger("tests.preview.private_api")
    seen: list[tuple[str, str]] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append((record.levelname, record.getMessage()))

    handler = Keep(logging.INFO)  # debug messages are the SDK's own tracing
    logger.propagate = False
    logger.setLevel(logging.DEBUG)  # as engine.py sets its program logger
    logger.addHandler(handler)
    try:
        monitor = start(logger=logger)

        def program() -> None:
            pulumi.log.info("hello")
            pulumi.log.warn("careful")
            pulumi.log.error("broken")

        run(program)
    finally:
        logger.removeHandler(handler)
    assert seen == [("INFO", "hello"), ("WARNING", "careful"), ("ERROR", "broken")]
    assert [r.type for r in monitor.registered] == ["pulumi:pulumi:Stack"]


def test_mock_monitor_keeps_its_mocks_and_has_the_methods_pushguard_overrides() -> None:
    mocks = Mocks()
    assert pulumi_mocks.MockMonitor(mocks).mocks is mocks
    for name in ("RegisterResource", "ReadResource", "RegisterResourceOutputs", "Invoke"):
        assert list(inspect.signature(getattr(pulumi_mocks.MockMonitor, name)).parameters) == [
            "self",
            "request",
        ], name
    parameters = inspect.signature(pulumi_mocks.MockMonitor.make_urn).parameters
    assert list(parameters) == ["self", "parent", "type_", "name"]


def test_mock_monitor_urns_come_from_make_urn() -> None:
    """pushguard overrides ``make_urn`` (no ``pulumi:pulumi:Stack$`` in top-level URNs) and
    claims the URN ``make_urn`` gives before the mock monitor registers or reads the resource."""

    class Renaming(Monitor):
        def make_urn(self, parent: str, type_: str, name: str) -> str:
            return super().make_urn("", type_, name) + "-mine"

    start(Renaming(Mocks()))
    urns: list[str] = []

    async def program() -> None:
        created = Thing("thing", {"size": 1})
        read = Thing("seen", opts=pulumi.ResourceOptions(id="x"))
        urns.extend([await created.urn.future(), await read.urn.future()])  # type: ignore[list-item]

    run(program)
    assert urns == [
        "urn:pulumi:dev::proj::test:index:Thing::thing-mine",
        "urn:pulumi:dev::proj::test:index:Thing::seen-mine",
    ]
    default = pulumi_mocks.MockMonitor(Mocks())
    stack_urn = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev"
    assert default.make_urn(stack_urn, "test:index:Thing", "t") == (
        "urn:pulumi:dev::proj::pulumi:pulumi:Stack$test:index:Thing::t"
    )


def test_register_resource_requests_carry_what_the_recording_monitor_reads() -> None:
    """engine.py's ``ResourceRecord`` is read from these fields, and the source position of the
    constructor call from ``sourcePosition`` (a ``file:`` URI and a line)."""
    monitor = start()
    lines: list[int] = []

    def program() -> None:
        parent = pulumi.ComponentResource("test:index:Parent", "parent")
        dep = Thing("dep", {"size": 1})
        opts = pulumi.ResourceOptions(
            parent=parent, replace_on_changes=["size"], delete_before_replace=True
        )
        lines.append(inspect.currentframe().f_lineno + 1)  # type: ignore[union-attr]
        Thing("thing", {"size": dep.id}, opts)

    run(program)
    request = next(r for r in monitor.registered if r.name == "thing")
    assert request.type == "test:index:Thing" and request.custom
    assert request.parent.endswith("test:index:Parent::parent")
    assert list(request.replaceOnChanges) == ["size"] and request.deleteBeforeReplace
    assert [urn.rsplit("::", 1)[1] for urn in request.propertyDependencies["size"].urns] == ["dep"]
    assert [urn.rsplit("::", 1)[1] for urn in request.dependencies] == ["dep"]
    assert json_format.MessageToDict(request.object) == {"size": "dep-id"}
    assert isinstance(request.provider, str)
    assert request.HasField("sourcePosition")
    assert request.sourcePosition.uri == Path(__file__).resolve().as_uri()
    assert [request.sourcePosition.line] == lines


# --- output-form invokes: invoke_output, ResourceInvokeResponse.unknown --------------------------

MARK: ContextVar[bool] = ContextVar("marked", default=False)


def test_invoke_output_exists_where_pushguard_wraps_it() -> None:
    """engine.py replaces ``invoke_output`` and ``invoke_output_single`` in ``pulumi.runtime``
    and ``pulumi.runtime.invoke`` while a program runs."""
    module = importlib.import_module("pulumi.runtime.invoke")
    for name in ("invoke_output", "invoke_output_single"):
        assert getattr(pulumi.runtime, name) is getattr(module, name), name
    # Generated SDKs look the function up on pulumi.runtime at call time, so the wrapper applies.
    source = inspect.getsource(pulumi_gcp.organizations.get_project_output)
    assert "pulumi.runtime.invoke_output(" in source


def test_an_output_invoke_reaches_the_monitor_in_the_callers_context_and_can_be_unknown() -> None:
    """The engine marks output-form invokes with a context variable set around
    ``invoke_output``; the monitor, called from an executor thread, must see it, and its
    ``ResourceInvokeResponse(unknown=True)`` must make the result unknown."""

    class Declining(Monitor):
        seen: list[bool]

        def Invoke(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
            self.seen.append(MARK.get())
            if MARK.get():
                return resource_pb2.ResourceInvokeResponse(unknown=True)
            return super().Invoke(request)  # type: ignore[no-untyped-call]

    monitor = Declining(Mocks())
    monitor.seen = []
    start(monitor)
    results: list[tuple[bool, Any]] = []

    async def program() -> None:
        token = MARK.set(True)
        try:
            marked = pulumi.runtime.invoke_output("test:index:get", {"a": 1})
        finally:
            MARK.reset(token)
        plain = pulumi.runtime.invoke_output("test:index:get", {"a": 2})
        for output in (marked, plain):
            results.append((await output.is_known(), await output.future()))

    run(program)
    assert sorted(monitor.seen) == [False, True]
    assert results == [(False, None), (True, {"a": 2})]


# --- the unknown sentinel: pulumi.runtime.rpc.UNKNOWN, pulumi.output.UNKNOWN ---------------------


def test_rpc_unknown_is_the_wire_sentinel_and_unknown_at_preview() -> None:
    """``GcpMocks`` (mocks.py), the project reader (project.py) and the component (spec.py) use
    ``rpc.UNKNOWN``: the string the CrossGuard pack sees as unknown, and a mock resource output
    holding it is unknown to the program at preview."""
    assert rpc.UNKNOWN == UNKNOWN_STRING_VALUE == "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    start(Monitor(Mocks(state={"name": rpc.UNKNOWN, "known": "yes"})))
    known: dict[str, bool] = {}

    class Planned(pulumi.CustomResource):
        name: pulumi.Output[str]
        known: pulumi.Output[str]

        def __init__(self) -> None:
            super().__init__("test:index:Thing", "thing", {"name": None, "known": None})

    async def program() -> None:
        thing = Planned()
        known["name"] = await thing.name.is_known()
        known["known"] = await thing.known.is_known()

    run(program)
    assert known == {"name": False, "known": True}


def test_output_unknown_returned_from_an_apply_makes_it_unknown_and_secret() -> None:
    """``pushguard.components.inputs`` returns ``Output.secret(pulumi.output.UNKNOWN)`` from an
    apply for a value holding the sentinel; the apply's Output must be unknown and secret."""
    start()
    seen: list[bool] = []

    async def program() -> None:
        dep = Thing("dep", {"size": 1})

        def unknown(_: object) -> Any:
            return pulumi.Output.secret(pulumi.output.UNKNOWN)

        out: pulumi.Output[Any] = pulumi.Output.all(dep.id, "x").apply(unknown)
        seen.extend([await out.is_known(), await out.is_secret()])
        assert await out.resources() == {dep}

    run(program)
    assert seen == [False, True]


# --- pulumi.Input (components/docs.py documents the component's inputs) --------------------------


def test_input_is_a_union_of_the_value_an_awaitable_and_an_output() -> None:
    """components/docs.py reads ``pulumi.Input[T]`` as ``Union[T, Awaitable[T], "Output[T]"]``:
    ``T`` first, and an ``Output`` member (a forward reference) that marks it an input."""
    hint = pulumi.Input[int]
    assert typing.get_origin(hint) is typing.Union
    members = typing.get_args(hint)
    assert members[0] is int
    assert any(
        isinstance(m, typing.ForwardRef) and m.__forward_arg__.startswith("Output[")
        for m in members
    ), members


# --- pulumi.Resource.__init__ (child.py records constructor call stacks) -------------------------


def test_resource_init_takes_the_type_and_name_first() -> None:
    """child.py replaces ``pulumi.Resource.__init__`` with ``(self, t, name, *args, **kwargs)``
    and must see every custom and component resource's type and name."""
    parameters = list(inspect.signature(pulumi.Resource.__init__).parameters)
    assert parameters[:3] == ["self", "t", "name"]
    start()
    seen: list[tuple[str, str]] = []
    original = pulumi.Resource.__init__

    def recording(self: pulumi.Resource, t: str, name: str, *args: Any, **kwargs: Any) -> None:
        seen.append((t, name))
        original(self, t, name, *args, **kwargs)

    pulumi.Resource.__init__ = recording  # type: ignore[method-assign]
    try:

        def program() -> None:
            parent = pulumi.ComponentResource("test:index:Parent", "parent")
            pulumi.CustomResource(
                "test:index:Thing", "thing", {}, opts=pulumi.ResourceOptions(parent=parent)
            )

        run(program)
    finally:
        pulumi.Resource.__init__ = original  # type: ignore[method-assign]
    assert seen == [("test:index:Parent", "parent"), ("test:index:Thing", "thing")]


# --- the Analyzer protocol (gate/analyzer.py, crossguard/server.py) and the plugin host ----------


def test_the_analyzer_protocol_names_exist() -> None:
    for name in (
        "ADVISORY",
        "MANDATORY",
        "REMEDIATE",
        "DISABLED",
        "AnalyzeRequest",
        "AnalyzeStackRequest",
        "AnalyzeResponse",
        "AnalyzeDiagnostic",
        "AnalyzerResource",
        "AnalyzerResourceOptions",
        "AnalyzerProviderResource",
        "AnalyzerPropertyDependencies",
        "ConfigureAnalyzerRequest",
        "PolicyConfig",
        "PolicyNotApplicable",
    ):
        assert hasattr(proto, name), name
    assert callable(analyzer_pb2_grpc.AnalyzerStub)
    assert callable(analyzer_pb2_grpc.add_AnalyzerServicer_to_server)


def test_component_provider_host_takes_a_name_and_components() -> None:
    """``components/__main__.py`` serves the component with this experimental entry point."""
    assert {"name", "components"} <= set(inspect.signature(component_provider_host).parameters)


# --- transforms: callbacks on the SDK's callbacks server (pushguard/preview/transforms.py) -------


class TransformMonitor(Monitor):
    """Keeps the stack transforms' and stack invoke transforms' callbacks, as the engine does."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.stack_callbacks: list[Any] = []
        self.invoke_callbacks: list[Any] = []

    def RegisterStackTransform(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        self.stack_callbacks.append(request)
        return super().RegisterStackTransform(request)  # type: ignore[no-untyped-call]

    def RegisterStackInvokeTransform(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        self.invoke_callbacks.append(request)
        return super().RegisterStackInvokeTransform(request)  # type: ignore[no-untyped-call]


def _callback_invoke(callback: Any, request: bytes) -> bytes:
    """``Callbacks.Invoke`` over loopback gRPC, as the engine (and transforms.py) calls it."""
    import grpc
    from pulumi.runtime.proto import callback_pb2, callback_pb2_grpc

    with grpc.insecure_channel(callback.target, options=[("grpc.enable_http_proxy", 0)]) as ch:
        stub = callback_pb2_grpc.CallbacksStub(ch)
        answer = stub.Invoke(
            callback_pb2.CallbackInvokeRequest(token=callback.token, request=request)
        )
    return bytes(answer.response)


def test_the_mock_monitor_advertises_transforms_and_invoke_transforms() -> None:
    """Without these features the SDK refuses ``transforms`` ("The Pulumi CLI does not support
    transforms"); transforms.py relies on the mock runtime offering both."""
    start()
    assert pulumi_settings.monitor_supports_feature(
        resource_pb2.RESOURCE_MONITOR_FEATURE_TRANSFORMS
    )
    assert pulumi_settings.monitor_supports_feature(
        resource_pb2.RESOURCE_MONITOR_FEATURE_INVOKE_TRANSFORMS
    )


def test_transforms_reach_the_monitor_as_callbacks_served_over_loopback_grpc() -> None:
    """``ResourceOptions(transforms=...)`` arrives as ``RegisterResourceRequest.transforms``,
    ``register_resource_transform`` as ``RegisterStackTransform(Callback)`` and
    ``register_invoke_transform`` as ``RegisterStackInvokeTransform(Callback)``, each a
    ``target`` on 127.0.0.1 and a ``token``; the monitor is called from an executor thread, so
    the program's loop serves ``Callbacks.Invoke`` (a ``TransformRequest`` in, a
    ``TransformResponse`` out, properties in wire form, camelCase keys) while it waits."""
    monitor = start(TransformMonitor(Mocks()))
    answers: list[Any] = []

    def own(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult:
        return pulumi.ResourceTransformResult({**args.props, "size": 2}, args.opts)

    def program() -> None:
        pulumi.runtime.register_resource_transform(lambda args: None)
        pulumi.runtime.register_invoke_transform(lambda args: None)
        Thing("thing", {"size": 1}, pulumi.ResourceOptions(transforms=[own]))

    original = monitor.RegisterResource

    def calling(request: Any) -> Any:
        if request.transforms:
            transform = resource_pb2.TransformRequest(
                type=request.type, name=request.name, custom=True, properties=request.object
            )
            raw = _callback_invoke(request.transforms[0], transform.SerializeToString())
            answers.append(resource_pb2.TransformResponse.FromString(raw))
        return original(request)

    monitor.RegisterResource = calling  # type: ignore[method-assign]
    run(program)
    for callback in [*monitor.stack_callbacks, *monitor.invoke_callbacks]:
        assert callback.target.startswith("127.0.0.1:") and callback.token
    assert len(monitor.stack_callbacks) == len(monitor.invoke_callbacks) == 1
    (answer,) = answers
    assert answer.HasField("properties")
    assert json_format.MessageToDict(answer.properties) == {"size": 2}


def test_a_failed_transform_is_a_grpc_error_with_the_message_and_the_users_frames() -> None:
    """transforms.py reads a failed callback's details as ``_CallbackServicer.Invoke`` and
    ``pretty_error`` word them: ``Invoke callback TOKEN error: MESSAGE:\\n  File "...", line N``."""
    import grpc

    monitor = start(TransformMonitor(Mocks()))
    errors: list[str] = []

    def broken(args: pulumi.ResourceTransformArgs) -> None:
        raise RuntimeError("no way")

    def program() -> None:
        pulumi.runtime.register_resource_transform(broken)
        Thing("thing", {"size": 1})

    original = monitor.RegisterResource

    def calling(request: Any) -> Any:
        if request.type == "test:index:Thing":
            (callback,) = monitor.stack_callbacks
            try:
                _callback_invoke(callback, resource_pb2.TransformRequest().SerializeToString())
            except grpc.RpcError as error:
                errors.append(str(error.details()))
        return original(request)

    monitor.RegisterResource = calling  # type: ignore[method-assign]
    run(program)
    (details,) = errors
    assert details.startswith(
        f"Invoke callback {monitor.stack_callbacks[0].token} error: no way:\n"
    )
    assert f'File "{__file__}", line' in details


# --- the in-place expansion of pushguard's remote component (pushguard/preview/remote.py) -----


def test_the_provider_servicer_construct_helpers_remote_expansion_calls() -> None:
    from pulumi.provider.server import ProviderServicer

    # Static helpers, called on an instance as remote.py does.
    assert list(inspect.signature(ProviderServicer._construct_inputs).parameters) == [
        "inputs",
        "input_dependencies",
    ]
    assert inspect.iscoroutinefunction(ProviderServicer._construct_inputs)
    assert list(inspect.signature(ProviderServicer._construct_options).parameters) == ["request"]
    assert list(inspect.signature(ProviderServicer._construct_response).parameters) == [
        "self",
        "result",
    ]
    assert inspect.iscoroutinefunction(ProviderServicer._construct_response)
    assert list(inspect.signature(ProviderServicer.__init__).parameters)[:4] == [
        "self",
        "provider",
        "args",
        "engine_address",
    ]


def test_config_secret_keys_are_readable_where_remote_expansion_reads_them() -> None:
    from pulumi.runtime import config as pulumi_config

    pulumi_config.set_all_config({"team:token": "x", "team:name": "y"}, ["team:token"])
    assert list(pulumi_config._SECRET_KEYS.get()) == ["team:token"]
    assert dict(pulumi_config.CONFIG.get()) == {"team:token": "x", "team:name": "y"}
    assert isinstance(pulumi_settings.SETTINGS.monitor_features, set | frozenset | type(None))
