"""The ``pushguard`` command.

Exit codes (a public contract): 0 nothing mandatory violated, 1 a mandatory violation, 2 bad
usage or a failed run.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from typer.exceptions import TyperException

from pushguard import __version__
from pushguard.cli.exit import (
    ReportFormat,
    finish,
    guarded_exit_code,
    run_gate,
    write_usage_report,
)
from pushguard.cli.extras import require_extra
from pushguard.cli.guardrails_command import guardrails_command
from pushguard.cli.help import UncutCommand, UncutGroup
from pushguard.cli.precommit import precommit_command
from pushguard.cli.push_command import push_command
from pushguard.cli.rules_view import print_rules
from pushguard.preview.limits import DEFAULT_TIMEOUT
from pushguard.rules import RULES
from pushguard.rules.docs import rules_markdown

app = typer.Typer(
    name="pushguard",
    help="Safe Google Cloud Pub/Sub push subscriptions: rules, policy pack, preview, audit.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    cls=UncutGroup,
    rich_markup_mode=None,  # click's plain help, never cut (pushguard/cli/help.py)
)


class RulesFormat(StrEnum):
    """Output formats of ``pushguard rules``."""

    TEXT = "text"
    MARKDOWN = "markdown"
    JSON = "json"


@app.command("rules", cls=UncutCommand)
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
                "enforcementPoints": list(r.enforcement_points),
                "description": r.description,
                "remediation": r.remediation,
                "url": r.url,
            }
            for r in RULES
        ]
        typer.echo(json.dumps(data, indent=2))
        return
    print_rules(Console(), RULES)


PolicyPackOption = Annotated[
    Path | None,
    typer.Option("--policy-pack", help="Policy pack folder (default: pushguard's own pack)."),
]
PolicyConfigOption = Annotated[
    Path | None,
    typer.Option("--policy-config", help="Policy config JSON, as --policy-pack-config."),
]
FormatOption = Annotated[ReportFormat, typer.Option("--format", "-f", help="text, json or sarif")]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the report here, whatever the exit code; the text report still goes to stdout.",
    ),
]
JsonOutputOption = Annotated[
    Path | None,
    typer.Option(
        "--json-output",
        help="Also write the JSON report here, whatever the exit code (with -f sarif -o FILE: "
        "the SARIF for code scanning and the JSON for a summary from one run).",
    ),
]
DebugOption = Annotated[
    bool,
    typer.Option("--debug", help="On a failed run, also print the traceback (the program's)."),
]
"""The options ``pushguard preview`` and ``pushguard analyze`` share."""


@app.command("preview", cls=UncutCommand)
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
    output_format: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, max=86400, help="Seconds the program may run.")
    ] = DEFAULT_TIMEOUT,
    values: Annotated[
        Path | None,
        typer.Option(
            "--values",
            help="YAML or JSON file of values the real preview reads from Pulumi Cloud: "
            "stackReferences (`pulumi stack output --json` per stack) and environments "
            "(`esc open ENV --format json` per ESC environment).",
        ),
    ] = None,
    json_output: JsonOutputOption = None,
    debug: DebugOption = False,
) -> None:
    """Preview a Pulumi stack offline and run a policy pack over it, as
    `pulumi preview --policy-pack` does: no credentials, no cloud calls. The program runs in a
    child process: nothing it prints and no way it ends can turn a violation into a pass (a
    program written to evade review is a matter for code review; see docs/preview.md).

    Exit codes: 0 no mandatory violation, 1 a mandatory violation, 2 bad usage or a failed run
    (the report is written in every case).
    """
    require_extra("preview", "pulumi")
    from pushguard.cli.reports import PreviewReport  # noqa: PLC0415 - needs the pulumi extra
    from pushguard.preview.runner import PreviewOptions, run_preview  # noqa: PLC0415

    options = PreviewOptions(program_dir, stack, policy_pack, policy_config, timeout, values)
    report = run_gate(
        "preview",
        lambda: PreviewReport(run_preview(options)),
        PreviewReport.failed,
        debug=debug,
    )
    finish(
        "preview",
        report,
        output_format,
        output,
        [policy_config, values],
        json_output=json_output,
    )


@app.command("analyze", cls=UncutCommand)
def analyze_command(  # noqa: PLR0917 - typer maps parameters to options
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
    output_format: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="A previous `pushguard analyze --format json` report: each finding is new or "
            "existing, and the baseline's findings that are gone are listed as resolved.",
        ),
    ] = None,
    json_output: JsonOutputOption = None,
    debug: DebugOption = False,
) -> None:
    """Run a policy pack over existing stacks' state, as `pulumi policy analyze` does, for many
    stacks at once and without the Pulumi CLI: `Analyze` per resource (its inputs) and
    `AnalyzeStack` per stack (its outputs). Secrets stay encrypted and count as unknown.

    Exit codes: 0 no mandatory violation, 1 a mandatory violation in some stack, 2 bad usage, a
    failed run or a state file that cannot be read (the other files are still analysed, and the
    report is written in every case).
    """
    require_extra("analyze", "pulumi")
    from pushguard.analyze.runner import AnalyzeOptions, run_analyze  # noqa: PLC0415
    from pushguard.cli.reports import AnalyzeReport  # noqa: PLC0415 - needs the pulumi extra

    options = AnalyzeOptions(state_paths, policy_pack, policy_config, baseline)
    report = run_gate(
        "analyze", lambda: AnalyzeReport(run_analyze(options)), AnalyzeReport.failed, debug=debug
    )
    finish(
        "analyze",
        report,
        output_format,
        output,
        [policy_config, baseline, *state_paths],
        json_output=json_output,
    )


class FailOn(StrEnum):
    """``--fail-on`` of ``pushguard audit``."""

    MANDATORY = "mandatory"
    ADVISORY = "advisory"
    NEVER = "never"


class FailOnBlind(StrEnum):
    """``--fail-on-blind`` of ``pushguard audit`` (``pushguard.audit.coverage.BLIND_MODES``)."""

    NOTHING_READ = "nothing-read"
    MISSING_INPUTS = "missing-inputs"
    NEVER = "never"


@app.command("audit", cls=UncutCommand)
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
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="A previous audit's --out folder: each finding is new, existing or raised or "
            "lowered in level; the baseline's findings that are gone are listed in resolved.jsonl "
            "when this run rechecked them, else in not_rechecked.jsonl with the reason.",
        ),
    ] = None,
    accept_baseline_mismatch: Annotated[
        bool,
        typer.Option(
            "--accept-baseline-mismatch",
            help="Compare with a --baseline of other organisations or other policy settings "
            "(refused otherwise); summary.json records what differed.",
        ),
    ] = False,
    fail_on_blind: Annotated[
        FailOnBlind,
        typer.Option(
            "--fail-on-blind",
            help="Exit 2 when the audit could not see: nothing-read (no line of the export is "
            "an asset), missing-inputs (also when a rule --fail-on gates read none of its "
            "inputs: no IAM policy, no service perimeter, no subscription), never.",
        ),
    ] = FailOnBlind.NOTHING_READ,
    stacks: Annotated[
        list[str] | None,
        typer.Option(
            "--stacks",
            help="Pulumi state: `pulumi stack export` files, folders of them or self-managed "
            "backend folders (repeatable): which push subscriptions no stack manages "
            "(push-unmanaged) and which differ from their stack's state (push-state-drift).",
        ),
    ] = None,
    snapshots: Annotated[
        list[str] | None,
        typer.Option(
            "--snapshot",
            metavar="TIME=PATH",
            help="An export (file, folder or bigquery: table) and its read time, RFC 3339 "
            "(repeatable): of several exports of the same assets, the newest that covers an "
            "asset decides whether and how it is evaluated.",
        ),
    ] = None,
    guardrails: Annotated[
        str | None,
        typer.Option(
            "--guardrails",
            metavar="DIR",
            help="Organization Policy custom constraints (DIR/constraints/*.yaml) and their "
            "policies (DIR/policies/*.yaml), as `pushguard guardrails -o DIR` writes them: list "
            "in guardrails.jsonl the existing subscriptions each would deny on their next "
            "request (enforced or dry run), undecided ones and condition errors.",
        ),
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Audit every Pub/Sub push subscription in Cloud Asset Inventory exports (Spark).

    Exit codes: 0 nothing at or above --fail-on, 1 a violation at or above it, 2 bad usage, a
    failed run or a blind one (--fail-on-blind), 130 stopped by SIGINT (a failed or stopped run
    leaves the previous outputs in --out as they were: the run is published in one step at its
    end).
    """
    require_extra("audit", "audit")
    if guardrails is not None:
        require_extra("audit", "guardrails")
    from pushguard.audit.command import run  # noqa: PLC0415 - needs the audit extra

    guarded_exit_code(
        "audit",
        lambda: run(
            export_paths or [],
            out,
            master=master,
            policy_config=policy_config,
            fail_on=fail_on.value,
            include_dry_run=include_dry_run_perimeters,
            max_line_bytes=max_line_bytes,
            debug=debug,
            inputs=input_tables or [],
            baseline=baseline,
            stacks=stacks or [],
            snapshots=snapshots or [],
            accept_baseline_mismatch=accept_baseline_mismatch,
            fail_on_blind=fail_on_blind.value,
            guardrails=guardrails,
        ),
        debug=debug,
    )


