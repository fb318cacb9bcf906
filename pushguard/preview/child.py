"""The program's side of an isolated preview: ``python -m pushguard.preview.child``.

The parent (:mod:`pushguard.preview.isolation`) starts this module in a child process with the
program's stdout and stderr sent to files of its own, writes one JSON job to its stdin, and reads
the child's messages from a separate pipe (the job names its file descriptor). The child runs the
program under the mock runtime and streams, as JSON lines on that pipe, each registration as it
happens and, once the program has returned, one ``done`` message. Every message carries the job's
nonce, so nothing the program writes can pass for one.

Nothing the program does reaches the parent's stdout: it has no handle on it. Whatever ends the
child before ``done`` (``os._exit``, a signal, an interpreter crash) is seen by the parent as a
failed run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pulumi

from pushguard.gate.result import ResourceRecord
from pushguard.preview.mocks import GcpMocks
from pushguard.preview.program import ProgramFailure, is_program_file, run_project_program
from pushguard.preview.project import load_project


def _send(channel: IO[str], nonce: str, kind: str, body: Any) -> None:
    channel.write(json.dumps({"nonce": nonce, "kind": kind, "body": body}) + "\n")
    channel.flush()


def _failure(failure: ProgramFailure | None) -> dict[str, Any] | None:
    return None if failure is None else dataclasses.asdict(failure)


@contextmanager
def call_stacks(root: Path) -> Iterator[dict[tuple[str, str], list[list[list[Any]]]]]:
    """While active, every ``pulumi.Resource`` constructed records the program's frames (those
    under ``root``, outermost first, as ``[path, line]``) under its ``(type, name)``: the user's
    call stack for a resource made in a helper or a loop (the SDK sends only one frame)."""
    stacks: dict[tuple[str, str], list[list[list[Any]]]] = {}
    original = pulumi.Resource.__init__

    def recording(self: pulumi.Resource, t: str, name: str, *args: Any, **kwargs: Any) -> None:
        frames = [
            [frame.filename, frame.lineno]
            for frame in traceback.extract_stack()[:-1]
            if is_program_file(frame.filename, root)
        ]
        stacks.setdefault((t, name), []).append(frames)
        original(self, t, name, *args, **kwargs)

    pulumi.Resource.__init__ = recording  # type: ignore[method-assign]
    try:
        yield stacks
    finally:
        pulumi.Resource.__init__ = original  # type: ignore[method-assign]


def run_job(job: dict[str, Any], channel: IO[str]) -> None:
    """Run the program the job describes, streaming to ``channel``.

    ``job``: ``nonce``, ``project_root`` (the folder of ``Pulumi.yaml``), ``stack``, ``config``
    (``{"namespace:key": text}``), ``secret_keys``, ``mocks`` (``project``, ``region``,
    ``project_numbers``, ``providers``: the other packages' default provider configuration).
    """
    nonce = job["nonce"]
    project = load_project(Path(job["project_root"]))
    spec = job["mocks"]
    mocks = GcpMocks(
        project=spec["project"],
        project_numbers=spec["project_numbers"],
        region=spec["region"],
        providers=spec.get("providers"),
    )

    with call_stacks(project.root.resolve()) as stacks:

        def on_record(record: ResourceRecord) -> None:
            made = stacks.get((record.type, record.name))
            frames = made.pop(0) if made else []
            body = {**dataclasses.asdict(record), "call_stack": frames}
            if record.source is None and frames:
                # The SDK sends no sourcePosition for a resource constructed as
                # pulumi.CustomResource(...) itself: it looks for a third __init__ frame
                # (Resource, CustomResource, the concrete class) and finds none
                # (pulumi/runtime/resource.py, _get_stack_trace). The program's innermost
                # frame is the line that called the constructor, as for a provider's class.
                body["source"] = frames[-1]
            _send(channel, nonce, "record", body)

        run, failure = run_project_program(
            project,
            job["stack"],
            mocks,
            job["config"],
            job["secret_keys"],
            on_record=on_record,
        )
    _send(
        channel,
        nonce,
        "done",
        {
            "failure": _failure(failure),
            "logs": run.logs,
            "outputs": run.outputs,
            "placeholder_projects": sorted(mocks.placeholder_projects),
            "echoed_calls": sorted(mocks.echoed_calls),
            "unknown_calls": sorted(mocks.unknown_calls),
        },
    )


def main() -> None:
    """Read the job from stdin, then run it with ``/dev/null`` as stdin, as a program run
    without a terminal has (the job pipe is gone: a program never reads the job; ``sys.stdin``
    is open, so ``isatty()`` and ``read()`` work)."""
    job = json.loads(sys.stdin.read())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the program's stdin
    with os.fdopen(job["channel"], "w", encoding="utf-8") as channel:
        try:
            run_job(job, channel)
        except Exception:  # pushguard's own failure, not the program's: say so, then exit 2
            _send(channel, job["nonce"], "crash", traceback.format_exc())
            raise SystemExit(2) from None
    # Everything is sent. End here: the interpreter's teardown (the runtime's event loop being
    # collected, say) may print warnings that differ from run to run, and would make the
    # program's output, which the report keeps, non-deterministic.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
