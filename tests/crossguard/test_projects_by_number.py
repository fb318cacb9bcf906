"""Issue 34, items 1 and 3: a project named by its number is the same project as by its ID, and
project numbers are said once (the policy config's top-level ``projectNumbers``).

One program, written twice (``project="acme-orders"`` and ``project="123456789012"``), runs every
project-dependent rule: the VPC-SC perimeter (the perimeter lists the project by ID), the same
project (an account of another project by ID, and another project's default compute account
``NUMBER-compute@developer.gserviceaccount.com``), the Pub/Sub service agent's token-creator
grant (made on the project by ID), the invoker grant and the dead-letter grants. Both spellings
must give the same findings, through the pack over the Analyzer protocol (as the Pulumi CLI
calls it at ``pulumi up``), ``pushguard preview`` and ``pushguard analyze``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from pushguard.preview.mocks import PROJECT_VARIABLES
from tests.routes import deployed_state

NUMBER = "123456789012"
CONFIG = {
    "projectNumbers": {"acme-orders": NUMBER, "acme-payments": "987654321098"},
    "push-vpcsc-default-url": {"perimeterProjects": ["acme-orders"]},
}
PROGRAM = """
import pulumi_gcp as gcp
P = PROJECT
AGENT = "serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com"
SA = "orders-push@acme-orders.iam.gserviceaccount.com"
RUN = "https://orders-123456789012.europe-west1.run.app/push"
gcp.projects.IAMMember("agent-token", project="acme-orders",
    role="roles/iam.serviceAccountTokenCreator", member=AGENT)
gcp.cloudrunv2.ServiceIamMember("invoker", project="acme-orders", location="europe-west1",
    name="orders", role="roles/run.invoker", member="serviceAccount:" + SA)
def sub(name, endpoint, account, **extra):
    gcp.pubsub.Subscription(name, name=name, project=P, topic="orders", push_config={
        "push_endpoint": endpoint,
        "oidc_token": {"service_account_email": account, "audience": "orders"}}, **extra)
sub("ok", RUN, SA)
sub("perimeter", "https://push.acme.example/orders", SA)
sub("foreign", RUN, "pusher@acme-other.iam.gserviceaccount.com")
sub("compute", RUN, "987654321098-compute@developer.gserviceaccount.com")
sub("dead-letters", RUN, SA, dead_letter_policy={
    "dead_letter_topic": "projects/acme-orders/topics/dlq", "max_delivery_attempts": 5})
