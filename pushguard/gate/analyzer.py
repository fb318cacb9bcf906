"""A client for a policy pack, started and spoken to exactly as the Pulumi CLI does.

The CLI runs a Python pack as ``python -m pulumi.policy ENGINE_ADDRESS PACK_DIR`` with the pack
folder as working directory, reads the gRPC port from the first line of its stdout, and calls the
``pulumirpc.Analyzer`` service: ``GetAnalyzerInfo``, ``Configure``, then ``Analyze`` per resource
and ``AnalyzeStack`` once (https://github.com/pulumi/pulumi/blob/master/proto/pulumi/analyzer.proto).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime import proto
from pulumi.runtime.proto import analyzer_pb2_grpc

from pushguard.crossguard.google_managed_note import GoogleManagedEntry, split
from pushguard.crossguard.not_checked import NotChecked, decode
from pushguard.crossguard.server import PARENT_PIPE_ENV
from pushguard.crossguard.urn import urn_name
from pushguard.gate.result import ResourceRecord
from pushguard.policy.config_file import (
    PolicyConfig,
    PolicyInfo,
    parse_policy_config,
    reconcile,
    reconcile_unvalidated,
)

_LEVELS = {
    "advisory": proto.ADVISORY,
    "mandatory": proto.MANDATORY,
    "remediate": proto.REMEDIATE,
    "disabled": proto.DISABLED,
}
LEVEL_NAMES: dict[int, str] = {int(value): name for name, value in _LEVELS.items()}
"""Enforcement level enum value -> its CrossGuard name."""

MAX_MESSAGE_BYTES = 400 * 1024 * 1024
"""The largest gRPC message exchanged with a pack, either way: 400 MiB. The Pulumi CLI dials
analyzers with this receive limit (``rpcutil.GrpcChannelOptions``, ``maxRPCMessageSize`` in
``sdk/go/common/util/rpcutil/serve.go``, used by ``analyzerPluginDialOptions`` in
``pkg/resource/plugin/analyzer_plugin.go``) and pulumi-policy's server receives up to the same
(``_GRPC_CHANNEL_OPTIONS`` in ``pulumi_policy/policy.py``; pushguard's pack uses it too). gRPC's
default receive limit, 4 MiB, is passed by an ``AnalyzeStack`` answer for about 8,500
subscriptions."""

CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
)
"""The client channel's options: :data:`MAX_MESSAGE_BYTES` both ways."""


class MessageTooLargeError(ValueError):
    """A request larger than the pack accepts (:data:`MAX_MESSAGE_BYTES`); ``size`` in bytes,
    ``what`` (optional) names what it carries, such as the state file. The Pulumi CLI cannot
    send it to a pack either."""

    def __init__(self, method: str, size: int, what: str = "") -> None:
        self.method, self.size = method, size
        of = f" of {what}" if what else ""
        super().__init__(
            f"the {method} request{of} is {size / 2**20:.0f} MiB, more than the "
            f"{MAX_MESSAGE_BYTES // 2**20} MiB a policy pack accepts (pulumi-policy's limit, "
            "which the Pulumi CLI shares); split the stack's state to analyse it"
        )


def policy_infos(info: Any) -> list[PolicyInfo]:
    """The policies of a ``GetAnalyzerInfo`` answer, as :mod:`pushguard.policy` describes them."""
    infos = []
    for policy in info.policies:
        schema = None
        required: tuple[str, ...] = ()
        if policy.HasField("configSchema"):
            schema = json_format.MessageToDict(policy.configSchema.properties)
            required = tuple(policy.configSchema.required)
        level = LEVEL_NAMES.get(policy.enforcementLevel, "advisory")
        infos.append(PolicyInfo(policy.name, level, schema, required))
    return infos


def initial_config(info: Any) -> dict[str, PolicyConfig]:
    """The pack's ``initialConfig`` from a ``GetAnalyzerInfo`` answer."""
    return {
        name: PolicyConfig(
            LEVEL_NAMES.get(value.enforcementLevel) if value.enforcementLevel else None,
            json_format.MessageToDict(value.properties),
        )
        for name, value in info.initialConfig.items()
    }


class PackStartError(RuntimeError):
    """The pack process exited or printed something other than a port first; ``stderr`` holds
    what it wrote there."""

    def __init__(self, message: str, stderr: str = "") -> None:
        self.stderr = stderr
        super().__init__(f"{message}\n{stderr}".rstrip())


@dataclass(frozen=True)
class AnalyzerResource:
    """One resource to analyse, in wire form: ``properties`` is a JSON-like dict that may hold
    unknown sentinels and secret envelopes; ``property_dependencies`` maps a property to URNs."""

    urn: str
    type: str
    name: str
    properties: Mapping[str, Any]
    provider: Mapping[str, Any] | None = None
    provider_type: str = "pulumi:providers:gcp"
    parent: str = ""
    dependencies: tuple[str, ...] = ()
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    provider_urn: str = ""
    """The provider resource's URN (default: a default provider of ``provider_type``)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """More ``AnalyzerResourceOptions`` (``protect``, ``ignoreChanges``,
    ``additionalSecretOutputs``, ``aliases``) besides ``parent``."""

    @classmethod
    def from_record(
        cls,
        record: ResourceRecord,
        provider: Mapping[str, Any] | None = None,
        *,
        provider_type: str = "pulumi:providers:gcp",
        outputs: bool = False,
    ) -> AnalyzerResource:
        """From a registration recorded by the mock engine: its checked inputs (what ``Analyze``
        gets) or, with ``outputs``, its planned outputs (what ``AnalyzeStack`` gets);
        ``provider`` is the provider's configuration (the mock runtime registers no default
        provider)."""
        return cls(
            urn=record.urn,
            type=record.type,
            name=record.name,
            properties=record.outputs if outputs else record.inputs,
            provider=provider,
            provider_type=provider_type,
            parent=record.parent,
            dependencies=record.dependencies,
            property_dependencies=record.property_dependencies,
        )

    def _struct(self) -> struct_pb2.Struct:
        return json_format.ParseDict(dict(self.properties), struct_pb2.Struct())

    def _provider(self) -> Any:
        if self.provider is None:
            return None
        urn = self.provider_urn or f"urn:pulumi:stack::project::{self.provider_type}::default"
        return proto.AnalyzerProviderResource(
            type=self.provider_type,
            properties=json_format.ParseDict(dict(self.provider), struct_pb2.Struct()),
            urn=urn,
            name=urn_name(urn),
        )

    def _common(self) -> dict[str, Any]:
        """The fields ``AnalyzeRequest`` and ``AnalyzerResource`` share."""
        return {
            "type": self.type,
            "properties": self._struct(),
            "urn": self.urn,
            "name": self.name,
            "options": proto.AnalyzerResourceOptions(parent=self.parent, **self.options),
            "provider": self._provider(),
        }

    def analyze_request(self) -> Any:
        """The ``AnalyzeRequest`` for this resource."""
        return proto.AnalyzeRequest(**self._common())

    def stack_resource(self) -> Any:
        """The ``AnalyzerResource`` of an ``AnalyzeStackRequest``."""
        return proto.AnalyzerResource(
            **self._common(),
            parent=self.parent,
            dependencies=list(self.dependencies),
            propertyDependencies={
                key: proto.AnalyzerPropertyDependencies(urns=list(urns))
                for key, urns in self.property_dependencies.items()
            },
        )


@dataclass(frozen=True)
class Diagnostic:
    """One ``AnalyzeDiagnostic``: policy name, enforcement level name, URN ("" for the stack)
    and message."""

    policy: str
    level: str
    urn: str
    message: str
    severity: int = 0

    @classmethod
    def from_proto(cls, diagnostic: Any) -> Diagnostic:
        """From the protobuf message."""
        return cls(
            policy=diagnostic.policyName,
            level=LEVEL_NAMES.get(diagnostic.enforcementLevel, "advisory"),
            urn=diagnostic.urn,
            message=diagnostic.message,
            severity=diagnostic.severity,
        )


def _above_stdio(fd: int) -> int:
    """``fd``, moved to a descriptor above 2 if it is 0, 1 or 2 (free because this process's
    stdin, stdout or stderr is closed): there it would be replaced by the child's standard
    streams, or take this process's output."""
    if fd > 2:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return moved


