"""The pre-commit hook as a team runs it: ``pre-commit try-repo`` of this repository (which
installs it into a hook environment of its own, from the package index, as ``pre-commit
install`` would at a pinned ``rev``) in a team's repository holding a compliant stack (``dev``)
and a violating one (``legacy``), copied from ``stacks/``.

``try-repo`` takes the repository's tracked files with their uncommitted changes
(https://pre-commit.com/#pre-commit-try-repo) and installs the hook into a new temporary store
each time (``Store(tempdir)`` in ``pre_commit/commands/try_repo.py``): each call below installs
pushguard with the ``pulumi`` extra from the package index, minutes on a loaded machine (the
times are printed, ``-s``), so there are two calls, and the choice of stacks is tested without
pre-commit (tests/ci/test_precommit.py). ``PIP_NO_COMPILE`` spares pip byte-compiling the
thousands of pulumi-gcp modules a preview never imports; it changes nothing the test checks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The team's repository: the example project with both stacks, staged; its program's
    virtualenv (``Pulumi.yaml``'s ``.venv``) is this one."""
    repo = tmp_path_factory.mktemp("team").resolve()
    for name in ("Pulumi.yaml", "policy-config.json"):
        shutil.copy2(ROOT / name, repo / name)
    shutil.copytree(ROOT / "stacks", repo / "stacks", ignore=shutil.ignore_patterns("__py*"))
    (repo / ".venv").symlink_to(Path(sys.prefix))
    (repo / ".gitignore").write_text(".venv\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    return repo


@pytest.fixture(scope="module")
def hook_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(team: Path, home: Path, *files: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environ["PRE_COMMIT_HOME"] = str(home)
    environ["PIP_NO_COMPILE"] = "1"
    return subprocess.run(
        [str(BIN / "pre-commit"), "try-repo", str(ROOT), "pushguard-preview", "--files", *files],
        cwd=team,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )


def test_the_hook_passes_a_compliant_stack_and_fails_a_violating_one(
    team: Path, hook_home: Path
) -> None:
    started = time.monotonic()
    passed = try_repo(team, hook_home, "stacks/Pulumi.dev.yaml")
    print(f"\npre-commit try-repo, compliant stack: {time.monotonic() - started:.0f} s")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "pushguard preview (stacks this commit touches)" in passed.stdout
    assert "Passed" in passed.stdout

    started = time.monotonic()
    failed = try_repo(team, hook_home, "stacks/Pulumi.legacy.yaml")
    print(f"pre-commit try-repo, violating stack: {time.monotonic() - started:.0f} s")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    output = failed.stdout
    assert "Failed" in output
    assert "preview of stack legacy of . (stacks/Pulumi.legacy.yaml changed)" in output
    assert "preview of stack dev" not in output
    assert "Policy violations: 3 mandatory, 1 advisory. Preview FAILED." in output
