"""One plugin process per test module, started from the project's virtualenv as the Python
language host starts a plugin; a fresh recording resource monitor per test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import (
    engine_pb2_grpc,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2_grpc,
)

from tests.helpers import PROJECT
from tests.plugin.harness import (
    NUMBERS,
    PluginProcess,
    RecordingEngine,
    RecordingMonitor,
    provider_stub,
    running_plugin,
    serve,
)

# The flags `pulumi up --logtostderr -v=9` passes on to every plugin, before the engine address.
ENGINE_FLAGS = ("--logtostderr", "-v=9")


@pytest.fixture(scope="module")
def engine() -> Iterator[tuple[RecordingEngine, str]]:
    servicer = RecordingEngine()
    server, port = serve((engine_pb2_grpc.add_EngineServicer_to_server, servicer))
    yield servicer, f"127.0.0.1:{port}"
    server.stop(grace=None)


@pytest.fixture(scope="module")
def plugin(
    engine: tuple[RecordingEngine, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PluginProcess]:
    """The plugin, run from a consumer's project directory (not the plugin folder)."""
    consumer = tmp_path_factory.mktemp("consumer-project")
    with running_plugin(engine[1], cwd=consumer, flags=ENGINE_FLAGS) as started:
        yield started


@pytest.fixture(scope="module")
def provider(plugin: PluginProcess) -> Iterator[provider_pb2_grpc.ResourceProviderStub]:
    """A client of the plugin, after the engine's opening calls: ``Handshake`` (the Python SDK's
    provider does not implement it; the engine then falls back to the address it passed on the
    command line), ``GetPluginInfo`` and ``Configure``."""
    channel, stub = provider_stub(plugin.address)
    try:
        stub.Handshake(provider_pb2.ProviderHandshakeRequest(engine_address="127.0.0.1:0"))
    except grpc.RpcError as error:
        assert error.code() is grpc.StatusCode.UNIMPLEMENTED, error
    stub.GetPluginInfo(empty_pb2.Empty())
    configured = stub.Configure(
        provider_pb2.ConfigureRequest(acceptSecrets=True, acceptResources=True)
    )
    assert configured.acceptSecrets and configured.acceptResources
    yield stub
    channel.close()


@pytest.fixture(scope="module")
def schema(provider: provider_pb2_grpc.ResourceProviderStub) -> dict[str, Any]:
    """The package schema the plugin serves (``GetSchema``, version 0)."""
    response = provider.GetSchema(provider_pb2.GetSchemaRequest(version=0))
    loaded: dict[str, Any] = json.loads(response.schema)
    return loaded


@pytest.fixture
def monitor(engine: tuple[RecordingEngine, str]) -> Iterator[tuple[RecordingMonitor, str]]:
    """A fresh resource monitor for one ``Construct`` (and the engine's log emptied)."""
    engine[0].logs.clear()
    servicer = RecordingMonitor("pushguard", "dev", PROJECT, NUMBERS)
    server, port = serve((resource_pb2_grpc.add_ResourceMonitorServicer_to_server, servicer))
    yield servicer, f"127.0.0.1:{port}"
    server.stop(grace=None)
