"""The streaming analysis: registrations turned into ``Analyze``/``AnalyzeStack`` requests and
sent to the pack while the program still runs (the pack session and the result model are the
gate's: :mod:`pushguard.gate.session`)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pushguard.crossguard.urn import (
    PROVIDER_TYPE_PREFIX,
    STACK_TYPE,
    package_of,
    provider_urn,
    stack_urn,
)
from pushguard.gate.analyzer import AnalyzerResource, Diagnostic, PolicyPackProcess
from pushguard.gate.result import ResourceRecord
from pushguard.gate.session import PackSession
from pushguard.policy.config_file import PolicyConfig
from pushguard.preview.project import PulumiProject
from pushguard.preview.stacks import default_provider_config


class AnalyzerRequests:
    """Turns registrations into what the engine sends the pack: ``Analyze`` gets a resource's
    checked inputs, ``AnalyzeStack`` its planned outputs; a custom resource carries its
    provider's configuration: the inputs of the explicit provider its reference names, found by
    the provider's URN (never its name: two providers may share a name under different parents),
    else the default provider's (the stack's config of its package, and for ``gcp`` the
    provider's environment variables, see
    :func:`~pushguard.preview.stacks.default_provider_config`, with ``environ``: the
    environment the providers see, default ``os.environ``). Feed registrations in order
    (providers first)."""

    def __init__(
        self,
        project: PulumiProject,
        stack: str,
        config: Mapping[str, str],
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config, self.environ = config, environ
        self.explicit: dict[str, Mapping[str, Any]] = {}
        self._prefix = f"urn:pulumi:{stack}::{project.name}::"
        self.root = AnalyzerResource(
            urn=stack_urn(project.name, stack),
            type=STACK_TYPE,
            name=f"{project.name}-{stack}",
            properties={},
        )

    def convert(self, record: ResourceRecord) -> tuple[AnalyzerResource, AnalyzerResource]:
        """``(for Analyze, for AnalyzeStack)`` of one registration."""
        package = package_of(record.type)
        if record.type.startswith(PROVIDER_TYPE_PREFIX):
            self.explicit[record.urn] = record.inputs
        provider = None
        provider_type = f"{PROVIDER_TYPE_PREFIX}{package}"
        urn = ""
        if record.custom and package != "pulumi":
            provider = self.provider_props(record.provider, package)
            # The engine names the provider resource by its URN: the explicit one's, else the
            # default provider's (``default``).
            urn = provider_urn(record.provider) or f"{self._prefix}{provider_type}::default"
        return (
            replace(
                AnalyzerResource.from_record(record, provider, provider_type=provider_type),
                provider_urn=urn,
            ),
            replace(
                AnalyzerResource.from_record(
                    record, provider, provider_type=provider_type, outputs=True
                ),
                provider_urn=urn,
            ),
        )

    def provider_props(self, reference: str, package: str) -> dict[str, Any]:
        """The configuration of the provider ``reference`` (``PROVIDER_URN::ID``) names: an
        explicit provider's inputs by its URN (``{}`` if no provider with that URN was
        registered: its configuration is not known), else, without a reference, the default
        provider of ``package``."""
        urn = provider_urn(reference)
        if urn:
            return dict(self.explicit.get(urn, {}))
        return default_provider_config(package, self.config, self.environ)


class StreamingAnalysis:
    """``Analyze`` calls made while the program still registers resources, as the engine makes
    them: a thread waits for the pack, configures it, then sends each registration as it
    arrives, so the pack works on the other core while the program runs."""

    def __init__(
        self,
        pack: PolicyPackProcess,
        requests: AnalyzerRequests,
        config: Mapping[str, PolicyConfig],
        source: str = "",
    ) -> None:
        self.pack, self.requests, self.config, self.source = pack, requests, config, source
        self.session: PackSession | None = None
        self.per_stack: list[AnalyzerResource] = [requests.root]
        self._positions: dict[str, int] = {}
        self.diagnostics: list[Diagnostic] = []
        self.error: BaseException | None = None
        self.timings: dict[str, float] = {}
        self._queue: queue.SimpleQueue[ResourceRecord | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def submit(self, record: ResourceRecord) -> None:
        """Queue one registration (called by the recording monitor)."""
        self._queue.put(record)

    def _run(self) -> None:
        ready = False
        try:
            clock = time.perf_counter()
            self.pack.connect()
            self.timings["pack_start"] = time.perf_counter() - clock
            clock = time.perf_counter()
            self.session = PackSession.open(self.pack, self.config, self.source)
            self.timings["configure"] = time.perf_counter() - clock
            ready = True
            self._send(self.requests.root)
        except BaseException as error:  # re-raised by finish() in the caller's thread
            self.error = error
        while (record := self._queue.get()) is not None:
            per_resource, per_stack = self.requests.convert(record)
            known = self._positions.get(record.urn)
            if known is not None:  # a component's outputs, registered after it
                self.per_stack[known] = per_stack
                continue
            self._positions[record.urn] = len(self.per_stack)
            self.per_stack.append(per_stack)
            if ready and self.error is None:
                try:
                    self._send(per_resource)
                except BaseException as error:
                    self.error = error

    def _send(self, resource: AnalyzerResource) -> None:
        # The engine attributes an Analyze diagnostic without a URN to the analysed resource.
        # A blocking call releases the GIL while the pack works, so the program runs meanwhile.
        self.diagnostics += [
            replace(d, urn=d.urn or resource.urn) for d in self.pack.analyze(resource)
        ]

    def stop(self) -> None:
        """End the stream and wait for the thread (every ``Analyze`` answered)."""
        self._queue.put(None)
        self._thread.join()

    def finish(self) -> list[Diagnostic]:
        """:meth:`stop`, then the diagnostics in registration order. Raises what the thread
        met (pack start, config or call errors)."""
        self.stop()
        if self.error is not None:
            raise self.error
        return self.diagnostics
