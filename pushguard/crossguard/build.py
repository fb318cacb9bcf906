"""``pushguard pack build``: the policy pack as a folder ``pulumi policy publish`` can upload.

``pulumi policy publish`` uploads the pack folder alone; when Pulumi enforces the pack, the CLI
makes a virtual environment and runs ``python -m pip install -r requirements.txt`` in that folder.
``pushguard`` is on no public index, so the folder carries a wheel of pushguard built from the
source checkout, and ``requirements.txt`` installs that wheel by relative path with every
dependency it brings in pinned to the version installed here (what the tests ran with).

The pack's ``PulumiPolicy.yaml`` carries pushguard's version (Pulumi reads it from there):
:func:`pulumi_policy_yaml` writes it, for the built pack and for the two committed pack folders
(``policies/`` and ``pushguard/crossguard/pack/``), which ``python -m pushguard.crossguard.build``
regenerates after a version change.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from email.parser import HeaderParser
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import pushguard
from pushguard._about import DISTRIBUTION

PACK_EXTRAS = ("pulumi",)
"""The extras of pushguard the pack needs (pulumi-policy and the Pulumi SDK: pyproject.toml)."""

REGENERATE = "python -m pushguard.crossguard.build"
"""The command that rewrites the committed packs' ``PulumiPolicy.yaml`` at the installed version."""

DESCRIPTION = "pushguard: safe Google Cloud Pub/Sub push subscriptions"

MAIN = '''"""The pushguard CrossGuard policy pack, built by ``pushguard pack build``: published with
``pulumi policy publish``. The policies are the rules of ``pushguard.rules``; see docs/rules.md.
"""

from pushguard.crossguard import serve

serve()
'''


class PackBuildError(Exception):
    """The pack folder cannot be built; the message says why."""


@dataclass(frozen=True)
class BuiltPack:
    """The folder written and the names of the files in it."""

    folder: Path
    files: tuple[str, ...]


def pulumi_policy_yaml(version: str) -> str:
    """The pack's ``PulumiPolicy.yaml`` at ``version`` (quoted: ``1.0`` stays a string)."""
    return f'description: "{DESCRIPTION}"\nruntime: python\nversion: "{version}"\n'


def committed_packs(root: Path) -> tuple[Path, Path]:
    """The pack folders of the source checkout at ``root``: ``policies/`` (the repository's) and
    the one installed with the package (``pushguard/crossguard/pack/``, the preview's default)."""
    return root / "policies", root / "pushguard" / "crossguard" / "pack"


def write_committed_packs() -> list[Path]:
    """Rewrite the committed packs' ``PulumiPolicy.yaml`` at the installed version (what
    :data:`REGENERATE` runs); the files written.

    Raises:
        PackBuildError: pushguard is not installed from its source checkout.
    """
    text = pulumi_policy_yaml(metadata.version(DISTRIBUTION))
    written = []
    for folder in committed_packs(project_root()):
        (folder / "PulumiPolicy.yaml").write_text(text, encoding="utf-8")
        written.append(folder / "PulumiPolicy.yaml")
    return written


