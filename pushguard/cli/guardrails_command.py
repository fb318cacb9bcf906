"""``pushguard guardrails``: the rules compiled to Organization Policy custom constraints, their
policies and Security Health Analytics custom modules, ready for ``gcloud``
(:mod:`pushguard.guardrails`; docs/guardrails.md).

Exit 0 when every file is written; 2 for bad input (a policy config pushguard refuses, an unknown
rule, a malformed organization ID or tag, an expired exception, a documented limit exceeded), named
with its field and what is allowed, before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pushguard.cli.extras import require_extra

MethodTypesOption = Annotated[
    str,
    typer.Option(
        "--method-types",
        help="create or create-update (the constraint also meets updates; default).",
    ),
]


def guardrails_command(  # noqa: PLR0917 - typer maps parameters to options
    policy_config: Annotated[
        Path | None,
        typer.Option("--policy-config", help="Policy config JSON, as --policy-pack-config."),
    ] = None,
    organization: Annotated[
        str, typer.Option("--organization", help="The organization ID (digits).")
    ] = "",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="The folder to write (new, or replaced).")
    ] = None,
    enforce: Annotated[
        bool,
        typer.Option(
            "--enforce",
            help="Mandatory rules get an enforced spec; everything else stays in dry run.",
        ),
    ] = False,
    perimeter_tag: Annotated[
        str | None,
        typer.Option(
            "--perimeter-tag",
            help="KEY=VALUE: the perimeter rule applies where this tag is, instead of one policy "
            "per perimeter project of the config.",
        ),
    ] = None,
    method_types: MethodTypesOption = "create-update",
) -> None:
    """Compile the rules to Organization Policy custom constraints (dry run first) and Security
    Health Analytics custom modules; write them and coverage.json to -o DIR and print the
    coverage of every rule."""
    require_extra("guardrails", "guardrails")
    from pushguard.guardrails import (  # noqa: PLC0415 - needs the guardrails extra
        GuardrailError,
        Options,
        compile_guardrails,
        render,
        write_outputs,
    )
    from pushguard.guardrails.table import coverage_table  # noqa: PLC0415
    from pushguard.policy.config_file import PolicyConfigError, load_rule_config  # noqa: PLC0415

    try:
        if output is None:
            raise GuardrailError("-o/--output", "a folder to write the files to is required")
        if not organization:
            raise GuardrailError("--organization", "the organization ID (digits) is required")
        options = Options(method_types, enforce, _tag(perimeter_tag))
        guardrails = compile_guardrails(load_rule_config(policy_config), organization, options)
        write_outputs(output, render(guardrails))
    except (GuardrailError, PolicyConfigError, OSError) as error:
        typer.echo(f"pushguard guardrails: error: {error}", err=True)
        raise typer.Exit(2) from None
    typer.echo(coverage_table(guardrails), nl=False)
    typer.echo(f"pushguard guardrails: wrote {output}")


def _tag(value: str | None) -> tuple[str, str] | None:
    """``KEY=VALUE`` split; the compiler checks the names."""
    from pushguard.guardrails import GuardrailError  # noqa: PLC0415

    if value is None:
        return None
    key, sep, tag_value = value.partition("=")
    if not sep:
        raise GuardrailError("--perimeter-tag", f"{value!r} must be KEY=VALUE")
    return key, tag_value
