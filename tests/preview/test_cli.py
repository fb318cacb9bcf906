"""`pushguard preview` end to end: the example stacks, output formats, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.preview.conftest import ROOT

CONFIG = str(ROOT / "policy-config.json")
SUB = "gcp:pubsub/subscription:Subscription"
SARIF_SCHEMA = json.loads((ROOT / "tests/fixtures/sarif/sarif-2.1.0-rtm.5.json").read_text())
MANDATORY = {"push-endpoint-https", "push-sa-same-project", "push-vpcsc-default-url"}


def test_dev_stack_prints_its_plan_and_passes(preview) -> None:
    run = preview("--stack", "dev", "--policy-config", CONFIG)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "+ pulumi:pulumi:Stack pushguard-example-dev" in run.stdout
    assert f"+ {SUB} orders-created" in run.stdout
    assert "+ gcp:cloudrunv2/serviceIamMember:ServiceIamMember orders-created-invoker" in run.stdout
    assert "0 mandatory, 0 advisory. Preview passed." in run.stdout


def test_legacy_stack_fails_on_exactly_the_three_mandatory_rules(preview) -> None:
    run = preview("--stack", "legacy", "--policy-config", CONFIG, "--format", "json")
    assert run.exit_code == 1
    report = run.json()
    mandatory = {
        (v["policy"], v["urn"].rsplit("::", 1)[1])
        for v in report["violations"]
        if v["level"] == "mandatory"
    }
    assert mandatory == {
        ("push-endpoint-https", "legacy-orders"),
        ("push-sa-same-project", "legacy-billing"),
        ("push-vpcsc-default-url", "payments-settled"),
    }
    assert report["summary"]["mandatory"] == 3 and report["summary"]["exitCode"] == 1
    assert all(v["location"]["path"] == "stacks/legacy.py" for v in report["violations"])


def test_text_report_groups_violations_by_level_with_remediation(preview) -> None:
    run = preview("--stack", "legacy", "--policy-config", CONFIG)
    assert run.exit_code == 1
    mandatory, advisory = run.stdout.split("Mandatory violations (3)")[1].split(
        "Advisory violations"
    )
    assert all(policy in mandatory for policy in MANDATORY)
    assert "push-agent-token-creator" in advisory
    assert "fix: Use an absolute https:// URL" in mandatory
    assert f"{SUB} legacy-orders ✗ mandatory" in run.stdout
    assert "3 mandatory, 1 advisory. Preview FAILED." in run.stdout


def test_json_report_lists_every_resource_with_inputs(preview) -> None:
    report = preview("--stack", "dev", "--format", "json").json()
    by_name = {(r["type"], r["name"]): r for r in report["resources"]}
    assert report["resources"][0]["type"] == "pulumi:pulumi:Stack"
    sub = by_name[(SUB, "orders-created")]
    component = by_name[("pushguard:index:PushSubscription", "orders-created")]
    assert sub["parent"] == component["urn"]
    assert sub["inputs"]["pushConfig"]["oidcToken"]["serviceAccountEmail"] == "[unknown]"
    assert sub["inputs"]["name"].startswith("orders-created-"), "auto-named by the provider"
    assert report["summary"] == {
        "create": 22,
        "mandatory": 0,
        "advisory": 0,
        "excepted": 0,
        "expiredExceptions": 0,
        "exitCode": 0,
    }
    assert report["policyPack"]["name"] == "pushguard"


def test_sarif_is_valid_and_what_code_scanning_needs(preview, tmp_path: Path) -> None:
    out = tmp_path / "preview.sarif"
    run = preview(
        "--stack", "legacy", "--policy-config", CONFIG, "--format", "sarif", "--output", str(out)
    )
    assert run.exit_code == 1
    assert "Mandatory violations (3)" in run.stdout, "the text report still goes to stdout"
    sarif = json.loads(out.read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    [result_run] = sarif["runs"]
    rules = result_run["tool"]["driver"]["rules"]
    assert len(rules) == 15 and all(r["help"]["text"] and r["helpUri"] for r in rules)
    assert result_run["automationDetails"]["id"] == "pushguard-preview/pushguard-example/legacy/"
    levels = {(r["ruleId"], r["level"]) for r in result_run["results"]}
    assert {rule for rule, level in levels if level == "error"} == MANDATORY
    for result in result_run["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "stacks/legacy.py", "repo-relative"
        assert location["region"]["startLine"] >= 1
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"]


def test_a_disabled_mandatory_rule_is_named_in_text_and_sarif(preview, tmp_path: Path) -> None:
    """A rule the policy config switched off judged nothing: the text report names it, and its
    SARIF descriptor is disabled rather than a warning that found nothing."""
    config = json.loads(Path(CONFIG).read_text())
    config["push-endpoint-https"] = {"enforcementLevel": "disabled"}
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps(config))
    out = tmp_path / "preview.sarif"
    report = tmp_path / "preview.json"
    run = preview(
        "--stack", "legacy", "--policy-config", str(path), "-f", "sarif", "--output", str(out),
        f"--json-output={report}",
    )  # fmt: skip
    assert run.exit_code == 1, run.stdout + run.stderr  # the other two mandatory rules
    assert json.loads(report.read_text())["disabledPolicies"] == ["push-endpoint-https"]
    disabled = run.stdout.split("Disabled by the policy config (1)")[1]
    assert disabled.split("\n")[1].strip() == "push-endpoint-https"
    sarif = json.loads(out.read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["push-endpoint-https"]["defaultConfiguration"] == {
        "enabled": False,
        "level": "none",
    }
    assert rules["push-sa-same-project"]["defaultConfiguration"] == {"level": "error"}
    assert "push-endpoint-https" not in {r["ruleId"] for r in sarif["runs"][0]["results"]}


def test_sarif_fingerprints_are_stable_across_runs(preview) -> None:
    def prints() -> list[str]:
        sarif = preview("--stack", "legacy", "--policy-config", CONFIG, "-f", "sarif").json()
        return sorted(str(r["partialFingerprints"]) for r in sarif["runs"][0]["results"])

    assert prints() == prints()


def test_component_children_point_at_the_program_line_that_used_the_component(
    preview, make_project
) -> None:
    program = (
        "from pushguard.components import PushSubscription\n"
        "PushSubscription('orders', {'topic': 'orders', 'target': {'kind': 'external'},\n"
        "    'push_endpoint': 'https://hooks.example.com/push', 'audience': 'orders',\n"
        "    'push_auth_service_account_email':\n"
        "        'orders-push@acme-orders.iam.gserviceaccount.com',\n"
        "    'token_creator_grant': 'none'})\n"
    )
    config = {"push-agent-token-creator": {"projectNumbers": {"acme-orders": "123456789012"}}}
    folder = make_project(program)
    (folder / "config.json").write_text(json.dumps(config))
    report = preview("--policy-config", "config.json", "-f", "json", cwd=folder)
    [finding] = report.json()["violations"]
    assert finding["policy"] == "push-agent-token-creator"
    assert finding["location"] == {"path": "__main__.py", "line": 2}


# --- exit code 2: bad usage and failed runs, each with a clear message -------------------------


def test_no_project_is_exit_2(preview, tmp_path: Path) -> None:
    run = preview(str(tmp_path))
    assert run.exit_code == 2
    assert "no Pulumi.yaml in" in run.stderr


def test_unknown_stack_lists_the_stacks(preview) -> None:
    run = preview("--stack", "prod")
    assert run.exit_code == 2
    assert "no stack config" in run.stderr and "stacks with one: dev, legacy" in run.stderr


def test_several_stacks_and_none_chosen_is_exit_2(preview) -> None:
    run = preview()
    assert run.exit_code == 2
    assert "choose a stack with --stack" in run.stderr and "dev, legacy" in run.stderr


def test_the_only_stack_is_chosen_and_project_found_from_a_subfolder(preview, make_project) -> None:
    folder = make_project("import pulumi_gcp as gcp\ngcp.pubsub.Topic('t')\n")
    (folder / "sub").mkdir()
    run = preview(cwd=folder / "sub")
    assert run.exit_code == 0, run.stderr
    assert "+ gcp:pubsub/topic:Topic t" in run.stdout


def test_program_that_raises_is_exit_2_naming_the_line(preview, make_project) -> None:
    folder = make_project("import pulumi\n\npulumi.Config().require('missing')\n")
    run = preview(str(folder))
    assert run.exit_code == 2
    assert "the program raised ConfigMissingError (at __main__.py:3)" in run.stderr
    assert "team:missing" in run.stderr


def test_component_refusing_a_rule_violation_is_a_finding_at_the_users_line(
    preview, make_project
) -> None:
    program = (
        "from pushguard.components import PushSubscription\n"
        "PushSubscription('orders', {'topic': 'orders', 'target': {'kind': 'external'},\n"
        "    'push_endpoint': 'http://hooks.example.com/push'})\n"
    )
    run = preview(str(make_project(program)), "--format", "json")
    assert run.exit_code == 1, run.stdout + run.stderr
    report = run.json()
    (violation,) = report["violations"]
    assert violation["policy"] == "push-endpoint-https" and violation["level"] == "mandatory"
    assert "push_endpoint: The push endpoint uses http://" in violation["message"]
    assert violation["location"]["line"] == 2
    assert any("stopped at PushSubscription 'orders'" in note for note in report["notes"])


def test_component_input_error_is_exit_2_with_the_components_message(preview, make_project) -> None:
    program = (
        "from pushguard.components import PushSubscription\n"
        "PushSubscription('orders', {'topic': 'orders', 'target': {'kind': 'external'},\n"
        "    'push_endpoint': 'https://hooks.example.com/push', 'ack_deadline_seconds': 5})\n"
    )
    run = preview(str(make_project(program)))
    assert run.exit_code == 2
    assert "PushSubscriptionInputError" in run.stderr
    assert "ack_deadline_seconds" in run.stderr


def test_program_calling_sys_exit_is_a_failed_run(preview, make_project) -> None:
    run = preview(str(make_project("import sys\nsys.exit(3)\n")))
    assert run.exit_code == 2
    assert "SystemExit" in run.stderr and "exit status 3" in run.stderr


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            '{"push-endpoint-https": {"exemptEndpointPrefixes": "https://x"}}',
            "push-endpoint-https: exemptEndpointPrefixes: 'https://x' is not of type 'array'",
        ),
        (
            '{"push-endpoint-https": "strict"}',
            "push-endpoint-https: enforcementLevel 'strict' is not one of advisory, mandatory",
        ),
        (
            '{"push-endpoint-http": "mandatory"}',
            "push-endpoint-http: not a policy of pack 'pushguard'",
        ),
        (
            '{"push-endpoint-https": {"unknownAtPreview": "maybe"}}',
            "push-endpoint-https: unknownAtPreview: 'maybe' is not one of ['warn', 'enforce']",
        ),
        ("{not json", "not JSON"),
    ],
)
def test_invalid_policy_config_is_exit_2_naming_policy_and_field(
    preview, tmp_path: Path, config: str, expected: str
) -> None:
    path = tmp_path / "policy-config.json"
    path.write_text(config)
    run = preview("--stack", "dev", "--policy-config", str(path))
    assert run.exit_code == 2
    assert expected in run.stderr


def test_missing_policy_config_file_is_exit_2(preview, tmp_path: Path) -> None:
    run = preview("--stack", "dev", "--policy-config", str(tmp_path / "nope.json"))
    assert run.exit_code == 2
    assert "cannot be read" in run.stderr


def test_pack_that_crashes_at_start_is_exit_2_with_its_stderr(preview, tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (pack / "__main__.py").write_text("raise RuntimeError('pack exploded')\n")
    run = preview("--stack", "dev", "--policy-pack", str(pack))
    assert run.exit_code == 2
    assert "did not start" in run.stderr and "pack exploded" in run.stderr


def test_a_folder_that_is_not_a_python_pack_is_exit_2(preview, tmp_path: Path) -> None:
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: nodejs\n")
    run = preview("--stack", "dev", "--policy-pack", str(tmp_path))
    assert run.exit_code == 2
    assert "runtime 'nodejs'" in run.stderr


def test_unknown_format_is_usage_error_exit_2(preview) -> None:
    assert preview("--stack", "dev", "--format", "xml").exit_code == 2