app.command("guardrails", cls=UncutCommand)(guardrails_command)
app.command("push", cls=UncutCommand)(push_command)
app.command("pre-commit", cls=UncutCommand)(precommit_command)

pack_app = typer.Typer(
    help="The CrossGuard policy pack, for `pulumi policy publish`.",
    no_args_is_help=True,
    cls=UncutGroup,
    rich_markup_mode=None,
)
app.add_typer(pack_app, name="pack")


@pack_app.command("build", cls=UncutCommand)
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
    require_extra(
        "pack build", "pulumi"
    )  # the pack pins the pulumi extra's versions installed here
    from pushguard.crossguard.build import PackBuildError, build_pack  # noqa: PLC0415

    try:
        built = build_pack(folder)
    except (PackBuildError, OSError) as error:
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
    """Entry point of the ``pushguard`` console script.

    A usage error (an unknown option, a bad value) is exit 2 as click makes it; for ``preview``
    and ``analyze`` the report asked for with ``--output`` is still written, in the requested
    ``--format`` when that one is valid (else text), so a CI step that uploads it finds it."""
    try:
        code = app(standalone_mode=False)
    except typer.Abort:  # Ctrl-C outside a run: still a failed run, never 0 or 1
        typer.echo("pushguard: aborted", err=True)
        sys.exit(2)
    except TyperException as error:  # a usage error of typer's click
        show = getattr(error, "show", None)
        show() if callable(show) else typer.echo(f"Error: {error}", err=True)
        format_message = getattr(error, "format_message", None)
        message = format_message() if callable(format_message) else str(error)
        write_usage_report(sys.argv[1:], message)
        sys.exit(2)
    except Exception as error:  # fail closed: never a traceback and exit 1 (a "violation")
        typer.echo(f"pushguard: error: {type(error).__name__}: {error}", err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
