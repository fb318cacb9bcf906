"""The program's process, so nothing it does can end or fake the preview.

pushguard keeps the engine's record, the policy pack and the report; the program runs in a process
of its own (:mod:`pushguard.engine.launcher` starts it) and reaches pushguard only over the
engine's gRPC services. Its stdout and stderr go to files read afterwards: they never reach the
report stream, and they are kept as the program's output.

Any way the process ends other than finishing the program (``os._exit`` with any status, a
signal, an interpreter crash, a time-out) is a :class:`ProgramEndedError`; a program that raised,
called ``sys.exit`` (any code) or was refused by ``PushSubscription`` finishes normally and
reports its :class:`~pushguard.preview.program.ProgramFailure`.

While the child runs, this process is not dumpable (Linux: ``prctl(PR_SET_DUMPABLE, 0)``, see
:func:`not_dumpable`): the child runs as the same user, and a same-user process may otherwise
open a dumpable process's descriptors through ``/proc/PID/fd`` (and ``ptrace`` it), so a program
could write a fake report to pushguard's stdout or into the report file. A non-dumpable process's
``/proc/PID`` entries belong to root, and opening them needs ``CAP_SYS_PTRACE``: a program run
with that capability (as root with full capabilities) is not kept out this way. The setting is
restored when the run ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pushguard.gate.result import ProgramOutput, ResourceRecord
from pushguard.gate.unknowns import UnknownOffline
from pushguard.preview.program import ProgramFailure

OUTPUT_LIMIT = 1 << 20
"""Bytes of the program's stdout and of its stderr kept for the report (the rest is cut)."""


PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
"""prctl(2) options (linux/prctl.h)."""


class _Dumpable:
    """The process-wide state :func:`not_dumpable` shares between nested and concurrent runs."""

    lock = threading.Lock()
    holders = 0
    before = 1


@contextlib.contextmanager
def not_dumpable() -> Iterator[bool]:
    """This process is not dumpable while the block runs (Linux ``prctl(PR_SET_DUMPABLE, 0)``),
    so a process of the same user without ``CAP_SYS_PTRACE`` can neither open its descriptors
    through ``/proc/PID/fd`` nor trace it (proc(5), ``/proc/pid/fd``; ptrace(2), "Ptrace access
    mode checking"). Nested and concurrent blocks share the setting; the last one out restores
    what it was. Yields whether the process is non-dumpable (False off Linux or if ``prctl``
    failed; the run goes on, as it did before this protection existed)."""
    if not sys.platform.startswith("linux"):
        yield False
        return
    libc = ctypes.CDLL(None, use_errno=True)
    with _Dumpable.lock:
        if _Dumpable.holders == 0:
            _Dumpable.before = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
            libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        _Dumpable.holders += 1
        protected = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    try:
        yield protected
    finally:
        with _Dumpable.lock:
            _Dumpable.holders -= 1
            if _Dumpable.holders == 0 and _Dumpable.before > 0:
                libc.prctl(PR_SET_DUMPABLE, _Dumpable.before, 0, 0, 0)


class ProgramEndedError(RuntimeError):
    """The child ended before the program finished: the message says how (exit status, signal,
    time-out) and ``output`` holds what the program printed."""

    def __init__(self, message: str, output: ProgramOutput) -> None:
        self.output = output
        super().__init__(message)


