"""The script the program's own interpreter runs: Pulumi's ``pulumi-language-python-exec``, with
pushguard's report of a failure.

This file is copied to a private folder and run there (``python BOOTSTRAP --monitor ADDR
--engine ADDR --project P --root_directory R --stack S --pwd DIR --dry_run true --parallel N
PROGRAM``, the arguments the language host builds in ``constructArguments``), so it imports
nothing of pushguard: the program's environment need not have pushguard. It uses only the SDK's
public run API, as the host's executor does (``sdk/python/cmd/pulumi-language-python-exec`` of
pulumi/pulumi, commit 1b5949891b3c): ``pulumi.runtime.get_config_env``,
``get_config_secret_keys_env``, ``set_all_config``, ``Settings``, ``configure`` and
``run_in_stack``, with the program run by ``runpy.run_path(PROGRAM, run_name="__main__")``.

Where it differs: a program that raises, or calls ``sys.exit`` (any code), is reported to the
engine with one ``Log`` message at error severity, :data:`FAILURE_MARK` then a JSON object
(``kind``, ``message``, ``component``, ``problems``, ``frames``, ``traceback``), and the process
exits with the host's "error already shown" code 32 (the traceback is in the report, which
``pushguard preview --debug`` prints). And the interpreter's thread switch interval is
:data:`SWITCH_INTERVAL` (see there): scheduling only, nothing the program sees. Nothing here
is trusted by the engine: the program could send such a message itself, which can only fail the
preview, never pass it (what the engine judges is what was registered).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import logging
import os
import runpy
import sys
import sysconfig
import traceback
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

try:
    import pulumi
    import pulumi.runtime
    from pulumi.runtime.proto import engine_pb2
except ImportError:
    print(traceback.format_exc(), file=sys.stderr)
    print(
        f"\nThe Pulumi SDK is not installed in {sys.executable} (the program's interpreter). "
        "If you are running in a virtualenv, you must run pip install -r requirements.txt "
        "from inside the virtualenv.",
        file=sys.stderr,
    )
    sys.exit(1)

FAILURE_MARK = "pushguard-program-failure\t"
"""Starts the ``Log`` message that reports the program's failure (the JSON follows)."""

SWITCH_INTERVAL = 0.001
"""The program's thread switch interval in seconds (CPython's default is 0.005:
https://docs.python.org/3/library/sys.html#sys.setswitchinterval).

The SDK sends each registration from a thread of the loop's executor and, after the program's
body, drains its outstanding Outputs in the main thread with one ``asyncio.wait`` over all of them
per completed Output (``wait_for_rpcs`` in ``pulumi/runtime/stack.py``, pulumi 3.204 and 3.272
alike): O(outstanding) work per round, 15,301 Outputs at the start for 100 ``PushSubscription``
components. While the main thread is busy, every executor thread whose response has arrived waits
up to a whole switch interval for the GIL, several times per call (the convoy effect of CPython's
GIL: python/cpython#90204). Measured (``bench/preview_bench.py --one 100``, 3 alternating runs
each, 2 cores): the program took 25.7, 32.6 and 27.1 s at 5 ms against 11.9, 11.4 and 11.2 s at
1 ms (11.5 s median at 0.5 ms). Only scheduling changes: which thread runs when, never what the
program computes or sends."""

SHOWN = 32
"""The exit code that tells the language host an error was already shown to the user."""


def _tool_dirs() -> tuple[str, ...]:
    """Folders of the interpreter, its installed packages and this script (not the program)."""
    paths = sysconfig.get_paths()
    found = {sys.prefix, sys.base_prefix, paths["purelib"], paths["platlib"]}
    found.add(os.path.dirname(os.path.abspath(__file__)))
    return tuple(os.path.realpath(path) + os.sep for path in found)


def _innermost(error: BaseException) -> BaseException:
    """The innermost error of the cause chain, followed as Python prints it."""
    seen = {id(error)}
    while True:
        inner = error.__cause__
        if inner is None and not error.__suppress_context__:
            inner = error.__context__
        if inner is None or id(inner) in seen:
            return error
        seen.add(id(inner))
        error = inner


def _frames(error: BaseException, outer: BaseException) -> list[list[Any]]:
    """The program's frames (absolute paths outside the interpreter and its packages), from
    the innermost error's traceback, else the outer one's; a syntax error's own position."""
    tools = _tool_dirs()

    def mine(path: str) -> bool:
        real = os.path.realpath(path) if os.path.isabs(path) else ""
        return bool(real) and not real.startswith(tools)

    if isinstance(error, SyntaxError) and error.filename and mine(error.filename):
        return [[os.path.realpath(error.filename), error.lineno or 0]]
    for candidate in (error, outer):
        found = [
            [os.path.realpath(f.filename), f.lineno or 0]
            for f in traceback.extract_tb(candidate.__traceback__)
            if mine(f.filename)
        ]
        if found:
            return found
    return []


