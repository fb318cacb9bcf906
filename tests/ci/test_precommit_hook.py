"""The pre-commit hook as a team runs it: ``pre-commit try-repo`` of this repository (which
installs it into a hook environment of its own, from the package index, as ``pre-commit
install`` would at a pinned ``rev``) in a team's repository holding a compliant stack (``dev``)
and a violating one (``legacy``), copied from ``stacks/``.

``try-repo`` takes the repository's tracked files with their uncommitted changes
(https://pre-commit.com/#pre-commit-try-repo). The hook environment is made once per module in
a ``PRE_COMMIT_HOME`` of its own; the time it took is printed (``-s``).
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
    print(f"\npre-commit try-repo, hook environment installed: {time.monotonic() - started:.0f} s")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "pushguard preview (stacks this commit touches)" in passed.stdout
    assert "Passed" in passed.stdout

    started = time.monotonic()
    failed = try_repo(team, hook_home, "stacks/Pulumi.legacy.yaml")
    print(f"pre-commit try-repo, environment reused: {time.monotonic() - started:.0f} s")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    output = failed.stdout
    assert "Failed" in output
    assert "preview of stack legacy of . (stacks/Pulumi.legacy.yaml changed)" in output
    assert "preview of stack dev" not in output
    assert "Policy violations: 3 mandatory, 1 advisory. Preview FAILED." in output


def test_a_program_change_previews_every_stack(team: Path, hook_home: Path) -> None:
    done = try_repo(team, hook_home, "stacks/__main__.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "preview of stack dev of . (the program changed: stacks/__main__.py)" in done.stdout
    assert "preview of stack legacy of . (the program changed" in done.stdout
