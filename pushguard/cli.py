"""The ``pushguard`` command.

Exit codes (a public contract): 0 nothing mandatory violated, 1 a mandatory violation, 2 bad
usage or a failed run.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pushguard import __version__
from pushguard.rules import RULES
from pushguard.rules.docs import rules_markdown

app = typer.Typer(
    name="pushguard",
    help="Safe Google Cloud Pub/Sub push subscriptions: rules, policy pack, preview, audit.",
    no_args_is_help=True,
    add_completion=False,
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
