"""Driving the ``components/`` plugin over the provider gRPC protocol, as the Pulumi engine does.

* :func:`running_plugin` starts the plugin folder the way Pulumi's Python language host runs a
  plugin (``RunPlugin`` in ``sdk/python/cmd/pulumi-language-python/main.go``: the virtualenv's
  ``python <plugin folder> <engine address> [flags]``, working directory the consumer's project),
  reads the port the provider prints as its first stdout line, and stops the plugin's whole
  process group (it runs in a session of its own) when done, with a time-out.
* :class:`RecordingMonitor` is the engine's ``ResourceMonitor`` that a ``Construct`` request
  points the provider at: it records every ``RegisterResource`` (type, name, parent, inputs,
  dependencies), answers with a URN as the engine forms it and outputs the Google Cloud provider
  would plan, answers ``gcp:organizations/getProject`` and keeps ``RegisterResourceOutputs``.
* :class:`RecordingEngine` is the engine's ``Engine`` service, for ``Log`` (``pulumi.log``).

Only 127.0.0.1 is ever used.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
)

from pushguard.engine.monitor import INVOKE_RESPONSE
from pushguard.preview.mocks import GET_PROJECT, GcpMocks
from pushguard.rules.accounts import service_account_email
from tests.helpers import NUMBER, PROJECT

ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = ROOT / "components"
STACK_TYPE = "pulumi:pulumi:Stack"
NUMBERS = {PROJECT: NUMBER, "acme-shared": "555555555555"}
"""Project numbers ``getProject`` answers with: those of the mocks in ``tests/helpers.py``."""
START_TIMEOUT = 180.0  # the plugin imports pulumi and pulumi-gcp: slow on a loaded machine
STOP_TIMEOUT = 10.0

# The features a current engine reports to ``SupportsFeature`` that this monitor implements; the
# callback-based ones (transforms, hooks) and package parameterization are left out.
FEATURES = frozenset({"secrets", "resourceReferences", "outputValues", "deletedWith", "aliasSpecs"})
PUBSUB_COLLECTIONS = {
    "gcp:pubsub/topic:Topic": "topics",
    "gcp:pubsub/subscription:Subscription": "subscriptions",
}


@dataclass
class PluginProcess:
    """A started plugin: its process (leader of its own process group), the port it serves on,
    and what it wrote to stderr so far (drained by a thread, so the pipe never fills)."""

    process: subprocess.Popen[bytes]
    port: int
    stderr: list[bytes] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stderr_text(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")


def _drain(stream: BinaryIO, sink: list[bytes], lines: queue.Queue[bytes] | None) -> None:
    for line in iter(stream.readline, b""):
        sink.append(line)
        if lines is not None:
            lines.put(line)


def stop_plugin(plugin: PluginProcess, timeout: float = STOP_TIMEOUT) -> int:
    """Stop the plugin's process group: SIGTERM, then SIGKILL if it has not exited in ``timeout``
    seconds. Returns the exit status."""
    group = plugin.process.pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    try:
        return plugin.process.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
        return plugin.process.wait(timeout)


@contextlib.contextmanager
def running_plugin(
    engine_address: str,
    *,
    cwd: Path,
    python: str = sys.executable,
    plugin_dir: Path = COMPONENTS,
    flags: Sequence[str] = (),
    timeout: float = START_TIMEOUT,
) -> Iterator[PluginProcess]:
    """Run ``plugin_dir`` as the Python language host runs a plugin and yield it once it has
    printed its port; stop its process group on exit.

    The command line is the engine's (``buildPluginArguments`` in ``pkg/resource/plugin``): the
    logging ``flags`` it passes on (``--logtostderr``, ``-v=N``), then the engine address.

    Raises:
        AssertionError: the plugin exited, or printed no port, within ``timeout`` seconds (with
            its stderr).
    """
    virtualenv = Path(python).parent.parent
    env = {**os.environ, "VIRTUAL_ENV": str(virtualenv)}
    env["PATH"] = f"{virtualenv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONHOME", None)
    env.pop("PYTHONPATH", None)  # the plugin sees only its virtualenv, never this test run
    process = subprocess.Popen(
        [python, str(plugin_dir), *flags, engine_address],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    lines: queue.Queue[bytes] = queue.Queue()
    stdout: list[bytes] = []
    plugin = PluginProcess(process=process, port=0)
    for stream, sink, sink_lines in (
        (process.stdout, stdout, lines),
        (process.stderr, plugin.stderr, None),
    ):
        threading.Thread(target=_drain, args=(stream, sink, sink_lines), daemon=True).start()
    try:
        try:
            first = lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"the plugin printed no port in {timeout:.0f} s (exit status "
                f"{process.poll()}):\n{plugin.stderr_text()}"
            ) from None
        assert first.strip().isdigit(), f"first stdout line is not a port: {first!r}"
        plugin.port = int(first)
        yield plugin
    finally:
        stop_plugin(plugin)


def serve(*servicers: tuple[Any, Any]) -> tuple[grpc.Server, int]:
    """A gRPC server on 127.0.0.1 (port chosen by the kernel) with ``(add_function, servicer)``
    pairs registered, started."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    for add, servicer in servicers:
        add(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


def provider_stub(address: str) -> tuple[grpc.Channel, provider_pb2_grpc.ResourceProviderStub]:
    channel = grpc.insecure_channel(address)
    grpc.channel_ready_future(channel).result(timeout=START_TIMEOUT)
    return channel, provider_pb2_grpc.ResourceProviderStub(channel)


def to_struct(values: Mapping[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(dict(values))
    return struct


@dataclass(frozen=True)
class Registration:
    """One ``RegisterResource`` request as the monitor saw it; ``inputs`` as JSON (camelCase)."""

    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    inputs: Mapping[str, Any]
    dependencies: frozenset[str]


class RecordingEngine(engine_pb2_grpc.EngineServicer):
    """The engine's ``Engine`` service: keeps ``Log`` messages as ``(severity name, message)``."""

    def __init__(self) -> None:
        self.logs: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def Log(self, request: Any, context: Any) -> empty_pb2.Empty:  # noqa: N802 - gRPC name
        with self._lock:
            self.logs.append((engine_pb2.LogSeverity.Name(request.severity), request.message))
        return empty_pb2.Empty()


class RecordingMonitor(resource_pb2_grpc.ResourceMonitorServicer):
    """The engine's ``ResourceMonitor`` for one deployment (``project``/``stack``), not a preview.

    Outputs of custom resources are their inputs after the provider's ``Check`` (auto-names, as
    :meth:`GcpMocks.check`) and, as the Google Cloud provider computes them: a service account's
    ``email``/``name``/``member`` (ID its ``name``), a topic's or subscription's
    ``projects/P/topics|subscriptions/NAME`` ID. ``getProject`` answers from ``numbers``.
    ``GetDeploymentInfo`` is left unimplemented, so the SDK probes ``SupportsFeature`` as it does
    with an older engine.
    """

    def __init__(self, project: str, stack: str, default_project: str, numbers: Mapping[str, str]):
        self.project, self.stack = project, stack
        self.default_project = default_project
        self.numbers = dict(numbers)
        self.registrations: list[Registration] = []
        self.invokes: list[tuple[str, dict[str, Any]]] = []
        self.outputs: dict[str, dict[str, Any]] = {}
        self._chains: dict[str, str] = {}
        self._lock = threading.Lock()

    @property
    def stack_urn(self) -> str:
        return self.urn("", STACK_TYPE, f"{self.project}-{self.stack}")

    def urn(self, parent: str, type_: str, name: str) -> str:
        """``urn:pulumi:STACK::PROJECT::TYPES::NAME``; TYPES is the parent's type chain (without
        the root stack's type) and the type, ``$``-separated."""
        chain = self._chains.get(parent)
        qualified = f"{chain}${type_}" if chain else type_
        urn = f"urn:pulumi:{self.stack}::{self.project}::{qualified}::{name}"
        if type_ != STACK_TYPE:
            self._chains[urn] = qualified
        return urn

    def GetDeploymentInfo(self, request: Any, context: Any) -> Any:  # noqa: N802
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "an engine from before GetDeploymentInfo")

    def SupportsFeature(self, request: Any, context: Any) -> Any:  # noqa: N802
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id in FEATURES)

    def RegisterResource(self, request: Any, context: Any) -> Any:  # noqa: N802
        inputs = json_format.MessageToDict(request.object)
        with self._lock:
            urn = self.urn(request.parent, request.type, request.name)
            self.registrations.append(
                Registration(
                    urn=urn,
                    type=request.type,
                    name=request.name,
                    parent=request.parent,
                    custom=request.custom,
                    inputs=inputs,
                    dependencies=frozenset(request.dependencies),
                )
            )
        ident, outputs = (
            self._plan(request.type, request.name, inputs) if request.custom else ("", {})
        )
        return resource_pb2.RegisterResourceResponse(urn=urn, id=ident, object=to_struct(outputs))

    def _plan(self, type_: str, name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        state = GcpMocks.check(type_, name, inputs)
        project = str(state.get("project") or self.default_project)
        if type_ == "gcp:serviceaccount/account:Account":
            email = service_account_email(str(state["accountId"]), project)
            path = f"projects/{project}/serviceAccounts/{email}"
            state |= {"email": email, "name": path, "member": f"serviceAccount:{email}"}
            return path, state
        collection = PUBSUB_COLLECTIONS.get(type_)
        if collection:
            return f"projects/{project}/{collection}/{state['name']}", state
        return f"{name}-id", state

    def Invoke(self, request: Any, context: Any) -> Any:  # noqa: N802
        args = json_format.MessageToDict(request.args)
        with self._lock:
            self.invokes.append((request.tok, args))
        if request.tok != GET_PROJECT:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"no function {request.tok} here")
        project = str(args.get("projectId") or self.default_project)
        answer = {"projectId": project, "number": self.numbers[project], "name": project}
        return INVOKE_RESPONSE(**{"return": to_struct(answer)})  # the SDK's own message

    def RegisterResourceOutputs(self, request: Any, context: Any) -> empty_pb2.Empty:  # noqa: N802
        with self._lock:
            self.outputs[request.urn] = json_format.MessageToDict(request.outputs)
        return empty_pb2.Empty()


def construct_request(
    monitor: RecordingMonitor,
    monitor_address: str,
    name: str,
    inputs: Mapping[str, Any],
    *,
    config: Mapping[str, str],
    input_dependencies: Mapping[str, Sequence[str]] | None = None,
    type_token: str = "pushguard:index:PushSubscription",
) -> provider_pb2.ConstructRequest:
    """A ``Construct`` of ``type_token`` (``PushSubscription`` by default) as the engine sends it
    for a program's ``new PushSubscription(name, inputs)``: parent the stack, not a preview."""
    return provider_pb2.ConstructRequest(
        project=monitor.project,
        stack=monitor.stack,
        organization="organization",
        config=dict(config),
        dryRun=False,
        parallel=4,
        monitorEndpoint=monitor_address,
        type=type_token,
        name=name,
        parent=monitor.stack_urn,
        inputs=to_struct(inputs),
        inputDependencies={
            key: provider_pb2.ConstructRequest.PropertyDependencies(urns=list(urns))
            for key, urns in (input_dependencies or {}).items()
        },
        accepts_output_values=True,
    )
