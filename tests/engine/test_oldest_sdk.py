"""``pushguard[pulumi]`` supports Pulumi's Python SDK from 3.204 (``pyproject.toml``,
docs/install.md) to the newest 3.x: the example stacks run in a team environment that holds the
oldest supported SDK, with pushguard's component imported from it, while pushguard itself runs on
the tests' SDK (the newest available in CI's main run), and judge exactly as in pushguard's own
environment (``tests/engine/test_engine_preview.py``).

The team's environment is CI's second one when it is given (``$PUSHGUARD_OLDEST_SDK_VENV``: the
project and the oldest SDK pip-installed by ``.ci/run``, so the SDK is installed once per run).
Without it the test makes one as a team would: ``pip install`` of the pinned SDK and a
pulumi-gcp that accepts it, from the package index, with pushguard and its other requirements
from this checkout and the test interpreter's ``site-packages`` after the team's own (a ``.pth``
file), so the team's ``pulumi`` is the one the program imports.

In that second environment itself (CI's last step: every test of ``tests/engine`` on the oldest
SDK) pushguard and the program share the oldest SDK, which
``test_the_example_stacks_judge_as_before_in_their_own_virtualenv`` already runs: this test is
skipped there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
from packaging.version import Version

from tests.engine.conftest import ROOT
from tests.engine.test_engine_preview import _example, judge_example
from tests.sdk import SDK_VERSION

OLDEST_VENV = "PUSHGUARD_OLDEST_SDK_VENV"
"""A virtual environment with pushguard and the oldest supported SDK installed (``.ci/run``)."""


def _oldest() -> str:
    """The oldest SDK ``pyproject.toml`` accepts (``pulumi>=X,<4``)."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [spec] = [s for s in extra["pulumi"] if s.split(">=")[0].strip() == "pulumi"]
    return spec.split(">=")[1].split(",")[0].strip()


@pytest.fixture(scope="module")
def oldest_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get(OLDEST_VENV)
    if given:
        return Path(given)
    venv = tmp_path_factory.mktemp("oldest") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "-q", f"pulumi=={_oldest()}.0", "pulumi-gcp>=8,<11"],
        check=True,
        timeout=900,
    )
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "zz_pushguard.pth").write_text(f"{ROOT}\n{ours}\n")
    return venv


@pytest.mark.skipif(
    Version(_oldest()) == SDK_VERSION,
    reason="the tests' own SDK is the oldest: the example-stack test of test_engine_preview.py",
)
def test_the_example_stacks_judge_alike_with_the_oldest_supported_sdk(
    tmp_path: Path, oldest_venv: Path
) -> None:
    python = str(oldest_venv / "bin" / "python")
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m, pushguard; print(m.version('pulumi'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert Version(version.strip()) == Version(_oldest())
    judge_example(_example(tmp_path, oldest_venv), oldest_venv)
