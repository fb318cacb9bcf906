"""Running a team's program in a child process, so nothing it does can end or fake the preview.

The parent keeps the policy pack and the report; the child (:mod:`pushguard.preview.child`) runs the
program under the mock runtime and streams each registration back over a pipe of its own. The
program's stdout and stderr (file descriptors 1 and 2 of the child) go to files the parent reads
afterwards: they never reach the report stream, and they are kept as the program's output.

Any way the child ends other than finishing the program and saying so (``os._exit`` with any
status, a signal, an interpreter crash, a time-out) is a :class:`ProgramEndedError`; a program that
raised, called ``sys.exit`` (any code) or was refused by ``PushSubscription`` finishes normally
and reports its :class:`~pushguard.preview.program.ProgramFailure`.

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
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pushguard.gate.result import ProgramOutput, ResourceRecord
from pushguard.gate.unknowns import UnknownOffline
from pushguard.preview.limits import DEFAULT_TIMEOUT
from pushguard.preview.program import ProgramFailure
from pushguard.preview.project import PulumiProject

DRAIN_SECONDS = 10.0
"""Seconds to wait, once the child has exited and its session was stopped, for the end of its
messages."""

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
    """What the child reported: the registrations in the order they arrived, the program's
    ``pulumi.log`` messages, its stack outputs (wire form), the mock engine's notes
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
    failure: ProgramFailure | None = None
    output: ProgramOutput = field(default_factory=ProgramOutput)
    runtime: str = ""
    """The interpreter that ran the program and how it was chosen, when it was the program's
    own (:mod:`pushguard.engine`); ``""`` for pushguard's child runner."""
    unknown_reads: list[UnknownOffline] = field(default_factory=list)
    """Reads the real preview would answer and this run left unknown (a stack reference without
    given outputs, ``Resource.get``), with their lines (:mod:`pushguard.engine.reads`)."""


def _record(body: Mapping[str, Any]) -> ResourceRecord:
    return ResourceRecord(
        urn=body["urn"],
        type=body["type"],
        name=body["name"],
        parent=body["parent"],
        custom=body["custom"],
        provider=body["provider"],
        inputs=body["inputs"],
        dependencies=tuple(body["dependencies"]),
        property_dependencies={k: tuple(v) for k, v in body["property_dependencies"].items()},
        replace_on_changes=tuple(body["replace_on_changes"]),
        delete_before_replace=body["delete_before_replace"],
        protect=bool(body.get("protect", False)),
        ignore_changes=tuple(body.get("ignore_changes", ())),
        version=str(body.get("version", "")),
        outputs=body["outputs"],
        source=(str(body["source"][0]), int(body["source"][1])) if body["source"] else None,
        import_id=str(body.get("import_id", "")),
    )


def _failure(body: Mapping[str, Any] | None) -> ProgramFailure | None:
    if body is None:
        return None
    problems = tuple((str(f), str(m)) for f, m in body.get("problems", ()))
    return ProgramFailure(**{**body, "problems": problems})


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


class _Reader:
    """Reads the child's messages into ``run``; lines without the nonce are ignored (the
    program could write to the pipe, but cannot know the nonce)."""

    def __init__(
        self, nonce: str, run: IsolatedRun, on_record: Callable[[ResourceRecord], None] | None
    ) -> None:
        self.nonce, self.run, self.on_record = nonce, run, on_record
        self._positions: dict[str, int] = {}
        self.done = False
        self.forged = False
        self.crash = ""

    def read_all(self, fd: int) -> None:
        """Read every message until the pipe's end: registrations after an end-of-program
        message are still taken (a program that forges one cannot hide what it registers
        next), and a second end-of-program message marks the run as tampered with."""
        with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as channel:
            for line in channel:
                self.line(line)

    def line(self, line: str) -> None:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return
        if not isinstance(message, dict) or message.get("nonce") != self.nonce:
            return
        kind, body = message.get("kind"), message.get("body")
        if kind == "record" and isinstance(body, dict):
            record = _record(body)
            known = self._positions.get(record.urn)
            if known is not None:  # a component's registered outputs (RecordingMonitor)
                self.run.records[known] = record
                if self.on_record is not None:
                    self.on_record(record)
                return
            self._positions[record.urn] = len(self.run.records)
            self.run.records.append(record)
            frames = body.get("call_stack") or []
            self.run.call_stacks[record.urn] = [(str(path), int(line)) for path, line in frames]
            if self.on_record is not None:
                self.on_record(record)
        elif kind == "done" and isinstance(body, dict):
            if self.done:
                self.forged = True
            self.run.logs = [(str(level), str(text)) for level, text in body["logs"]]
            self.run.outputs = body.get("outputs") or {}
            self.run.placeholder_projects = body["placeholder_projects"]
            self.run.echoed_calls = body["echoed_calls"]
            self.run.unknown_calls = body["unknown_calls"]
            self.run.failure = _failure(body["failure"])
            self.done = True
        elif kind == "crash":
            self.crash = str(body)


