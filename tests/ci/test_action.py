"""The GitHub Action (``action.yml``) as a workflow runs it: its steps run as the runner runs
them (:mod:`tests.ci.runner`) on a copy of the example stacks, from a copy of the repository's
files as the runner checks the action out; the job's exit code, the SARIF log and the job summary
are what a team sees. The action is also checked as CI checks it: against GitHub's schema
(check-jsonschema) and by zizmor's audits, offline.

The install step reuses this environment (the ``venv`` input, with the action's code first on
``PYTHONPATH``), except in :func:`test_the_action_installs_its_own_pushguard`, which installs the
action's checkout into a fresh virtual environment from the package index, as on a runner.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ci.runner import ActionRun, Runner, UnsupportedActionError

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
BIN = Path(sys.executable).parent
PREFIX = "urn:pulumi:legacy::pushguard-example::gcp:pubsub/subscription:Subscription::"


def repository_files(destination: Path) -> Path:
    """The repository's files (tracked, and new ones not ignored) copied to ``destination``: the
    action's folder as the runner downloads it at a tag."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


@pytest.fixture(scope="module")
def action_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return repository_files(tmp_path_factory.mktemp("action"))


def team_repository(folder: Path) -> Path:
    """A team's repository, checked out: the example project (``Pulumi.yaml``, ``stacks/``,
    ``policy-config.json``) in a git work tree, its program's virtualenv this one."""
    for name in ("Pulumi.yaml", "policy-config.json"):
        shutil.copy2(ROOT / name, folder / name)
    shutil.copytree(
        ROOT / "stacks", folder / "stacks", ignore=shutil.ignore_patterns("__pycache__")
    )
    (folder / ".venv").symlink_to(Path(sys.prefix))
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


@pytest.fixture
def runner(action_path: Path, tmp_path: Path) -> Runner:
    (tmp_path / "workspace").mkdir()
    workspace = team_repository((tmp_path / "workspace").resolve())
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    environ = {**os.environ, "PYTHONPATH": str(action_path)}  # the action's code, this venv
    return Runner(action_path, workspace, temp, environ)


def run(runner: Runner, **given: str) -> ActionRun:
    return runner.run(venv=sys.prefix, policy_config="policy-config.json", **given)


def sarif(run_: ActionRun) -> dict[str, Any]:
    return json.loads(Path(run_.outputs["sarif"]).read_text(encoding="utf-8"))


def test_a_compliant_stack_passes(runner: Runner) -> None:
    done = run(runner, stacks="dev")
    assert done.exit_code == 0, done.log
    assert done.outputs["exit-code"] == "0"
    assert done.outputs["sarif"] == str(runner.workspace / "pushguard.sarif")
    [stack_run] = sarif(done)["runs"]
    assert stack_run["automationDetails"]["id"] == "pushguard-preview/pushguard-example/dev/"
    assert stack_run["results"] == []
    summary = done.summary
    assert summary.startswith("## pushguard preview: passed\n")
    # two not checked: push-target-requires-auth on the two services dev does not declare
    assert "| pushguard\\-example\\/dev | passed | 0 | 0 | 0 | 2 |" in summary
    assert "Findings" not in summary and "Errors" not in summary
    reports = Path(done.outputs["reports"])
    assert json.loads((reports / "1-dev.json").read_text())["summary"]["exitCode"] == 0


