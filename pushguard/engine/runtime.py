"""Which interpreter runs a Python program, and with which environment, as Pulumi's language
host picks them.

The host reads ``Pulumi.yaml``'s ``runtime.options`` (``parseOptions`` in
``sdk/python/cmd/pulumi-language-python/main.go`` of pulumi/pulumi, commit 1b5949891b3c):
``virtualenv`` (a string) and ``toolchain`` (``pip``, ``poetry`` or ``uv``; unset is "auto").
``toolchain.ResolveToolchain`` (``sdk/python/toolchain/toolchain.go``) then chooses:

- auto: ``uv`` when a ``uv.lock`` is found from the program folder up, ``poetry`` when a
  ``poetry.lock`` is, else ``pip``;
- ``pip``: with ``virtualenv`` (relative to the project root), that environment's
  ``bin/python``, which must exist (``ValidateVenv``, else ``NewVirtualEnvError``), run with
  the environment activated (``ActivateVirtualEnv``: its ``bin`` first on ``PATH``,
  ``VIRTUAL_ENV`` set, ``PYTHONHOME`` removed); without it ``$PULUMI_PYTHON_CMD``, else
  ``python3``, else ``python`` on ``PATH`` (``CommandPath`` in ``pip.go``);
- ``uv``: the ``virtualenv`` if given, else ``.venv`` next to the nearest ``uv.lock`` or
  ``pyproject.toml`` (``newUv`` in ``uv.go``). The host runs ``uv sync`` first; offline,
  pushguard does not (it would reach the package index): the environment must exist.
- ``poetry``: the environment ``poetry env info --path`` names, asked in the program folder,
  with ``poetry`` found on ``PATH`` and at least version 1.8.0 (``poetry --version --no-ansi
  --no-plugins``); its ``bin/python`` run with it activated (``newPoetry``, ``VirtualEnvPath``,
  ``Command`` and ``ValidateVenv`` in ``sdk/python/toolchain/poetry.go``). ``virtualenv`` is not
  read for poetry, as the host does not. The host's ``pulumi install`` runs ``poetry install``;
  offline, pushguard does not: the environment must exist.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


def parallel() -> int:
    """``--parallel`` given to the program (its executor gets four threads per unit) and to a
    ``Construct``: what ``pulumi preview`` passes when ``--parallel`` is not given, the
    environment's ``PULUMI_PARALLEL`` when it is a positive integer, else the number of CPUs
    the process may run on times 4 (``defaultParallel`` in ``pkg/cmd/pulumi/operations/up.go``,
    ``Parallel`` in ``sdk/go/common/env/env.go`` of pulumi/pulumi, commit 1b5949891b; Go's
    ``GOMAXPROCS`` defaults to the CPUs of the process's affinity mask)."""
    given = os.environ.get("PULUMI_PARALLEL", "").strip()
    if given.isdigit() and int(given) > 0:
        return min(int(given), 2**31 - 1)
    return len(os.sched_getaffinity(0)) * 4


class RuntimeChoiceError(ValueError):
    """The program's interpreter cannot be found or used; the message says which and why."""


@dataclass(frozen=True)
class ProgramRuntime:
    """``python``: the interpreter to start; ``environment``: the environment it gets (the
    virtual environment activated); ``described``: how it was chosen, for messages
    (``"/p/.venv/bin/python (virtualenv .venv from Pulumi.yaml)"``)."""

    python: Path
    environment: Mapping[str, str]
    described: str


def runtime_options(root: Path) -> dict[str, Any]:
    """``runtime.options`` of the project file in ``root`` (``{}`` when there are none); the
    project file is the first of ``Pulumi.json``, ``Pulumi.yaml``, ``Pulumi.yml``, as the CLI
    looks for it (:func:`pushguard.preview.project.project_file`)."""
    for name in ("Pulumi.json", "Pulumi.yaml", "Pulumi.yml"):
        path = root / name
        if path.is_file():
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            runtime = data.get("runtime") if isinstance(data, dict) else None
            options = runtime.get("options") if isinstance(runtime, dict) else None
            return dict(options) if isinstance(options, dict) else {}
    return {}


def _search_up(start: Path, name: str) -> Path | None:
    """The nearest folder at or above ``start`` holding ``name`` (``searchup`` in
    ``toolchain.go``)."""
    for folder in (start, *start.parents):
        if (folder / name).exists():
            return folder
    return None


def activate(environ: Mapping[str, str], venv: Path) -> dict[str, str]:
    """``environ`` with ``venv`` activated, as ``ActivateVirtualEnv`` does."""
    result = {
        key: value
        for key, value in environ.items()
        if key.upper() not in {"PYTHONHOME", "VIRTUAL_ENV", "PATH"}
    }
    path = environ.get("PATH")
    bin_dir = str(venv / "bin")
    result["PATH"] = f"{bin_dir}{os.pathsep}{path}" if path else bin_dir
    result["VIRTUAL_ENV"] = str(venv)
    return result


def _virtualenv(venv: Path, environ: Mapping[str, str], how: str) -> ProgramRuntime:
    """The environment ``venv`` (chosen as ``how`` says), which must hold ``bin/python``
    (``ValidateVenv``).

    Raises:
        RuntimeChoiceError: it does not.
    """
    python = venv / "bin" / "python"
    if not python.is_file():
        state = "doesn't exist" if not venv.exists() else "isn't a virtual environment"
        raise RuntimeChoiceError(
            f"the program's virtual environment {str(venv)!r} ({how}) {state}; "
            "create it and install the program's requirements into it "
            f"(python3 -m venv {venv} && {python} -m pip install -r requirements.txt)"
        )
    return ProgramRuntime(python, activate(environ, venv), f"{python} ({how})")


def _on_path(environ: Mapping[str, str]) -> ProgramRuntime:
    """``$PULUMI_PYTHON_CMD``, else ``python3``, else ``python`` on ``PATH``."""
    wanted = environ.get("PULUMI_PYTHON_CMD")
    names = [wanted] if wanted else ["python3", "python"]
    for name in names:
        found = shutil.which(name, path=environ.get("PATH", os.defpath))
        if found:
            return ProgramRuntime(
                Path(found),
                dict(environ),
                f"{found} ({name} on PATH; no virtualenv in Pulumi.yaml)",
            )
    raise RuntimeChoiceError(f"failed to locate any of {names} on your PATH")


MIN_POETRY = (1, 8, 0)
"""The oldest poetry the language host runs (``minPoetryVersion`` in ``poetry.go``)."""

POETRY_TIMEOUT = 120.0
"""Seconds a ``poetry`` command may take (it starts a Python interpreter of its own)."""

_POETRY_VERSION = re.compile(r"Poetry \(version (?P<version>\d+\.\d+(?:.\d+)?).*\)")
"""``validateVersion``'s pattern."""


def _poetry_output(argv: list[str], cwd: Path, environ: Mapping[str, str]) -> str:
    """stdout of a ``poetry`` command, stripped.

    Raises:
        RuntimeChoiceError: it could not run or exited non-zero (its last line of stderr said).
    """
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=dict(environ),
            capture_output=True,
            text=True,
            timeout=POETRY_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RuntimeChoiceError(f"`poetry {' '.join(argv[1:])}` could not run: {error}") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        said = f": {lines[-1]}" if lines else ""
        raise RuntimeChoiceError(
            f"`poetry {' '.join(argv[1:])}` in {cwd} exited with status {done.returncode}{said}"
        )
    return done.stdout.strip()


def _poetry(program_dir: Path, environ: Mapping[str, str]) -> ProgramRuntime:
    """The environment poetry keeps for the project in ``program_dir``, as the host finds it.

    Raises:
        RuntimeChoiceError: no ``poetry`` on ``PATH``, one older than 1.8.0, or no environment
            for the project (the message names the folder and says how to create it).
    """
    poetry = shutil.which("poetry", path=environ.get("PATH", os.defpath))
    if poetry is None:
        raise RuntimeChoiceError(
            "Could not find `poetry` executable. Install poetry and make sure it is in your PATH, "
            "or set the toolchain option in Pulumi.yaml to `pip`."
        )
    said = _poetry_output([poetry, "--version", "--no-ansi", "--no-plugins"], program_dir, environ)
    found = _POETRY_VERSION.search(said)
    if found is None:
        raise RuntimeChoiceError(f"unexpected output from poetry --version: {said!r}")
    version = tuple(int(part) for part in re.split(r"\D", found["version"]) if part)
    if version < MIN_POETRY:
        raise RuntimeChoiceError(
            f"poetry version {found['version']} is less than the minimum required version 1.8.0"
        )
    try:
        path = _poetry_output([poetry, "env", "info", "--path"], program_dir, environ)
    except RuntimeChoiceError as error:
        raise RuntimeChoiceError(
            f"poetry has no environment for the project in {program_dir} ({error}); create it "
            f"with `poetry install` in {program_dir} (pushguard preview installs nothing)"
        ) from None
    if not path:
        raise RuntimeChoiceError("`poetry env info --path` named no virtual environment")
    return _virtualenv(Path(path), environ, f"poetry's environment for {program_dir}")


def resolve_runtime(
    root: Path, program_dir: Path, environ: Mapping[str, str] | None = None
) -> ProgramRuntime:
    """The interpreter and environment for the project in ``root`` whose program is in
    ``program_dir``; ``environ`` defaults to ``os.environ``.

    Raises:
        RuntimeChoiceError: a bad option, a virtual environment that is not there (poetry's
            included), no usable ``poetry`` for a poetry project, no Python on ``PATH``.
    """
    environ = dict(os.environ if environ is None else environ)
    options = runtime_options(root)
    option = options.get("virtualenv")
    if option is not None and not isinstance(option, str):
        raise RuntimeChoiceError("virtualenv option must be a string")
    toolchain = options.get("toolchain")
    if toolchain not in (None, "pip", "poetry", "uv"):
        raise RuntimeChoiceError(f"unsupported toolchain option: {toolchain}")
    if toolchain is None:
        if _search_up(program_dir, "uv.lock"):
            toolchain = "uv"
        elif _search_up(program_dir, "poetry.lock"):
            toolchain = "poetry"
    if toolchain == "poetry":
        return _poetry(program_dir, environ)
    if toolchain == "uv":
        if option:
            venv = Path(option) if Path(option).is_absolute() else root / option
            return _virtualenv(venv, environ, f"virtualenv {option} from Pulumi.yaml, uv")
        near = _search_up(program_dir, "uv.lock") or _search_up(program_dir, "pyproject.toml")
        venv = (near or root) / ".venv"
        return _virtualenv(venv, environ, "uv's .venv")
    if option:
        venv = Path(option) if Path(option).is_absolute() else root / option
        return _virtualenv(venv, environ, f"virtualenv {option} from Pulumi.yaml")
    return _on_path(environ)
