"""The policy-config file: one reading for the preview, the pack and the audit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import proto
from typer.testing import CliRunner

from pushguard.audit.command import run as run_audit_command
from pushguard.cli import app
from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess, policy_infos
from pushguard.policy import (
    PolicyConfigError,
    load_policy_config,
    load_rule_config,
    parse_policy_config,
    pushguard_policies,
    reconcile,
    rule_config,
)
from pushguard.policy.config_file import PolicyConfig
from pushguard.rules import RULES, EnforcementLevel

ROOT = Path(__file__).resolve().parents[2]
PACK = ROOT / "policies"

CONFIG: dict[str, Any] = {
    "all": "advisory",
    "push-endpoint-https": {"enforcementLevel": "mandatory", "exemptEndpointPrefixes": []},
    "push-vpcsc-default-url": {
        "enforcementLevel": "mandatory",
        "perimeterProjects": ["acme-orders", "projects/987654321098"],
        "projectNumbers": {"acme-orders": "123456789012"},
    },
    "push-agent-token-creator": {
        "projectNumbers": {"acme-orders": "123456789012"},
        "tokenCreatorGrantedProjects": ["acme-payments"],
    },
    "push-audience-explicit": "disabled",
}


@pytest.fixture(scope="module")
def pack() -> Iterator[PolicyPackProcess]:
    with PolicyPackProcess(PACK) as process:
        yield process


def _write(tmp_path: Path, config: Any) -> Path:
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps(config))
    return path


def test_all_sets_every_level_before_each_policy_entry_as_the_cli_does(tmp_path: Path) -> None:
    rules = load_rule_config(_write(tmp_path, CONFIG))
    assert rules.levels["push-endpoint-https"] is EnforcementLevel.MANDATORY
    assert rules.levels["push-vpcsc-default-url"] is EnforcementLevel.MANDATORY
    assert rules.levels["push-audience-explicit"] is EnforcementLevel.DISABLED
    others = set(rules.levels) - {
        "push-endpoint-https",
        "push-vpcsc-default-url",
        "push-audience-explicit",
    }
    assert others and all(rules.levels[name] is EnforcementLevel.ADVISORY for name in others)
    # Settings are per policy: the perimeter is known to the rule configured with it only.
    assert rules.settings["push-vpcsc-default-url"].in_perimeter("acme-orders")
    assert not rules.settings["push-endpoint-https"].in_perimeter("acme-orders")


def test_no_config_gives_each_rule_its_default_level() -> None:
    rules = load_rule_config(None)
    assert dict(rules.levels) == {rule.id: rule.default_level for rule in RULES}


def test_settings_under_all_are_refused_naming_the_file(tmp_path: Path) -> None:
    """Behaviour change: the audit used to apply them to every rule and the preview dropped them;
    Pulumi itself drops them, so every enforcement point now refuses them."""
    path = _write(tmp_path, {"all": {"enforcementLevel": "mandatory", "perimeterProjects": ["p"]}})
    with pytest.raises(PolicyConfigError) as raised:
        load_policy_config(path)
    message = str(raised.value)
    assert str(path) in message
    assert "perimeterProjects" in message and "under each policy" in message


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"push-endpoint-htps": "mandatory"}, "push-endpoint-htps: not a policy of pack"),
        ({"push-endpoint-https": "blocking"}, "'blocking' is not one of"),
        ({"push-endpoint-https": 3}, "must be an enforcement level or an object"),
        ({"push-endpoint-https": {"perimeterProject": []}}, "perimeterProject"),
        ({"push-vpcsc-default-url": {"projectNumbers": {"acme-orders": "12x"}}}, "12x"),
        ({"push-auth-oidc": "remediate"}, "pushguard never remediates"),
        ([], "must be a JSON object"),
    ],
)
def test_bad_config_names_the_file_and_the_problem(
    tmp_path: Path, config: Any, expected: str
) -> None:
    path = _write(tmp_path, config)
    with pytest.raises(PolicyConfigError) as raised:
        load_rule_config(path)
    assert str(path) in str(raised.value) and expected in str(raised.value)


def test_unreadable_and_non_json_files_name_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(PolicyConfigError, match=r"missing\.json"):
        load_policy_config(missing)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(PolicyConfigError, match=r"broken\.json.*\n.*not JSON"):
        load_policy_config(broken)


def test_preview_and_audit_both_exit_2_on_settings_under_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, {"all": {"projectNumbers": {"acme-orders": "1"}}})
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("PULUMI_STACK", raising=False)
    preview = CliRunner().invoke(app, ["preview", "--stack", "dev", "--policy-config", str(path)])
    assert preview.exit_code == 2
    assert str(path) in preview.output and "projectNumbers" in preview.output
    errors: list[str] = []

    class Sink:
        def write(self, text: str) -> None:
            errors.append(text)

        def flush(self) -> None:
            pass

    export = tmp_path / "export"  # --out may not be inside an export (issue 22)
    export.mkdir()
    code = run_audit_command(
        [str(export)],
        str(tmp_path / "out"),
        policy_config=path,
        stderr=Sink(),  # type: ignore[arg-type]
    )
    assert code == 2
    assert str(path) in "".join(errors) and "projectNumbers" in "".join(errors)
    assert not (tmp_path / "out").exists()  # refused before Spark started


def test_the_pack_refuses_settings_under_all_in_configure(pack: PolicyPackProcess) -> None:
    """Under the real CLI, `all`'s properties reach Configure untouched; the pack fails closed."""
    properties = json_format.ParseDict({"perimeterProjects": ["acme-orders"]}, struct_pb2.Struct())
    request = proto.ConfigureAnalyzerRequest(
        policyConfig={
            "all": proto.PolicyConfig(enforcementLevel=proto.MANDATORY, properties=properties)
        }
    )
    with pytest.raises(grpc.RpcError) as raised:
        pack.stub.Configure(request)
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "perimeterProjects" in raised.value.details()
    pack.configure({})  # a level alone under `all` is fine
    pack.configure({"all": "advisory"})


