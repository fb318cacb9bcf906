"""Issue 37: a project with ``toolchain: poetry`` runs in the environment poetry keeps for it, as
Pulumi's Python language host finds it (``poetry env info --path`` in the program folder;
``sdk/python/toolchain/poetry.go`` of pulumi/pulumi), never installing anything.

The real ``poetry`` (the ``dev`` extra installs it) makes the environment with ``poetry env use``
in a temporary ``virtualenvs.path``, where poetry names it after the project and a hash of its
folder: only asking poetry finds it. As for the ``team_venv`` fixture, a ``.pth`` file puts this
checkout and the test interpreter's ``site-packages`` on its path instead of a ``poetry install``
(no network here), and a module only that environment has shows where the program ran.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.engine.conftest import ROOT, preview

POETRY_ONLY_MODULE = "acme_poetry_naming"
PYPROJECT = """\
[project]
name = "acme-orders-stack"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = []

[tool.poetry]
package-mode = false
"""
PROGRAM = f"""\
import {POETRY_ONLY_MODULE}
import pulumi_gcp as gcp

gcp.pubsub.Subscription({POETRY_ONLY_MODULE}.name("orders"), topic="orders", push_config={{
    "push_endpoint": "http://hooks.example.com/push",
    "oidc_token": {{"service_account_email": "p@acme-orders.iam.gserviceaccount.com"}}}})
"""


@pytest.fixture
def poetry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The ``poetry`` executable, its configuration, cache and environments kept under
    ``tmp_path`` (the variables are in the environment ``pushguard preview`` runs in)."""
    found = shutil.which(
        "poetry", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    )
    if found is None:
        pytest.fail("poetry is not installed: pip install -e '.[dev]' installs it")
    for name in ("CONFIG_DIR", "CACHE_DIR", "VIRTUALENVS_PATH"):
        monkeypatch.setenv(f"POETRY_{name}", str(tmp_path / "poetry" / name.lower()))
    monkeypatch.setenv("POETRY_VIRTUALENVS_IN_PROJECT", "false")
    monkeypatch.setenv("PATH", f"{Path(found).parent}{os.pathsep}{os.environ['PATH']}")
    return Path(found)


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    runtime = '{"name": "python", "options": {"toolchain": "poetry"}}'
    (folder / "Pulumi.yaml").write_text(f'{{"name": "team", "runtime": {runtime}}}')
    (folder / "Pulumi.dev.yaml").write_text('{"config": {"gcp:project": "acme-orders"}}')
    (folder / "pyproject.toml").write_text(PYPROJECT)
    (folder / "__main__.py").write_text(PROGRAM)
    return folder


def _make_environment(poetry: Path, folder: Path) -> Path:
    """``poetry env use`` with the base interpreter, then pushguard and its requirements on the
    new environment's path; returns the environment's folder."""
    python = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run(
        [str(poetry), "env", "use", str(python)], cwd=folder, check=True, capture_output=True
    )
    venv = Path(
        subprocess.run(
            [str(poetry), "env", "info", "--path"],
            cwd=folder,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    purelib = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    site = Path(purelib)
    (site / "pushguard_and_requirements.pth").write_text(
        f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n"
    )
    (site / f"{POETRY_ONLY_MODULE}.py").write_text("def name(n):\n    return f'poetry-{n}'\n")
    return venv


@pytest.fixture(autouse=True)
def outside_any_virtualenv(monkeypatch: pytest.MonkeyPatch) -> None:
    """Poetry uses an activated virtual environment (``VIRTUAL_ENV``) as the project's, and the
    language host asks it with the inherited environment (``VirtualEnvPath`` in
    ``sdk/python/toolchain/poetry.go``): the tests run the preview as from a shell with none
    active, whatever the test runner's shell has."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)


def test_a_poetry_project_runs_in_poetrys_environment(poetry: Path, tmp_path: Path) -> None:
    folder = _project(tmp_path)
    venv = _make_environment(poetry, folder)
    assert folder not in venv.parents  # not a .venv next to the project: poetry names it
    run = preview(folder, "-f", "json")
    assert run.code == 1, run.stderr
    report = run.json()
    assert [r["name"] for r in report["resources"] if r["type"].startswith("gcp:pubsub")] == [
        "poetry-orders"
    ]
    assert ("push-endpoint-https", "mandatory") in {
        (v["policy"], v["level"]) for v in report["violations"]
    }
    ran = f"the program ran in {venv / 'bin' / 'python'} (poetry's environment for {folder})"
    assert ran in report["notes"], report["notes"]


def test_a_poetry_project_without_its_environment_is_exit_2_naming_it(
    poetry: Path, tmp_path: Path
) -> None:
    folder = _project(tmp_path)
    run = preview(folder)
    assert run.code == 2
    assert f"poetry has no environment for the project in {folder}" in run.stderr, run.stderr
    assert "poetry install" in run.stderr
    assert not (tmp_path / "poetry" / "virtualenvs_path").exists() or not any(
        (tmp_path / "poetry" / "virtualenvs_path").iterdir()
    )  # nothing was created or installed
