"""The gate step of the GitHub Action (``action.yml`` at the repository root): ``python -m
pushguard.cli.action``.

The action's inputs reach this module as environment variables (the step's ``env:``, never
expanded into the script: GitHub's "Security hardening for GitHub Actions", "Understanding the
risk of script injections",
https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions#understanding-the-risk-of-script-injections):
:data:`INPUTS` names them. It runs ``pushguard preview`` once per stack (or one ``pushguard
analyze`` over the state files), each writing SARIF and JSON reports into a folder of its own
under ``RUNNER_TEMP``; merges the SARIF logs into the ``sarif`` path (one run per stack, each with
its own ``automationDetails.id``, so code scanning keeps them apart); appends the Markdown summary
(:mod:`pushguard.cli.summary`) to ``GITHUB_STEP_SUMMARY``; writes the step's outputs to
``GITHUB_OUTPUT`` (``exit-code``, ``sarif``, ``reports``); and exits with the combined exit code
(:func:`pushguard.cli.runs.combined_exit_code`: the worst of the stacks'), which fails the job on
1 and 2. The environment files are GitHub's "Environment files":
https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#environment-files.

Paths in the inputs are relative to ``working-directory``, itself relative to
``GITHUB_WORKSPACE``. Bad inputs (both ``stacks`` and ``state``, a ``baseline`` without
``state``) are exit 2 naming the input.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import tomllib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushguard._about import version
from pushguard.cli.runs import combined_exit_code, run_gate
from pushguard.cli.summary import GateRun, job_summary, load_run

INPUTS = {
    "stacks": "PUSHGUARD_ACTION_STACKS",
    "state": "PUSHGUARD_ACTION_STATE",
    "working-directory": "PUSHGUARD_ACTION_WORKING_DIRECTORY",
    "policy-config": "PUSHGUARD_ACTION_POLICY_CONFIG",
    "sarif": "PUSHGUARD_ACTION_SARIF",
    "baseline": "PUSHGUARD_ACTION_BASELINE",
}
"""Each input of ``action.yml`` and the environment variable its gate step passes it in."""


class InputError(ValueError):
    """An input of the action is not allowed; the message names it."""


@dataclass(frozen=True)
class ActionInputs:
    """The action's inputs, read from the environment (:func:`read_inputs`)."""

    stacks: tuple[str, ...]
    state: tuple[str, ...]
    working_directory: Path
    policy_config: str
    sarif: str
    baseline: str

    @property
    def command(self) -> str:
        """``analyze`` when state files are given, else ``preview``."""
        return "analyze" if self.state else "preview"


def read_inputs(environ: Mapping[str, str]) -> ActionInputs:
    """The inputs from ``environ`` (:data:`INPUTS`); ``stacks`` and ``state`` are split on
    whitespace (never glob-expanded).

    Raises:
        InputError: ``stacks`` and ``state`` both given, or ``baseline`` without ``state``
            (``pushguard preview`` compares with no baseline).
    """
    value = {name: environ.get(variable, "").strip() for name, variable in INPUTS.items()}
    stacks, state = tuple(value["stacks"].split()), tuple(value["state"].split())
    if stacks and state:
        raise InputError(
            "give `stacks` (pushguard preview) or `state` (pushguard analyze), not both"
        )
    if value["baseline"] and not state:
        raise InputError(
            "`baseline` compares state files (`state`, pushguard analyze) with a previous "
            "analyze report; pushguard preview takes no baseline"
        )
    workspace = Path(environ.get("GITHUB_WORKSPACE") or os.getcwd())
    return ActionInputs(
        stacks=tuple(dict.fromkeys(stacks)),  # a stack given twice is judged once
        state=state,
        working_directory=workspace / (value["working-directory"] or "."),
        policy_config=value["policy-config"],
        sarif=value["sarif"],
        baseline=value["baseline"],
    )


def _file_stem(index: int, label: str) -> str:
    return f"{index}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', label)}"


@dataclass(frozen=True)
class GateCommand:
    """One gate run: its label (the stack as given, or the state paths), the ``pushguard``
    arguments, and the SARIF and JSON reports it writes."""

    label: str
    args: list[str]
    sarif: Path
    report: Path