def test_a_violating_stack_fails_the_job_with_sarif_and_summary(runner: Runner) -> None:
    done = run(runner, stacks="legacy")
    assert done.exit_code == 1, done.log
    assert [s.exit_code for s in done.steps] == [0, 1]
    assert done.outputs["exit-code"] == "1"
    [stack_run] = sarif(done)["runs"]
    results = {(r["ruleId"], r["level"]) for r in stack_run["results"]}
    assert results == {
        ("push-endpoint-https", "error"),
        ("push-sa-same-project", "error"),
        ("push-vpcsc-default-url", "error"),
        ("push-agent-token-creator", "warning"),
    }
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in stack_run["results"]
    }
    assert uris == {"stacks/legacy.py"}  # relative to the repository, as code scanning needs
    summary = done.summary
    assert summary.startswith("## pushguard preview: FAILED\n")
    assert "| pushguard\\-example\\/legacy | mandatory violation | 3 | 1 | 0 | 4 |" in summary
    findings = summary.split("### Findings (4)\n\n", 1)[1].splitlines()
    assert [line.split("**")[1] for line in findings[:4]] == ["mandatory"] * 3 + ["advisory"]
    assert (
        "push\\-endpoint\\-https: gcp\\:pubsub\\/subscription\\:Subscription legacy\\-orders"
        in (findings[0])
    )


def test_several_stacks_take_the_worst_exit_code_and_one_sarif_run_each(runner: Runner) -> None:
    done = run(runner, stacks="dev legacy")
    assert done.exit_code == 1, done.log
    ids = [r["automationDetails"]["id"] for r in sarif(done)["runs"]]
    assert ids == [
        "pushguard-preview/pushguard-example/dev/",
        "pushguard-preview/pushguard-example/legacy/",
    ]
    assert "the worst of 2 run(s)" in done.summary
    assert done.summary.index("example\\/dev | passed") < done.summary.index("example\\/legacy")


def test_a_failed_run_fails_the_job_with_exit_2_and_says_why(runner: Runner) -> None:
    done = run(runner, stacks="dev staging legacy")  # no Pulumi.staging.yaml
    assert done.exit_code == 2, done.log
    assert done.outputs["exit-code"] == "2"
    summary = done.summary
    assert summary.startswith("## pushguard preview: FAILED (the run failed or could not judge)")
    errors = summary.split("### Errors (1)\n\n", 1)[1]
    assert errors.startswith("- staging\\: ") and "Pulumi\\.staging\\.yaml" in errors
    ids = [r["automationDetails"]["id"] for r in sarif(done)["runs"]]
    assert "pushguard-preview/pushguard-example/legacy/" in ids  # the other stacks still judged


def test_inputs_reach_the_scripts_as_data_never_as_code(runner: Runner) -> None:
    hostile = 'dev;touch${IFS}pwned1 $(touch pwned2) `touch pwned3` "; touch pwned4; "'
    done = run(runner, stacks=hostile, sarif="out $(touch pwned5).sarif")
    assert done.exit_code == 2, done.log
    assert not list(runner.workspace.glob("pwned*"))
    assert (runner.workspace / "out $(touch pwned5).sarif").is_file()


def test_stacks_and_state_together_are_refused(runner: Runner) -> None:
    done = run(runner, stacks="dev", state="state/")
    assert done.exit_code == 2
    assert "give `stacks` (pushguard preview) or `state` (pushguard analyze), not both" in done.log
    done = run(runner, stacks="dev", baseline="before.json")
    assert done.exit_code == 2
    assert "pushguard preview takes no baseline" in done.log


def test_a_refused_input_still_gives_the_summary_and_the_exit_code_output(runner: Runner) -> None:
    done = run(runner, stacks="dev", state="state/")
    assert done.exit_code == 2
    assert done.outputs["exit-code"] == "2"
    assert done.summary.startswith("## pushguard preview: FAILED")
    assert "not both" in done.summary


def test_the_sarif_input_never_replaces_a_file_that_is_not_a_sarif_log(runner: Runner) -> None:
    """A typo in ``sarif`` must not replace the project file or the policy config (the trial
    saw both replaced, exit 0); a previous SARIF log is replaced."""
    for name in ("Pulumi.yaml", "policy-config.json", "stacks"):
        before = {p: p.read_bytes() for p in runner.workspace.rglob("*") if p.is_file()}
        done = run(runner, stacks="dev", sarif=name)
        assert done.exit_code == 2, done.log
        assert f"`sarif` {name}:" in done.log
        after = {p: p.read_bytes() for p in runner.workspace.rglob("*") if p.is_file()}
        assert before == after
    assert run(runner, stacks="dev").exit_code == 0
    assert run(runner, stacks="dev").exit_code == 0, "its own SARIF log is replaced"


