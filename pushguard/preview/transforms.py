"""Resource and invoke transforms, applied as the Pulumi engine applies them.

The SDK hands the engine its transforms as callbacks (``Callback``: a gRPC ``target`` on
loopback and a ``token``), served by the program's own callbacks server
(``pulumi.runtime._callbacks._CallbackServicer``, started on the program's event loop). The
engine calls them back over gRPC (``Callbacks.Invoke``); so does :class:`Transforms`, with the
engine's requests, so a transform runs exactly as under ``pulumi preview``: the SDK's own code
deserialises the request, calls the function and serialises its result.

The engine's rules (pkg/resource/deploy/source_eval.go of pulumi/pulumi, read at commit
1b5949891b3c: ``resmon.RegisterResource``, ``wrapTransformCallback``, ``upgradeOutputValues``,
``addOutputDependencies``, ``resmon.Invoke``, ``RegisterStackTransform``,
``RegisterStackInvokeTransform``):

- a registration runs its own transforms (the request's ``transforms``), then those its parent
  was registered with, then its parent's parent's and so on up the parent chain, then the stack
  transforms registered so far, in registration order; each gets the properties and options the
  previous one returned (a response without ``properties`` or ``options`` keeps them);
- the properties are sent with every secret and unknown value as an output value; when the
  resource has transforms of its own, a top-level property with dependencies is an output value
  carrying them (so a Python transform sees ``pulumi.Output`` objects for them);
- after its own transforms, a resource's dependencies are the transformed ``dependsOn`` plus the
  dependencies of output values in the result, and each property's dependencies are those of its
  output values;
- a transform that fails fails the registration (``invoke transform: ...``);
- stack invoke transforms run, in order, on every invoke's arguments and options (provider,
  version, plugin download URL) before the provider sees them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import grpc
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import alias_pb2, callback_pb2, callback_pb2_grpc, resource_pb2

SIG = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
OUTPUT_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""Pulumi's wire signatures (sdk/go/common/resource/sig, the SDK's ``rpc`` module)."""

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.MULTILINE)


def _in_both(field: str) -> bool:
    return all(
        field in message.DESCRIPTOR.fields_by_name
        for message in (resource_pb2.RegisterResourceRequest, resource_pb2.TransformResourceOptions)
    )


_REPLACE_WITH, _REPLACEMENT_TRIGGER = _in_both("replace_with"), _in_both("replacement_trigger")
"""Whether the installed SDK's protobufs have these options in a registration and a transform's
options: ``replace_with`` from pulumi 3.207.0 (#20693, commit 32235a17d2 of pulumi/pulumi),
``replacement_trigger`` from 3.208.0 (#20936, commit e9a05e2d3f); at v3.204.0 neither message
has them (``proto/pulumi/resource.proto``). Without them, a newer program's values stay in the
request as fields pushguard's protobufs do not name, and transforms do not see them."""


class TransformError(Exception):
    """A transform failed: the engine fails the registration (or the invoke) with it.

    ``frames`` are the ``(path, line)`` frames of the transform's traceback, outermost first, as
    the SDK's callbacks server reports them (``_CallbackServicer.pretty_error``)."""

    def __init__(self, message: str, frames: tuple[tuple[str, int], ...] = ()) -> None:
        super().__init__(message)
        self.frames = frames


