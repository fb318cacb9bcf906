"""A stand-in for the GitHub Actions runner, enough to run ``action.yml``'s composite steps as
the runner does, on this machine.

What it does, from GitHub's documentation:

- Each ``run:`` step with ``shell: bash`` runs as ``bash --noprofile --norc -eo pipefail
  SCRIPT`` (``jobs.<job_id>.steps[*].shell``,
  https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idstepsshell),
  in ``GITHUB_WORKSPACE``, with the job's environment, the step's ``env:`` and the runner's
  variables (``GITHUB_ACTION_PATH``: the action's folder, only in composite actions;
  ``GITHUB_WORKSPACE``, ``RUNNER_TEMP``, ``CI``, ``GITHUB_ACTIONS``:
  https://docs.github.com/en/actions/reference/workflows-and-actions/variables#default-environment-variables).
- Each step gets fresh ``GITHUB_OUTPUT``, ``GITHUB_ENV``, ``GITHUB_PATH`` and
  ``GITHUB_STEP_SUMMARY`` files; after it, its outputs are read from ``GITHUB_OUTPUT``
  (``NAME=VALUE`` or ``NAME<<DELIMITER`` ... ``DELIMITER``), variables written to ``GITHUB_ENV``
  are set for the later steps and lines of ``GITHUB_PATH`` put before ``PATH``
  (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#environment-files).
- A step that exits non-zero fails the action: the later steps do not run (no ``if:`` here).
- ``${{ }}`` expressions are resolved for the contexts the action uses, ``inputs.NAME`` (the
  ``with:`` value, else the input's ``default``) and ``steps.ID.outputs.NAME``, in ``env:``
  values and the action's ``outputs``; any other expression, any expression inside ``run:``, an
  input the action does not declare, a step with ``uses:`` or ``if:`` fails the test
  (:class:`UnsupportedActionError`), so the action cannot grow what this runner does not check.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
STEP_KEYS = {"name", "id", "shell", "env", "run"}


class UnsupportedActionError(AssertionError):
    """The action uses something this runner does not do (and so no test checks)."""


@dataclass
class StepResult:
    """One step as it ran: its id, exit code, outputs, summary and log."""

    id: str
    exit_code: int
    outputs: dict[str, str]
    summary: str
    log: str


@dataclass
class ActionRun:
    """The action's run: each step's result, the action's outputs, the job's exit code."""

    steps: list[StepResult] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """The failing step's exit code, else 0."""
        return next((s.exit_code for s in self.steps if s.exit_code), 0)

    @property
    def summary(self) -> str:
        """The job summary: every step's, in order."""
        return "".join(s.summary for s in self.steps)

    @property
    def log(self) -> str:
        return "\n".join(f"== {s.id}\n{s.log}" for s in self.steps)


def read_environment_file(text: str) -> dict[str, str]:
    """``NAME=VALUE`` and ``NAME<<DELIMITER`` ... ``DELIMITER`` entries of an environment file."""
    values: dict[str, str] = {}
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index)
            values[name] = "\n".join(lines[index:end])
            index = end + 1
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        elif line:
            raise UnsupportedActionError(f"not an environment file line: {line!r}")
    return values


def resolve(text: str, inputs: Mapping[str, str], steps: Mapping[str, dict[str, str]]) -> str:
    """``text`` with each ``${{ inputs.NAME }}`` and ``${{ steps.ID.outputs.NAME }}`` replaced."""

    def value(match: re.Match[str]) -> str:
        expression = match[1].strip()
        if found := re.fullmatch(r"inputs\.([A-Za-z_][\w-]*)", expression):
            if found[1] not in inputs:
                raise UnsupportedActionError(f"input {found[1]!r} is not declared")
            return inputs[found[1]]
        if found := re.fullmatch(
            r"steps\.([A-Za-z_][\w-]*)\.outputs\.([A-Za-z_][\w-]*)", expression
        ):
            return steps.get(found[1], {}).get(found[2], "")
        raise UnsupportedActionError(f"expression ${{{{ {expression} }}}} is not supported here")

    return EXPRESSION.sub(value, text)