def gate_commands(inputs: ActionInputs, reports: Path) -> list[GateCommand]:
    """One ``preview`` per stack (one without ``--stack`` when none is given: the preview's own
    choice, ``$PULUMI_STACK`` or the only stack), or one ``analyze`` of every state path, each
    writing its reports into ``reports``. Values are passed as ``--option=VALUE`` and paths
    after ``--``, so no input can read as an option."""
    common = [f"--policy-config={inputs.policy_config}"] if inputs.policy_config else []
    if inputs.state:
        baseline = [f"--baseline={inputs.baseline}"] if inputs.baseline else []
        targets = [(" ".join(inputs.state), ["analyze", *common, *baseline], list(inputs.state))]
    else:
        targets = [
            (stack, ["preview", *common, f"--stack={stack}"], []) for stack in inputs.stacks
        ] or [("(default stack)", ["preview", *common], [])]
    commands = []
    for index, (label, args, paths) in enumerate(targets, start=1):
        stem = reports / _file_stem(index, label)
        sarif, report = Path(f"{stem}.sarif"), Path(f"{stem}.json")
        reporting = ["--format=sarif", f"--output={sarif}", f"--json-output={report}"]
        commands.append(GateCommand(label, [*args, *reporting, "--", *paths], sarif, report))
    return commands


def _read_sarif(path: Path) -> dict[str, Any] | None:
    """The SARIF log at ``path`` (a JSON object with ``version`` and a ``runs`` list), or
    ``None``."""
    try:
        log = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(log, dict) or "version" not in log or not isinstance(log.get("runs"), list):
        return None
    return log


def _category(run: Any, label: str) -> str:
    """A run's ``automationDetails.id``, set to ``pushguard-preview/LABEL/`` when the run could
    not name its stack (a failed run's bare ``pushguard-preview/``): code scanning needs every
    run's category to differ."""
    details = run.get("automationDetails") if isinstance(run, dict) else None
    category = str(details.get("id", "")) if isinstance(details, dict) else ""
    if category.count("/") < 2 and isinstance(run, dict):
        tool = category.split("/", 1)[0] or "pushguard"
        category = f"{tool}/{re.sub(r'[^A-Za-z0-9_.-]+', '_', label)}/"
        run["automationDetails"] = {**(details or {}), "id": category}
    return category


def merge_sarif(logs: list[tuple[str, Path]]) -> str:
    """One SARIF log with the runs of every ``(label, path)`` log in ``logs`` that can be read
    (in order), each under its own category (:func:`_category`); a run whose category an
    earlier one has (the same stack given by two names) is left out, and so is a log that is
    missing or unreadable (its run failed: exit 2, said in the summary)."""
    merged: dict[str, object] | None = None
    runs: list[object] = []
    seen: set[str] = set()
    for label, path in logs:
        log = _read_sarif(path)
        if log is None:
            continue
        merged = merged or {key: value for key, value in log.items() if key != "runs"}
        for run in log["runs"]:
            category = _category(run, label)
            if category not in seen:
                seen.add(category)
                runs.append(run)
    document = merged or {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
    }
    return json.dumps({**document, "runs": runs}, indent=2) + "\n"


