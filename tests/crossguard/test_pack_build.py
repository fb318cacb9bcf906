"""`pushguard pack build`, checked the way Pulumi uses a published pack: the built folder alone,
`pip install -r requirements.txt` in it inside a fresh virtual environment, then the pack started
from that environment as the CLI starts it (`python -m pulumi.policy ENGINE PACK_DIR`)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import pushguard
from pushguard.cli import app
from pushguard.crossguard.build import REGENERATE, committed_packs, pulumi_policy_yaml
from pushguard.gate.analyzer import PolicyPackProcess
from pushguard.rules import RULES
from tests.crossguard.wire import push_config, subscription

VERSION = metadata.version("pushguard")
WHEEL = f"pushguard-{VERSION}-py3-none-any.whl"
FILES = {"PulumiPolicy.yaml", "__main__.py", "requirements.txt", WHEEL}
ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_pyprojects() -> None:
    """``pushguard.__version__`` is the installed metadata's, which is ``pyproject.toml``'s once
    pushguard is reinstalled."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert pushguard.__version__ == VERSION == project["version"], (
        "the installed pushguard is not the source's version: `pip install -e .`"
    )


@pytest.mark.parametrize(
    "folder", committed_packs(ROOT), ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_the_committed_packs_carry_the_version(folder: Path) -> None:
    """Pulumi reads the pack's version from ``PulumiPolicy.yaml``, so the committed packs carry
    it too, written by the same generator as ``pushguard pack build``."""
    text = (folder / "PulumiPolicy.yaml").read_text(encoding="utf-8")
    stale = f"{folder / 'PulumiPolicy.yaml'} is not at pushguard {VERSION}: run `{REGENERATE}`"
    assert yaml.safe_load(text)["version"] == pushguard.__version__, stale
    assert text == pulumi_policy_yaml(pushguard.__version__), stale


@dataclass
class Published:
    folder: Path
    python: Path
    pack: PolicyPackProcess


def _clean_env() -> dict[str, str]:
    """This environment without what would point a child at the project's own virtualenv."""
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Published]:
    """Build the pack into an empty folder, install its requirements in a fresh virtualenv with
    that folder as working directory, and start it from that virtualenv (once per module)."""
    base = tmp_path_factory.mktemp("published")
    folder = base / "pack"
    result = CliRunner().invoke(app, ["pack", "build", str(folder)])
    assert result.exit_code == 0, result.output
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=_clean_env())
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "-r", "requirements.txt"],
        cwd=folder,
        check=True,
        env=_clean_env(),
    )
    with PolicyPackProcess(folder, python=str(python), timeout=120) as pack:
        yield Published(folder, python, pack)


def test_the_folder_holds_the_pack_files_only(published: Published) -> None:
    assert {p.name for p in published.folder.iterdir()} == FILES
    spec = yaml.safe_load((published.folder / "PulumiPolicy.yaml").read_text())
    assert spec["runtime"] == "python"
    assert str(spec["version"]) == VERSION
    main = (published.folder / "__main__.py").read_text()
    assert "from pushguard.crossguard import serve\n\nserve()" in main
    requirements = (published.folder / "requirements.txt").read_text().splitlines()
    assert f"./{WHEEL}" in requirements
    pinned = {
        line.split("==")[0].lower().replace("_", "-") for line in requirements if "==" in line
    }
    assert {"pulumi", "pulumi-policy", "grpcio", "protobuf", "pydantic", "pyyaml"} <= pinned
    assert "pushguard" not in pinned


def test_the_venv_runs_the_installed_wheel_not_the_checkout(published: Published) -> None:
    done = subprocess.run(
        [str(published.python), "-c", "import pushguard; print(pushguard.__file__)"],
        cwd=published.folder,
        capture_output=True,
        text=True,
        check=True,
        env=_clean_env(),
    )
    location = Path(done.stdout.strip())
    site = published.python.parent.parent / "lib"
    assert location.is_relative_to(site) and "site-packages" in location.parts, location
    assert not location.is_relative_to(ROOT)


def test_info_lists_the_policies_at_the_distributions_version(published: Published) -> None:
    info = published.pack.info()
    assert info.name == "pushguard"
    assert info.version == VERSION
    assert [p.name for p in info.policies] == [*(rule.id for rule in RULES), "projectNumbers"]
    assert len(info.policies) == 16  # two audit --stacks only; projectNumbers holds settings


def test_configure_and_analyze_an_http_endpoint(published: Published) -> None:
    published.pack.configure({})
    found = published.pack.analyze(
        subscription(pushConfig=push_config(endpoint="http://orders.example.com/push"))
    )
    assert ("push-endpoint-https", "mandatory") in [(d.policy, d.level) for d in found], found


def test_building_into_a_folder_that_is_not_empty_exits_2(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    result = CliRunner().invoke(app, ["pack", "build", str(tmp_path)])
    assert result.exit_code == 2
    assert "must be an empty folder" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
