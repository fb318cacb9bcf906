"""Issue 37, items 3 and 4: the values the real ``pulumi preview`` would know, and the stack
config found as the CLI finds it, under pushguard's engine, run as a user runs it (the
``pushguard preview`` console script):

- a project with ``Pulumi.yml`` reads ``Pulumi.<stack>.yml`` in its ``stackConfigDir``, never a
  leftover ``Pulumi.<stack>.yaml``;
- a Pulumi ESC ``environment:`` import without values leaves the project unknown: the rules
  that need it are not checked, whatever ``GOOGLE_CLOUD_PROJECT`` says; with the environment's
  values (``--values``), its ``pulumiConfig`` is the stack's config;
- ``--values`` answers ``StackReference`` outputs (secrets as secrets), so ``.apply()``
  callbacks on them run and their subscriptions are judged; a malformed file is exit 2 naming
  the field;
- what stays unknown offline is listed in every report format with its line, and
  ``unknownAtPreview: enforce`` makes such a run exit 2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.engine.conftest import ROOT, Run, preview, project_file

ACCOUNT = "p@acme-orders.iam.gserviceaccount.com"

FROM_CONFIG = (
    "import pulumi\n"
    "import pulumi_gcp as gcp\n\n"
    "endpoint = pulumi.Config().require('endpoint')\n"
    "gcp.pubsub.Subscription('orders', topic='orders', push_config={\n"
    "    'push_endpoint': endpoint,\n"
    f"    'oidc_token': {{'service_account_email': '{ACCOUNT}',\n"
    "                   'audience': 'https://hooks.example.com'}})\n"
)

COMPLIANT = (
    "import pulumi_gcp as gcp\n\n"
    "gcp.pubsub.Subscription('orders', topic='orders', push_config={\n"
    "    'push_endpoint': 'https://hooks.example.com/push',\n"
    f"    'oidc_token': {{'service_account_email': '{ACCOUNT}',\n"
    "                   'audience': 'https://hooks.example.com'}})\n"
)

FROM_STACK_REFERENCE = (
    "import pulumi\n"
    "import pulumi_gcp as gcp\n\n"
    "network = pulumi.StackReference('acme/network/prod')\n\n\n"
    "def subscribe(endpoints):\n"
    "    for i, url in enumerate(endpoints):\n"
    "        gcp.pubsub.Subscription(f'hook-{i}', topic='orders',\n"
    "            labels={'team': network.get_output('team')},\n"
    "            push_config={'push_endpoint': url,\n"
    f"                         'oidc_token': {{'service_account_email': '{ACCOUNT}',\n"
    "                                        'audience': 'https://hooks.example.com'}})\n\n\n"
    "network.get_output('pushEndpoints').apply(subscribe)\n"
)
"""A loop over another stack's output, inside ``.apply()``: without the output nothing is
registered. Line 4 makes the stack reference."""

ENDPOINTS_ONLY = FROM_STACK_REFERENCE.replace(
    "            labels={'team': network.get_output('team')},\n", ""
)
"""The same loop without the secret label."""

SECRET = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}
"""Pulumi's secret envelope, without its ``value``."""


def _policies(report: dict[str, Any], level: str | None = None) -> set[tuple[str, str]]:
    """``(policy, resource name)`` of the report's violations (of ``level``)."""
    return {
        (v["policy"], v["urn"].rsplit("::", 1)[1])
        for v in report["violations"]
        if level is None or v["level"] == level
    }


def _not_checked(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(n["policy"], n["urn"].rsplit("::", 1)[1]) for n in report["notChecked"]}


def _write(path: Path, data: Any) -> Path:
    """``data`` into ``path``: JSON for a ``.json`` file, else YAML."""
    text = json.dumps(data) if path.suffix == ".json" else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text)
    return path