"""
OTHERS = ("push-agent-token-creator", "push-invoker-binding")
EXPECTED = {
    ("perimeter", "push-vpcsc-default-url", "mandatory"),
    ("foreign", "push-sa-same-project", "mandatory"),
    ("compute", "push-sa-same-project", "mandatory"),
    ("dead-letters", "push-dead-letter-iam", "advisory"),
    # the other projects' accounts: no invoker grant, and the token-creator grant is on
    # acme-orders, not on their projects
    *((name, rule, "advisory") for name in ("foreign", "compute") for rule in OTHERS),
}
"""What both spellings must find (and nothing on ``ok``)."""
PROJECT_RULES = {
    "push-vpcsc-default-url",
    "push-sa-same-project",
    "push-agent-token-creator",
    "push-dead-letter-iam",
    "push-invoker-binding",
}
SPELLINGS = ("acme-orders", NUMBER)


def _program(project: str) -> str:
    return PROGRAM.replace("PROJECT\n", f"{project!r}\n", 1)


def _name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _judged(violations: list[dict[str, Any]], not_checked: list[dict[str, Any]]) -> set[Any]:
    found = {(_name(v["urn"]), v["policy"], v["level"]) for v in violations}
    unchecked = {
        (_name(n["urn"]), n["policy"], "not checked")
        for n in not_checked
        if n["policy"] in PROJECT_RULES
    }
    return {f for f in found | unchecked if f[1] != "push-audience-explicit"}


def _records(project: str) -> list[Any]:
    from pushguard.preview.mocks import GcpMocks
    from tests.mock_runtime.engine import run_program

    code = compile(_program(project), "__main__.py", "exec")
    run = run_program(
        lambda: exec(code, {"__name__": "__main__"}),
        GcpMocks(project_numbers={}, providers={}, environ={}),
        project="team",
        stack="dev",
        config={},
        preview=False,
    )
    return run.records


@pytest.fixture(scope="module")
def pack_answers(pack: PolicyPackProcess) -> dict[str, set[Any]]:
    answers = {}
    for project in SPELLINGS:
        records = _records(project)
        pack.configure(CONFIG)
        inputs = [AnalyzerResource.from_record(r, {}) for r in records if r.custom]
        found = [(d, r.urn) for r in inputs for d in pack.analyze(r)]
        outputs = [AnalyzerResource.from_record(r, {}, outputs=True) for r in records]
        found += [(d, d.urn) for d in pack.analyze_stack(outputs)]
        violations = [
            {"urn": d.urn or urn, "policy": d.policy, "level": d.level} for d, urn in found
        ]
        not_checked = [{"urn": n.urn, "policy": n.policy} for n in pack.not_applicable]
        answers[project] = _judged(violations, not_checked)
    return answers


def _project(folder: Path, project: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (folder / "__main__.py").write_text(_program(project))
    (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": {}}))
    return folder


def _config(folder: Path) -> Path:
    path = folder / "policy-config.json"
    path.write_text(json.dumps(CONFIG))
    return path


@pytest.mark.parametrize("project", SPELLINGS)
def test_over_the_analyzer_protocol(pack_answers, project: str) -> None:
    assert pack_answers[project] == EXPECTED


@pytest.mark.parametrize("project", SPELLINGS)
def test_through_pushguard_preview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: str
) -> None:
    for name in PROJECT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    folder = _project(tmp_path / "team", project)
    result = CliRunner().invoke(
        app, ["preview", str(folder), "-f", "json", "--policy-config", str(_config(tmp_path))]
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert _judged(report["violations"], report["notChecked"]) == EXPECTED


@pytest.mark.parametrize("project", SPELLINGS)
def test_through_pushguard_analyze(tmp_path: Path, project: str) -> None:
    state = tmp_path / "dev.json"
    state.write_text(json.dumps(deployed_state(_records(project), {})))
    result = CliRunner().invoke(
        app, ["analyze", str(state), "-f", "json", "--policy-config", str(_config(tmp_path))]
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    (stack,) = json.loads(result.stdout)["stacks"]
    assert _judged(stack["violations"], stack["notChecked"]) == EXPECTED


def test_the_per_policy_form_is_still_read(tmp_path: Path) -> None:
    numbers = CONFIG["projectNumbers"]
    legacy = {
        rule: {"projectNumbers": numbers}
        for rule in ("push-sa-same-project", "push-agent-token-creator", "push-dead-letter-iam")
    }
    legacy["push-vpcsc-default-url"] = {
        "perimeterProjects": ["acme-orders"],
        "projectNumbers": numbers,
    }
    config = tmp_path / "legacy.json"
    config.write_text(json.dumps(legacy))
    folder = _project(tmp_path / "team", NUMBER)
    result = CliRunner().invoke(
        app, ["preview", str(folder), "-f", "json", "--policy-config", str(config)]
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    found = _judged(report["violations"], report["notChecked"])
    assert {f for f in EXPECTED if f[1] in legacy} <= found


def test_two_numbers_for_one_project_are_refused_naming_both(
    tmp_path: Path, pack: PolicyPackProcess
) -> None:
    clash = {**CONFIG, "push-dead-letter-iam": {"projectNumbers": {"acme-orders": "999"}}}
    config = tmp_path / "clash.json"
    config.write_text(json.dumps(clash))
    folder = _project(tmp_path / "team", NUMBER)
    result = CliRunner().invoke(app, ["preview", str(folder), "--policy-config", str(config)])
    assert result.exit_code == 2, result.stdout + result.stderr
    said = " ".join((result.stdout + result.stderr).split())
    assert "push-dead-letter-iam: projectNumbers gives acme-orders the number '999'" in said
    assert f"top-level projectNumbers gives '{NUMBER}'" in said
    # The pack itself refuses it in Configure, as the Pulumi CLI would send it.
    with pytest.raises(Exception, match="the number '999'"):
        pack.configure(clash, validate=False)


def test_a_bad_top_level_number_is_named(tmp_path: Path) -> None:
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"projectNumbers": {"acme-orders": "12-34"}}))
    folder = _project(tmp_path / "team", NUMBER)
    result = CliRunner().invoke(app, ["preview", str(folder), "--policy-config", str(config)])
    assert result.exit_code == 2
    said = " ".join((result.stdout + result.stderr).split())
    assert "projectNumbers: acme-orders: must be a project number" in said


COMPONENT = """
import pulumi_gcp as gcp
from pushguard.components import PushSubscription
topic = gcp.pubsub.Topic("orders", project="acme-web")
PushSubscription("orders", {
    "project": "acme-web",
    "project_number": "111111111111",
    "topic": topic.id,
    "push_endpoint": "https://push.acme.example/orders",
    "target": {"kind": "external"},
    "audience": "orders",
})
"""


def test_the_components_project_number_reaches_the_stack_checks(tmp_path: Path) -> None:
    """The perimeter lists the project by number only; the component's ``project_number``
    input is the only place the number is said, and the pack's stack half reads it."""
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (folder / "__main__.py").write_text(COMPONENT)
    (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": {}}))
    config = tmp_path / "perimeter.json"
    config.write_text(
        json.dumps({"push-vpcsc-default-url": {"perimeterProjects": ["111111111111"]}})
    )
    result = CliRunner().invoke(
        app, ["preview", str(folder), "-f", "json", "--policy-config", str(config)]
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    found = {(_name(v["urn"]), v["policy"], v["level"]) for v in report["violations"]}
    assert ("orders", "push-vpcsc-default-url", "mandatory") in found, found


def test_a_perimeter_listed_by_number_alone_is_never_presumed_left(tmp_path: Path) -> None:
    """``perimeterProjects`` names a project by a number the config gives no ID: a subscription
    in a project whose number nobody configured is not checked, never passed; a number the
    program claims (a component's ``project_number``) does not take it out of the perimeter."""
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    claimed = COMPONENT.replace('"111111111111"', '"555555555555"')
    (folder / "__main__.py").write_text(
        claimed
        + "gcp.pubsub.Subscription('raw', project='acme-web', topic='orders', push_config={\n"
        + "    'push_endpoint': 'https://push.acme.example/raw', 'oidc_token': {\n"
        + "    'service_account_email': 'p@acme-web.iam.gserviceaccount.com', 'audience': 'a'}})\n"
    )
    (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": {}}))
    config = tmp_path / "perimeter.json"
    config.write_text(
        json.dumps({"push-vpcsc-default-url": {"perimeterProjects": ["111111111111"]}})
    )
    result = CliRunner().invoke(
        app, ["preview", str(folder), "-f", "json", "--policy-config", str(config)]
    )
    report = json.loads(result.stdout)
    unchecked = {
        _name(n["urn"]): n["reason"]
        for n in report["notChecked"]
        if n["policy"] == "push-vpcsc-default-url"
    }
    assert set(unchecked) == {"orders", "raw"}, report["notChecked"]
    assert "lists project 111111111111 by number" in unchecked["raw"]


def _preview(tmp_path: Path, program: str, config: dict[str, Any]) -> tuple[int, Any]:
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (folder / "__main__.py").write_text(program)
    (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": {}}))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(
        app, ["preview", str(folder), "-f", "json", "--policy-config", str(path)]
    )
    if result.exit_code == 2:
        return 2, " ".join((result.stdout + result.stderr).split())
    return result.exit_code, json.loads(result.stdout)


def test_a_number_the_program_claims_never_makes_two_projects_the_same(tmp_path: Path) -> None:
    """Found by the attacker trial: a component told ``project_number=666...`` and given
    ``666...-compute@developer...`` as its account passed push-sa-same-project."""
    program = COMPONENT.replace('"111111111111"', '"666666666666"').replace(
        '"audience": "orders",',
        '"audience": "orders",\n'
        '    "push_auth_service_account_email": '
        '"666666666666-compute@developer.gserviceaccount.com",',
    )
    code, report = _preview(tmp_path, program, {})
    assert code == 0  # nothing mandatory is violated: the account's project is undecided
    unchecked = {(n["policy"], _name(n["urn"])) for n in report["notChecked"]}
    assert ("push-sa-same-project", "orders") in unchecked


@pytest.mark.parametrize(
    ("numbers", "said"),
    [
        ({"acme-x": "00444444444444"}, "no leading zero"),
        ({"acme-x": "444444444444", "acme-y": "444444444444"}, "names one project"),
    ],
)
def test_numbers_that_cannot_be_one_project_are_refused(
    tmp_path: Path, numbers: dict[str, str], said: str
) -> None:
    code, text = _preview(tmp_path, _program("acme-x"), {"projectNumbers": numbers})
    assert code == 2
    assert said in text


def test_a_number_said_under_one_policy_is_read_by_every_policy(tmp_path: Path) -> None:
    config = {
        "push-sa-same-project": {"projectNumbers": {"acme-x": "444444444444"}},
        "push-vpcsc-default-url": {"perimeterProjects": ["projects/444444444444"]},
    }
    code, report = _preview(tmp_path, _program("acme-x"), config)
    assert code == 1
    found = {(_name(v["urn"]), v["policy"]) for v in report["violations"]}
    assert ("perimeter", "push-vpcsc-default-url") in found
