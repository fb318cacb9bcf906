"""Issue 37: the program's process as ``pulumi preview`` starts it, and what pushguard's
bootstrap changes there for speed without changing what the program registers.

Run as users run it: the ``pushguard`` console script, the program in the team's virtual
environment."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.engine.conftest import preview

SEES_ITS_COMMAND_LINE = (
    "import json, pathlib\n"
    "argv = pathlib.Path('/proc/self/cmdline').read_bytes().decode().split('\\0')\n"
    "pathlib.Path('seen.json').write_text(json.dumps(argv))\n"
)


def _parallel(folder: Path) -> str:
    argv = json.loads((folder / "seen.json").read_text())
    return argv[argv.index("--parallel") + 1]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, str(len(os.sched_getaffinity(0)) * 4)),
        ("3", "3"),
        ("0", str(len(os.sched_getaffinity(0)) * 4)),
    ],
)
def test_the_program_gets_the_parallelism_pulumi_preview_gives_it(
    team_project: Callable[..., Path], given: str | None, expected: str
) -> None:
    """``pulumi preview`` without ``--parallel`` passes ``PULUMI_PARALLEL`` when positive, else
    the CPUs times 4 (``defaultParallel`` in pkg/cmd/pulumi/operations/up.go); pushguard passed
    16 whatever the machine."""
    folder = team_project(SEES_ITS_COMMAND_LINE)
    run = preview(folder, "--stack", "dev", extra_env={"PULUMI_PARALLEL": given} if given else None)
    assert run.code == 0, run.stderr
    assert _parallel(folder) == expected


LATE_REGISTRATION = (
    "import asyncio\n"
    "import pulumi\n"
    "import pulumi_gcp as gcp\n"
    "loop = asyncio.get_event_loop()\n"
    "late = loop.create_future()\n"
    "loop.call_later(0.5, late.set_result, 'http://late.example.com/push')\n"
    "pulumi.Output.from_input(late).apply(lambda endpoint: gcp.pubsub.Subscription(\n"
    "    'late', topic='orders', push_config={'push_endpoint': endpoint}))\n"
)


def test_a_subscription_registered_after_a_quiet_half_second_is_judged(
    team_project: Callable[..., Path],
) -> None:
    """The bootstrap lets the program's tasks run before the SDK's own wait and stops looking
    after 50 ms without progress; a registration that comes later (here from a future resolved
    half a second after the program's body) is still waited for by the SDK and judged."""
    run = preview(team_project(LATE_REGISTRATION), "--stack", "dev", "--format", "json")
    assert run.code == 1, run.stderr
    rules = {(v["policy"], v["urn"].rsplit("::", 1)[-1]) for v in run.json()["violations"]}
    assert ("push-endpoint-https", "late") in rules


BACKGROUND_TICKER = (
    "import asyncio\n"
    "import pulumi_gcp as gcp\n"
    "async def ticker():\n"
    "    while True:\n"
    "        asyncio.ensure_future(asyncio.sleep(0.001))\n"
    "        await asyncio.sleep(0.001)\n"
    "asyncio.ensure_future(ticker())\n"
    "gcp.pubsub.Subscription('orders', topic='orders',\n"
    "    push_config={'push_endpoint': 'http://hooks.example.com/push'})\n"
)


def test_a_program_with_a_task_that_never_ends_still_finishes(
    team_project: Callable[..., Path],
) -> None:
    """A background task that starts tasks forever: the SDK waits for Outputs and registrations,
    not for every task (pulumi/pulumi#15744), so ``pulumi preview`` finishes; pushguard's
    bootstrap must not wait for it either (it stops when the tasks outstanding stop falling)."""
    run = preview(team_project(BACKGROUND_TICKER), "--stack", "dev", "--format", "json")
    assert run.code == 1, run.stderr
    assert "push-endpoint-https" in {v["policy"] for v in run.json()["violations"]}
