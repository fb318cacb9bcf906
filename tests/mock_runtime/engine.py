"""Running a Pulumi program under the mock runtime and recording the resource graph it declares.

:class:`RecordingMonitor` sees every ``RegisterResource`` request as the Pulumi engine would:
type, name, parent, provider, wire-form inputs (after the provider's ``Check`` when the mocks
have one), the planned outputs, dependencies, property dependencies, the resource options that
change how the engine plans (``replaceOnChanges``, ``deleteBeforeReplace``, ``ignoreChanges``,
``importId``) and the source position of the constructor call (the SDK sends it as
``sourcePosition``).

Where the mock monitor of Pulumi's SDK is more lenient than the engine, this one is not: a URN
registered twice fails the program (the engine's "Duplicate resource URN"); a data source read
through its output form (``get_*_output``) that the mocks cannot answer offline is unknown at
preview, as an invoke the engine declines to serve; and the stack's outputs (``pulumi.export``)
are registered when the program has run, as the language host does, and recorded.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote, urlparse

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import Stack, massage, run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from pushguard.crossguard.urn import STACK_TYPE, is_stack_urn
from pushguard.gate.result import ResourceRecord, Source
from pushguard.preview.transforms import TransformError, Transforms
from tests.mock_runtime import remote


def _place(source: Source | None) -> str:
    return f"{source[0]}:{source[1]}" if source else "an unknown place"


class DuplicateResourceURNError(Exception):
    """Two registrations of one URN (same type, name and parent type chain): the engine's
    "Duplicate resource URN". ``first`` and ``second`` are where each was declared."""

    def __init__(self, urn: str, first: Source | None, second: Source | None) -> None:
        self.urn, self.first, self.second = urn, first, second
        super().__init__(
            f"Duplicate resource URN '{urn}'; try giving it a unique name "
            f"(registered at {_place(first)} and again at {_place(second)})"
        )


_OUTPUT_FORM: ContextVar[bool] = ContextVar("pushguard_output_form_invoke", default=False)
"""Set while the SDK starts an output-form invoke (``pulumi.runtime.invoke_output``): the invoke's
tasks, and the monitor call they make in an executor thread, run in a copy of that context."""


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """A mock resource monitor that keeps every registration in :attr:`records`, in order, and
    hands each to ``on_record`` as it happens (as the engine hands resources to analyzers); a
    component's registered outputs come to ``on_record`` as its record again (same URN).

    As the engine, it refuses a second registration of a URN (:class:`DuplicateResourceURNError`,
    raised to the SDK as the failed ``RegisterResource`` call, so it becomes the program's error);
    at preview it answers an output-form invoke as unknown when the mocks say they cannot answer
    it offline (their ``unknown_at_preview(token)``); and it keeps the stack's registered outputs
    in :attr:`outputs` (wire form).
    """

    def __init__(
        self,
        mocks: pulumi.runtime.Mocks,
        on_record: Callable[[ResourceRecord], None] | None = None,
    ) -> None:
        super().__init__(mocks)
        self.records: list[ResourceRecord] = []
        self.on_record = on_record
        self.outputs: dict[str, Any] = {}
        self._claimed: dict[str, Source | None] = {}
        self._lock = threading.Lock()  # the SDK calls the monitor from executor threads
        self.transforms = Transforms()
        """Resource and invoke transforms, run as the engine runs them (see
        :mod:`pushguard.preview.transforms`)."""
        self.config: dict[str, str] = {}
        self.secret_keys: list[str] = []
        """The stack's config, as the engine sends it with ``Construct`` (kept here: before pulumi
        3.225.0, #22017, the SDK calls the monitor from executor threads without the program's
        context, where the config's ``ContextVar`` is empty)."""

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine gives a resource: ``urn:pulumi:STACK::PROJECT::TYPES::NAME``, where
        TYPES is the parent's type chain and the type, ``$``-separated, without the root stack's
        type (the SDK's mock monitor keeps it: ``pulumi:pulumi:Stack$...`` for every top-level
        resource, a URN no engine gives)."""
        if parent and is_stack_urn(parent):
            parent = ""
        return super().make_urn(parent, type_, name)

    def _claim(self, urn: str, source: Source | None) -> None:
        """Take ``urn`` for the registration at ``source``.

        Raises:
            DuplicateResourceURNError: the URN was registered (or read) before.
        """
        with self._lock:
            if urn in self._claimed:
                raise DuplicateResourceURNError(urn, self._claimed[urn], source)
            self._claimed[urn] = source

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """Refuse a URN registered before, else record the request and answer as the mock
        monitor does. A remote component goes to :meth:`_register_remote` first."""
        if request.remote and request.type != STACK_TYPE:
            constructed = self._register_remote(request)
            if constructed is not None:
                return constructed
        if request.type != STACK_TYPE:
            urn = self.make_urn(request.parent, request.type, request.name)
            self._claim(urn, _source(request))
            request = self.transforms.apply(request)
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type != STACK_TYPE:
            self.transforms.settled(response.urn, request)
            inputs = json_format.MessageToDict(request.object)
            check = getattr(self.mocks, "check", None)
            if callable(check) and request.custom:
                inputs = check(request.type, request.name, inputs)
            self.records.append(
                ResourceRecord(
                    urn=response.urn,
                    type=request.type,
                    name=request.name,
                    parent=request.parent,
                    custom=request.custom,
                    provider=request.provider,
                    inputs=inputs,
                    outputs=json_format.MessageToDict(response.object),
                    source=_source(request),
                    dependencies=tuple(request.dependencies),
                    property_dependencies={
                        key: tuple(value.urns)
                        for key, value in request.propertyDependencies.items()
                    },
                    replace_on_changes=tuple(request.replaceOnChanges),
                    delete_before_replace=request.deleteBeforeReplace,
                    protect=bool(request.protect),
                    ignore_changes=tuple(request.ignoreChanges),
                    version=request.version,
                    import_id=request.importId,
                )
            )
            if self.on_record is not None:
                self.on_record(self.records[-1])
        return response

    def _register_remote(self, request: Any) -> Any:
        """A remote component (``ComponentResource(..., remote=True)``), as the engine handles it
        (:mod:`pushguard.preview.remote`): pushguard's own ``PushSubscription`` is constructed in
        place, as its plugin constructs it, and its response returned; any other is logged as not
        expanded and ``None`` returned, so it is recorded like a component without children."""
        if remote.expands(request.type):
            return remote.construct_in_place(self, request)
        urn = self.make_urn(request.parent, request.type, request.name)
        remote.not_expanded_log(request.type, urn)
        return None

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """A read (``Resource.get``) takes its URN too: reading one that is registered, or
        registering one that was read, is a duplicate for the engine as well."""
        urn = self.make_urn(request.parent, request.type, request.name)
        self._claim(urn, _source(request))
        return super().ReadResource(request)  # type: ignore[no-untyped-call]

    def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """Keep the stack's outputs (the last registration wins: the mock runtime registers an
        empty set when it creates the stack, the program run registers the exports), and a
        component's as its record's outputs: the engine sets a resource's outputs to what
        ``RegisterResourceOutputs`` gives (``stepExecutor.ExecuteRegisterResourceOutputs`` in
        pulumi/pulumi's pkg/resource/deploy/step_executor.go), and ``AnalyzeStack`` is given
        those outputs."""
        outputs = json_format.MessageToDict(request.outputs)
        if is_stack_urn(request.urn):
            self.outputs = outputs
        else:
            for index, record in enumerate(self.records):
                if record.urn == request.urn and not record.custom:
                    self.records[index] = replace(record, outputs=outputs)
                    if self.on_record is not None:  # the same URN again: its outputs
                        self.on_record(self.records[index])
        return super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]

    def RegisterStackTransform(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """Keep a stack transform (``register_resource_transform``) for every resource
        registered from now on, as the engine does; the SDK's mock monitor only records it."""
        self.transforms.register_stack(request)
        return super().RegisterStackTransform(request)  # type: ignore[no-untyped-call]

    def RegisterStackInvokeTransform(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """Keep a stack invoke transform (``register_invoke_transform``) for every invoke
        from now on, as the engine does."""
        self.transforms.register_stack_invoke(request)
        return super().RegisterStackInvokeTransform(request)  # type: ignore[no-untyped-call]

    def Invoke(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """At preview, an output-form invoke the mocks cannot answer offline is unknown (the
        response's ``unknown``, as the engine answers an invoke it declines to serve); any other
        invoke is answered by the mocks.

        Only the whole result can be unknown: the SDK builds a function's typed result (its
        constructor type-checks every field), which an unknown field would fail. A plain invoke
        (``get_*``) must return values, so the mocks answer it.
        """
        request = self.transforms.apply_invoke(request)
        unknown = getattr(self.mocks, "unknown_at_preview", None)
        if (
            pulumi_settings.is_dry_run()
            and _OUTPUT_FORM.get()
            and callable(unknown)
            and unknown(request.tok)
        ):
            return resource_pb2.ResourceInvokeResponse(unknown=True)
        return super().Invoke(request)  # type: ignore[no-untyped-call]


def _source(request: Any) -> Source | None:
    """The constructor call's file path and line from ``sourcePosition`` (a ``file:`` URI)."""
    position = request.sourcePosition if request.HasField("sourcePosition") else None
    if position is None or not position.uri.startswith("file:"):
        return None
    return unquote(urlparse(position.uri).path), int(position.line)


@dataclass
class ProgramRun:
    """What a program run under mocks declared, and what it logged (``(level, message)``, level
    one of ``info``, ``warning``, ``error``)."""

    records: list[ResourceRecord] = field(default_factory=list)
    logs: list[tuple[str, str]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    """The stack outputs (``pulumi.export``), wire form as the engine receives them: unknown
    values as Pulumi's unknown sentinel, secrets as secret envelopes. Empty when the program
    failed (the language host registers them only once the program has run)."""

    def by_type(self, type_token: str) -> list[ResourceRecord]:
        """The records of one resource type, in registration order."""
        return [r for r in self.records if r.type == type_token]

    def one(self, type_token: str) -> ResourceRecord:
        """The single record of a type. Raises ``AssertionError`` if there is not exactly one."""
        found = self.by_type(type_token)
        if len(found) != 1:
            raise AssertionError(f"expected one {type_token}, found {len(found)}")
        return found[0]


def run_program(
    program: Callable[[], Any],
    mocks: pulumi.runtime.Mocks,
    *,
    project: str = "pushguard",
    stack: str = "dev",
    config: Mapping[str, str] | None = None,
    secret_keys: Iterable[str] = (),
    preview: bool = True,
) -> ProgramRun:
    """Run ``program`` under Pulumi's mock runtime and return the graph it registered.

    ``config`` is Pulumi config in ``namespace:key`` form with string values (structured values as
    JSON text), as ``pulumi.runtime.set_all_config`` takes it; ``secret_keys`` are the keys whose
    values are secrets. ``preview`` runs the program as ``pulumi preview`` does (``is_dry_run()``
    true, unknown values stay unknown) rather than as ``pulumi up``.

    Raises:
        Exception: whatever the program raised, or a registration failed with, after every
            outstanding RPC finished (so ``ProgramRun`` is not returned for a failed program; use
            :func:`run_program_capturing` to see what was registered before the failure).
    """
    run, error = run_program_capturing(
        program,
        mocks,
        project=project,
        stack=stack,
        config=config,
        secret_keys=secret_keys,
        preview=preview,
    )
    if error is not None:
        raise error
    return run


def run_program_capturing(
    program: Callable[[], Any],
    mocks: pulumi.runtime.Mocks,
    *,
    project: str = "pushguard",
    stack: str = "dev",
    config: Mapping[str, str] | None = None,
    secret_keys: Iterable[str] = (),
    preview: bool = True,
    on_record: Callable[[ResourceRecord], None] | None = None,
) -> tuple[ProgramRun, BaseException | None]:
    """Like :func:`run_program`, but returns ``(graph so far, error or None)``, never raising
    (a program calling ``sys.exit`` is an error too); ``on_record`` sees each registration as
    it happens."""
    pulumi_settings.reset_options()
    pulumi.runtime.set_all_config(dict(config or {}), list(secret_keys))
    monitor = RecordingMonitor(mocks, on_record)
    monitor.config, monitor.secret_keys = dict(config or {}), list(secret_keys)
    logs = _LogCollector()
    logger = logging.getLogger("pushguard.preview.program")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(logs)
    pulumi.runtime.set_mocks(
        mocks, project=project, stack=stack, preview=preview, monitor=monitor, logger=logger
    )
    error: BaseException | None = None
    _quiet_duplicate_reports(_ensure_event_loop())  # type: ignore[no-untyped-call]
    try:
        with _marking_output_invokes():
            _sync_await(_run_in_stack(program))
    except (Exception, SystemExit) as exc:
        error = exc
    finally:
        logger.removeHandler(logs)
    outputs = dict(monitor.outputs) if error is None else {}
    return ProgramRun(records=list(monitor.records), logs=logs.entries, outputs=outputs), error


_QUIETED: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def _quiet_duplicate_reports(loop: asyncio.AbstractEventLoop) -> None:
    """Drop asyncio's "exception was never retrieved" reports of a
    :class:`DuplicateResourceURNError` on ``loop``: the SDK fails the refused resource's URN, ID
    and output futures with it, which nothing awaits, and it is already the program's error.
    Every other report goes to the loop's handler as before."""
    if loop in _QUIETED:
        return
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if isinstance(context.get("exception"), (DuplicateResourceURNError, TransformError)):
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    _QUIETED.add(loop)


async def _run_in_stack(program: Callable[[], Any]) -> None:
    """As ``pulumi.runtime.stack.run_in_stack`` runs a program: the monitor's feature support
    loaded first (``_load_monitor_feature_support``), then the program (:func:`_in_stack`).
    Before pulumi 3.258.0 (#24308, commit 73d0fe0e5c56) ``set_mocks`` does not load it, and
    without it the SDK refuses transforms ("The Pulumi CLI does not support transforms")."""
    await pulumi_settings._load_monitor_feature_support()
    await run_pulumi_func(_in_stack(program))


def _in_stack(program: Callable[[], Any]) -> Callable[[], None]:
    """``program``, then the stack's outputs registered, as the language host runs a program
    (``pulumi.runtime.stack.run_in_stack``). The mock runtime registers the stack's outputs when
    it creates the stack, before the program exports anything, so they are registered again.

    A plain function, not a coroutine function: ``run_pulumi_func`` awaits what its function
    returns only from pulumi 3.254.0 (#23945, commit f2df4f614b75, with ``pulumi.run``); at
    v3.204.0 (``sdk/python/lib/pulumi/runtime/stack.py``) it calls ``func()`` and drops the
    result, so a coroutine would never run and the program would register nothing."""

    def run() -> None:
        program()
        stack = pulumi_settings.get_root_resource()
        if isinstance(stack, Stack):
            stack.register_outputs(massage(stack.outputs, []))

    return run


_OUTPUT_INVOKES = ("invoke_output", "invoke_output_single")


@contextmanager
def _marking_output_invokes() -> Iterator[None]:
    """While the program runs, ``pulumi.runtime.invoke_output`` (what every generated
    ``get_*_output`` calls) and ``invoke_output_single`` start their invokes with
    :data:`_OUTPUT_FORM` set, so the monitor can tell an output-form invoke from a plain one
    (the request does not say)."""
    modules = [pulumi.runtime, importlib.import_module("pulumi.runtime.invoke")]
    saved = [
        (module, name, getattr(module, name)) for module in modules for name in _OUTPUT_INVOKES
    ]
    for module, name, original in saved:
        setattr(module, name, _marked(original))
    try:
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def _marked(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def invoke(*args: Any, **kwargs: Any) -> Any:
        token = _OUTPUT_FORM.set(True)
        try:
            return original(*args, **kwargs)
        finally:
            _OUTPUT_FORM.reset(token)

    return invoke


class _LogCollector(logging.Handler):
    """Keeps what the program logged through ``pulumi.log`` at info level and above (the mock
    engine's logger; debug messages are the SDK's own tracing)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.entries: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.entries.append((record.levelname.lower(), record.getMessage()))
