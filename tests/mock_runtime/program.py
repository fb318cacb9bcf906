"""The test harness's runner of a project's program in this interpreter, under the SDK's mock
runtime (:mod:`tests.mock_runtime.engine`), as the Python language host would run it: the entry
point with ``__name__ == "__main__"``, the program folder as working directory and first on
``sys.path``; restored afterwards, so several programs can run in one process.

Tests only: ``pushguard preview`` runs programs under its engine (:mod:`pushguard.engine`).
"""

from __future__ import annotations

import os
import runpy
import sys
import sysconfig
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pulumi

from pushguard.components.spec import PushSubscriptionInputError
from pushguard.gate.result import ResourceRecord
from pushguard.preview.program import ProgramFailure
from pushguard.preview.project import PulumiProject
from pushguard.preview.transforms import TransformError
from tests.mock_runtime.engine import DuplicateResourceURNError, ProgramRun, run_program_capturing

_TOOL_DIRS = tuple(
    Path(path).resolve()
    for path in {
        sys.prefix,
        sys.base_prefix,
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
        str(Path(__file__).resolve().parents[1]),  # pushguard itself (also an editable install)
    }
)


def is_program_file(filename: str, root: Path) -> bool:
    """True for a file of the team's program: an absolute path under ``root`` and not of an
    installed package, the interpreter or pushguard (a virtual environment inside the project
    folder is not the program; ``<frozen runpy>`` and ``<string>`` are not files)."""
    if not os.path.isabs(filename):
        return False
    path = Path(filename).resolve()
    return path.is_relative_to(root) and not any(path.is_relative_to(d) for d in _TOOL_DIRS)


def run_project_program(
    project: PulumiProject,
    stack: str,
    mocks: pulumi.runtime.Mocks,
    config: Mapping[str, str],
    secret_keys: Iterable[str] = (),
    *,
    preview: bool = True,
    on_record: Callable[[ResourceRecord], None] | None = None,
) -> tuple[ProgramRun, ProgramFailure | None]:
    """Run ``project``'s program for ``stack`` under ``mocks``; ``on_record`` sees each
    registration as it happens.

    Returns the graph it registered (also when it failed part-way) and ``None``, or the
    :class:`ProgramFailure`. Never raises for an error in the program.
    """
    entry = project.entry_point.resolve()
    folder = entry.parent
    saved_cwd, saved_path, saved_modules = os.getcwd(), list(sys.path), set(sys.modules)
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    try:
        run, error = run_program_capturing(
            lambda: runpy.run_path(str(entry), run_name="__main__"),
            mocks,
            project=project.name,
            stack=stack,
            config=config,
            secret_keys=secret_keys,
            preview=preview,
            on_record=on_record,
        )
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        _forget_modules(folder, saved_modules)
    return run, (None if error is None else describe_failure(error, project.root.resolve()))


def _forget_modules(root: Path, keep: set[str]) -> None:
    """Unload modules the program imported from its own folder (a next program may have its own
    module of the same name)."""
    for name in set(sys.modules) - keep:
        module_file = getattr(sys.modules[name], "__file__", None)
        if module_file and Path(module_file).resolve().is_relative_to(root):
            del sys.modules[name]


def _inner(error: BaseException) -> BaseException | None:
    """The error ``error`` was raised from: its ``__cause__``, else its ``__context__`` unless
    ``raise ... from None`` suppressed it (then the chain ends here)."""
    if error.__cause__ is not None:
        return error.__cause__
    return None if error.__suppress_context__ else error.__context__


def describe_failure(error: BaseException, root: Path) -> ProgramFailure:
    """The innermost error of ``error``'s cause chain (Pulumi wraps errors raised while it
    resolves inputs in ``ValueError("While processing ...")``) and where the program raised it.

    The chain is followed as Python prints it: through ``__cause__``, and through
    ``__context__`` only where the context was not suppressed (``raise ... from None`` ends it,
    so a component's own message is kept, not a leftover error it handled).
    """
    innermost = error
    seen = {id(error)}
    while (inner := _inner(innermost)) is not None and id(inner) not in seen:
        seen.add(id(inner))
        innermost = inner
    where = _where(innermost, error, root)
    text = "".join(traceback.format_exception(error))
    if isinstance(innermost, SystemExit):
        return ProgramFailure("SystemExit", f"exit status {innermost.code}", where, traceback=text)
    message = str(innermost).strip() or repr(innermost)
    if isinstance(innermost, PushSubscriptionInputError):
        return ProgramFailure(
            type(innermost).__name__,
            message,
            where,
            component=innermost.component,
            problems=innermost.problems,
            traceback=text,
        )
    return ProgramFailure(type(innermost).__name__, message, where, traceback=text)


def _place(filename: str, line: int | None, root: Path) -> str | None:
    if not is_program_file(filename, root):
        return None
    return f"{Path(filename).resolve().relative_to(root)}:{line or 0}"


def _where(innermost: BaseException, error: BaseException, root: Path) -> str | None:
    """The program's ``file:line`` for a failure, relative to ``root``: a syntax error's own
    position (its traceback is the importer's, ``<frozen runpy>``), the second registration of a
    duplicate URN, the deepest frame of the program in a failed transform's traceback (the SDK's
    callbacks server reports it as text), else the deepest frame of the program in the
    innermost error's traceback, then the outer error's."""
    if isinstance(innermost, SyntaxError) and innermost.filename:
        place = _place(innermost.filename, innermost.lineno, root)
        if place:
            return place
    if isinstance(innermost, DuplicateResourceURNError) and innermost.second:
        place = _place(*innermost.second, root)
        if place:
            return place
    candidates: list[list[tuple[str, int | None]]] = []
    if isinstance(innermost, TransformError):
        candidates.append(list(innermost.frames))
    for candidate in (innermost, error):
        candidates.append(
            [(f.filename, f.lineno) for f in traceback.extract_tb(candidate.__traceback__)]
        )
    for listed in candidates:
        found = [place for filename, line in listed if (place := _place(filename, line, root))]
        if found:
            return found[-1]
    return None