def docs_values() -> dict[str, Any]:
    """The ``--values`` example of docs/preview.md (the JSON block with ``stackReferences``)."""
    text = (ROOT / "docs" / "preview.md").read_text(encoding="utf-8")
    for block in re.findall(r"```json\n(.*?)```", text, flags=re.S):
        if '"stackReferences"' in block:
            return dict(json.loads(block))
    raise AssertionError("docs/preview.md has no --values example")


# ---------------------------------------------------------------------------------------------
# The stack config file, found as the CLI finds it.


def test_a_pulumi_yml_project_reads_its_stack_yml_in_stack_config_dir_not_a_leftover_yaml(
    tmp_path: Path, team_venv: Path
) -> None:
    folder = tmp_path / "project"
    (folder / "config").mkdir(parents=True)
    (folder / "Pulumi.yml").write_text(project_file(team_venv, stackConfigDir="config"))
    (folder / "__main__.py").write_text(FROM_CONFIG)
    _write(
        folder / "config" / "Pulumi.dev.yml",
        {"config": {"gcp:project": "acme-orders", "team:endpoint": "http://hooks.example.com/p"}},
    )
    leftover = {"config": {"gcp:project": "acme-orders", "team:endpoint": "https://ok.example"}}
    _write(folder / "config" / "Pulumi.dev.yaml", leftover)
    _write(folder / "config" / "Pulumi.old.yaml", leftover)
    run = preview(folder, "-f", "json")  # dev is the only stack with a .yml file
    assert run.code == 1, run.stderr
    report = run.json()
    assert ("push-endpoint-https", "orders") in _policies(report, "mandatory")
    endpoint = next(r for r in report["resources"] if r["name"] == "orders")
    assert endpoint["inputs"]["pushConfig"]["pushEndpoint"] == "http://hooks.example.com/p"


# ---------------------------------------------------------------------------------------------
# Pulumi ESC imports.


def _esc_project(team_project: Callable[..., Path], program: str = COMPLIANT) -> Path:
    """A project whose stack imports the ESC environment ``acme/gcp-prod`` and has no
    ``gcp:project`` of its own."""
    folder = team_project(program)
    _write(folder / "Pulumi.dev.yaml", {"environment": ["acme/gcp-prod"], "config": {}})
    return folder


def test_an_esc_import_without_values_leaves_project_rules_not_checked_whatever_the_ci_sets(
    team_project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "acme-billing")  # google-github-actions/auth
    folder = _esc_project(team_project)
    run = preview(folder, "-f", "json")
    assert run.code == 0, run.stderr
    report = run.json()
    assert ("push-sa-same-project", "orders") in _not_checked(report), report["notChecked"]
    assert not any(p == "push-sa-same-project" for p, _ in _policies(report)), report
    assert "acme-billing" not in run.stdout
    (listed,) = [u for u in report["unknownOffline"] if u["kind"] == "environment"]
    assert listed["name"] == "acme/gcp-prod"
    assert (folder / "Pulumi.dev.yaml").read_text().splitlines()[1] == "- acme/gcp-prod"
    assert listed["location"] == {"path": "Pulumi.dev.yaml", "line": 2}  # run in the folder


@pytest.mark.parametrize(("project", "code"), [("acme-orders", 0), ("acme-billing", 1)])
def test_an_esc_environments_pulumi_config_given_with_values_is_the_stacks_config(
    team_project: Callable[..., Path], tmp_path: Path, project: str, code: int
) -> None:
    folder = _esc_project(team_project)
    values = _write(
        tmp_path / "values.yaml",
        {"environments": {"acme/gcp-prod": {"pulumiConfig": {"gcp:project": project}}}},
    )
    run = preview(folder, "--values", str(values), "-f", "json")
    assert run.code == code, run.stderr
    report = run.json()
    assert report["unknownOffline"] == []
    assert ("push-sa-same-project", "orders") not in _not_checked(report)
    judged = ("push-sa-same-project", "orders") in _policies(report, "mandatory")
    assert judged == (project == "acme-billing"), report["violations"]


# ---------------------------------------------------------------------------------------------
# Stack references.


