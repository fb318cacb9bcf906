"""Shared helpers: running programs under the mock runtime with pushguard's GCP mocks."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_gcp as gcp

from pushguard.preview.mocks import GcpMocks
from tests.mock_runtime.engine import ProgramRun, run_program, run_program_capturing

PROJECT = "acme-orders"
NUMBER = "123456789012"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""Pulumi's wire sentinel for an unknown value."""


def mocks() -> GcpMocks:
    return GcpMocks(
        project=PROJECT, project_numbers={PROJECT: NUMBER, "acme-shared": "555555555555"}
    )


def run(program: Callable[[], Any], *, preview: bool = True, **config: str) -> ProgramRun:
    return run_program(program, mocks(), config={"gcp:project": PROJECT, **config}, preview=preview)


def run_failing(program: Callable[[], Any], **config: str) -> tuple[ProgramRun, BaseException]:
    graph, error = run_program_capturing(
        program, mocks(), config={"gcp:project": PROJECT, **config}
    )
    assert error is not None, "the program was expected to fail"
    return graph, error


def cause(error: BaseException | None, kind: type[BaseException]) -> BaseException | None:
    """The first exception of ``kind`` in ``error``'s cause chain (Pulumi wraps errors raised while
    it resolves a resource's inputs in its own ``ValueError``)."""
    while error is not None and not isinstance(error, kind):
        error = error.__cause__ or error.__context__
    return error


def unknown_output() -> pulumi.Output[Any]:
    """An Output whose value is unknown, as at preview before a resource exists."""
    loop = asyncio.get_event_loop()
    value, known = loop.create_future(), loop.create_future()
    value.set_result(None)
    known.set_result(False)
    return pulumi.Output(set(), value, known)


def short(urn: str) -> str:
    """The resource name at the end of a URN."""
    return urn.rsplit("::", 1)[-1]


@functools.cache
def secret_unknown_as_sent() -> Any:
    """What this SDK sends the engine for an unknown secret ``Output`` among a resource's inputs
    (as the mock runtime records it): a secret envelope around the unknown sentinel with pulumi
    3.272.0 (``serialize_property`` in ``pulumi/runtime/rpc.py``: "Preserve the secret marker
    even when the value is unknown"); the bare sentinel with older SDKs, which drop the marker
    (at v3.204.0, and still at commit 1b5949891b3c of pulumi/pulumi, ``if not is_known: return
    UNKNOWN`` comes before the secret check)."""

    def program() -> None:
        gcp.pubsub.Topic("probe", labels={"k": pulumi.Output.secret(pulumi.output.UNKNOWN)})

    return run(program).one("gcp:pubsub/topic:Topic").inputs["labels"]["k"]
