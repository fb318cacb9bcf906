"""``pushguard pre-commit FILE...``: the pre-commit hook ``pushguard-preview``
(``.pre-commit-hooks.yaml``; docs/ci.md): ``pushguard preview`` on each stack the changed files
select (:mod:`pushguard.preview.changed`), with the repository's ``policy-config.json`` when
there is one (``--policy-config`` names another), one preview per stack in a process of its own.

The paths are relative to the current folder (pre-commit runs hooks from the repository root;
by hand, any folder of the work tree will do) and are resolved against the top of the git work
tree, so the stacks chosen do not depend on where the command runs.

Exit codes: the worst of the previews' (:func:`pushguard.cli.runs.combined_exit_code`: 0 none
has a mandatory violation, 1 one has, 2 one failed), 0 when no stack is touched, 2 when a
touched project cannot be read, the current folder is not in a git work tree, or a path is
outside the repository (never a silent pass).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pushguard.cli.extras import require_extra
from pushguard.cli.runs import combined_exit_code, run_gate

DEFAULT_POLICY_CONFIG = Path("policy-config.json")
"""The policy config the hook uses when the repository root has one."""


def _from_the_root(
    files: list[Path], policy_config: Path | None
) -> tuple[Path, list[Path], Path | None]:
    """The repository root, the ``files`` and the policy config (given relative to the current
    folder) relative to it (a config outside the repository absolute), the config defaulting
    to the root's ``policy-config.json``.

    Raises:
        RepositoryError: not in a git work tree (the first path named), a path outside it.
    """
    from pushguard.preview.changed import (  # noqa: PLC0415
        RepositoryError,
        repository_root,
        root_relative,
    )

    cwd = Path.cwd()
    try:
        root = repository_root(cwd)
    except RepositoryError as error:
        named = ", ".join(str(f) for f in files) or str(cwd)
        raise RepositoryError(f"{named}: cannot find the repository's top level: {error}") from None
    changed = root_relative(files, cwd, root)
    if policy_config is not None:  # may live outside the repository: then absolute
        config = (cwd / policy_config).resolve()
        return root, changed, config.relative_to(root) if config.is_relative_to(root) else config
    default = DEFAULT_POLICY_CONFIG if (root / DEFAULT_POLICY_CONFIG).is_file() else None
    return root, changed, default


def precommit_command(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="The changed files, relative to the current folder or absolute, inside the "
            "git repository (pre-commit passes the staged ones, from the root)."
        ),
    ] = None,
    policy_config: Annotated[
        Path | None,
        typer.Option(
            "--policy-config",
            help="Policy config JSON, relative to the current folder (default: "
            "policy-config.json at the repository root, when there is one).",
        ),
    ] = None,
) -> None:
    """Preview the stacks that the changed files touch: a `Pulumi.<stack>.yaml` selects its
    stack, the program (its `Pulumi.yaml`, the files under its `main` folder) every stack of its
    project (also a deleted file under it), the policy config every stack of the repository.
    Paths are relative to the current folder and resolved against the git repository's top
    level, so any folder of the repository will do.

    Exit codes: the worst of the previews' (0, 1 a mandatory violation, 2 a failed run); 0 when
    no stack is touched; 2 outside a git repository or for a path outside the repository.
    """
    require_extra("pre-commit", "pulumi")
    from pushguard.preview.changed import RepositoryError, select_stacks  # noqa: PLC0415
    from pushguard.preview.project import ProjectError  # noqa: PLC0415

    try:
        root, changed, config = _from_the_root(files or [], policy_config)
        selections = select_stacks(changed, root, config)
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