class Transforms:
    """The engine's transform bookkeeping for one program run: the stack transforms and stack
    invoke transforms in registration order, and each registered resource's own transforms and
    parent (to walk the parent chain). Thread-safe: the SDK calls the monitor from executor
    threads."""

    def __init__(self) -> None:
        self._stack: list[callback_pb2.Callback] = []
        self._stack_invokes: list[callback_pb2.Callback] = []
        self._own: dict[str, tuple[callback_pb2.Callback, ...]] = {}
        self._parents: dict[str, str] = {}
        self._lock = threading.Lock()

    # --- registration of transforms -----------------------------------------------------------

    def register_stack(self, callback: callback_pb2.Callback) -> None:
        """``RegisterStackTransform``: applies to every resource registered from now on.

        Raises:
            ValueError: the callback has no target (the engine's "target must be specified").
        """
        _require_target(callback)
        with self._lock:
            self._stack.append(_copy(callback))

    def register_stack_invoke(self, callback: callback_pb2.Callback) -> None:
        """``RegisterStackInvokeTransform``: applies to every invoke from now on.

        Raises:
            ValueError: the callback has no target.
        """
        _require_target(callback)
        with self._lock:
            self._stack_invokes.append(_copy(callback))

    def settled(self, urn: str, request: Any) -> None:
        """Remember a registered resource's parent and own transforms, for its children (the
        engine saves them once the registration has a URN)."""
        with self._lock:
            self._parents[urn] = request.parent
            self._own[urn] = tuple(_copy(c) for c in request.transforms)

    # --- applying them ------------------------------------------------------------------------

    def _chain(self, request: Any) -> list[callback_pb2.Callback]:
        with self._lock:
            chain = list(request.transforms)
            current, seen = request.parent, set()
            while current and current not in seen:
                seen.add(current)
                chain.extend(self._own.get(current, ()))
                current = self._parents.get(current, "")
            return chain + self._stack

    def apply(self, request: Any) -> Any:
        """The ``RegisterResourceRequest`` as the engine goes on with it after running every
        transform that applies (``request`` itself when none does).

        Raises:
            TransformError: a transform failed, or its callback could not be reached.
        """
        chain = self._chain(request)
        if not chain:
            return request
        own = len(request.transforms) > 0
        props = _upgrade(json_format.MessageToDict(request.object))
        if own:
            props = _with_dependencies(props, _property_dependencies(request))
        opts = _options(request)
        label = f"{request.type} '{request.name}'"
        for callback in chain:
            transform = resource_pb2.TransformRequest(
                type=request.type,
                name=request.name,
                custom=request.custom,
                parent=request.parent,
                properties=_struct(props),
                options=opts,
            )
            raw = self._call(callback, transform.SerializeToString(), label)
            response = resource_pb2.TransformResponse.FromString(raw)
            if response.HasField("properties"):
                props = json_format.MessageToDict(response.properties)
            if response.HasField("options"):
                opts = response.options
        return _request(request, props, opts, own)

    def apply_invoke(self, request: Any) -> Any:
        """The ``ResourceInvokeRequest`` after the stack invoke transforms (``request`` itself
        when there are none).

        Raises:
            TransformError: a transform failed, or its callback could not be reached.
        """
        with self._lock:
            chain = list(self._stack_invokes)
        if not chain:
            return request
        args = json_format.MessageToDict(request.args)
        opts = resource_pb2.TransformInvokeOptions(
            provider=request.provider,
            version=request.version,
            plugin_download_url=request.pluginDownloadURL,
            plugin_checksums=dict(request.pluginChecksums),
        )
        for callback in chain:
            transform = resource_pb2.TransformInvokeRequest(
                token=request.tok, args=_struct(args), options=opts
            )
            raw = self._call(callback, transform.SerializeToString(), f"invoke {request.tok}")
            response = resource_pb2.TransformInvokeResponse.FromString(raw)
            if response.HasField("args"):
                args = json_format.MessageToDict(response.args)
            if response.HasField("options"):
                opts = response.options
        result = resource_pb2.ResourceInvokeRequest()
        result.CopyFrom(request)
        result.args.CopyFrom(_struct(args))
        result.provider, result.version = opts.provider, opts.version
        result.pluginDownloadURL = opts.plugin_download_url
        result.pluginChecksums.clear()
        result.pluginChecksums.update(opts.plugin_checksums)
        return result

    def _call(self, callback: callback_pb2.Callback, request: bytes, label: str) -> bytes:
        """``Callbacks.Invoke`` on the callback's server, as the engine calls it.

        One channel per call, closed at once: the SDK stops its callbacks server when the
        program ends, and a channel left open to it would log the server's going away into
        the program's stderr. Loopback only: a proxy from the environment never carries it.
        """
        with grpc.insecure_channel(
            callback.target, options=[("grpc.enable_http_proxy", 0)]
        ) as channel:
            stub = callback_pb2_grpc.CallbacksStub(channel)
            try:
                response = stub.Invoke(
                    callback_pb2.CallbackInvokeRequest(token=callback.token, request=request)
                )
            except grpc.RpcError as error:
                details = str(error.details() or error.code())
                raise _transform_error(label, details) from None
        return bytes(response.response)