def run_isolated(
    project: PulumiProject,
    stack: str,
    *,
    config: Mapping[str, str],
    secret_keys: Iterable[str],
    mocks: Mapping[str, Any],
    on_record: Callable[[ResourceRecord], None] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> IsolatedRun:
    """Run ``project``'s program for ``stack`` in a child process; ``on_record`` sees each
    registration as it arrives (in this thread). ``mocks`` are :class:`GcpMocks` arguments
    (``project``, ``region``, ``project_numbers``); ``timeout`` is in seconds.

    Returns the run, with ``failure`` set when the program raised or exited through
    ``sys.exit``.

    Raises:
        ProgramEndedError: the child ended any other way before the program finished.
    """
    nonce = secrets.token_hex(16)
    read_fd, write_fd = os.pipe()
    job = {
        "nonce": nonce,
        "channel": write_fd,
        "project_root": str(project.root),
        "stack": stack,
        "config": dict(config),
        "secret_keys": sorted(secret_keys),
        "mocks": dict(mocks),
    }
    run = IsolatedRun()
    reader = _Reader(nonce, run, on_record)
    with (
        not_dumpable(),
        tempfile.TemporaryFile() as stdout,
        tempfile.TemporaryFile() as stderr,
    ):
        environment = program_environment(config, secret_keys)
        with _Child(project, write_fd, stdout, stderr, timeout, environment=environment) as child:
            listener = threading.Thread(target=reader.read_all, args=(read_fd,), daemon=True)
            listener.start()
            child.send(json.dumps(job).encode())
            returncode = child.wait()
            # Every message the child wrote is in the pipe; what the program left behind (a
            # background process holding the pipe) is stopped, so the listener reaches its end.
            child.stop_group()
            listener.join(DRAIN_SECONDS)
        out, cut_out = _read_output(stdout)
        err, cut_err = _read_output(stderr)
    run.output = ProgramOutput(out, err, cut_out or cut_err)
    _check_ending(
        reader,
        channel_held=listener.is_alive(),
        returncode=returncode,
        expired=child.expired,
        timeout=timeout,
        output=run.output,
    )
    return run


def _check_ending(
    reader: _Reader,
    *,
    channel_held: bool,
    returncode: int,
    expired: bool,
    timeout: float,
    output: ProgramOutput,
) -> None:
    """Raise :class:`ProgramEndedError` unless the program finished normally: its channel closed
    (no process it started still holds it), the runner did not crash, no second end-of-program
    message was forged, and the child exited 0 after its done message."""
    if channel_held:
        raise ProgramEndedError(
            "a process the program started (in a session of its own) kept pushguard's channel "
            "open after the program ended",
            output,
        )
    if reader.crash:
        raise ProgramEndedError(f"pushguard's program runner failed:\n{reader.crash}", output)
    if reader.forged:
        raise ProgramEndedError(
            "the program wrote to pushguard's own channel (a second end-of-program message): "
            "its results cannot be vouched for",
            output,
        )
    if not reader.done or returncode != 0:
        raise ProgramEndedError(_how_it_ended(returncode, expired, timeout), output)


class _Child:
    """The child process, in a session of its own so that a time-out, or the end of the
    preview, stops it and whatever it started (``os.killpg``); ``write_fd`` is passed to it and
    closed here. ``argv`` and ``cwd`` default to pushguard's program runner in the project root
    (:mod:`pushguard.preview.child`); the engine (:mod:`pushguard.engine.launcher`) starts the
    program's own interpreter instead, with no ``write_fd`` (``-1``)."""

    def __init__(
        self,
        project: PulumiProject,
        write_fd: int,
        stdout: Any,
        stderr: Any,
        timeout: float,
        *,
        environment: Mapping[str, str] | None = None,
        argv: list[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        try:
            self.process = subprocess.Popen(
                # -P: the working directory (the project root) is not put on sys.path before
                # pushguard is imported, so a folder of the team's named `pushguard` cannot stand
                # in for it; the program's own folder is put first once pushguard is loaded.
                argv or [sys.executable, "-P", "-m", "pushguard.preview.child"],
                stdin=subprocess.PIPE,
                stdout=stdout,
                stderr=stderr,
                pass_fds=(write_fd,) if write_fd >= 0 else (),
                cwd=cwd or project.root,
                start_new_session=True,
                env=environment,
            )
        finally:
            if write_fd >= 0:
                os.close(write_fd)
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

    def send(self, job: bytes) -> None:
        """Write the job to the child's stdin and close it."""
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # gone already: its exit status says why
            self.process.stdin.write(job)
            self.process.stdin.close()

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
