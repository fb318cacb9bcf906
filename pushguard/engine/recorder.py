"""The engine's record of one program run, kept in pushguard's process only.

Every registration the program sends is recorded here as the monitor receives it (type, name,
URN, parent, inputs after the provider's ``Check``, planned outputs, options), together with the
URNs taken (the engine refuses a URN registered twice: "Duplicate resource URN"), the program's
``Log`` messages, the stack's outputs and the failure the bootstrap reported. The gRPC server
calls in from several threads; one lock guards it all.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pushguard.gate.result import ResourceRecord, Source

FAILURE_MARK = "pushguard-program-failure\t"
"""The bootstrap's failure report starts with this (:data:`pushguard.engine.bootstrap.
FAILURE_MARK`, repeated: the bootstrap imports nothing of pushguard)."""


class DuplicateURNError(ValueError):
    """A URN registered (or read) twice: the engine's ``Duplicate resource URN``."""


@dataclass
class Recorder:
    """What the engine saw. ``on_record`` is called with each registration (and again with a
    component's record once its outputs are registered), under the lock, in arrival order."""

    on_record: Callable[[ResourceRecord], None] | None = None
    records: list[ResourceRecord] = field(default_factory=list)
    call_stacks: dict[str, list[Source]] = field(default_factory=dict)
    """A registration's program frames, outermost first (the URN's key)."""
    logs: list[tuple[str, str]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    stack_finished: bool = False
    """The stack's outputs were registered: the SDK does so when the program's function has
    returned or raised (``pulumi.runtime.stack.run_in_stack``), while registrations the program
    started may still be outstanding."""
    shut_down: bool = False
    """The SDK asked ``SignalAndWaitForShutdown``: it does so once every outstanding RPC is done
    and the program succeeded (``run_pulumi_func`` in ``pulumi/runtime/stack.py``, SDKs from
    3.204 on; ``runtime/settings.ts`` ``signalAndWaitForShutdown`` in Node.js). Only then has
    the program finished: an exit 0 before it (``os._exit(0)`` in a thread while a registration
    waits) left registrations unsent."""

    @property
    def finished(self) -> bool:
        """The stack's outputs were registered and the SDK signalled its shutdown."""
        return self.stack_finished and self.shut_down

    failure: dict[str, Any] | None = None
    engine_failure: dict[str, Any] | None = None
    """The first failure the engine itself saw (a duplicate URN, a failed transform, a callback
    target off loopback, a component's refusal when constructed), shaped as the bootstrap's
    report: it fails the run whatever the program does with the error it was given, and comes
    before anything the program reports."""
    root: str = ""
    _claimed: dict[str, Source | None] = field(default_factory=dict)
    _positions: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def claim(self, urn: str, source: Source | None) -> None:
        """Take ``urn``.

        Raises:
            DuplicateURNError: it was taken before (also kept as :attr:`engine_failure`).
        """
        with self._lock:
            if urn in self._claimed:
                # The SDK registers in parallel: which of the two arrives first varies, so the
                # error names them in the program's order and is placed at the later one.
                first, second = self._claimed[urn], source
                if first is not None and second is not None and second < first:
                    first, second = second, first
                message = (
                    f"Duplicate resource URN '{urn}'; try giving it a unique name "
                    f"(registered at {_place(first)} and again at {_place(second)})"
                )
                frames = [list(second)] if second else []
                self._engine_failure("DuplicateResourceURNError", message, frames)
                raise DuplicateURNError(message)
            self._claimed[urn] = source

    def release(self, urn: str) -> None:
        """Give ``urn`` back: a remote component's URN, which its provider registers."""
        with self._lock:
            self._claimed.pop(urn, None)

    def add(self, record: ResourceRecord, frames: list[Source] | None = None) -> None:
        """Record a registration and the program frames that made it (outermost first)."""
        with self._lock:
            self._positions[record.urn] = len(self.records)
            self.records.append(record)
            self.call_stacks[record.urn] = list(frames or [])
            if self.on_record is not None:
                self.on_record(record)

    def state_of(self, urn: str) -> dict[str, Any] | None:
        """The planned outputs of the registered resource ``urn`` (``None`` if none)."""
        with self._lock:
            index = self._positions.get(urn)
            return None if index is None else dict(self.records[index].outputs)

    def states(self) -> list[dict[str, Any]]:
        """The planned outputs of every registration so far, in order."""
        with self._lock:
            return [dict(record.outputs) for record in self.records]

    def component_outputs(self, urn: str, outputs: dict[str, Any]) -> None:
        """``RegisterResourceOutputs`` of a component: its record's outputs become these."""
        with self._lock:
            index = self._positions.get(urn)
            if index is None or self.records[index].custom:
                return
            self.records[index] = replace(self.records[index], outputs=outputs)
            if self.on_record is not None:
                self.on_record(self.records[index])

    def stack_outputs(self, outputs: dict[str, Any]) -> None:
        """The stack's outputs (the program has finished, or failed)."""
        with self._lock:
            self.outputs = outputs
            self.stack_finished = True

    def log(self, level: str, message: str) -> None:
        """A ``Log`` message; the bootstrap's failure report is kept as :attr:`failure` (the
        first one: a later one cannot replace it)."""
        with self._lock:
            if message.startswith(FAILURE_MARK):
                if self.failure is None:
                    self.failure = _parse_failure(message[len(FAILURE_MARK) :])
                return
            self.logs.append((level, message))

    def engine_error(self, kind: str, message: str, frames: list[list[Any]], **more: Any) -> None:
        """Something the engine refused or saw fail (see :attr:`engine_failure`): ``frames``
        are ``[path, line]`` of the program, innermost last; ``more``: ``component``,
        ``problems``."""
        with self._lock:
            self._engine_failure(kind, message, frames, **more)

    def _engine_failure(
        self, kind: str, message: str, frames: list[list[Any]], **more: Any
    ) -> None:
        if self.engine_failure is None:
            self.engine_failure = {"kind": kind, "message": message, "frames": frames, **more}


def _place(source: Source | None) -> str:
    """``path:line`` of a registration, or ``an unknown line``."""
    return f"{source[0]}:{source[1]}" if source else "an unknown line"


def _parse_failure(text: str) -> dict[str, Any]:
    """The bootstrap's report, or a stand-in naming it as unreadable."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        return {"kind": "Error", "message": "an unreadable failure report", "frames": []}
    return body
