"""How a Node.js program's run ended, from what reached the engine: the SDK's report of an
unhandled error, or the exit status of ``process.exit``.

The Node.js SDK's run entry (``sdk/nodejs/cmd/run/run.ts`` and ``index.ts`` of pulumi/pulumi,
commit 1b5949891b3cefcb9974752b24a5ecef0acc86c8) catches what the program throws or rejects
with and reports it with the engine's ``Log`` at error severity, then exits with status 32
("error already shown", ``nodeJSProcessExitedAfterLoggingUserActionableMessage``):

- ``Running program 'PATH' failed with an unhandled exception:`` then the error as
  ``util.inspect`` prints it, colours included (``defaultErrorMessage`` in ``error.ts``): its
  stack (``Kind: message`` then ``at ... (file:line:column)`` frames, mapped to the TypeScript
  lines by ``source-map-support``), or a value that is not an ``Error`` as printed;
- a ``TSError`` (ts-node could not compile the program): its message, ``file(line,column):
  error TSnnnn: ...`` lines, files relative to the program's folder;
- a ``RunError`` (``pulumi.RunError``): its message alone; a ``ResourceError``: its message,
  with the stack unless hidden.

A program that ends with ``process.exit`` before the SDK registered the stack's outputs (or with
a status other than 0) ends as a Python program that calls ``sys.exit``: a failure (exit 2 of
the preview) naming the status, after the registrations are judged. Nothing here is trusted:
a program can log such a message itself, which can only fail the preview, never pass it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urlparse

from pushguard.preview.program import ProgramFailure

SHOWN = 32
"""The run entry's exit status after it reported an error to the engine."""

UNHANDLED = re.compile(r"^Running program '(?P<program>.*)' failed with an unhandled exception:\n")
"""The header of the run entry's report of an unhandled error."""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FRAME = re.compile(r"^\s*at (?:.*? \()?(?P<file>(?:file://)?/[^()]*?):(?P<line>\d+):\d+\)?$")
_KIND = re.compile(r"^(?P<kind>[A-Za-z_$][\w$]*)(?: \[[^\]]*\])?: (?P<message>.*)$", re.DOTALL)
_TS_ERROR = re.compile(r"^(?P<file>[^\n(]+)\((?P<line>\d+),\d+\): error TS\d+", re.MULTILINE)


class ProgramExit(ProgramFailure):
    """A Node.js program that ended with ``process.exit`` (``message``: its status) before it
    finished."""

    def __str__(self) -> str:
        return (
            f"the program called process.exit before it finished ({self.message}); what it "
            "declared after that was not previewed"
        )


def _path(text: str) -> Path:
    """A frame's file: a path, or a ``file:`` URL (ES modules)."""
    return Path(unquote(urlparse(text).path)) if text.startswith("file://") else Path(text)


def _frames(lines: Iterable[str], root: Path) -> list[tuple[Path, int]]:
    """The stack's frames in the project's own files (not ``node_modules``, not Node.js'
    internals), outermost first."""
    found = []
    for line in lines:
        match = _FRAME.match(line)
        if match is None:
            continue
        path = _path(match["file"])
        if "node_modules" in path.parts or not path.is_relative_to(root):
            continue
        found.append((path, int(match["line"])))
    return list(reversed(found))


def _split(body: str) -> tuple[str, list[str]]:
    """An inspected error's message lines and its stack lines (from the first ``at``)."""
    lines = body.splitlines()
    for index, line in enumerate(lines):
        if _FRAME.match(line):
            return "\n".join(lines[:index]).strip(), lines[index:]
    return body.strip(), []


def _where(path: Path, line: int, root: Path) -> str:
    return f"{path.relative_to(root)}:{line}"


def parse_report(message: str, root: Path, pwd: Path) -> ProgramFailure:
    """The failure the run entry reported in ``message`` (one ``Log`` at error severity):
    kind, message, ``where`` (the innermost frame in the project under ``root``; for a
    ``TSError``, its first error's file, relative to the program's folder ``pwd``)."""
    text = _ANSI.sub("", message)
    header = UNHANDLED.match(text)
    body = text[header.end() :] if header else text
    head, stack = _split(body)
    kind, said = "Error", head
    match = _KIND.match(head)
    if match is not None:
        kind, said = match["kind"], match["message"].strip()
    where = None
    frames = _frames(stack, root)
    if frames:
        where = _where(*frames[-1], root)
    elif kind == "TSError" and (ts := _TS_ERROR.search(said)) is not None:
        path = (pwd / ts["file"].strip()).resolve()
        if path.is_relative_to(root):
            where = _where(path, int(ts["line"]), root)
    said = said.removeprefix("\u2a2f ").strip()  # ts-node's cross before its message
    return ProgramFailure(kind, said or "(no message)", where, traceback=body.strip())


def node_failure(
    logs: Iterable[tuple[str, str]],
    *,
    returncode: int,
    finished: bool,
    stderr: str,
    root: Path,
    pwd: Path,
    ran_in: str,
) -> tuple[ProgramFailure | None, str | None]:
    """How the program failed (``None`` when it finished: exit 0 after the stack's outputs
    were registered; the caller handles a signal), and the error ``Log`` message it was read
    from (``None`` if none). ``logs``: the run's ``(level, message)`` logs; ``ran_in``: where
    the program ran, added to a missing module's message.

    Status 32: the last error the run entry reported (an unhandled error's report first),
    else what it printed on stderr (it prints there when the program's entry point is
    missing). Any other status, or 0 before the stack's outputs: :class:`ProgramExit`.
    """
    if returncode < 0 or (returncode == 0 and finished):
        return None, None
    if returncode != SHOWN:
        return ProgramExit("process.exit", f"exit status {returncode}", None), None
    errors = [message for level, message in logs if level == "error"]
    reports = [message for message in errors if UNHANDLED.match(_ANSI.sub("", message))]
    used = (reports or errors)[-1] if reports or errors else None
    if used is not None:
        failure = parse_report(used, root, pwd)
    else:
        said = " ".join(line.strip() for line in stderr.strip().splitlines()[-6:])
        failure = ProgramFailure("Error", said or "exit status 32 with no message", None)
    if "Cannot find module" in failure.message:
        failure = ProgramFailure(
            failure.kind,
            f"{failure.message} {ran_in}",
            failure.where,
            traceback=failure.traceback,
        )
    return failure, used
