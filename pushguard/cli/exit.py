"""The one report-and-exit path of the gate commands (``preview``, ``analyze``, ``audit``).

A gate fails closed: whatever happens, the command ends with exit 0 (nothing mandatory
violated), 1 (a mandatory violation) or 2 (bad usage, a failed run, or something that could not
be judged, such as an analysed state's encrypted value under ``unknownAtPreview: enforce``: one
paragraph on stderr naming the cause, the traceback only with ``--debug``), and a requested
report file is written whatever the exit code. SIGTERM (a CI job cancelled or timed out) ends the
run as a failed run, the program and the pack stopped on the way out.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import NoReturn, Protocol, TypeVar

import typer
from rich.console import Console

from pushguard.gate.result import RunError


class ReportFormat(StrEnum):
    """Report formats of ``pushguard preview`` and ``pushguard analyze``."""

    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"


class GateReport(Protocol):
    """What a gate command hands :func:`finish`: its exit code, its report in each format, the
    text report for the terminal and the error paragraph, if any."""

    @property
    def exit_code(self) -> int:
        """0, 1 or 2."""

    def render(self, report_format: ReportFormat) -> str:
        """The whole report in ``report_format`` (text as written to a file)."""

    def print_text(self, console: Console) -> None:
        """The text report on the terminal (``console`` is stdout)."""

    def error_message(self) -> str | None:
        """The one paragraph for stderr when the run failed (exit 2), else ``None``."""

    def inputs(self) -> set[Path]:
        """The files the run read (resolved), which ``--output`` must not overwrite."""

    def redact(self, text: str) -> str:
        """``text`` without the run's secrets (for the ``--debug`` traceback)."""


def console_for_logs(*, stderr: bool = False) -> Console:
    """A console for the text report: in a CI log (not a terminal), 200 columns so no resource
    name or message is cut; no emoji codes, no highlighting of the team's text."""
    console = Console(highlight=False, soft_wrap=True, emoji=False, stderr=stderr)
    if not console.is_terminal:
        console.width = 200
    return console


def recorded_text(draw: Callable[[Console], None]) -> str:
    """What ``draw`` prints, as plain text (the text report written to a file)."""
    with open(os.devnull, "w") as sink:
        console = Console(
            record=True, width=200, file=sink, highlight=False, soft_wrap=True, emoji=False
        )
        draw(console)
    return console.export_text()


STOPPING_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name)
    for name in (
        "SIGTERM",
        "SIGINT",
        "SIGHUP",
        "SIGQUIT",
        "SIGUSR1",
        "SIGUSR2",
        "SIGALRM",
        "SIGVTALRM",
        "SIGPROF",
        "SIGXCPU",
        "SIGXFSZ",
    )
    if hasattr(signal, name)
)
"""Signals that end a gate run as a failed run (exit 2, the report written): a CI job cancelled
or timed out (SIGTERM, SIGINT, SIGHUP), and any signal whose default would end pushguard without
a report, which a previewed program could send its parent (same user)."""

IGNORED_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTSTP", "SIGTTIN", "SIGTTOU") if hasattr(signal, name)
)
"""Job-control stops, ignored during a run so that nothing can freeze the gate past its
``--timeout`` (SIGSTOP and SIGKILL cannot be caught: see docs/preview.md)."""