@dataclass
class IsolatedRun:
    """What the engine recorded: the registrations in the order they arrived, the program's
    ``pulumi.log`` messages, its stack outputs (wire form), the planner's notes
    (``placeholder_projects``, ``echoed_calls``, ``unknown_calls``), the failure if the program
    raised, and its output."""

    records: list[ResourceRecord] = field(default_factory=list)
    call_stacks: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    """URN -> the program's frames (``(path, line)``, outermost first) when it was constructed."""
    logs: list[tuple[str, str]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    placeholder_projects: list[str] = field(default_factory=list)
    echoed_calls: list[str] = field(default_factory=list)
    unknown_calls: list[str] = field(default_factory=list)
    uncarried_outputs: dict[str, list[str]] = field(default_factory=dict)
    """Function token -> the wire names of its boolean and number outputs the engine answered
    absent, a plain value being unable to carry them as unknown (:mod:`pushguard.engine`)."""
    absent_outputs: dict[str, list[str]] = field(default_factory=dict)
    """Function token -> its other outputs the engine answered absent (maps, types not
    resolved)."""
    wholly_unknown_calls: list[str] = field(default_factory=list)
    """The function tokens no installed SDK defines, answered wholly unknown (the engine)."""
    failure: ProgramFailure | None = None
    output: ProgramOutput = field(default_factory=ProgramOutput)
    runtime: str = ""
    """The interpreter that ran the program and how it was chosen
    (:class:`pushguard.engine.runtime.ProgramRuntime`'s ``described``)."""
    unknown_reads: list[UnknownOffline] = field(default_factory=list)
    """Reads the real preview would answer and this run left unknown (a stack reference without
    given outputs, ``Resource.get``), with their lines (:mod:`pushguard.engine.reads`)."""


def _read_output(handle: Any) -> tuple[str, bool]:
    handle.seek(0)
    data = handle.read(OUTPUT_LIMIT + 1)
    return data[:OUTPUT_LIMIT].decode("utf-8", errors="replace"), len(data) > OUTPUT_LIMIT


def _how_it_ended(returncode: int, timed_out: bool, timeout: float) -> str:
    if timed_out:
        return f"the program did not finish within {timeout:g} s and was stopped"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the program was killed by {name} before it finished"
    return (
        f"the program's process exited with status {returncode} before the program finished "
        "(os._exit or a crash); nothing it registered can be vouched for"
    )


class _Child:
    """The program's process (``argv`` in ``cwd``), in a session of its own so that a time-out,
    or the end of the preview, stops it and whatever it started (``os.killpg``); its stdin is
    closed at once."""

    def __init__(
        self,
        stdout: Any,
        stderr: Any,
        timeout: float,
        *,
        environment: Mapping[str, str],
        argv: list[str],
        cwd: str | os.PathLike[str],
    ) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            start_new_session=True,
            env=environment,
        )
        self.expired = False
        self._timer = threading.Timer(timeout, self._expire)

    def _expire(self) -> None:
        self.expired = True
        self._kill_group()

    def stop_group(self) -> None:
        """Stop whatever is left of the child's session (processes the program started)."""
        self._kill_group()

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
            os.killpg(self.process.pid, signal.SIGKILL)

    def __enter__(self) -> _Child:
        self._timer.start()
        return self

    def wait(self) -> int:
        """The child's exit status (negative: the signal that ended it)."""
        return self.process.wait()

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        self._kill_group()  # the program's leftovers (background processes) too
        self.process.wait()


def program_environment(
    config: Mapping[str, str], secret_keys: Iterable[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The program's environment as the Pulumi CLI's Python language host builds it: this
    process's (``environ``, default ``os.environ``) with ``PULUMI_CONFIG`` replaced by the
    stack's config (a JSON object of ``namespace:key`` to value) when the stack has any, and
    ``PULUMI_CONFIG_SECRET_KEYS`` by its secret keys always, so a ``PULUMI_CONFIG`` left in a CI
    job's environment is read here exactly when the CLI would let the program read it
    (``sdk/python/cmd/pulumi-language-python/main.go``: ``constructConfig``,
    ``constructConfigSecretKeys`` and the environment of ``execPython``)."""
    environment = dict(os.environ if environ is None else environ)
    if config:
        environment["PULUMI_CONFIG"] = json.dumps(dict(config))
    environment["PULUMI_CONFIG_SECRET_KEYS"] = json.dumps(sorted(secret_keys))
    return environment
