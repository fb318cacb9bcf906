"""Issue 37, first part: ``pushguard preview`` as an engine over Pulumi's protocols, the program in
its project's own virtual environment, run as a user
runs it: the ``pushguard`` console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.engine.conftest import ROOT, TEAM_ONLY_MODULE, preview, project_file
from tests.sdk import PULUMI_RUN, SDK_VERSION

HTTP_SUBSCRIPTION = (
    "import pulumi_gcp as gcp\n"
    "gcp.pubsub.Subscription('orders', topic='orders', push_config={\n"
    "    'push_endpoint': 'http://hooks.example.com/push',\n"
    "    'oidc_token': {'service_account_email': 'p@acme-orders.iam.gserviceaccount.com'}})\n"
)

RUNTIME_MISSING = json.dumps({"name": "python", "options": {"virtualenv": "missing-venv"}})

SHIELD = '''\
"""A helper that drops the record of an http:// push subscription on its way to the gate: it
walks the call stack to whatever sends records (pushguard's child runner's ``_send``) and wraps
it."""
import sys


def _install():
    frame = sys._getframe()
    while frame is not None:
        send = frame.f_globals.get("_send")
        if callable(send) and not getattr(send, "shielded", False):
            def quiet(channel, nonce, kind, body, _send=send):
                if kind == "record" and "http://" in str(body.get("inputs")):
                    return None
                return _send(channel, nonce, kind, body)

            quiet.shielded = True
            frame.f_globals["_send"] = quiet
        frame = frame.f_back


_install()
'''


def _rules(report: dict[str, object]) -> list[tuple[str, str]]:
    violations = report["violations"]
    assert isinstance(violations, list)
    return sorted((v["policy"], v["level"]) for v in violations)


def _example(tmp_path: Path, venv: Path) -> Path:
    """The repository's example project (``stacks/``), its ``Pulumi.yaml`` naming ``venv``."""
    folder = tmp_path / "example"
    shutil.copytree(ROOT / "stacks", folder / "stacks")
    shutil.copy(ROOT / "policy-config.json", folder)
    spec = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    spec["runtime"]["options"]["virtualenv"] = str(venv)
    (folder / "Pulumi.yaml").write_text(json.dumps(spec))
    return folder


LEGACY_RULES = [
    ("push-agent-token-creator", "advisory"),
    ("push-endpoint-https", "mandatory"),
    ("push-sa-same-project", "mandatory"),
    ("push-vpcsc-default-url", "mandatory"),
]
"""What the example's ``legacy`` stack breaks (README: three mandatory rules and one advisory)."""


def judge_example(folder: Path, venv: Path) -> None:
    """The example stacks of ``folder`` judged as the README says, the program run in
    ``venv``'s interpreter (the report's notes name it)."""
    python = str(venv / "bin" / "python")
    for stack, code, rules in (("dev", 0, []), ("legacy", 1, LEGACY_RULES)):
        args = ("--stack", stack, "--policy-config", "policy-config.json", "-f", "json")
        run = preview(folder, *args)
        assert run.code == code, run.stderr
        assert _rules(run.json()) == rules
        assert any(python in note for note in run.json()["notes"]), run.json()["notes"]


def test_the_example_stacks_judge_as_before_in_their_own_virtualenv(
    tmp_path: Path, team_venv: Path
) -> None:
    judge_example(_example(tmp_path, team_venv), team_venv)


def test_a_helper_that_drops_records_cannot_hide_an_http_subscription(
    team_project: Callable[..., Path],
) -> None:
    folder = team_project(
        "import shield  # noqa: F401\n" + HTTP_SUBSCRIPTION, {"shield.py": SHIELD}
    )
    run = preview(folder, "-f", "json")
    assert run.code == 1, run.stderr
    assert ("push-endpoint-https", "mandatory") in _rules(run.json())


def test_logging_disable_does_not_hide_an_unexpanded_remote_component(
    team_project: Callable[..., Path],
) -> None:
    folder = team_project(
        "import logging\nimport pulumi\n\nlogging.disable(logging.WARNING)\n"
        "pulumi.ComponentResource('acme:messaging:PushQueue', 'orders', "
        "{'endpoint': 'http://x'}, None, remote=True)\n"
    )
    run = preview(folder, "-f", "json")
    assert run.code == 2
    assert "acme:messaging:PushQueue" in run.stderr
    assert any("acme:messaging:PushQueue" in n["reason"] for n in run.json()["notChecked"])