def test_pushguards_own_description_of_its_pack_is_what_the_pack_serves(
    pack: PolicyPackProcess,
) -> None:
    assert policy_infos(pack.info()) == pushguard_policies()


def test_preview_pack_and_audit_read_one_config_the_same_way(
    tmp_path: Path, pack: PolicyPackProcess
) -> None:
    path = _write(tmp_path, CONFIG)
    audit = load_rule_config(path)
    # The preview: reconciled against the pack's own GetAnalyzerInfo, then sent in Configure.
    sent = pack.configure(load_policy_config(path), source=str(path))
    preview = rule_config(sent, str(path))
    assert dict(preview.levels) == dict(audit.levels)
    assert dict(preview.settings) == dict(audit.settings)
    # The pack: what it enforces with that configuration. A subscription in a perimeter project
    # pushing to a custom domain over plain http breaks both mandatory rules; the audience rule
    # is disabled; every diagnostic carries the level the audit resolved.
    subscription = AnalyzerResource(
        urn="urn:pulumi:dev::team::gcp:pubsub/subscription:Subscription::orders",
        type="gcp:pubsub/subscription:Subscription",
        name="orders",
        properties={
            "topic": "projects/acme-orders/topics/orders",
            "pushConfig": {
                "pushEndpoint": "http://orders.example.com/push",
                "oidcToken": {
                    "serviceAccountEmail": "orders-push@acme-orders.iam.gserviceaccount.com"
                },
            },
        },
        provider={"project": "acme-orders"},
    )
    diagnostics = pack.analyze(subscription)
    levels = {d.policy: d.level for d in diagnostics}
    assert levels["push-endpoint-https"] == "mandatory"
    assert levels["push-vpcsc-default-url"] == "mandatory"
    assert "push-audience-explicit" not in levels
    assert all(audit.levels[policy].value == level for policy, level in levels.items())


def test_reconcile_takes_schema_defaults_then_initial_config_then_the_file() -> None:
    policies = pushguard_policies()[:1]
    name = policies[0].name
    initial = {name: PolicyConfig("advisory", {"unknownAtPreview": "enforce"})}
    resolved = reconcile(policies, parse_policy_config({name: "disabled"}), initial)
    assert resolved[name].level == "disabled"
    assert resolved[name].properties == {"unknownAtPreview": "enforce"}
