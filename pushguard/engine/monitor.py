"""The ``ResourceMonitor`` gRPC service, as the Pulumi engine answers it at preview.

What the engine does (``resmon`` in ``pkg/resource/deploy/source_eval.go`` of pulumi/pulumi,
commit 1b5949891b3c), and what this monitor does offline:

- ``RegisterResource``: the URN is ``urn:pulumi:STACK::PROJECT::TYPE::NAME``, TYPE prefixed by
  the parent's whole qualified type and ``$`` unless the parent is the stack
  (``Deployment.generateURN`` in ``deployment.go``); a URN registered twice fails the
  registration ("Duplicate resource URN"); transforms run first (the request's own, its
  parents', the stack's; :class:`pushguard.preview.transforms.Transforms` calls the program's
  callbacks server as the engine does, loopback only). A custom resource is planned by the
  provider (inputs after ``Check``; at preview its ID and computed outputs unknown:
  :mod:`pushguard.engine.planner`); a component has no outputs until
  ``RegisterResourceOutputs``. A remote component (``remote``) is constructed by its package's
  plugin, which is not here: it is recorded as the component alone and reported as not
  expanded (the preview's "not checked" and exit 2), from this process, whatever the program
  logs or silences.
- ``ReadResource``: takes its URN too; a ``StackReference`` whose outputs the team gave is
  answered with them, as the builtin provider reads the stack; otherwise the provider's
  ``Read`` cannot run offline, so the response is ``unknown`` (the SDK resolves the outputs as
  unknown) with the given properties, and the read is recorded as unknown offline, with its
  line (:mod:`pushguard.engine.reads`).
- ``Invoke``: stack invoke transforms, then the offline answer (:func:`~pushguard.engine.
  planner.answer_invoke`: certain, or unknown, never absent; wholly unknown as
  ``ResourceInvokeResponse.unknown``, where the installed SDK's protobufs have it:
  :data:`INVOKE_RESPONSE`); ``pulumi:pulumi:getResource`` from the engine's own record.
  A custom resource registered after a data source's boolean or number output was answered
  absent has an unset property of that name unknown (:meth:`~pushguard.engine.planner.
  EngineMocks.unknown_where_uncarried`).
- ``RegisterResourceOutputs``: the stack's outputs, or a component's outputs.
- ``SupportsFeature``: as ``supportsFeatureID``, except ``outputValues`` (answered ``False``:
  the SDK then sends plain values, unknowns and secrets, which is what the engine forwards for a
  non-remote resource anyway: ``downgradeOutputValues`` replaces every output value with
  ``Computed``, ``Secret`` or its plain value before the provider and analyzers see it), and
  hooks, parameterization and
  ``Call``, which this engine does not serve yet (a program using them fails, exit 2; a
  ``Call`` is the engine's own failure, whatever the program does with the error).
  ``GetDeploymentInfo`` is left unimplemented, so the SDK asks ``SupportsFeature``, as it does
  with older engines (``pulumi/runtime/settings.py``: ``_load_monitor_feature_support``).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import grpc
from google.protobuf import empty_pb2, json_format, message_factory, struct_pb2
from pulumi.runtime.proto import resource_pb2, resource_pb2_grpc

from pushguard.crossguard.urn import STACK_TYPE, is_stack_urn
from pushguard.engine.construct import ConstructRefusedError, construct
from pushguard.engine.planner import EngineMocks, InvokeAnswer, answer_invoke, plan_resource
from pushguard.engine.reads import Reads
from pushguard.engine.recorder import DuplicateURNError, Recorder
from pushguard.gate.result import ResourceRecord, Source
from pushguard.preview.remote import NOT_EXPANDED_MARK, expands
from pushguard.preview.transforms import TransformError, Transforms

FEATURES = {
    "secrets": True,
    "resourceReferences": True,
    "outputValues": False,
    "aliasSpecs": True,
    "deletedWith": True,
    "replaceWith": True,
    "transforms": True,
    "invokeTransforms": True,
}
"""``SupportsFeature`` answers (any other feature: ``False``)."""


PROVIDER_PREFIX = "pulumi:providers:"
_MONITOR = resource_pb2.DESCRIPTOR.services_by_name["ResourceMonitor"]
INVOKE_RESPONSE: Any = message_factory.GetMessageClass(
    _MONITOR.methods_by_name["Invoke"].output_type
)
"""The message ``ResourceMonitor.Invoke`` returns in the installed SDK's protobufs: its own
``ResourceInvokeResponse`` from pulumi 3.256.0 on, the provider's ``InvokeResponse`` before
(``proto/pulumi/resource.proto`` of pulumi/pulumi: ``rpc Invoke(ResourceInvokeRequest) returns
(InvokeResponse)`` at tag v3.204.0; #24100, commit bb4e4dd09475, "a pure refactor, compatible at
the wire level": the same ``return`` = 1 and ``failures`` = 2, then #24040 added ``unknown`` = 3).
The SDK that runs the program decodes the response with its own message, whatever pushguard's."""
_INVOKE_FIELDS = INVOKE_RESPONSE.DESCRIPTOR.fields_by_name


def is_loopback(target: str) -> bool:
    """Whether a callback ``target`` (``HOST:PORT``) is on this machine's loopback: an address
    in 127.0.0.0/8 or ``::1`` (bracketed), or ``localhost``. The SDK's callbacks server
    listens on ``127.0.0.1`` (``pulumi/runtime/_callbacks.py``)."""
    host, _, port = target.rpartition(":")
    if not port.isdigit() or not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False


def _position(position: Any) -> Source | None:
    """A ``SourcePosition`` (``uri``: a ``file:`` URI, ``line``) as ``(path, line)``."""
    if not position.uri.startswith("file:"):
        return None
    return unquote(urlparse(position.uri).path), int(position.line)


def _source(request: Any) -> Source | None:
    """The constructor call's file and line from ``sourcePosition``."""
    return _position(request.sourcePosition) if request.HasField("sourcePosition") else None


LIBRARY_FOLDERS = frozenset({"site-packages", "dist-packages", "node_modules"})
"""A file under a folder of one of these names is a library's, not the program's, even inside the
project folder (a virtual environment or ``node_modules`` there)."""


def call_stack(request: Any, root: Path) -> list[Source]:
    """The program's frames of the constructor call, outermost first: the request's
    ``stackTrace`` (the SDK sends the frames from the concrete resource's caller outwards,
    innermost first: ``_get_stack_trace`` in ``pulumi/runtime/resource.py``) kept where the file
    is under the project folder ``root`` and not a library's (:data:`LIBRARY_FOLDERS`). Empty
    when the SDK sends no stack trace (older SDKs send ``sourcePosition`` only)."""
    if not request.HasField("stackTrace"):
        return []
    frames = []
    for frame in reversed(request.stackTrace.frames):
        source = _position(frame.pc) if frame.HasField("pc") else None
        if source is None:
            continue
        path = Path(source[0])
        if path.is_relative_to(root) and not LIBRARY_FOLDERS.intersection(path.parts):
            frames.append(source)
    return frames


def program_line(source: Source | None, frames: list[Source]) -> Source | None:
    """Where a registration belongs in the program: its ``sourcePosition`` (``source``), unless
    there is none or it is a library's file (:data:`LIBRARY_FOLDERS`: a library the program
    uses created the resource), then the innermost program frame of ``frames`` (the call into
    the library), if any.

    The Python SDK sends no ``sourcePosition`` for a ``pulumi.CustomResource(...)`` made
    directly (``_get_stack_trace`` looks for a third ``__init__`` frame). The Node.js SDK sends
    the frame one constructor below the SDK's ``Resource`` (the caller of a generated class such
    as ``gcp.pubsub.Subscription``), lines mapped to the TypeScript source by
    ``source-map-support`` (``Resource.stackTrace`` in ``sdk/nodejs/resource.ts`` of
    pulumi/pulumi, commit 1b5949891b3c): a file in ``node_modules`` when a library made it."""
    if source is not None and not LIBRARY_FOLDERS.intersection(Path(source[0]).parts):
        return source
    return frames[-1] if frames else source


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(value, struct_pb2.Struct())


class Monitor(resource_pb2_grpc.ResourceMonitorServicer):
    """The monitor of one run of ``project``'s program for ``stack``."""

    def __init__(
        self, recorder: Recorder, mocks: EngineMocks, project: str, stack: str, root: Path
    ) -> None:
        self.recorder, self.mocks = recorder, mocks
        self.project, self.stack, self.root = project, stack, root
        self.transforms = Transforms()
        self.construct_address = ""
        """Where a ``Construct`` reaches this monitor (a server of its own)."""
        self.construct_settings: dict[str, Any] = {
            "project": project,
            "stack": stack,
            "config": {},
            "secret_keys": [],
        }
        """``project``, ``stack``, ``config`` and ``secret_keys`` for a ``Construct``."""
        self._constructed: set[str] = set()
        self.reads = Reads()
        """The answers to reads, and the reads left unknown offline."""

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The engine's URN for a resource (``generateURN``)."""
        if parent and not is_stack_urn(parent):
            type_ = parent.split("::")[2] + "$" + type_
        return f"urn:pulumi:{self.stack}::{self.project}::{type_}::{name}"

    def _refuse(self, context: grpc.ServicerContext, message: str) -> None:
        self.recorder.engine_error("EngineError", message, [])
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, message)

    def _transform_failed(self, context: grpc.ServicerContext, error: TransformError) -> None:
        frames = [[path, line] for path, line in error.frames]
        self.recorder.engine_error("TransformError", str(error), frames)
        context.abort(grpc.StatusCode.UNKNOWN, str(error))

    def _check_targets(self, context: grpc.ServicerContext, callbacks: Any) -> None:
        """The engine calls transforms back; pushguard calls loopback addresses only."""
        for callback in callbacks:
            if not is_loopback(callback.target):
                self._refuse(context, f"callback target {callback.target!r} is not loopback")

    def RegisterResource(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Record the registration and answer as the engine does at preview."""
        urn = self.make_urn(request.parent, request.type, request.name)
        try:
            self.recorder.claim(urn, _source(request))
        except DuplicateURNError as error:
            context.abort(grpc.StatusCode.ALREADY_EXISTS, str(error))
        if request.type == STACK_TYPE:
            return resource_pb2.RegisterResourceResponse(urn=urn)
        self._check_targets(context, request.transforms)
        try:
            request = self.transforms.apply(request)
        except TransformError as error:
            self._transform_failed(context, error)
        if urn not in self._constructed:  # the component's own transforms stay its request's
            self.transforms.settled(urn, request)
        inputs = json_format.MessageToDict(request.object)
        if request.remote and expands(request.type):
            return self._construct(urn, request, context)
        if request.remote:
            self.recorder.log("warning", f"{NOT_EXPANDED_MARK}{request.type}\t{urn}")
            checked, ident, outputs = inputs, "", dict[str, Any]()
        else:
            if request.custom and not request.type.startswith(PROVIDER_PREFIX):
                inputs, _ = self.mocks.unknown_where_uncarried(inputs)
            checked, ident, outputs = plan_resource(self.mocks, request, inputs)
        frames = call_stack(request, self.root)
        self.recorder.add(_record(urn, request, checked, outputs, frames), frames)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=ident, object=_struct(outputs))

    def _construct(self, urn: str, request: Any, context: grpc.ServicerContext) -> Any:
        """pushguard's own remote component, constructed by its provider in this process
        (:mod:`pushguard.engine.construct`), which registers it (its URN released for that)
        and its children with this monitor."""
        self.recorder.release(urn)
        self._constructed.add(urn)
        try:
            response = construct(self.construct_address, request, **self.construct_settings)
        except ConstructRefusedError as refused:
            inner, source = refused.inner, _source(request)
            self.recorder.engine_error(
                type(inner).__name__,
                str(inner).strip() or repr(inner),
                [list(source)] if source else [],
                component=getattr(inner, "component", None),
                problems=[list(p) for p in getattr(inner, "problems", ())],
            )
            context.abort(grpc.StatusCode.UNKNOWN, str(inner))
        return resource_pb2.RegisterResourceResponse(urn=response.urn, object=response.state)

    def ReadResource(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """A read takes its URN; its result is the given stack outputs, else unknown offline."""
        urn = self.make_urn(request.parent, request.type, request.name)
        try:
            self.recorder.claim(urn, _source(request))
        except DuplicateURNError as error:
            context.abort(grpc.StatusCode.ALREADY_EXISTS, str(error))
        answer = self.reads.answer(request)
        if answer is not None:
            known = resource_pb2.ReadResourceResponse(urn=urn, properties=_struct(answer))
            if "id" in resource_pb2.ReadResourceResponse.DESCRIPTOR.fields_by_name:
                known.id = request.id
            return known
        response = resource_pb2.ReadResourceResponse(urn=urn, properties=request.properties)
        if "unknown" in resource_pb2.ReadResourceResponse.DESCRIPTOR.fields_by_name:
            response.unknown = True
        return response

    def Invoke(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Invoke transforms, then the offline answer."""
        try:
            request = self.transforms.apply_invoke(request)
        except TransformError as error:
            self._transform_failed(context, error)
        args = json_format.MessageToDict(request.args)
        if request.tok == "pulumi:pulumi:getResource":
            state = self.recorder.state_of(str(args.get("urn")))
            if state is None:
                context.abort(grpc.StatusCode.NOT_FOUND, f"unknown resource {args.get('urn')}")
            answered = InvokeAnswer({"urn": args.get("urn"), "id": "", "state": state})
        else:
            answered = answer_invoke(self.mocks, request.tok, args, request.provider)
        response = INVOKE_RESPONSE()
        getattr(response, "return").CopyFrom(_struct(answered.values))  # a Python keyword
        if answered.unknown and "unknown" in _INVOKE_FIELDS:
            response.unknown = True
        return response

    def RegisterResourceOutputs(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """The stack's outputs, or a component's."""
        outputs = json_format.MessageToDict(request.outputs)
        if is_stack_urn(request.urn):
            self.recorder.stack_outputs(outputs)
        else:
            self.recorder.component_outputs(request.urn, outputs)
        return empty_pb2.Empty()

    def SupportsFeature(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """See :data:`FEATURES`."""
        return resource_pb2.SupportsFeatureResponse(hasSupport=FEATURES.get(request.id, False))

    def RegisterStackTransform(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Keep a stack transform for every later registration."""
        self._check_targets(context, [request])
        self.transforms.register_stack(request)
        return empty_pb2.Empty()

    def RegisterStackInvokeTransform(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Keep a stack invoke transform for every later invoke."""
        self._check_targets(context, [request])
        self.transforms.register_stack_invoke(request)
        return empty_pb2.Empty()

    def Call(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Not served yet: the run fails (exit 2) naming the method, whatever the program does
        with the error."""
        message = (
            f"pushguard's engine does not answer resource method calls yet ({request.tok}); "
            "check this stack with `pulumi preview --policy-pack`"
        )
        self.recorder.engine_error("EngineError", message, [])
        context.abort(grpc.StatusCode.UNIMPLEMENTED, message)

    def GetDeploymentInfo(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """``UNIMPLEMENTED``, as from an engine older than the method: the SDK then asks
        :meth:`SupportsFeature` for each feature (see the module's docstring)."""
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "GetDeploymentInfo")

    def SignalAndWaitForShutdown(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """The SDK's end of the run (see :attr:`Recorder.shut_down`); nothing to wait for (no
        resource hooks)."""
        self.recorder.shut_down = True
        return empty_pb2.Empty()


def _record(
    urn: str,
    request: Any,
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    frames: list[Source],
) -> ResourceRecord:
    """The registration as the engine received it (after transforms), its source by
    :func:`program_line`."""
    return ResourceRecord(
        urn=urn,
        type=request.type,
        name=request.name,
        parent=request.parent,
        custom=request.custom,
        provider=request.provider,
        inputs=inputs,
        outputs=outputs,
        source=program_line(_source(request), frames),
        dependencies=tuple(request.dependencies),
        property_dependencies={
            key: tuple(value.urns) for key, value in request.propertyDependencies.items()
        },
        replace_on_changes=tuple(request.replaceOnChanges),
        delete_before_replace=request.deleteBeforeReplace,
        protect=bool(request.protect),
        ignore_changes=tuple(request.ignoreChanges),
        version=request.version,
        import_id=request.importId,
    )
