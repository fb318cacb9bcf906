"""What ``pulumi package add`` does with ``components/``, without the Pulumi CLI: a copy of the
repository as a clone has it, a new virtualenv in the plugin folder (``venv``, the Python language
host's default for plugins), ``pip install -r requirements.txt`` run from the plugin folder (as
``InstallDependencies`` in ``sdk/python/toolchain/pip.go`` runs it), then the plugin started from
that virtualenv serves its schema and constructs the component.

It downloads pulumi, pulumi-gcp and the rest from the package index (about 30 s on a warm cache,
more on a cold one), as the pack-build test does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from pulumi.runtime.proto import engine_pb2_grpc, provider_pb2, resource_pb2_grpc

from tests.helpers import PROJECT
from tests.plugin.harness import (
    NUMBERS,
    ROOT,
    RecordingEngine,
    RecordingMonitor,
    construct_request,
    provider_stub,
    running_plugin,
    serve,
)

# What a clone at a tag does not have: local virtualenvs, caches, build output.
NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git", ".venv", "venv", "__pycache__", "*.egg-info", "build", "dist", ".*_cache", ".hypothesis"
)


def pip(python: Path, *args: str, cwd: Path) -> None:
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *args], cwd=cwd, check=True, timeout=900
    )


def test_requirements_install_the_plugin_from_the_repository(tmp_path: Path) -> None:
    clone = tmp_path / "pushguard"
    shutil.copytree(ROOT, clone, ignore=NOT_IN_A_CLONE)
    plugin_dir = clone / "components"
    venv = plugin_dir / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    pip(python, "--upgrade", "pip", "setuptools", "wheel", cwd=plugin_dir)
    pip(python, "-r", "requirements.txt", cwd=plugin_dir)

    site = subprocess.run(
        [str(python), "-c", "import pushguard, pulumi; print(pushguard.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,  # not the repository, whose pushguard/ would shadow the installed one
    ).stdout
    assert site.startswith(str(venv)), "pushguard must be installed into the plugin's virtualenv"
    for generic in ("components", "policies", "stacks", "tests"):
        assert not list(venv.glob(f"lib/python*/site-packages/{generic}"))

    engine = RecordingEngine()
    engine_server, engine_port = serve((engine_pb2_grpc.add_EngineServicer_to_server, engine))
    monitor = RecordingMonitor("pushguard", "dev", PROJECT, NUMBERS)
    monitor_server, monitor_port = serve(
        (resource_pb2_grpc.add_ResourceMonitorServicer_to_server, monitor)
    )
    try:
        with running_plugin(
            f"127.0.0.1:{engine_port}", cwd=tmp_path, python=str(python), plugin_dir=plugin_dir
        ) as plugin:
            channel, stub = provider_stub(plugin.address)
            schema = json.loads(stub.GetSchema(provider_pb2.GetSchemaRequest(version=0)).schema)
            assert "pushguard:index:PushSubscription" in schema["resources"]
            inputs = {
                "topic": "orders",
                "pushEndpoint": "https://hooks.example.com/push",
                "target": {"kind": "external"},
            }
            request = construct_request(
                monitor,
                f"127.0.0.1:{monitor_port}",
                "orders",
                inputs,
                config={"gcp:project": PROJECT},
            )
            stub.Construct(request, timeout=60)
            channel.close()
        assert "gcp:pubsub/subscription:Subscription" in {r.type for r in monitor.registrations}
    finally:
        engine_server.stop(grace=None)
        monitor_server.stop(grace=None)
