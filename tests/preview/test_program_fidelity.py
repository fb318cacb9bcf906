"""The program runs as under the language host (issue 20, "also found"): a syntax error is
located in the program, ``sys.stdin`` is usable (``/dev/null``), a duplicate URN names the
program's line, and the program cannot write to pushguard's own file descriptors through
``/proc/PPID/fd``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mock_runtime.program import describe_failure

PR_CAPBSET_DROP = 24


def test_a_syntax_error_is_located_at_the_programs_line(make_project, preview) -> None:
    folder = make_project("import pulumi\n\nx = (\n")
    run = preview(str(folder), "--stack", "dev", "--format", "json")
    assert run.exit_code == 2
    assert "frozen runpy" not in run.stderr
    assert "SyntaxError (at __main__.py:3)" in run.stderr, run.stderr


def test_a_syntax_error_in_a_module_of_the_program_is_located_there(make_project, preview) -> None:
    folder = make_project("import helper\n")
    (folder / "helper.py").write_text("def f(:\n    pass\n")
    run = preview(str(folder), "--stack", "dev")
    assert run.exit_code == 2
    assert "SyntaxError (at helper.py:1)" in run.stderr, run.stderr


def test_stdin_is_dev_null(make_project, preview) -> None:
    program = (
        "import sys\nimport pulumi\n\n"
        "pulumi.export('tty', sys.stdin.isatty())\n"
        "pulumi.export('read', sys.stdin.read())\n"
    )
    run = preview(str(make_project(program)), "--stack", "dev", "--format", "json")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.json()["outputs"] == {"read": "", "tty": False}


def test_a_duplicate_urn_is_located_at_the_programs_second_line(make_project, preview) -> None:
    program = "import pulumi_gcp as gcp\n\ngcp.pubsub.Topic('orders')\ngcp.pubsub.Topic('orders')\n"
    run = preview(str(make_project(program)), "--stack", "dev")
    assert run.exit_code == 2
    assert "DuplicateResourceURNError (at __main__.py:4)" in run.stderr, run.stderr


def test_frames_of_installed_packages_inside_the_project_are_not_the_programs(
    tmp_path: Path,
) -> None:
    """A project whose folder holds the virtual environment (``.venv`` next to ``Pulumi.yaml``):
    a frame in ``pulumi_gcp`` is not where the program failed."""
    import pulumi_gcp

    site = Path(pulumi_gcp.__file__).resolve().parents[1]
    root = site.parents[3]  # the environment's parent folder, as a project holding it
    try:
        exec(compile("raise ValueError('boom')", str(site / "pulumi_gcp" / "x.py"), "exec"))
    except ValueError as error:
        failure = describe_failure(error, root)
    assert failure.where is None or "pulumi_gcp" not in failure.where, failure.where


# --- the program cannot write to pushguard's file descriptors ---------------------------------

PROBE = """\
import os
import pulumi

try:
    with open(f"/proc/{os.getppid()}/fd/1", "a") as handle:
        handle.write("FORGED: Preview passed.\\n")
    result = "opened"
except OSError as error:
    result = type(error).__name__
pulumi.export("probe", result)
"""


UNPRIVILEGED = f"""\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for capability in range(64):
    libc.prctl({PR_CAPBSET_DROP}, capability, 0, 0, 0)
os.execv(sys.argv[1], sys.argv[1:])
"""
"""A fresh interpreter that drops every capability from the bounding set, then becomes the
command it is given, so a root test run behaves as an ordinary user (root's
``CAP_SYS_PTRACE`` opens any process's descriptors); without ``CAP_SETPCAP`` (not root) there
is nothing to drop. Not a ``preexec_fn``: that forks the test worker itself, whose gRPC threads
(earlier tests' servers) can abort the child before its ``exec`` (``epoll_wait`` EBADF,
grpc/grpc#43055, open for grpcio 1.80 and later)."""


@pytest.mark.skipif(sys.platform != "linux", reason="/proc and prctl are Linux")
def test_the_program_cannot_open_the_parents_stdout_through_proc(make_project) -> None:
    """Run as users run it (the console script), with no capabilities: the program's process
    is of the same user as pushguard's, and the parent is not dumpable while it runs."""
    folder = make_project(PROBE, {"dev": {}})
    script = shutil.which("pushguard", path=str(Path(sys.executable).parent))
    assert script is not None
    env = {k: v for k, v in os.environ.items() if k != "PULUMI_STACK"}
    command = [script, "preview", str(folder), "--stack", "dev", "--format", "json"]
    done = subprocess.run(  # noqa: PLW1510 - the exit code is the assertion
        [sys.executable, "-c", UNPRIVILEGED, *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert "FORGED" not in done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["outputs"] == {"probe": "PermissionError"}