class PolicyPackProcess:
    """A running policy pack; use as a context manager.

    ``python`` is the interpreter the pack runs under (default: this one). Raises
    :class:`PackStartError` if the pack does not print a port within ``timeout`` seconds.
    """

    def __init__(self, pack_dir: Path, python: str | None = None, timeout: float = 60.0) -> None:
        self.pack_dir = Path(pack_dir).resolve()
        self.python = python or sys.executable
        self.timeout = timeout
        self.first_line = b""
        self._process: subprocess.Popen[bytes] | None = None
        self._lifeline: int | None = None
        self._channel: grpc.Channel | None = None
        self._stderr: list[bytes] = []
        self._drainer: threading.Thread | None = None
        self.stub: Any = None
        self.not_applicable: list[NotChecked] = []
        """The last ``AnalyzeStack`` answer's ``not_applicable`` entries of what was not checked,
        decoded (by policy, URN and reason, each once)."""
        self.google_managed: list[GoogleManagedEntry] = []
        """The last ``AnalyzeStack`` answer's Google-managed subscriptions, each once (the pack
        answers one entry per policy; :mod:`pushguard.crossguard.google_managed_note`)."""

    def start(self) -> None:
        """Start the process without waiting for it (so a caller can do other work while the
        pack imports); :meth:`connect` then waits for its port. Idempotent."""
        if self._process is not None:
            return
        # The CLI passes its engine address; the pack only needs it to log, which pushguard's
        # pack does not.
        # A pipe only this process writes to: pushguard's pack exits at its end-of-file, so it
        # never outlives this process however it ends (PARENT_PIPE_ENV in crossguard/server.py).
        watched, self._lifeline = (_above_stdio(fd) for fd in os.pipe())
        try:
            self._process = subprocess.Popen(
                [self.python, "-m", "pulumi.policy", "127.0.0.1:0", str(self.pack_dir)],
                cwd=self.pack_dir,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, "PYTHONUNBUFFERED": "1", PARENT_PIPE_ENV: str(watched)},
                pass_fds=(watched,),
            )
        finally:
            os.close(watched)
        os.set_inheritable(self._lifeline, False)
        assert self._process.stdout is not None and self._process.stderr is not None
        self._drainer = threading.Thread(
            target=self._drain, args=(self._process.stderr,), daemon=True
        )
        self._drainer.start()

    def __enter__(self) -> PolicyPackProcess:
        self.start()
        self.connect()
        return self

    def connect(self) -> None:
        """Wait for the started pack's port and open the channel (once; later calls return).

        Raises:
            PackStartError: the pack exited, timed out or printed something else first.
        """
        if self.stub is not None:
            return
        assert self._process is not None and self._process.stdout is not None
        line = self._read_first_line(self._process.stdout)
        self.first_line = line
        text = line.decode(errors="replace").strip()
        if not text.isdigit():
            self.close()
            raise PackStartError(
                f"the policy pack printed {text!r} before its port", self.stderr_text
            )
        self._channel = grpc.insecure_channel(f"127.0.0.1:{text}", options=CHANNEL_OPTIONS)
        grpc.channel_ready_future(self._channel).result(timeout=self.timeout)
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self._channel)

    def _read_first_line(self, stream: IO[bytes]) -> bytes:
        result: list[bytes] = []
        reader = threading.Thread(target=lambda: result.append(stream.readline()), daemon=True)
        reader.start()
        reader.join(self.timeout)
        if not result or not result[0]:
            self.close()
            if self._drainer is not None:  # all of a crashed pack's stderr, for the message
                self._drainer.join(timeout=5)
            raise PackStartError("the policy pack exited or printed no port", self.stderr_text)
        return result[0]

    def _drain(self, stream: IO[bytes]) -> None:
        for chunk in iter(lambda: stream.read(4096), b""):
            self._stderr.append(chunk)

    @property
    def stderr_text(self) -> str:
        """What the pack wrote to stderr so far."""
        return b"".join(self._stderr).decode(errors="replace")

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel and stop the process (terminate, then kill after 10 s)."""
        if self._channel is not None:
            self._channel.close()
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    # --- the Analyzer calls --------------------------------------------------------------

    def info(self) -> Any:
        """``GetAnalyzerInfo``: the pack's name and its policies."""
        return self.stub.GetAnalyzerInfo(empty_pb2.Empty())

    def configure(
        self, config: Mapping[str, Any], *, validate: bool = True, source: str = ""
    ) -> dict[str, PolicyConfig]:
        """``Configure`` with a ``policy-config.json``-shaped mapping (or parsed
        :class:`PolicyConfig` entries), reconciled as the CLI does: schema defaults, the pack's
        initial config, then ``config`` (``source`` names the file in errors). Returns the config
        sent.

        Raises:
            PolicyConfigError: ``config`` is malformed or (with ``validate``) fails the
                policies' schemas; nothing is sent then. ``validate=False`` sends it anyway, to
                test the pack's own checks.
        """
        parsed: Mapping[str, PolicyConfig] = (
            config
            if all(isinstance(value, PolicyConfig) for value in config.values())
            else parse_policy_config(config, source)
        )
        info = self.info()
        policies, initial = policy_infos(info), initial_config(info)
        if validate:
            resolved = reconcile(policies, parsed, initial, source, info.name)
        else:
            resolved = reconcile_unvalidated(policies, parsed, initial)
        policy_config = {
            name: proto.PolicyConfig(
                enforcementLevel=_LEVELS[value.level or "advisory"],
                properties=json_format.ParseDict(value.properties, struct_pb2.Struct()),
            )
            for name, value in resolved.items()
        }
        self.stub.Configure(proto.ConfigureAnalyzerRequest(policyConfig=policy_config))
        return resolved

    def analyze(self, resource: AnalyzerResource) -> list[Diagnostic]:
        """``Analyze`` one resource."""
        response = self.stub.Analyze(resource.analyze_request())
        return [Diagnostic.from_proto(d) for d in response.diagnostics]

    def analyze_stack(self, resources: Iterable[AnalyzerResource]) -> list[Diagnostic]:
        """``AnalyzeStack`` over every resource: its diagnostics (its ``not_applicable`` answers
        are kept in :attr:`not_applicable` and :attr:`google_managed`).

        Raises:
            MessageTooLargeError: the request is larger than :data:`MAX_MESSAGE_BYTES` (nothing
                is sent).
        """
        request = proto.AnalyzeStackRequest(resources=[r.stack_resource() for r in resources])
        size = request.ByteSize()
        if size > MAX_MESSAGE_BYTES:
            raise MessageTooLargeError("AnalyzeStack", size)
        response = self.stub.AnalyzeStack(request)
        entries = {decode(n.policy_name, n.reason) for n in response.not_applicable}
        not_checked, self.google_managed = split(list(entries))
        self.not_applicable = sorted(not_checked, key=lambda n: (n.policy, n.urn, n.reason))
        return [Diagnostic.from_proto(d) for d in response.diagnostics]
