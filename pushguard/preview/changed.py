"""Which stacks a commit touches: the choice of the pre-commit hook (``pushguard pre-commit``,
:mod:`pushguard.cli.precommit`), from the files the commit changes.

Each changed file (a path relative to the repository root, as pre-commit passes them) belongs to
the nearest Pulumi project at or above its folder, searched as the Pulumi CLI searches
(:func:`pushguard.preview.project.project_file`) but never above the repository root. Then:

- ``Pulumi.<stack><ext>`` in the project's stack config folder (``stackConfigDir``; ``<ext>`` the
  project file's extension) selects that stack;
- the project file, or any file under the program's folder (``main``, default the project
  folder; for a ``main`` that is a file, its folder), selects every stack of the project (each
  with a config file: :meth:`~pushguard.preview.project.PulumiProject.stacks`);
- the policy config the hook judges with selects every stack of every project of the
  repository (the projects git tracks);
- a file that no longer exists (a deleted module) under the program's folder selects every
  stack of the project too (a deleted module can break the program); a deleted stack config
  file selects nothing (no stack left to preview);
- any other file (a README beside a program kept in ``main: src/``, a file outside every
  project) selects nothing.

The hook's paths are relative to the current folder (:func:`root_relative`), resolved against
the top of the git work tree (:func:`repository_root`).

Sources: "Creating new hooks" (``pass_filenames``: the staged files are passed as arguments),
https://pre-commit.com/#creating-new-hooks, and Pulumi's project file,
https://www.pulumi.com/docs/iac/concepts/projects/project-file/, and ``git rev-parse
--show-toplevel`` (the absolute path of the top-level directory of the working tree),
https://git-scm.com/docs/git-rev-parse.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pushguard.preview.project import PulumiProject, load_project, project_file

PROJECT_FILES = ("Pulumi.json", "Pulumi.yaml", "Pulumi.yml")


class RepositoryError(RuntimeError):
    """The repository's files cannot be listed (``git ls-files`` failed); the message says why."""


@dataclass(frozen=True, order=True)
class StackSelection:
    """A stack to preview: its project's folder, its name, and why it was chosen (for the
    hook's output: ``Pulumi.dev.yaml changed``)."""

    project: Path
    stack: str
    reason: str


def _project_of(path: Path, root: Path) -> Path | None:
    """The nearest folder at or above ``path``'s folder, not above ``root``, with a project
    file; ``None`` when there is none."""
    folder = path.parent
    while True:
        if project_file(folder) is not None:
            return folder
        if folder == root or root not in folder.parents:
            return None
        folder = folder.parent


def _program_folder(project: PulumiProject) -> Path:
    main = project.main.resolve()
    return main if main.is_dir() else main.parent


def _stack_of(project: PulumiProject, path: Path) -> str | None:
    """The stack whose config file ``path`` is, or ``None``."""
    prefix, name = "Pulumi.", path.name
    if path.parent != project.stack_config_dir.resolve() or not name.startswith(prefix):
        return None
    if not name.endswith(project.extension) or len(name) <= len(prefix) + len(project.extension):
        return None
    return name[len(prefix) : -len(project.extension)]


def repository_root(folder: Path) -> Path:
    """The top of the git work tree holding ``folder`` (``git rev-parse --show-toplevel``),
    resolved.

    Raises:
        RepositoryError: ``folder`` is not in a git work tree (or git cannot run); the message
            gives git's reason.
    """
    try:
        shown = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=folder,
            capture_output=True,
            check=True,
        ).stdout.decode()
    except OSError as error:
        raise RepositoryError(f"git cannot run: {error}") from None
    except subprocess.CalledProcessError as error:
        reason = error.stderr.decode(errors="replace").strip() or f"exit {error.returncode}"
        raise RepositoryError(f"not in a git work tree ({reason})") from None
    return Path(shown.rstrip("\n")).resolve()


def root_relative(files: Iterable[Path], cwd: Path, root: Path) -> list[Path]:
    """Each of ``files`` (relative to ``cwd``, or absolute) as a path relative to ``root``.

    Raises:
        RepositoryError: a path is outside ``root`` (the message names it as given).
    """
    root = root.resolve()
    relative = []
    for given in files:
        path = (cwd / given).resolve()
        if not path.is_relative_to(root):
            raise RepositoryError(f"{given}: outside the repository {root}")
        relative.append(path.relative_to(root))
    return relative


def repository_projects(root: Path) -> list[Path]:
    """The folders of every Pulumi project git tracks under ``root`` (sorted).

    Raises:
        RepositoryError: ``git ls-files`` failed (``root`` is not in a git work tree).
    """
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", *(f"*{name}" for name in PROJECT_FILES)],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as error:
        raise RepositoryError(f"cannot list the repository's Pulumi projects: {error}") from None
    folders = {
        (root / name).resolve().parent
        for name in listed.split("\0")
        if Path(name).name in PROJECT_FILES
    }
    return sorted(folders)


def select_stacks(
    files: Iterable[Path], root: Path, policy_config: Path | None = None
) -> list[StackSelection]:
    """The stacks the changed ``files`` select (see the module), each once with the first
    reason found, sorted by project and stack. ``root`` is the repository root; relative paths
    are relative to it.

    Raises:
        pushguard.preview.project.ProjectError: a touched project cannot be read (the hook fails
            closed: exit 2).
        RepositoryError: the policy config changed and git cannot list the projects.
    """
    root = root.resolve()
    projects: dict[Path, PulumiProject] = {}
    chosen: dict[tuple[Path, str], str] = {}

    def project_in(folder: Path) -> PulumiProject:
        if folder not in projects:
            projects[folder] = load_project(folder)
        return projects[folder]

    def every_stack(folder: Path, reason: str) -> None:
        for stack in project_in(folder).stacks():
            chosen.setdefault((folder, stack), reason)

    for given in files:
        path = (root / given).resolve()
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        if policy_config is not None and path == (root / policy_config).resolve():
            for folder in repository_projects(root):
                every_stack(folder, f"the policy config {shown} changed")
            continue
        deleted = not path.exists()
        found = _project_of(path, root) if deleted or path.is_file() else None
        if found is None:
            continue
        folder, project = found, project_in(found)
        stack = _stack_of(project, path)
        if stack is not None:
            if not deleted:
                chosen.setdefault((folder, stack), f"{shown} changed")
        elif path == project.file.resolve() or path.is_relative_to(_program_folder(project)):
            change = "deleted" if deleted else "changed"
            every_stack(folder, f"the program {change}: {shown}")
    return sorted(StackSelection(f, s, r) for (f, s), r in chosen.items())
