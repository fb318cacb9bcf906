"""The ``pushguard`` command.

Exit codes (a public contract): 0 nothing mandatory violated, 1 a mandatory violation, 2 bad
usage or a failed run.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pushguard import __version__
from pushguard.crossguard.build import PackBuildError, build_pack
from pushguard.preview.isolation import DEFAULT_TIMEOUT
from pushguard.preview.redact import redact_error
from pushguard.preview.report import render_json, render_program_output, render_text
from pushguard.preview.result import PreviewError, PreviewResult
from pushguard.preview.runner import PreviewOptions, run_preview
from pushguard.preview.sarif import render_sarif
from pushguard.rules import RULES
from pushguard.rules.docs import rules_markdown

app = typer.Typer(
    name="pushguard",
    help="Safe Google Cloud Pub/Sub push subscriptions: rules, policy pack, preview, audit.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class RulesFormat(StrEnum):
    """Output formats of ``pushguard rules``."""

    TEXT = "text"
    MARKDOWN = "markdown"
    JSON = "json"


@app.command("rules")
def rules_command(
    output_format: Annotated[
        RulesFormat, typer.Option("--format", "-f", help="text, markdown or json")
    ] = RulesFormat.TEXT,
) -> None:
    """List the rules with their IDs, default enforcement levels and titles."""
    if output_format is RulesFormat.MARKDOWN:
        typer.echo(rules_markdown(), nl=False)
        return
    if output_format is RulesFormat.JSON:
        data = [
            {
                "id": r.id,
                "title": r.title,
                "defaultLevel": r.default_level.value,
                "severity": r.severity,
                "description": r.description,
                "remediation": r.remediation,
                "url": r.url,
            }
            for r in RULES
        ]
        typer.echo(json.dumps(data, indent=2))
        return
    table = Table(title="pushguard rules", show_lines=False)
    for column in ("ID", "level", "severity", "title"):
        table.add_column(column)
    for r in RULES:
        table.add_row(r.id, r.default_level.value, r.severity, r.title)
    Console().print(table)


class PreviewFormat(StrEnum):
    """Output formats of ``pushguard preview``."""

    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"


PolicyPackOption = Annotated[
    Path | None,
    typer.Option("--policy-pack", help="Policy pack folder (default: pushguard's own pack)."),
]
PolicyConfigOption = Annotated[
    Path | None,
    typer.Option("--policy-config", help="Policy config JSON, as --policy-pack-config."),
]
FormatOption = Annotated[PreviewFormat, typer.Option("--format", "-f", help="text, json or sarif")]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the report here, whatever the exit code; the text report still goes to stdout.",
    ),
]
"""The options ``pushguard preview`` and ``pushguard analyze`` share."""


def _render(
    result: PreviewResult | None, output_format: PreviewFormat, error: str | None = None
) -> str:
    if output_format is PreviewFormat.JSON:
        return render_json(result, error)
    if output_format is PreviewFormat.SARIF:
        return render_sarif(result, error)
    with open(os.devnull, "w") as sink:
        console = Console(
            record=True, width=200, file=sink, highlight=False, soft_wrap=True, emoji=False
        )
        if result is not None:
            render_text(result, console) if error is None else render_program_output(
                result, console
            )
        if error is not None:
            console.print(f"pushguard preview: error: {error}", markup=False)
    return console.export_text()


@app.command("preview")
def preview_command(  # noqa: PLR0917 - typer maps parameters to options
    program_dir: Annotated[
        Path | None,
        typer.Argument(help="A folder at or under the Pulumi project (default: the current one)."),
    ] = None,
    stack: Annotated[
        str | None,
        typer.Option(
            "--stack",
            "-s",
            help="Stack name, or org/project/stack (default: $PULUMI_STACK or the only one).",
        ),
    ] = None,
    policy_pack: PolicyPackOption = None,
    policy_config: PolicyConfigOption = None,
    output_format: FormatOption = PreviewFormat.TEXT,
    output: OutputOption = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, max=86400, help="Seconds the program may run.")
    ] = DEFAULT_TIMEOUT,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the program's traceback when it fails.")
    ] = False,
) -> None:
    """Preview a Pulumi stack offline and run a policy pack over it, as
    `pulumi preview --policy-pack` does: no credentials, no cloud calls. The program runs in a
    child process: nothing it prints or does can change the verdict.

    Exit codes: 0 no mandatory violation, 1 a mandatory violation, 2 bad usage or a failed run
    (the report is written in every case).
    """
    options = PreviewOptions(program_dir, stack, policy_pack, policy_config, timeout)
    result: PreviewResult | None
    error: str | None = None
    try:
        with _terminated_as_error():
            result = run_preview(options)
    except PreviewError as failed:
        result, error = failed.result, redact_error(str(failed), failed.result)
        if debug and failed.debug:
            typer.echo(redact_error(failed.debug, failed.result), err=True)
    code = 2 if error is not None else result.exit_code  # type: ignore[union-attr]
    if output is not None:
        try:
            output.write_text(_render(result, output_format, error), encoding="utf-8")
        except OSError as problem:
            typer.echo(f"pushguard preview: error: cannot write {output}: {problem}", err=True)
            raise typer.Exit(2) from None
    if output is None and output_format is not PreviewFormat.TEXT:
        sys.stdout.write(_render(result, output_format, error))
    elif error is None:
        console = Console(highlight=False, soft_wrap=True, emoji=False)
        if not console.is_terminal:
            console.width = 200  # CI logs: never cut a resource name or a message
        render_text(result, console)  # type: ignore[arg-type]
    elif result is not None:
        render_program_output(
            result, Console(highlight=False, soft_wrap=True, stderr=True, emoji=False)
        )
    if error is not None:
        typer.echo(f"pushguard preview: error: {error}", err=True)
    raise typer.Exit(code)


@contextmanager
def _terminated_as_error(command: str = "preview") -> Iterator[None]:
    """SIGTERM (a CI job cancelled or timed out) ends ``pushguard COMMAND`` as a failed run: the
    program's process and the pack are stopped on the way out, and the report is still written
    (exit 2)."""

    def terminate(signum: int, frame: object) -> None:
        raise PreviewError(f"pushguard {command} was stopped by {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@app.command("analyze")
def analyze_command(
    state_paths: Annotated[
        list[Path],
        typer.Argument(
            help="State files written by `pulumi stack export` (or a self-managed backend's "
            ".pulumi/stacks files), or folders of them.",
            exists=False,
            readable=False,  # an unreadable file is reported with the others, not a usage error
        ),
    ],
    policy_pack: PolicyPackOption = None,
    policy_config: PolicyConfigOption = None,
    output_format: FormatOption = PreviewFormat.TEXT,
    output: OutputOption = None,
) -> None:
    """Run a policy pack over existing stacks' state, as `pulumi policy analyze` does, for many
    stacks at once and without the Pulumi CLI: `Analyze` per resource (its inputs) and
    `AnalyzeStack` per stack (its outputs). Secrets stay encrypted and count as unknown.

    Exit codes: 0 no mandatory violation, 1 a mandatory violation in some stack, 2 bad usage, a
    failed run or a state file that cannot be read (the other files are still analysed, and the
    report is written in every case).
    """
    from pushguard.analyze import report  # noqa: PLC0415 - keeps `pushguard rules` light
    from pushguard.analyze.runner import AnalysisRun, AnalyzeOptions, run_analyze  # noqa: PLC0415

    try:
        with _terminated_as_error("analyze"):
            run = run_analyze(AnalyzeOptions(state_paths, policy_pack, policy_config))
    except PreviewError as stopped:  # SIGTERM: the pack is stopped on the way out
        run = AnalysisRun(error=str(stopped))
    except Exception as error:  # a gate fails closed: exit 2 with the cause, never a traceback
        run = AnalysisRun(error=f"pushguard analyze failed: {type(error).__name__}: {error}")
    renderers = {PreviewFormat.JSON: report.render_json, PreviewFormat.SARIF: report.render_sarif}
    if output is not None:
        try:
            if output_format is PreviewFormat.TEXT:
                with output.open("w", encoding="utf-8") as file:
                    report.render_text(
                        run, Console(file=file, width=200, soft_wrap=True, emoji=False)
                    )
            else:
                output.write_text(renderers[output_format](run), encoding="utf-8")
        except OSError as problem:
            typer.echo(f"pushguard analyze: error: cannot write {output}: {problem}", err=True)
            raise typer.Exit(2) from None
    if output is None and output_format is not PreviewFormat.TEXT:
        sys.stdout.write(renderers[output_format](run))
    else:
        console = Console(highlight=False, soft_wrap=True, emoji=False)
        if not console.is_terminal:
            console.width = 200
        report.render_text(run, console)
    message = report.error_message(run)
    if message is not None:
        typer.echo(f"pushguard analyze: error: {message}", err=True)
    raise typer.Exit(run.exit_code)


class FailOn(StrEnum):
    """``--fail-on`` of ``pushguard audit``."""

    MANDATORY = "mandatory"
    ADVISORY = "advisory"
    NEVER = "never"


@app.command("audit")
def audit_command(  # noqa: PLR0917 - typer maps parameters to options
    out: Annotated[str, typer.Option("--out", help="Output folder (local or a URI).")],
    export_paths: Annotated[
        list[str] | None,
        typer.Argument(help="Cloud Asset Inventory export files or folders."),
    ] = None,
    input_tables: Annotated[
        list[str] | None,
        typer.Option(
            "--input",
            help="A CAI export in BigQuery: bigquery:PROJECT.DATASET.TABLE, or PREFIX* for "
            "--per-asset-type tables (repeatable; needs the spark-bigquery-connector).",
        ),
    ] = None,
    master: Annotated[
        str | None, typer.Option("--master", help="Spark master (default: local[*]).")
    ] = None,
    policy_config: Annotated[
        Path | None, typer.Option("--policy-config", help="Policy config JSON (levels, settings).")
    ] = None,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Exit 1 on violations at or above this level.")
    ] = FailOn.MANDATORY,
    include_dry_run_perimeters: Annotated[
        bool, typer.Option(help="Count dry-run (spec) service perimeters too.")
    ] = False,
    max_line_bytes: Annotated[
        int, typer.Option(help="Quarantine lines longer than this many bytes.")
    ] = 4 * 1024 * 1024,
    debug: Annotated[
        bool, typer.Option("--debug", help="On a failed run, also print the traceback.")
    ] = False,
) -> None:
    """Audit every Pub/Sub push subscription in Cloud Asset Inventory exports (Spark)."""
    try:
        from pushguard.audit.command import run  # noqa: PLC0415 - needs the audit extra
    except ImportError as error:
        typer.echo(
            f"pushguard audit: error: {error}; install the audit extra: "
            "pip install 'pushguard[audit]'",
            err=True,
        )
        raise typer.Exit(2) from None
    raise typer.Exit(
        run(
            export_paths or [],
            out,
            master=master,
            policy_config=policy_config,
            fail_on=fail_on.value,
            include_dry_run=include_dry_run_perimeters,
            max_line_bytes=max_line_bytes,
            debug=debug,
            inputs=input_tables or [],
        )
    )


pack_app = typer.Typer(
    help="The CrossGuard policy pack, for `pulumi policy publish`.", no_args_is_help=True
)
app.add_typer(pack_app, name="pack")


@pack_app.command("build")
def pack_build_command(
    folder: Annotated[
        Path, typer.Argument(help="Where to write the pack (an empty folder or a new one).")
    ],
) -> None:
    """Write the policy pack as a folder `pulumi policy publish` can upload: PulumiPolicy.yaml,
    __main__.py, a wheel of pushguard built from this source checkout, and a requirements.txt
    that installs from that folder alone with every dependency pinned to the version installed
    here.
    """
    try:
        built = build_pack(folder)
    except PackBuildError as error:
        typer.echo(f"pushguard pack build: error: {error}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"pushguard pack build: wrote {built.folder}")
    for name in built.files:
        typer.echo(f"  {name}")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pushguard {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """pushguard: one rule set for Pub/Sub push subscriptions, enforced at every step."""


def main() -> None:
    """Entry point of the ``pushguard`` console script."""
    app()