def describe(error: BaseException) -> dict[str, Any]:
    """What the engine is told about the program's failure (see the module's docstring)."""
    inner = _innermost(error)
    if isinstance(inner, SystemExit):
        kind, message = "SystemExit", f"exit status {inner.code}"
    else:
        kind, message = type(inner).__name__, str(inner).strip() or repr(inner)
    problems = getattr(inner, "problems", ())
    component = getattr(inner, "component", None)
    return {
        "kind": kind,
        "message": message,
        "component": component if isinstance(component, str) else None,
        "problems": [[str(f), str(m)] for f, m in problems] if isinstance(problems, tuple) else [],
        "frames": _frames(inner, error),
        "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__)),
    }


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Execute a Pulumi Python program")
    for name in ("project", "root_directory", "stack", "parallel", "dry_run", "pwd"):
        parser.add_argument(f"--{name}")
    for name in ("monitor", "engine", "tracing", "organization"):
        parser.add_argument(f"--{name}")
    parser.add_argument("PROGRAM")
    parser.add_argument("ARGS", nargs="*")
    return parser.parse_args()


def _configure(args: argparse.Namespace) -> Any:
    """Config and settings, as the host's executor sets them (older SDKs: fewer settings)."""
    config = pulumi.runtime.get_config_env()
    if hasattr(pulumi.runtime, "get_config_secret_keys_env"):
        secrets = pulumi.runtime.get_config_secret_keys_env()
        pulumi.runtime.set_all_config(config, secrets)
    else:
        for key, value in config.items():
            pulumi.runtime.set_config(key, value)
    wanted = {
        "monitor": args.monitor,
        "engine": args.engine,
        "project": args.project,
        "stack": args.stack,
        "parallel": int(args.parallel),
        "dry_run": args.dry_run == "true",
        "organization": args.organization,
        "root_directory": args.root_directory,
    }
    accepted = inspect.signature(pulumi.runtime.Settings.__init__).parameters
    settings = pulumi.runtime.Settings(**{k: v for k, v in wanted.items() if k in accepted})
    if settings.engine is not None:
        settings.engine = _WithoutDebug(settings.engine)
    pulumi.runtime.configure(settings)
    return settings


class _WithoutDebug:
    """The engine client, except that ``Log`` at debug severity is not sent: the SDK sends every
    ``pulumi.log.debug`` line as a blocking ``Log`` call (``pulumi/log.py``), several per
    resource, and pushguard's engine keeps none of them (the CLI shows them only with ``-v``).
    Nothing else changes. Measured (20 components, 221 resources, 3 runs each alternating, a
    loaded 2-core machine): 5.1 s median against 5.9 s; py-spy put 35% of the program's main
    thread in ``pulumi.log.debug``."""

    def __init__(self, stub: Any) -> None:
        self._stub = stub

    def Log(self, request: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - the stub's name
        if request.severity == engine_pb2.DEBUG:
            return None
        return self._stub.Log(request, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stub, name)


SETTLE_POLL = 0.05
"""Seconds between two looks at the loop's tasks in :func:`_settled`."""


async def _settled() -> None:
    """Wait, without a look at any task's value, while the tasks the program's body started
    make progress: return when none is left, or when :data:`SETTLE_POLL` seconds passed without
    fewer tasks outstanding (so a program whose background task starts tasks forever is not
    held here: the SDK's own wait does not wait for such tasks).

    Returned by the program function to ``run_in_stack``, which awaits it before the SDK's own
    wait for outstanding work (an SDK that has ``pulumi.run`` awaits what the function returns:
    ``run_in_stack`` in ``pulumi/runtime/stack.py``, pulumi/pulumi#23945, commit f2df4f614b, SDK
    3.254; an older SDK is given nothing). The SDK's wait then finds little outstanding: its
    ``asyncio.wait`` over every outstanding Output, once per completed Output, costs about 3 us
    an Output (15,301 at the start for 100 ``PushSubscription`` components), and while it runs
    the responses of the monitor wait for the GIL (see :data:`SWITCH_INTERVAL`). Here the main
    thread sleeps between looks, so the executor threads deliver the responses at once. Nothing
    is awaited, cancelled or consumed: the SDK's wait still waits for everything, raises every
    failure and decides when the program is done."""
    me = asyncio.current_task()

    def outstanding() -> int:
        return sum(1 for task in asyncio.all_tasks() if task is not me and not task.done())

    before = outstanding()
    while before:
        await asyncio.sleep(SETTLE_POLL)
        now = outstanding()
        if now >= before:  # no fewer: a task that starts tasks forever ends it too
            return
        before = now


def main() -> None:
    """Run the program; exit 0 when it finished, :data:`SHOWN` when it failed (reported)."""
    args = _arguments()
    settings = _configure(args)
    sys.argv = [args.PROGRAM, *args.ARGS]
    if args.pwd is not None:
        os.chdir(args.pwd)
    sys.setswitchinterval(SWITCH_INTERVAL)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    executor = ThreadPoolExecutor(max_workers=max(settings.parallel or 1, 1) * 4)
    loop.set_default_executor(executor)
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    exit_code = SHOWN
    try:

        def program() -> Awaitable[None] | None:
            runpy.run_path(args.PROGRAM, run_name="__main__")
            return _settled() if hasattr(pulumi, "run") else None

        loop.run_until_complete(pulumi.runtime.run_in_stack(program))
        exit_code = 0
    except BaseException as error:  # sys.exit too: every ending is reported
        pulumi.log.error(FAILURE_MARK + json.dumps(describe(error)))
    finally:
        executor.shutdown(wait=True)
        loop.close()
        sys.stdout.flush()
        sys.stderr.flush()
    sys.exit(exit_code)


if __name__ == "__main__":
    main()