@contextmanager
def _terminated_as_error(command: str) -> Iterator[None]:
    """Within the block, the first of :data:`STOPPING_SIGNALS` raises :class:`RunError`, so the
    run unwinds (stopping the program and the pack in their ``finally`` blocks) into a failed
    run; later ones are ignored so that the unwinding finishes. :data:`IGNORED_SIGNALS` are
    ignored."""
    stopped: list[str] = []

    def stop(signum: int, frame: object) -> None:
        if stopped:
            return
        stopped.append(signal.Signals(signum).name)
        raise RunError(f"pushguard {command} was stopped by {stopped[0]}")

    previous = {sig: signal.signal(sig, stop) for sig in STOPPING_SIGNALS}
    previous |= {sig: signal.signal(sig, signal.SIG_IGN) for sig in IGNORED_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


R = TypeVar("R", bound=GateReport)


def run_gate(
    command: str,
    produce: Callable[[], R],
    failed: Callable[[RunError], R],
    *,
    debug: bool,
) -> R:
    """``produce()`` the report; a :class:`RunError` (SIGTERM included) or any unexpected
    exception becomes ``failed(error)``, a report of the failed run. With ``debug``, the
    traceback (of the program, for a preview whose program raised) goes to stderr.
    """
    try:
        with _terminated_as_error(command):
            return produce()
    except RunError as error:
        report = failed(error)
        detail = error.debug
    except Exception as error:  # a gate fails closed: exit 2 with the cause, never a traceback
        report = failed(RunError(f"pushguard {command} failed: {type(error).__name__}: {error}"))
        detail = traceback.format_exc()
    if debug and detail:
        typer.echo(report.redact(detail), err=True)
    return report


def finish(
    command: str,
    report: GateReport,
    report_format: ReportFormat,
    output: Path | None,
    inputs: Iterable[Path | None] = (),
    *,
    json_output: Path | None = None,
) -> NoReturn:
    """Write ``report`` to ``output`` (in ``report_format``) when given, and as JSON to
    ``json_output`` when given (``--json-output``: one run gives the SARIF for code scanning
    and the JSON for a summary), else print it (text on the terminal, JSON and SARIF as they
    are), print the error paragraph, and exit with the report's code.

    Exit 2 instead, with the cause on stderr, when ``output`` or ``json_output`` is a file the
    run read (one of ``inputs`` or :meth:`GateReport.inputs`: a report must never replace a
    state file or a program), when it cannot be written, or when stdout is closed before the
    report is printed (``pushguard ... | head -0``): a gate fails closed."""
    read = {p.resolve() for p in inputs if p is not None} | report.inputs()
    for option, path, chosen in (
        ("--output", output, report_format),
        ("--json-output", json_output, ReportFormat.JSON),
    ):
        if path is None:
            continue
        if path.resolve() in read:
            _fail(command, f"{option} {path} is an input of this run; it was not overwritten")
        try:
            path.write_text(report.render(chosen), encoding="utf-8")
        except OSError as problem:
            _fail(command, f"cannot write {path}: {problem}")
    if sys.stdout is None and output is None:  # started with stdout closed (`>&-`)
        _fail(command, "stdout is closed: the report cannot be printed (use --output)")
    if sys.stdout is not None:  # with --output and stdout closed, the report is in the file
        _print(command, report, report_format, output)
    message = report.error_message()
    if message is not None:
        typer.echo(f"pushguard {command}: error: {message}", err=True)
    raise typer.Exit(report.exit_code)


def _print(
    command: str, report: GateReport, report_format: ReportFormat, output: Path | None
) -> None:
    """The report on stdout: JSON or SARIF as they are when not written to ``output``, else
    the text report. A pipe closed before the end (``| head -0``) is exit 2."""
    try:
        if output is None and report_format is not ReportFormat.TEXT:
            sys.stdout.write(report.render(report_format))
        else:
            report.print_text(console_for_logs())
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):  # a closed pipe, or a closed file object
        # Python's advice for SIGPIPE: point stdout at devnull so the exit does not fail again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        _fail(command, "stdout was closed before the report was written")


def _fail(command: str, message: str) -> NoReturn:
    typer.echo(f"pushguard {command}: error: {message}", err=True)
    raise typer.Exit(2)


def guarded_exit_code(command: str, call: Callable[[], int], *, debug: bool) -> NoReturn:
    """Exit with ``call()``'s code; SIGTERM or an unexpected exception is exit 2 with one
    paragraph (``--debug``: and the traceback). For commands that write their own reports
    (``pushguard audit``)."""
    try:
        with _terminated_as_error(command):
            code = call()
    except RunError as error:
        typer.echo(f"pushguard {command}: error: {error}", err=True)
        raise typer.Exit(2) from None
    except Exception as error:
        if debug:
            typer.echo(traceback.format_exc(), err=True)
        typer.echo(f"pushguard {command}: error: {type(error).__name__}: {error}", err=True)
        raise typer.Exit(2) from None
    raise typer.Exit(code)


def _option_value(args: list[str], *names: str) -> str | None:
    """The value of the last of ``names`` in ``args`` (``-o X``, ``--output X``,
    ``--output=X``, ``-oX``), or ``None``."""
    found = None
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                found = args[index + 1]
            elif name.startswith("--") and arg.startswith(name + "="):
                found = arg[len(name) + 1 :]
            elif not name.startswith("--") and arg.startswith(name) and len(arg) > len(name):
                found = arg[len(name) :]
    return found


def write_usage_report(args: list[str], message: str) -> None:
    """After a usage error of ``preview`` or ``analyze``: write the failed run's report to the
    ``--output`` named in ``args`` (the raw command line), in its ``--format`` when valid (else
    text), and as JSON to its ``--json-output``. Nothing is written for other commands or
    without either; a report that cannot be written is said on stderr."""
    command = next((a for a in args if not a.startswith("-")), "")
    output = _option_value(args, "-o", "--output")
    json_output = _option_value(args, "--json-output")
    if command not in ("preview", "analyze") or not (output or json_output):
        return
    from pushguard.cli.reports import AnalyzeReport, PreviewReport  # noqa: PLC0415

    chosen = _option_value(args, "-f", "--format")
    report_format = ReportFormat(chosen) if chosen in set(ReportFormat) else ReportFormat.TEXT
    failed = PreviewReport.failed if command == "preview" else AnalyzeReport.failed
    report = failed(RunError(f"usage: {message}"))
    for path, written in ((output, report_format), (json_output, ReportFormat.JSON)):
        if not path:
            continue
        try:
            Path(path).write_text(report.render(written), encoding="utf-8")
        except OSError as problem:
            typer.echo(f"pushguard {command}: error: cannot write {path}: {problem}", err=True)