def write_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append ``outputs`` to the ``GITHUB_OUTPUT`` file, each in the multiline form
    (``NAME<<DELIMITER``, value, ``DELIMITER``) with a random delimiter, so no value can end it
    early ("Multiline strings" of GitHub's environment files)."""
    with path.open("a", encoding="utf-8") as file:
        for name, value in outputs.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            file.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def check_sarif_target(inputs: ActionInputs) -> Path | None:
    """Where the merged SARIF log goes (``None`` without ``sarif``).

    Raises:
        InputError: the path exists and is not a SARIF log (a typo must not replace
            ``Pulumi.yaml``, the policy config, a program or a state file), or is a folder.
    """
    if not inputs.sarif:
        return None
    target = inputs.working_directory / inputs.sarif
    if target.is_dir():
        raise InputError(f"`sarif` {inputs.sarif}: is a folder; give a file path")
    if target.exists() and _read_sarif(target) is None:
        raise InputError(
            f"`sarif` {inputs.sarif}: exists and is not a SARIF log, so it is not replaced; give "
            "a new path (such as pushguard.sarif)"
        )
    return target


def run_action(environ: Mapping[str, str]) -> int:
    """The gate step: run, report, summarise; the combined exit code (see the module). A bad
    input is exit 2, said in the summary and the ``exit-code`` output too."""
    temp = Path(environ.get("RUNNER_TEMP") or tempfile.gettempdir())
    reports = Path(tempfile.mkdtemp(prefix="pushguard-reports-", dir=temp))
    try:
        inputs = read_inputs(environ)
        target = check_sarif_target(inputs)
    except InputError as error:
        print(f"pushguard action: error: {error}", file=sys.stderr)
        _publish(environ, job_summary("preview", [GateRun(str(error), 2, None)], 2), 2, "", reports)
        return 2
    runs: list[GateRun] = []
    commands = gate_commands(inputs, reports)
    for command in commands:
        code = run_gate(command.args, inputs.working_directory)
        runs.append(load_run(command.label, code, command.report))
    exit_code = combined_exit_code(run.exit_code for run in runs)
    sarif = ""
    if target is not None:
        logs = [(command.label, command.sarif) for command in commands]
        try:
            target.write_text(merge_sarif(logs), encoding="utf-8")
            sarif = str(target.resolve())
        except OSError as error:
            print(f"pushguard action: error: cannot write sarif {target}: {error}", file=sys.stderr)
            exit_code = 2
    _publish(environ, job_summary(inputs.command, runs, exit_code), exit_code, sarif, reports)
    return exit_code


def _publish(
    environ: Mapping[str, str], summary: str, exit_code: int, sarif: str, reports: Path
) -> None:
    """Append ``summary`` to ``GITHUB_STEP_SUMMARY`` and the outputs to ``GITHUB_OUTPUT``."""
    if environ.get("GITHUB_STEP_SUMMARY"):
        with Path(environ["GITHUB_STEP_SUMMARY"]).open("a", encoding="utf-8") as file:
            file.write(summary)
    if environ.get("GITHUB_OUTPUT"):
        write_outputs(
            Path(environ["GITHUB_OUTPUT"]),
            {"exit-code": str(exit_code), "sarif": sarif, "reports": str(reports)},
        )


def check_version(action_path: Path) -> int:
    """The install step's check: 0 when the installed pushguard is the version of the action's
    checkout (``[project] version`` of its ``pyproject.toml``), else 2 saying both (a ``venv``
    input with another pushguard would judge with other rules than the tag pinned)."""
    with (action_path / "pyproject.toml").open("rb") as file:
        wanted = str(tomllib.load(file)["project"]["version"])
    installed = version()
    if installed != wanted:
        print(
            f"pushguard action: error: the environment has pushguard {installed}, this action "
            f"is pushguard {wanted} ({action_path}): install the action's own version",
            file=sys.stderr,
        )
        return 2
    print(f"pushguard action: pushguard {installed}")
    return 0


def main(argv: list[str] | None = None) -> None:
    """``python -m pushguard.cli.action``: :func:`run_action` on this process's environment;
    ``python -m pushguard.cli.action check-version ACTION_PATH``: :func:`check_version`. Any
    unexpected error is exit 2 (a gate fails closed), never 1."""
    args = sys.argv[1:] if argv is None else argv
    try:
        if args[:1] == ["check-version"] and len(args) == 2:
            code = check_version(Path(args[1]))
        elif not args:
            code = run_action(os.environ)
        else:
            print(f"pushguard action: error: unexpected arguments {args}", file=sys.stderr)
            code = 2
    except KeyboardInterrupt:  # GitHub cancels a job with SIGINT first
        print("pushguard action: error: interrupted", file=sys.stderr)
        code = 2
    except Exception as error:
        print(f"pushguard action: error: {type(error).__name__}: {error}", file=sys.stderr)
        code = 2
    sys.exit(code)


if __name__ == "__main__":
    main()