def _transform_error(label: str, details: str) -> TransformError:
    """The SDK's callbacks server answers a failed transform with ``Invoke callback TOKEN
    error: MESSAGE:\\nSTACK``; keep the message and the stack's frames."""
    message = re.sub(r"^Invoke callback \S+ error: ", "", details)
    text, _, stack = message.partition(":\n  File ")
    frames = tuple(
        (m["path"], int(m["line"])) for m in _FRAME.finditer("  File " + stack if stack else "")
    )
    return TransformError(f"a transform of {label} failed: {text.strip()}", frames)


def _require_target(callback: callback_pb2.Callback) -> None:
    if not callback.target:
        raise ValueError("target must be specified")


def _copy(callback: callback_pb2.Callback) -> callback_pb2.Callback:
    return callback_pb2.Callback(target=callback.target, token=callback.token)


def _struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(dict(value), struct_pb2.Struct())


def _is_sig(value: Any, sig: str) -> bool:
    return isinstance(value, dict) and value.get(SIG) == sig


def _upgrade(value: Any) -> Any:
    """Secrets and unknowns as output values, at any depth (the engine unmarshals a
    registration with ``UpgradeToOutputValues``)."""
    if value == UNKNOWN:
        return {SIG: OUTPUT_SIG}
    if _is_sig(value, SECRET_SIG):
        return {SIG: OUTPUT_SIG, "secret": True, "value": _upgrade(value.get("value"))}
    if isinstance(value, dict):
        if SIG in value:
            return value  # resource references, assets, archives, output values: as they are
        return {k: _upgrade(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_upgrade(v) for v in value]
    return value


def _downgrade(value: Any) -> Any:
    """Output values back to plain, secret and unknown values, at any depth (how the engine
    marshals properties for providers and analyzers, without ``KeepOutputValues``)."""
    if _is_sig(value, OUTPUT_SIG):
        inner = _downgrade(value["value"]) if "value" in value else UNKNOWN
        return {SIG: SECRET_SIG, "value": inner} if value.get("secret") else inner
    if isinstance(value, dict):
        if SIG in value and not _is_sig(value, SECRET_SIG):
            return value
        return {k: _downgrade(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_downgrade(v) for v in value]
    return value


def _output_dependencies(value: Any) -> set[str]:
    """The URNs output values in ``value`` depend on (the engine's ``addOutputDependencies``)."""
    found: set[str] = set()
    if _is_sig(value, OUTPUT_SIG):
        found.update(str(d) for d in value.get("dependencies") or ())
        if "value" in value:
            found |= _output_dependencies(value["value"])
    elif isinstance(value, dict):
        for item in value.values():
            found |= _output_dependencies(item)
    elif isinstance(value, list):
        for item in value:
            found |= _output_dependencies(item)
    return found


def _property_dependencies(request: Any) -> dict[str, set[str]]:
    """Each property's dependencies as the engine reads them: the request's
    ``propertyDependencies``, or, when it has none, every dependency for every property."""
    if len(request.propertyDependencies) == 0 and not request.remote:
        everything = set(request.dependencies)
        return {key: everything for key in request.object}
    return {key: set(deps.urns) for key, deps in request.propertyDependencies.items()}


def _with_dependencies(props: dict[str, Any], deps: Mapping[str, set[str]]) -> dict[str, Any]:
    """The engine's ``upgradeOutputValues``: a property with dependencies its value does not
    already carry becomes an output value carrying them all."""
    result: dict[str, Any] = {}
    for key, value in props.items():
        wanted = deps.get(key)
        if not wanted or _output_dependencies(value) >= wanted:
            result[key] = value
            continue
        output = dict(value) if _is_sig(value, OUTPUT_SIG) else {SIG: OUTPUT_SIG, "value": value}
        merged = set(output.get("dependencies") or ()) | wanted
        output["dependencies"] = sorted(merged)
        result[key] = output
    return result


def _options(request: Any) -> resource_pb2.TransformResourceOptions:
    """The options the engine hands transforms (``resmon.RegisterResource``)."""
    aliases = [alias_pb2.Alias(urn=urn) for urn in request.aliasURNs]
    aliases.extend(request.aliases)
    opts = resource_pb2.TransformResourceOptions(
        depends_on=list(request.dependencies),
        ignore_changes=list(request.ignoreChanges),
        replace_on_changes=list(request.replaceOnChanges),
        version=request.version,
        aliases=aliases,
        provider=request.provider,
        plugin_download_url=request.pluginDownloadURL,
        deleted_with=request.deletedWith,
        additional_secret_outputs=list(request.additionalSecretOutputs),
        hide_diff=list(request.hideDiffs),
    )
    setattr(opts, "import", request.importId)
    opts.providers.update(request.providers)
    opts.plugin_checksums.update(request.pluginChecksums)
    if request.HasField("protect"):
        opts.protect = request.protect
    if request.HasField("retainOnDelete"):
        opts.retain_on_delete = request.retainOnDelete
    if request.deleteBeforeReplaceDefined or request.deleteBeforeReplace:
        opts.delete_before_replace = request.deleteBeforeReplace
    for source, target in (("customTimeouts", "custom_timeouts"), ("hooks", "hooks")):
        if request.HasField(source):
            getattr(opts, target).CopyFrom(getattr(request, source))
    if _REPLACE_WITH:
        opts.replace_with.extend(request.replace_with)
    if _REPLACEMENT_TRIGGER and request.HasField("replacement_trigger"):
        opts.replacement_trigger.CopyFrom(request.replacement_trigger)
    return opts


def _request(
    request: Any, props: dict[str, Any], opts: resource_pb2.TransformResourceOptions, own: bool
) -> Any:
    """``request`` with the transformed properties and options, as the engine continues with
    them (dependencies recomputed when the resource had transforms of its own)."""
    result = resource_pb2.RegisterResourceRequest()
    result.CopyFrom(request)
    result.object.CopyFrom(_struct(_downgrade(props)))
    if own:
        dependencies = set(opts.depends_on)
        result.ClearField("propertyDependencies")
        for key, value in props.items():
            deps = _output_dependencies(value)
            dependencies |= deps
            result.propertyDependencies[key].urns.extend(sorted(deps))
        _replace(result.dependencies, sorted(dependencies))
    _replace(result.ignoreChanges, opts.ignore_changes)
    _replace(result.replaceOnChanges, opts.replace_on_changes)
    _replace(result.additionalSecretOutputs, opts.additional_secret_outputs)
    _replace(result.hideDiffs, opts.hide_diff)
    if _REPLACE_WITH:
        _replace(result.replace_with, opts.replace_with)
    _replace(result.aliasURNs, ())
    del result.aliases[:]
    result.aliases.extend(opts.aliases)
    result.version, result.provider = opts.version, opts.provider
    result.pluginDownloadURL, result.deletedWith = opts.plugin_download_url, opts.deleted_with
    result.importId = getattr(opts, "import")
    result.providers.clear()
    result.providers.update(opts.providers)
    result.pluginChecksums.clear()
    result.pluginChecksums.update(opts.plugin_checksums)
    result.deleteBeforeReplaceDefined = opts.HasField("delete_before_replace")
    result.deleteBeforeReplace = opts.delete_before_replace
    _optional(result, opts)
    return result


def _optional(result: Any, opts: Any) -> None:
    """The options with presence: set when the transformed options have them, else cleared."""
    for source, target in (
        ("protect", "protect"),
        ("retain_on_delete", "retainOnDelete"),
        ("custom_timeouts", "customTimeouts"),
        *([("replacement_trigger", "replacement_trigger")] if _REPLACEMENT_TRIGGER else []),
        ("hooks", "hooks"),
    ):
        if not opts.HasField(source):
            result.ClearField(target)
        elif source in ("protect", "retain_on_delete"):
            setattr(result, target, getattr(opts, source))
        else:
            getattr(result, target).CopyFrom(getattr(opts, source))


def _replace(field: Any, values: Iterable[str]) -> None:
    del field[:]
    field.extend(values)