def test_stack_reference_outputs_given_with_values_run_the_apply_and_are_judged(
    team_project: Callable[..., Path], tmp_path: Path
) -> None:
    folder = team_project(FROM_STACK_REFERENCE)
    alone = preview(folder, "-f", "json")
    assert alone.code == 0, alone.stderr
    assert [r["name"] for r in alone.json()["resources"]] == ["team-dev"]
    (listed,) = alone.json()["unknownOffline"]
    assert (listed["kind"], listed["name"]) == ("stackReference", "acme/network/prod")
    assert listed["location"] == {"path": "__main__.py", "line": 4}  # run in the folder
    assert "resources created from it are not checked" in listed["message"]

    outputs = {
        "pushEndpoints": ["http://hooks.example.com/a", "https://hooks.example.com/b"],
        "team": {**SECRET, "value": "orders-team-s3cr3t"},
    }
    values = _write(tmp_path / "values.json", {"stackReferences": {"acme/network/prod": outputs}})
    run = preview(folder, "--values", str(values), "-f", "json")
    assert run.code == 1, run.stderr
    report = run.json()
    assert ("push-endpoint-https", "hook-0") in _policies(report, "mandatory")
    assert ("push-endpoint-https", "hook-1") not in _policies(report)
    hooks = [r for r in report["resources"] if r["name"].startswith("hook-")]
    assert [h["inputs"]["labels"]["team"] for h in hooks] == ["[secret]", "[secret]"]
    assert "orders-team-s3cr3t" not in run.stdout
    assert report["unknownOffline"] == []


def test_a_secret_the_values_file_does_not_show_leaves_the_stack_reference_unknown(
    team_project: Callable[..., Path], tmp_path: Path
) -> None:
    folder = team_project(FROM_STACK_REFERENCE)
    outputs = {"pushEndpoints": ["http://hooks.example.com/a"], "team": "[secret]"}
    values = _write(tmp_path / "values.json", {"stackReferences": {"acme/network/prod": outputs}})
    run = preview(folder, "--values", str(values), "-f", "json")
    assert run.code == 0, run.stderr
    (listed,) = run.json()["unknownOffline"]
    assert "output team" in listed["message"] and "[secret]" in listed["message"]


def test_the_documented_values_example_closes_both_gaps(
    team_project: Callable[..., Path], tmp_path: Path
) -> None:
    folder = _esc_project(team_project, ENDPOINTS_ONLY)
    values = _write(tmp_path / "values.json", docs_values())
    run = preview(folder, "--values", str(values), "-f", "json")
    report = run.json()
    assert run.code == 1, run.stderr
    assert report["unknownOffline"] == []
    endpoints = docs_values()["stackReferences"]["acme/network/prod"]["pushEndpoints"]
    hooks = sorted(r["name"] for r in report["resources"] if r["name"].startswith("hook-"))
    assert hooks == [f"hook-{i}" for i in range(len(endpoints))]
    assert not any(p == "push-sa-same-project" for p, _ in _not_checked(report))


@pytest.mark.parametrize(
    ("values", "field", "allowed"),
    [
        ({"stackReference": {}}, "stackReference", "allowed: stackReferences"),
        ({"stackReferences": {"acme/network/prod": ["a"]}}, "acme/network/prod", "object"),
        (
            {"environments": {"acme/gcp-prod": {"pulumiConfig": ["gcp:project"]}}},
            "environments.acme/gcp-prod.pulumiConfig",
            "must be an object",
        ),
        ({"stackReferences": {"a b/c": {}}}, "a b/c", "ORG/PROJECT/STACK"),
    ],
)
def test_a_malformed_values_file_is_exit_2_naming_the_field_and_what_is_allowed(
    team_project: Callable[..., Path], tmp_path: Path, values: Any, field: str, allowed: str
) -> None:
    folder = team_project(COMPLIANT)
    path = _write(tmp_path / "values.json", values)
    run = preview(folder, "--values", str(path))
    assert run.code == 2
    assert "invalid --values file" in run.stderr, run.stderr
    assert field in run.stderr and allowed in run.stderr, run.stderr


