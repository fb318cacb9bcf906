"""Each command of an install without an extra, as a user has it: ``pip install pushguard``
alone, or with only ``audit`` or ``receiver``. The extras' modules are made unimportable in a
fresh interpreter (a meta-path finder that refuses them, as a venv without them would), and the
console script's entry point runs: ``pushguard rules`` works on the base install, every other
command exits 2 naming the extra it needs, never a traceback (README: "a command run without its
extra exits 2 naming the extra to install")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pushguard.cli.extras import EXTRA_MODULES

ROOT = Path(__file__).resolve().parents[1]
RECEIVER_MODULES = ("cryptography", "cachetools", "requests", "google.auth")

RUN = """
import importlib.abc, sys
BLOCKED = set(sys.argv[1].split(","))
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in BLOCKED or name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Missing())
sys.argv = ["pushguard", *sys.argv[2:]]
from pushguard.cli import main
main()
"""


def _without(extras: tuple[str, ...], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    blocked = {m for extra in extras for m in EXTRA_MODULES.get(extra, ())}
    if "receiver" in extras:
        blocked |= set(RECEIVER_MODULES)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", RUN, ",".join(sorted(blocked)), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


ALL = ("pulumi", "audit", "guardrails", "receiver")


def test_the_base_install_lists_the_rules(tmp_path: Path) -> None:
    done = _without(ALL, "rules", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "push-endpoint-https" in done.stdout


@pytest.mark.parametrize(
    ("installed", "args", "extra"),
    [
        ((), ("preview",), "pulumi"),
        ((), ("analyze", "state.json"), "pulumi"),
        ((), ("audit", "export.json", "--out", "out"), "audit"),
        ((), ("guardrails", "--organization", "123456789012", "-o", "g"), "guardrails"),
        (("audit",), ("preview",), "pulumi"),
        (("audit",), ("audit", "export.json", "--out", "out", "--guardrails", "g"), "guardrails"),
        (("receiver",), ("analyze", "state.json"), "pulumi"),
        (("receiver",), ("audit", "export.json", "--out", "out"), "audit"),
        (("pulumi", "audit"), ("push", "http://127.0.0.1:9/push"), "receiver"),
    ],
)
def test_a_command_without_its_extra_exits_2_naming_it(
    tmp_path: Path, installed: tuple[str, ...], args: tuple[str, ...], extra: str
) -> None:
    (tmp_path / "state.json").write_text("{}")
    (tmp_path / "export.json").write_text("")
    missing = tuple(e for e in ALL if e not in installed)
    done = _without(missing, *args, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert f'install the "{extra}" extra' in done.stderr, done.stderr
