"""Several gate runs, one exit code: ``pushguard preview`` per stack (or one ``pushguard
analyze``), each in a process of its own, for the GitHub Action (:mod:`pushguard.cli.action`)
and the pre-commit hook (:mod:`pushguard.cli.precommit`).

The exit codes combine as the worst of them: 2 when any run failed or could not judge (or
ended in any other way: a signal, a code that is not 0, 1 or 2), else 1 when any found a
mandatory violation, else 0. A stack that fails does not stop the others: every stack is
judged and reported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

GATE_CODES = (0, 1, 2)
"""The exit codes of ``pushguard preview`` and ``analyze`` (a public contract)."""


def combined_exit_code(codes: Iterable[int]) -> int:
    """The exit code of several gate runs: the worst, with any code outside
    :data:`GATE_CODES` (a run killed by a signal, a negative return code) counted as 2; 0 when
    there is no run."""
    worst = 0
    for code in codes:
        worst = max(worst, code if code in GATE_CODES else 2)
    return worst


def gate_argv(args: Sequence[str]) -> list[str]:
    """The command line of ``pushguard ARGS`` with this interpreter (``python -m
    pushguard.cli``): the same installation, whatever ``pushguard`` is first on ``PATH``."""
    return [sys.executable, "-m", "pushguard.cli", *args]


RUNNER_FILES = ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE")
"""The variables naming GitHub's environment files (the job summary, the step's outputs, the
next steps' environment and ``PATH``, the action's state:
https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#environment-files).
A gate run (and the team's program it starts) never gets them: only the action writes there."""


def run_gate(args: Sequence[str], cwd: Path) -> int:
    """Run ``pushguard ARGS`` in ``cwd``, its output going to this process's stdout and stderr
    (the CI log, the hook's output), without :data:`RUNNER_FILES` in its environment; its exit
    code. A command that cannot start is 2."""
    sys.stdout.flush()
    sys.stderr.flush()
    env = {k: v for k, v in os.environ.items() if k not in RUNNER_FILES}
    try:
        return subprocess.run(gate_argv(args), cwd=cwd, env=env, check=False).returncode
    except OSError as error:
        print(f"pushguard: error: cannot run pushguard {' '.join(args)}: {error}", file=sys.stderr)
        return 2