class Runner:
    """Runs the composite action at ``action_path`` in ``workspace`` with ``environ`` as the
    job's environment, its temporary files under ``temp``."""

    def __init__(
        self, action_path: Path, workspace: Path, temp: Path, environ: Mapping[str, str]
    ) -> None:
        self.action_path = action_path
        self.workspace = workspace
        self.temp = temp
        self.environ = dict(environ)
        self.metadata: dict[str, Any] = yaml.safe_load(
            (action_path / "action.yml").read_text(encoding="utf-8")
        )
        if self.metadata["runs"]["using"] != "composite":
            raise UnsupportedActionError("not a composite action")
        for index, step in enumerate(self.metadata["runs"]["steps"]):  # checked before any runs
            if set(step) - STEP_KEYS or step.get("shell") != "bash" or "run" not in step:
                raise UnsupportedActionError(f"step {index}: only run steps with shell: bash")
            if EXPRESSION.search(step["run"]):
                raise UnsupportedActionError(f"step {index}: an expression inside run:")

    def inputs(self, given: Mapping[str, str]) -> dict[str, str]:
        """The inputs: ``given`` over the declared defaults; an undeclared one fails."""
        declared = self.metadata.get("inputs") or {}
        unknown = set(given) - set(declared)
        if unknown:
            raise UnsupportedActionError(f"inputs not declared by the action: {sorted(unknown)}")
        return {
            name: str(given.get(name, (spec or {}).get("default", "")))
            for name, spec in declared.items()
        }

    def run(self, **given: str) -> ActionRun:
        """Run every step with the ``with:`` values ``given`` (input names with ``_`` for
        ``-``)."""
        inputs = self.inputs({name.replace("_", "-"): value for name, value in given.items()})
        outputs: dict[str, dict[str, str]] = {}
        environ = {
            **self.environ,
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(self.workspace),
            "RUNNER_TEMP": str(self.temp),
            "GITHUB_ACTION_PATH": str(self.action_path),
        }
        run = ActionRun()
        for index, step in enumerate(self.metadata["runs"]["steps"]):
            result = self._step(index, step, inputs, outputs, environ)
            run.steps.append(result)
            outputs[result.id] = result.outputs
            if result.exit_code:
                break
        for name, spec in (self.metadata.get("outputs") or {}).items():
            run.outputs[name] = resolve(str(spec["value"]), inputs, outputs)
        return run

    def _step(
        self,
        index: int,
        step: Mapping[str, Any],
        inputs: Mapping[str, str],
        outputs: Mapping[str, dict[str, str]],
        environ: dict[str, str],
    ) -> StepResult:
        step_id = step.get("id") or f"__run_{index}"
        files = {
            name: self.temp / f"{name.lower()}-{index}"
            for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")
        }
        for path in files.values():
            path.write_text("", encoding="utf-8")
        script = self.temp / f"step-{index}.sh"
        script.write_text(step["run"], encoding="utf-8")
        env = {
            **environ,
            **{name: str(path) for name, path in files.items()},
            **{k: resolve(str(v), inputs, outputs) for k, v in (step.get("env") or {}).items()},
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,
        )
        environ.update(read_environment_file(files["GITHUB_ENV"].read_text(encoding="utf-8")))
        for line in reversed(files["GITHUB_PATH"].read_text(encoding="utf-8").splitlines()):
            environ["PATH"] = f"{line}{os.pathsep}{environ.get('PATH', '')}"
        return StepResult(
            id=step_id,
            exit_code=done.returncode,
            outputs=read_environment_file(files["GITHUB_OUTPUT"].read_text(encoding="utf-8")),
            summary=files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8"),
            log=done.stdout + done.stderr,
        )
