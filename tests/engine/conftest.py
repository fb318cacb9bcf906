"""Fixtures for ``pushguard preview`` under the protocol engine, run as a user runs it: the
``pushguard`` console script in a subprocess, and a project whose ``Pulumi.yaml`` names a
virtual environment of its own.

The team's virtual environment is made with ``python -m venv`` in a temporary folder; instead of
a ``pip install`` (no network here) a ``.pth`` file in its ``site-packages`` puts this checkout
and the test interpreter's ``site-packages`` (Pulumi, pulumi-gcp, pydantic) on its path, which is
what installing pushguard and the team's requirements into it gives. Its own ``site-packages``
can hold modules pushguard's environment does not have (:data:`TEAM_ONLY_MODULE`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PUSHGUARD = Path(sys.executable).with_name("pushguard")
TEAM_ONLY_MODULE = "acme_team_naming"
"""A module only the team's virtual environment has."""


@dataclass(frozen=True)
class Run:
    """One ``pushguard preview`` run: exit code, stdout, stderr."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """stdout as JSON (``--format json``)."""
        return json.loads(self.stdout)


@pytest.fixture(scope="session")
def team_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment of the team's, outside pushguard's (see the module docstring)."""
    venv = tmp_path_factory.mktemp("team") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    site = Path(purelib)
    ours = sysconfig.get_paths()["purelib"]
    (site / "pushguard_and_requirements.pth").write_text(f"{ROOT}\n{ours}\n")
    (site / f"{TEAM_ONLY_MODULE}.py").write_text("def name(n):\n    return f'acme-{n}'\n")
    return venv


def project_file(venv: Path | None, **extra: Any) -> str:
    """A ``Pulumi.yaml`` (as JSON, which is YAML) naming ``venv`` as the virtualenv."""
    runtime: Any = "python"
    if venv is not None:
        runtime = {"name": "python", "options": {"virtualenv": str(venv)}}
    return json.dumps({"name": "team", "runtime": runtime, **extra})


@pytest.fixture
def team_project(tmp_path: Path, team_venv: Path) -> Callable[..., Path]:
    """A project in ``tmp_path/project`` run in :func:`team_venv`: ``program`` is its
    ``__main__.py``, ``files`` other files of the program, ``stack`` the ``dev`` config."""

    def make(
        program: str, files: dict[str, str] | None = None, stack: dict[str, Any] | None = None
    ) -> Path:
        folder = tmp_path / "project"
        folder.mkdir()
        (folder / "Pulumi.yaml").write_text(project_file(team_venv))
        (folder / "__main__.py").write_text(program)
        for name, text in (files or {}).items():
            (folder / name).write_text(text)
        config = stack or {"gcp:project": "acme-orders"}
        (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": config}))
        return folder

    return make


def preview(
    cwd: Path, *args: str, path: str | None = None, extra_env: dict[str, str] | None = None
) -> Run:
    """``pushguard preview ARGS`` in ``cwd`` through the console script; ``path``: the
    ``PATH``; ``extra_env``: more environment variables."""
    env = {k: v for k, v in os.environ.items() if k not in {"PULUMI_STACK", "PULUMI_CONFIG"}}
    env.update(extra_env or {})
    env["PYTHONPATH"] = str(ROOT)
    if path is not None:
        env["PATH"] = path
    done = subprocess.run(
        [str(PUSHGUARD), "preview", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)