def test_the_stack_program_cannot_write_the_summary_or_the_outputs(runner: Runner) -> None:
    """The team's program runs without GitHub's environment files: it cannot put "passed" in the
    job summary, set an output or change the next steps' environment."""
    program = runner.workspace / "stacks" / "legacy.py"
    program.write_text(
        program.read_text(encoding="utf-8") + "\nimport os as _os\n"
        "for _name in ('GITHUB_STEP_SUMMARY', 'GITHUB_OUTPUT', 'GITHUB_ENV', 'GITHUB_PATH'):\n"
        "    if _os.environ.get(_name):\n"
        "        with open(_os.environ[_name], 'a') as _file:\n"
        "            _file.write('## pushguard preview: passed\\nexit-code=0\\n')\n"
    )
    done = run(runner, stacks="legacy")
    assert done.exit_code == 1, done.log
    assert done.summary.startswith("## pushguard preview: FAILED\n")
    assert "passed" not in done.summary.split("\n", 1)[0]
    assert done.summary.count("## pushguard preview") == 1


def test_a_stack_given_twice_is_judged_once(runner: Runner) -> None:
    done = run(runner, stacks="dev dev pushguard-example/dev")
    assert done.exit_code == 0, done.log
    ids = [r["automationDetails"]["id"] for r in sarif(done)["runs"]]
    assert ids == ["pushguard-preview/pushguard-example/dev/"]


def test_state_files_with_a_baseline_list_new_findings_first(runner: Runner) -> None:
    from pushguard.preview.runner import PreviewOptions, run_preview
    from tests.analyze.exports import dumps, export_from_preview

    result = run_preview(
        PreviewOptions(ROOT / "stacks", "legacy", None, ROOT / "policy-config.json")
    )
    state = export_from_preview(result)
    folder = runner.workspace / "state"
    folder.mkdir()
    (folder / "legacy.json").write_text(dumps(state))
    first = run(runner, state="state/", sarif="analyze.sarif")
    assert first.exit_code == 1, first.log
    assert first.summary.startswith("## pushguard analyze: FAILED\n")
    before = Path(first.outputs["reports"]) / "1-state_.json"
    shutil.copy2(before, runner.workspace / "before.json")
    # payments-settled now pushes over http: one new finding, the others existing
    changed = copy.deepcopy(state)
    for resource in changed["deployment"]["resources"]:
        if resource["urn"] == PREFIX + "payments-settled":
            for side in ("inputs", "outputs"):
                push = resource[side]["pushConfig"]
                push["pushEndpoint"] = push["pushEndpoint"].replace("https://", "http://", 1)
    (folder / "legacy.json").write_text(dumps(changed))
    done = run(runner, state="state/", baseline="before.json", sarif="analyze.sarif")
    assert done.exit_code == 1, done.log
    summary = done.summary
    assert summary.index("### New findings (1)") < summary.index("### Existing findings (4)")
    new = summary.split("### New findings (1)\n\n", 1)[1].splitlines()[0]
    assert new.startswith("- **mandatory** (new, pushguard\\-example\\/legacy) push\\-endpoint")
    assert "payments\\-settled" in new
    [stack_run] = sarif(done)["runs"]
    assert stack_run["automationDetails"]["id"].startswith("pushguard-analyze/pushguard-example/")


