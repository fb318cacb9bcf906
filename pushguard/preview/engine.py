"""Running a Pulumi program under the mock runtime and recording the resource graph it declares.

:class:`RecordingMonitor` sees every ``RegisterResource`` request as the Pulumi engine would:
type, name, parent, provider, wire-form inputs (after the provider's ``Check`` when the mocks
have one), the planned outputs, dependencies, property dependencies, the resource options that
change how the engine plans (``replaceOnChanges``, ``deleteBeforeReplace``) and the source
position of the constructor call (the SDK sends it as ``sourcePosition``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await


@dataclass(frozen=True)
class ResourceRecord:
    """One registered resource as the engine saw it.

    ``inputs`` and ``outputs`` are the wire form (camelCase keys, unknown values as Pulumi's
    unknown sentinel, secrets as ``{"4dabf18193072939515e22adb298388d":
    "1b47061264138c4ac30d75fd1eb44270", ...}`` envelopes); ``dependencies`` are URNs;
    ``source`` is the file path and line of the constructor call, when the SDK sent one.
    """

    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    provider: str
    inputs: Mapping[str, Any]
    dependencies: tuple[str, ...]
    property_dependencies: Mapping[str, tuple[str, ...]]
    replace_on_changes: tuple[str, ...]
    delete_before_replace: bool
    outputs: Mapping[str, Any] = field(default_factory=dict)
    source: tuple[str, int] | None = None


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """A mock resource monitor that keeps every registration in :attr:`records`, in order, and
    hands each to ``on_record`` as it happens (as the engine hands resources to analyzers)."""

    def __init__(
        self,
        mocks: pulumi.runtime.Mocks,
        on_record: Callable[[ResourceRecord], None] | None = None,
    ) -> None:
        super().__init__(mocks)
        self.records: list[ResourceRecord] = []
        self.on_record = on_record

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """Record the request, then answer as the mock monitor does."""
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type != "pulumi:pulumi:Stack":
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
                )
            )
            if self.on_record is not None:
                self.on_record(self.records[-1])
        return response


def _source(request: Any) -> tuple[str, int] | None:
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
    logs = _LogCollector()
    logger = logging.getLogger("pushguard.preview.program")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(logs)
    pulumi.runtime.set_mocks(
        mocks, project=project, stack=stack, preview=preview, monitor=monitor, logger=logger
    )
    error: BaseException | None = None
    try:
        _sync_await(run_pulumi_func(program))
    except (Exception, SystemExit) as exc:
        error = exc
    finally:
        logger.removeHandler(logs)
    return ProgramRun(records=list(monitor.records), logs=logs.entries), error


class _LogCollector(logging.Handler):
    """Keeps what the program logged through ``pulumi.log`` at info level and above (the mock
    engine's logger; debug messages are the SDK's own tracing)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.entries: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.entries.append((record.levelname.lower(), record.getMessage()))