# ---------------------------------------------------------------------------------------------
# What stays unknown offline: listed in every format; unknownAtPreview: enforce fails the run.

EVERYTHING_UNKNOWN = FROM_STACK_REFERENCE + (
    "svc = gcp.cloudrunv2.get_service_output(name='orders', location='us-central1')\n"
    "pusher = gcp.serviceaccount.Account.get('pusher', 'projects/acme-orders/serviceAccounts/p')\n"
    "gcp.pubsub.Subscription('by-service', topic='orders', push_config={\n"
    "    'push_endpoint': svc.uri,\n"
    "    'oidc_token': {'service_account_email': pusher.email,\n"
    "                   'audience': 'https://hooks.example.com'}})\n"
)


def _listed(run: Run) -> list[tuple[str, str, int | None]]:
    return [
        (u["kind"], u["name"], u["location"]["line"] if u["location"] else None)
        for u in run.json()["unknownOffline"]
    ]


def test_what_the_real_preview_would_know_is_listed_in_every_format_with_its_line(
    team_project: Callable[..., Path],
) -> None:
    folder = team_project(EVERYTHING_UNKNOWN)
    first, again = preview(folder, "-f", "json"), preview(folder, "-f", "json")
    assert first.code == 0, first.stderr
    assert first.stdout == again.stdout
    read_line = EVERYTHING_UNKNOWN.splitlines().index(
        next(line for line in EVERYTHING_UNKNOWN.splitlines() if "Account.get" in line)
    )
    assert _listed(first) == [
        ("stackReference", "acme/network/prod", 4),
        ("read", "gcp:serviceaccount/account:Account pusher", read_line + 1),
        ("dataSource", "gcp:cloudrunv2/getService:getService", None),
    ]
    text = preview(folder)
    assert "Unknown offline (3)" in text.stdout, text.stdout
    assert "__main__.py:4" in text.stdout.split("Unknown offline (3)", 1)[1]
    sarif = preview(folder, "-f", "sarif")
    assert sarif.stdout == preview(folder, "-f", "sarif").stdout
    (invocation,) = json.loads(sarif.stdout)["runs"][0]["invocations"]
    notes = [
        n
        for n in invocation["toolExecutionNotifications"]
        if n["descriptor"]["id"] == "unknown-offline"
    ]
    assert [(n["level"], n["properties"]["name"]) for n in notes] == [
        ("note", "acme/network/prod"),
        ("note", "gcp:serviceaccount/account:Account pusher"),
        ("note", "gcp:cloudrunv2/getService:getService"),
    ]
    assert notes[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 4}
    assert "locations" not in notes[2]


def test_unknown_at_preview_enforce_makes_an_unknown_stack_reference_exit_2(
    team_project: Callable[..., Path], tmp_path: Path
) -> None:
    folder = team_project(FROM_STACK_REFERENCE)
    enforce = {"push-endpoint-https": {"unknownAtPreview": "enforce"}}
    config = _write(tmp_path / "policy.json", enforce)
    report = tmp_path / "report.json"
    run = preview(folder, "--policy-config", str(config), "-f", "json", "-o", str(report))
    assert run.code == 2
    assert "unknownAtPreview is enforce (push-endpoint-https)" in run.stderr, run.stderr
    assert "stackReference acme/network/prod" in run.stderr
    written = json.loads(report.read_text())
    assert written["summary"]["exitCode"] == 2
    assert [u["name"] for u in written["unknownOffline"]] == ["acme/network/prod"]
    values = _write(
        tmp_path / "values.json",
        {"stackReferences": {"acme/network/prod": {"pushEndpoints": [], "team": "a"}}},
    )
    closed = preview(folder, "--policy-config", str(config), "--values", str(values))
    assert closed.code == 0, closed.stderr
