"""The gate commands' results as :class:`~pushguard.cli.exit.GateReport` values."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from pushguard.analyze import report as analyze_report
from pushguard.analyze.origin import StateOrigin
from pushguard.analyze.runner import AnalysisRun
from pushguard.cli.exit import ReportFormat, console_for_logs, recorded_text
from pushguard.gate.redact import Redactor, redact_error
from pushguard.gate.report import render_json, render_program_output, render_text
from pushguard.gate.result import RunError, StackResult
from pushguard.gate.sarif import render_sarif
from pushguard.preview.origin import ProgramOrigin


@dataclass(frozen=True)
class PreviewReport:
    """A preview's result, or what was known when it failed (``error``, already redacted)."""

    result: StackResult | None
    error: str | None = None

    @classmethod
    def failed(cls, error: RunError) -> PreviewReport:
        """The report of a preview that stopped with ``error``."""
        return cls(error.result, redact_error(str(error), error.result))

    @property
    def exit_code(self) -> int:
        """2 when the preview failed, else the result's (0 or 1)."""
        if self.error is not None or self.result is None:
            return 2
        return self.result.exit_code

    def redact(self, text: str) -> str:
        """``text`` without the preview's secrets (for the ``--debug`` traceback)."""
        return redact_error(text, self.result)

    def render(self, report_format: ReportFormat) -> str:
        """JSON, SARIF, or the text report (after a failure: the program's output and the
        error line)."""
        if report_format is ReportFormat.JSON:
            return render_json(self.result, self.error)
        if report_format is ReportFormat.SARIF:
            return render_sarif(self.result, self.error)
        return recorded_text(self._draw_text)

    def _draw_text(self, console: Console) -> None:
        if self.result is not None:
            if self.error is None:
                render_text(self.result, console)
            else:
                render_program_output(self.result, console)
        if self.error is not None:
            console.print(f"pushguard preview: error: {self.error}", markup=False)

    def print_text(self, console: Console) -> None:
        """The text report; after a failure, the program's output on stderr (the error line
        follows it there)."""
        if self.error is None and self.result is not None:
            render_text(self.result, console)
        elif self.result is not None:
            render_program_output(self.result, console_for_logs(stderr=True))

    def error_message(self) -> str | None:
        """The error, when the preview failed."""
        return self.error

    def inputs(self) -> set[Path]:
        """The project and stack files, the program's entry point and every file that declared
        a resource."""
        result = self.result
        if result is None or not isinstance(result.origin, ProgramOrigin):
            return set()
        project, stack = result.origin.project, result.origin.stack
        found = {project.file, project.stack_config_file(stack)}
        found.add(project.entry_point)
        found.update(Path(r.source[0]) for r in result.resources if r.source is not None)
        return {path.resolve() for path in found}


@dataclass(frozen=True)
class AnalyzeReport:
    """What ``pushguard analyze`` found across stacks."""

    run: AnalysisRun

    @classmethod
    def failed(cls, error: RunError) -> AnalyzeReport:
        """The report of a run that stopped with ``error`` before any result."""
        return cls(AnalysisRun(error=str(error)))

    @property
    def exit_code(self) -> int:
        """The run's exit code (2 on any failure or unreadable file)."""
        return self.run.exit_code

    def render(self, report_format: ReportFormat) -> str:
        """JSON, SARIF or the text report across stacks."""
        if report_format is ReportFormat.JSON:
            return analyze_report.render_json(self.run)
        if report_format is ReportFormat.SARIF:
            return analyze_report.render_sarif(self.run)
        return recorded_text(self._draw_text)

    def _draw_text(self, console: Console) -> None:
        analyze_report.render_text(self.run, console)
        message = self.error_message()
        if message is not None:
            console.print(f"pushguard analyze: error: {message}", markup=False)

    def print_text(self, console: Console) -> None:
        """The text report across stacks."""
        analyze_report.render_text(self.run, console)

    def error_message(self) -> str | None:
        """The run's error and the unreadable files, in one paragraph."""
        return analyze_report.error_message(self.run)

    def redact(self, text: str) -> str:
        """``text`` without the analysed stacks' secrets and URL credentials (for the
        ``--debug`` traceback)."""
        return Redactor.for_results(self.run.stacks).text(text)

    def inputs(self) -> set[Path]:
        """The state files read, and those that could not be."""
        found = {r.origin.path for r in self.run.stacks if isinstance(r.origin, StateOrigin)}
        found.update(Path(e.path) for e in self.run.unreadable)
        return {path.resolve() for path in found}
