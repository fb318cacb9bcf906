"""``pushguard pre-commit FILE...``: the pre-commit hook ``pushguard-preview``
(``.pre-commit-hooks.yaml``; docs/ci.md): ``pushguard preview`` on each stack the changed files
select (:mod:`pushguard.preview.changed`), with the repository's ``policy-config.json`` when
there is one (``--policy-config`` names another), one preview per stack in a process of its own.

Exit codes: the worst of the previews' (:func:`pushguard.cli.runs.combined_exit_code`: 0 none
has a mandatory violation, 1 one has, 2 one failed), 0 when no stack is touched, 2 when a
touched project cannot be read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pushguard.cli.extras import require_extra
from pushguard.cli.runs import combined_exit_code, run_gate

DEFAULT_POLICY_CONFIG = Path("policy-config.json")
"""The policy config the hook uses when the repository root has one."""


def precommit_command(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="The changed files, relative to the repository root (pre-commit "
            "passes the staged ones)."
        ),
    ] = None,
    policy_config: Annotated[
        Path | None,
        typer.Option(
            "--policy-config",
            help="Policy config JSON (default: policy-config.json at the repository root, when "
            "there is one).",
        ),
    ] = None,
) -> None:
    """Preview the stacks that the changed files touch: a `Pulumi.<stack>.yaml` selects its
    stack, the program (its `Pulumi.yaml`, the files under its `main` folder) every stack of its
    project, the policy config every stack of the repository. Run from the repository root, as
    pre-commit runs hooks.

    Exit codes: the worst of the previews' (0, 1 a mandatory violation, 2 a failed run); 0 when
    no stack is touched.
    """
    require_extra("pre-commit", "pulumi")
    from pushguard.preview.changed import RepositoryError, select_stacks  # noqa: PLC0415
    from pushguard.preview.project import ProjectError  # noqa: PLC0415

    root = Path.cwd()
    config = policy_config
    if config is None and (root / DEFAULT_POLICY_CONFIG).is_file():
        config = DEFAULT_POLICY_CONFIG
    try:
        selections = select_stacks(files or [], root, config)
    except (ProjectError, RepositoryError) as error:
        typer.echo(f"pushguard pre-commit: error: {error}", err=True)
        raise typer.Exit(2) from None
    if not selections:
        typer.echo("pushguard pre-commit: no stack touched")
        raise typer.Exit(0)
    codes = []
    for selection in selections:
        project = selection.project.resolve()
        shown = (
            project.relative_to(root.resolve()).as_posix()
            if project.is_relative_to(root.resolve())
            else str(project)
        )
        typer.echo(
            f"pushguard pre-commit: preview of stack {selection.stack} of {shown or '.'} "
            f"({selection.reason})"
        )
        args = ["preview", f"--stack={selection.stack}"]
        args += [f"--policy-config={config}"] if config is not None else []
        codes.append(run_gate([*args, "--", str(project)], root))
    raise typer.Exit(combined_exit_code(codes))
