"""The oldest Pulumi Python SDK ``pushguard[pulumi]`` accepts, for CI's second environment.

``python .ci/oldest_pulumi.py`` prints the floor of the ``pulumi`` requirement in
``pyproject.toml``'s ``pulumi`` extra (``pulumi>=3.204,<4`` prints ``3.204``): the one place the
number is written, so the environment CI tests cannot drift from the one pushguard declares.

``PYTHON .ci/oldest_pulumi.py --check VERSION`` prints the interpreter it runs in, the ``pulumi``
it imports (version and folder) and the pulumi-gcp and pulumi-policy beside it, and exits 1 unless
that ``pulumi`` is ``VERSION``. CI runs it with ``python3`` from ``PATH`` (the engine starts a
program without a ``virtualenv`` option with it: docs/preview.md, "The engine") and with the
example project's ``virtualenv`` (``.venv``), the interpreters the tests' programs run in.
"""

from __future__ import annotations

import importlib.metadata
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def floor() -> str:
    """The ``>=`` bound of ``pulumi`` in the ``pulumi`` extra; ValueError if there is not
    exactly one requirement on ``pulumi`` with exactly one ``>=`` bound."""
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    found = [r for r in map(Requirement, extras["pulumi"]) if r.name == "pulumi"]
    bounds = [s.version for r in found for s in r.specifier if s.operator == ">="]
    if len(found) != 1 or len(bounds) != 1:
        raise ValueError(f"no single `pulumi>=X` in the pulumi extra of {PYPROJECT}")
    return bounds[0]


def check(expected: str) -> int:
    """Print what this interpreter imports; 0 if its ``pulumi`` is ``expected``."""
    import pulumi  # noqa: PLC0415 - the module the programs import, not only its metadata

    version = importlib.metadata.version("pulumi")
    others = ", ".join(
        f"{n} {importlib.metadata.version(n)}" for n in ("pulumi-gcp", "pulumi-policy")
    )
    print(f"{sys.executable}: pulumi {version} ({Path(pulumi.__file__).parent}), {others}")
    if Version(version) != Version(expected):
        print(f"expected pulumi {expected}: this is not the oldest supported SDK", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        sys.exit(check(sys.argv[2]))
    print(floor())