def project_root() -> Path:
    """The source checkout pushguard is installed from (the folder with its ``pyproject.toml``).

    Raises:
        PackBuildError: pushguard is not installed from a source tree.
    """
    root = Path(pushguard.__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    try:
        name = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
        name = None
    if name != DISTRIBUTION:
        raise PackBuildError(
            "`pushguard pack build` needs the source checkout: pushguard is installed from "
            f"{root}, which has no pushguard pyproject.toml (install it with `pip install -e .`)"
        )
    return root


def _check_empty(folder: Path) -> None:
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise PackBuildError(f"{folder} must be an empty folder or not exist")


def _satisfied(requirements: Iterable[str]) -> bool:
    """Whether this environment already has every one of ``requirements``."""
    for text in requirements:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            return False
        if not requirement.specifier.contains(installed, prereleases=True):
            return False
    return True


_NOT_SOURCE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def build_wheel(root: Path, folder: Path) -> Path:
    """Build pushguard's wheel from ``root`` into ``folder``; its path.

    Without build isolation (offline, fast) when this environment has the build backend
    ``pyproject.toml`` asks for; otherwise pip installs the backend in an isolated build
    environment.
    """
    build_system = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    isolation = (
        ["--no-build-isolation"]
        if _satisfied(build_system.get("build-system", {}).get("requires", []))
        else []
    )
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q"]
    with tempfile.TemporaryDirectory(prefix="pushguard-source-") as scratch:
        # Build from a copy of what the wheel is made of: the checkout gets no build/ or
        # egg-info, and no stale file of an earlier build can slip into the wheel.
        source = Path(scratch)
        shutil.copytree(root / "pushguard", source / "pushguard", ignore=_NOT_SOURCE)
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy2(root / name, source / name)
        done = subprocess.run(
            [*command, "-w", str(folder), str(source)],
            capture_output=True,
            text=True,
            check=False,
        )
    wheels = sorted(folder.glob(f"{DISTRIBUTION}-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise PackBuildError(f"building the pushguard wheel failed:\n{done.stderr}{done.stdout}")
    return wheels[0]


def _wheel_requirements(wheel: Path) -> list[Requirement]:
    """The ``Requires-Dist`` of the wheel (what pip installs with it), without extras."""
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(name).decode("utf-8")
    headers = HeaderParser().parsestr(text)
    return [Requirement(r) for r in headers.get_all("Requires-Dist") or []]


def _applies(requirement: Requirement, extras: Iterable[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in ("", *extras))


def pinned_dependencies(requirements: Iterable[Requirement]) -> list[str]:
    """``name==version`` for every distribution ``requirements`` bring in on this platform,
    transitively, at the version installed here, sorted by name.

    Raises:
        PackBuildError: a dependency is missing here or installed at a version outside the range
            asked for.
    """
    pins: dict[str, str] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [r for r in requirements if _applies(r, PACK_EXTRAS)]
    while todo:
        requirement = todo.pop()
        key = canonicalize_name(requirement.name)
        try:
            distribution = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            raise PackBuildError(
                f"{requirement.name} (required by the pack) is not installed here"
            ) from None
        if not requirement.specifier.contains(distribution.version, prereleases=True):
            raise PackBuildError(
                f"{distribution.metadata['Name']} {distribution.version} is installed, but the "
                f"pack needs {requirement}: update this environment (`pip install -e .`)"
            )
        if (key, frozenset(requirement.extras)) in seen:
            continue
        seen.add((key, frozenset(requirement.extras)))
        pins[key] = f"{distribution.metadata['Name']}=={distribution.version}"
        for text in distribution.requires or []:
            dependency = Requirement(text)
            if _applies(dependency, requirement.extras):
                todo.append(dependency)
    return [pins[key] for key in sorted(pins)]


def requirements_text(wheel_name: str, pins: Iterable[str]) -> str:
    """The pack's ``requirements.txt``: the wheel beside it, then the pins."""
    lines = [
        "# Written by `pushguard pack build`: installs from this folder alone (Pulumi runs",
        "# `pip install -r requirements.txt` here). The pins are the versions the pack was built",
        "# and tested with.",
        f"./{wheel_name}",
        *pins,
    ]
    return "\n".join(lines) + "\n"


def build_pack(folder: Path) -> BuiltPack:
    """Write the publishable pack into ``folder`` (empty or not existing).

    Raises:
        PackBuildError: the folder is not empty, pushguard is not installed from its source
            checkout, or the wheel or a dependency pin cannot be made.
    """
    folder = Path(folder)
    _check_empty(folder)
    root = project_root()
    version = metadata.version(DISTRIBUTION)
    folder.mkdir(parents=True, exist_ok=True)
    wheel = build_wheel(root, folder)
    expected = f"{DISTRIBUTION}-{version}-py3-none-any.whl"
    if wheel.name != expected:
        wheel.unlink()
        raise PackBuildError(
            f"the source builds {wheel.name}, but pushguard {version} is installed: reinstall "
            "it (`pip install -e .`) so the pack's version is the source's"
        )
    pins = pinned_dependencies(
        r for r in _wheel_requirements(wheel) if canonicalize_name(r.name) != DISTRIBUTION
    )
    (folder / "PulumiPolicy.yaml").write_text(pulumi_policy_yaml(version), encoding="utf-8")
    (folder / "__main__.py").write_text(MAIN, encoding="utf-8")
    (folder / "requirements.txt").write_text(requirements_text(wheel.name, pins), encoding="utf-8")
    return BuiltPack(folder, tuple(sorted(p.name for p in folder.iterdir())))


if __name__ == "__main__":
    for path in write_committed_packs():
        print(path)
