"""The ``Engine`` gRPC service the program's SDK logs to, as the CLI's host server answers it
(``hostServer`` in ``pkg/host/host_server.go`` of pulumi/pulumi, commit 1b5949891b3c):

- ``Log``: a message at a severity (debug, info, warning, error); pushguard keeps info and above
  as ``(level, message)`` for the report (the debug level is the SDK's own tracing), and the
  bootstrap's failure report as the run's failure (:meth:`~pushguard.engine.recorder.
  Recorder.log`);
- ``GetRootResource`` / ``SetRootResource``: the URN of the root (stack) resource, which the SDK
  sets once it registered the stack and reads as the default parent;
- ``RequirePulumiVersion``: the CLI checks its own version against the range; offline there is
  no CLI, so any range is accepted.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import empty_pb2
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc

from pushguard.engine.recorder import Recorder

_LEVELS = {
    engine_pb2.INFO: "info",
    engine_pb2.WARNING: "warning",
    engine_pb2.ERROR: "error",
}


class Host(engine_pb2_grpc.EngineServicer):
    """The ``Engine`` service of one run, recording into ``recorder``."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def Log(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Keep an info, warning or error message (a failure report as the failure)."""
        level = _LEVELS.get(request.severity)
        if level is not None:
            self.recorder.log(level, request.message)
        return empty_pb2.Empty()

    def GetRootResource(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """The root resource's URN (``""`` before it is set)."""
        return engine_pb2.GetRootResourceResponse(urn=self.recorder.root)

    def SetRootResource(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Set the root resource's URN."""
        self.recorder.root = request.urn
        return engine_pb2.SetRootResourceResponse()

    def RequirePulumiVersion(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        """Accepted: there is no CLI version to check offline."""
        return engine_pb2.RequirePulumiVersionResponse()
