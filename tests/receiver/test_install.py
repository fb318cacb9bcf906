"""A receiver-only install (``pip install "<repository>[receiver]"``): no Pulumi, no Spark.

The dependency closure is computed from ``pyproject.toml`` and the metadata of what is installed
here (the ``dev`` environment has every distribution the extras name), so no index is asked. The
measured size of a real receiver-only install is in bench/RESULTS.md.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
HEAVY = {"pulumi", "pulumi-gcp", "pulumi-policy", "grpcio", "pyspark", "pyarrow", "pandas"}


def _project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        project: dict[str, object] = tomllib.load(file)["project"]
    return project


def _closure(extras: set[str]) -> set[str]:
    """Every distribution ``pip install ".[extras]"`` installs (names canonicalised)."""
    project = _project()
    optional: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    own = canonicalize_name(str(project["name"]))
    todo: list[Requirement] = [Requirement(r) for r in project["dependencies"]]  # type: ignore[attr-defined]
    seen_extras: set[str] = set()
    pending = set(extras)
    found: set[str] = set()
    while pending or todo:
        for extra in pending - seen_extras:
            seen_extras.add(extra)
            todo += [Requirement(r) for r in optional[extra]]
        pending = set()
        while todo:
            requirement = todo.pop()
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            name = canonicalize_name(requirement.name)
            if name == own:
                pending |= set(requirement.extras) - seen_extras
                continue
            if name in found:
                continue
            found.add(name)
            for text in metadata.requires(requirement.name) or []:
                dependency = Requirement(text)
                markers = [{"extra": e} for e in ("", *requirement.extras)]
                if dependency.marker is None or any(dependency.marker.evaluate(m) for m in markers):
                    todo.append(dependency)
    return found


def test_a_receiver_only_install_pulls_neither_pulumi_nor_spark() -> None:
    closure = _closure({"receiver"})
    assert {"google-auth", "cryptography", "pydantic"} <= closure
    assert not closure & HEAVY


@pytest.mark.parametrize("extras", [{"dev"}, {"pulumi"}])
def test_the_readme_install_and_the_pulumi_extra_still_bring_pulumi(extras: set[str]) -> None:
    closure = _closure(extras)
    assert {"pulumi", "pulumi-gcp", "pulumi-policy", "grpcio"} <= closure


BLOCK = textwrap.dedent(
    """
    import importlib.abc, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"pulumi", "pulumi_gcp", "pulumi_policy", "grpc", "pyspark"}:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Block())
    """
)


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_receiver_imports_without_pulumi_or_spark() -> None:
    done = _run(
        """
        import pushguard.receiver, pushguard.receiver.flask, pushguard.receiver.fastapi
        import pushguard.receiver.functions_framework
        print("ok")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


SCRIPT = """
from importlib.metadata import entry_points
[script] = entry_points(group="console_scripts", name="pushguard")
sys.argv = ["pushguard", *sys.argv[1:]]
sys.exit(script.load()())
"""


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        (["preview", "--stack", "dev"], "pulumi"),
        (["analyze", "x.json"], "pulumi"),
        (["pack", "build", "out"], "pulumi"),
        (["audit", "--out", "o", "e.json"], "audit"),
    ],
)
def test_a_command_without_its_extra_names_the_extra(command: list[str], extra: str) -> None:
    done = _run(SCRIPT, *command)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"pushguard[{extra}]" in done.stderr


def test_commands_that_need_no_extra_run_without_pulumi_or_spark() -> None:
    done = _run(SCRIPT, "rules", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert "push-endpoint-https" in done.stdout


@pytest.mark.parametrize("missing", ["cachetools", "cryptography"])
def test_the_receiver_without_its_extra_names_the_extra(missing: str) -> None:
    """A base install (no ``receiver`` extra): an ImportError that says what to install."""
    block = BLOCK.replace('"pyspark"}', f'"pyspark", "{missing}"}}')
    done = subprocess.run(
        [sys.executable, "-c", block + "from pushguard.receiver import PushVerifier\n"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: "), last
    pinned = "git+https://github.com/pushguard/pushguard@REF"
    assert f'pip install "pushguard[receiver] @ {pinned}"' in last
    assert repr(missing) in last
