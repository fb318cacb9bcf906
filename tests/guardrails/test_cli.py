"""``pushguard guardrails`` through the console script, as a user runs it: exit codes, the
coverage table, nothing written on bad input, byte-identical output on two runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from pushguard.policy.exceptions import utc_today
from tests.guardrails.configs import LEGACY, rich_raw

SCRIPT = Path(sys.executable).parent / "pushguard"
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [str(SCRIPT), "guardrails", *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def write_config(folder: Path, raw: dict) -> Path:
    path = folder / "policy-config.json"
    path.write_text(json.dumps(raw))
    return path


def tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_writes_the_files_and_prints_the_coverage(tmp_path: Path) -> None:
    config = write_config(tmp_path, rich_raw())
    result = run(
        "--policy-config", str(config), "--organization", "123456789012", "-o", "out", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "push-audience-explicit     compiled      compiled" in result.stdout
    assert "push-sa-same-project       not-compiled  not-compiled" in result.stdout
    written = tree(tmp_path / "out")
    assert "constraints/custom.pushguardPushAuthOidc.yaml" in written
    assert "policies/custom.pushguardPushVpcscDefaultUrl--acme-orders.yaml" in written
    assert "scc/pushguard_push_auth_oidc.yaml" in written
    coverage = json.loads(written["coverage.json"])
    assert len(coverage["rules"]) == 15
    policy = yaml.safe_load(written["policies/custom.pushguardPushAuthOidc.yaml"])
    assert "dryRunSpec" in policy


def test_two_runs_are_byte_identical(tmp_path: Path) -> None:
    config = write_config(tmp_path, rich_raw())
    for out in ("a", "b"):
        args = ("--policy-config", str(config), "--organization", "1", "-o", out, "--enforce")
        assert run(*args, cwd=tmp_path).returncode == 0
    assert tree(tmp_path / "a") == tree(tmp_path / "b")


def test_a_second_run_replaces_the_previous_output(tmp_path: Path) -> None:
    assert run("--organization", "1", "-o", "out", cwd=tmp_path).returncode == 0
    first = tree(tmp_path / "out")
    assert run("--organization", "1", "-o", "out", "--enforce", cwd=tmp_path).returncode == 0
    second = tree(tmp_path / "out")
    assert first.keys() == second.keys() and first != second


YESTERDAY = (utc_today() - timedelta(days=1)).isoformat()
MANY = [f"https://p{i}.example/" for i in range(14)]
BAD = {
    "unknown rule": ({"push-no-such-rule": "mandatory"}, [], "push-no-such-rule"),
    "malformed organization": ({}, ["--organization", "acme"], "--organization"),
    "expired exception": (
        {"push-auth-oidc": {"exceptions": [
            {"resource": LEGACY, "reason": "r", "expires": YESTERDAY}
        ]}},
        [],
        "push-auth-oidc.exceptions[0].expires",
    ),
    "limit exceeded": (
        {"push-endpoint-https": {"exemptEndpointPrefixes": MANY}},
        [],
        "push-endpoint-https: condition",
    ),
    "bad tag": ({}, ["--perimeter-tag", "noequals"], "--perimeter-tag"),
    "bad method types": ({}, ["--method-types", "update"], "--method-types"),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_exit_2_naming_the_field_and_nothing_is_written(
    case: str, tmp_path: Path
) -> None:
    raw, extra, field = BAD[case]
    config = write_config(tmp_path, raw)
    args = ["--policy-config", str(config), "-o", "out", *extra]
    if "--organization" not in extra:
        args += ["--organization", "123"]
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert field in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == [
        "policy-config.json"
    ]  # no temporary folder left


def test_a_folder_with_other_files_is_not_replaced(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    result = run("--organization", "1", "-o", "out", cwd=tmp_path)
    assert result.returncode == 2 and "-o" in result.stderr
    assert tree(tmp_path / "out") == {"keep.txt": b"mine"}