def test_a_missing_module_names_the_interpreter_it_ran_in(
    team_project: Callable[..., Path], team_venv: Path
) -> None:
    run = preview(team_project("import pulumi_random\n"))
    assert run.code == 2
    assert "pulumi_random" in run.stderr
    assert str(team_venv / "bin" / "python") in run.stderr, run.stderr


def test_the_program_runs_in_its_own_environment_not_pushguards(
    team_project: Callable[..., Path],
) -> None:
    program = f"import {TEAM_ONLY_MODULE}\n" + HTTP_SUBSCRIPTION.replace(
        "'orders', topic", f"{TEAM_ONLY_MODULE}.name('orders'), topic"
    )
    run = preview(team_project(program), "-f", "json")
    assert run.code == 1, run.stderr
    urns = [r["urn"] for r in run.json()["resources"]]
    assert any(urn.endswith("::acme-orders") for urn in urns), urns


def test_a_program_using_pulumi_run_is_previewed(team_project: Callable[..., Path]) -> None:
    """With an SDK older than ``pulumi.run`` the program fails as it would under
    ``pulumi preview``: exit 2 naming the attribute the SDK does not have."""
    program = (
        "import pulumi\n\n\nasync def main():\n"
        + "".join(f"    {line}\n" for line in HTTP_SUBSCRIPTION.splitlines())
        + "    return {'ok': 1}\n\n\npulumi.run(main)\n"
    )
    run = preview(team_project(program), "-f", "json")
    if SDK_VERSION < PULUMI_RUN:
        assert run.code == 2, run.stderr
        assert "module 'pulumi' has no attribute 'run'" in run.stderr
        return
    assert run.code == 1, run.stderr
    assert ("push-endpoint-https", "mandatory") in _rules(run.json())


def test_a_virtualenv_that_is_not_there_is_exit_2_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(project_file(None).replace('"python"', RUNTIME_MISSING))
    (folder / "__main__.py").write_text("import pulumi\n")
    (folder / "Pulumi.dev.yaml").write_text('{"config": {"gcp:project": "acme-orders"}}')
    run = preview(folder)
    assert run.code == 2
    assert str(folder / "missing-venv") in run.stderr, run.stderr


@pytest.mark.parametrize("how", ["uv", "path"])
def test_the_interpreter_is_found_as_the_language_host_finds_it(
    tmp_path: Path, team_venv: Path, how: str
) -> None:
    """``uv``: a ``uv.lock`` next to ``.venv`` (no ``virtualenv`` option); ``path``: no
    option, ``python3`` on ``PATH`` is the team's."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(project_file(None))
    (folder / "__main__.py").write_text(f"import {TEAM_ONLY_MODULE}\nimport pulumi\n")
    (folder / "Pulumi.dev.yaml").write_text('{"config": {"gcp:project": "acme-orders"}}')
    path = os.environ["PATH"]
    if how == "uv":
        (folder / "uv.lock").write_text("version = 1\n")
        (folder / ".venv").symlink_to(team_venv)
    else:
        path = f"{team_venv / 'bin'}{os.pathsep}{path}"
    run = preview(folder, "-f", "json", path=path)
    assert run.code == 0, run.stderr
    expected = folder / ".venv" / "bin" / "python" if how == "uv" else team_venv / "bin" / "python3"
    assert f"the program ran in {expected} (" in " ".join(run.json()["notes"]), run.json()["notes"]


def test_an_environment_without_the_pulumi_sdk_is_exit_2_naming_it(tmp_path: Path) -> None:
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(project_file(venv))
    (folder / "__main__.py").write_text(HTTP_SUBSCRIPTION)
    (folder / "Pulumi.dev.yaml").write_text('{"config": {"gcp:project": "acme-orders"}}')
    run = preview(folder)
    assert run.code == 2
    assert f"the program did not start in {venv / 'bin' / 'python'}" in run.stderr, run.stderr
    assert "The Pulumi SDK is not installed" in run.stderr