def test_the_action_installs_its_own_pushguard(action_path: Path, tmp_path: Path) -> None:
    """The real install: ``pip install ACTION_PATH[pulumi]`` into a new virtual environment
    (from the package index), then the gate with it; nothing of this environment on the way
    (no ``PYTHONPATH``, this venv off ``PATH``). The time it took is printed (``-s``)."""
    (tmp_path / "workspace").mkdir()
    workspace = team_repository((tmp_path / "workspace").resolve())
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environ["PATH"] = os.pathsep.join(
        p for p in environ.get("PATH", "").split(os.pathsep) if Path(p) != BIN
    )
    started = time.monotonic()
    done = Runner(action_path, workspace, temp, environ).run(
        stacks="legacy", policy_config="policy-config.json"
    )
    print(f"\naction with a fresh install: {time.monotonic() - started:.0f} s")
    assert done.exit_code == 1, done.log
    assert done.steps[0].exit_code == 0 and f"pushguard {VERSION}" in done.steps[0].log
    python = Path(done.steps[0].outputs["python"])
    assert python.is_relative_to(temp)
    assert len(sarif(done)["runs"][0]["results"]) == 4


def test_a_venv_of_another_version_is_refused(runner: Runner) -> None:
    (runner.action_path / "pyproject.toml").write_text(
        (ROOT / "pyproject.toml")
        .read_text(encoding="utf-8")
        .replace(f'version = "{VERSION}"', 'version = "99.0.0"', 1)
    )
    try:
        done = run(runner, stacks="dev")
    finally:
        shutil.copy2(ROOT / "pyproject.toml", runner.action_path / "pyproject.toml")
    assert [s.exit_code for s in done.steps] == [2]
    assert f"the environment has pushguard {VERSION}, this action is pushguard 99.0.0" in done.log


# ---------------------------------------------------------------------------------------------
# The checks CI runs on action.yml, and that they can fail.


def lint(tool: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / tool), *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_action_yml_passes_github_actions_schema_and_zizmor() -> None:
    checked = lint("check-jsonschema", "--builtin-schema", "vendor.github-actions", "action.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    audited = lint("zizmor", "--offline", "action.yml")
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "No findings to report" in audited.stdout + audited.stderr


def test_the_checks_catch_an_injected_input_and_a_step_without_shell(tmp_path: Path) -> None:
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    gate = "run: '\"$PUSHGUARD_ACTION_PYTHON\" -m pushguard.cli.action'"
    assert gate in action
    (tmp_path / "action.yml").write_text(action.replace(gate, "run: echo ${{ inputs.stacks }}"))
    audited = lint("zizmor", "--offline", "action.yml", cwd=tmp_path)
    assert audited.returncode != 0 and "template-injection" in audited.stdout
    with pytest.raises(UnsupportedActionError, match="expression inside run"):
        Runner(tmp_path, tmp_path, tmp_path, {})
    (tmp_path / "action.yml").write_text(action.replace("      shell: bash\n", "", 1))
    checked = lint(
        "check-jsonschema", "--builtin-schema", "vendor.github-actions", "action.yml", cwd=tmp_path
    )
    assert checked.returncode != 0


def test_the_docs_pin_the_action_to_the_package_version() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    pins = [
        (page.name, tag)
        for page in pages
        for tag in re.findall(r"pushguard/pushguard@([\w.\-]+)", page.read_text(encoding="utf-8"))
        if tag != "REF"
    ]
    assert pins, "no page shows the action pinned"
    assert {tag for _, tag in pins} == {f"v{VERSION}"}, pins


def _table(page: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table under ``header`` (cells stripped)."""
    lines = page.split(header + "\n", 1)[1].splitlines()[1:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def test_the_docs_tables_list_every_input_with_its_default_and_every_output() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    page = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    inputs = {
        row[0].strip("`"): row[1].strip("`").replace('""', "")
        for row in _table(page, "| input | default | what it is |")
    }
    assert inputs == {name: str(spec["default"]) for name, spec in action["inputs"].items()}
    outputs = [row[0].strip("`") for row in _table(page, "| output | what it is |")]
    assert outputs == list(action["outputs"])
