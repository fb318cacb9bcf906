"""The one report-and-exit path of the gate commands (``preview``, ``analyze``, ``audit``).

A gate fails closed: whatever happens, the command ends with exit 0 (nothing mandatory
violated), 1 (a mandatory violation) or 2 (bad usage or a failed run: one paragraph on stderr
naming the cause, the traceback only with ``--debug``), and a requested report file is written
whatever the exit code. SIGTERM (a CI job cancelled or timed out) ends the run as a failed run,
the program and the pack stopped on the way out.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
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


@contextmanager
def _terminated_as_error(command: str) -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`RunError`, so the run unwinds (stopping the
    program and the pack in their ``finally`` blocks) into a failed run."""

    def terminate(signum: int, frame: object) -> None:
        raise RunError(f"pushguard {command} was stopped by {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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
        typer.echo(_debug_text(report, detail), err=True)
    return report


def _debug_text(report: GateReport, detail: str) -> str:
    redact = getattr(report, "redact", None)
    return str(redact(detail)) if callable(redact) else detail


def finish(
    command: str, report: GateReport, report_format: ReportFormat, output: Path | None
) -> NoReturn:
    """Write ``report`` to ``output`` (in ``report_format``) when given, else print it (text on
    the terminal, JSON and SARIF as they are), print the error paragraph, and exit with the
    report's code (2 when the report file cannot be written)."""
    if output is not None:
        try:
            output.write_text(report.render(report_format), encoding="utf-8")
        except OSError as problem:
            typer.echo(f"pushguard {command}: error: cannot write {output}: {problem}", err=True)
            raise typer.Exit(2) from None
    if output is None and report_format is not ReportFormat.TEXT:
        sys.stdout.write(report.render(report_format))
    else:
        report.print_text(console_for_logs())
    message = report.error_message()
    if message is not None:
        typer.echo(f"pushguard {command}: error: {message}", err=True)
    raise typer.Exit(report.exit_code)


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
