"""The pack as the Pulumi CLI sees it: start-up, GetAnalyzerInfo, Configure, preview unknowns,
secrets and malformed properties, all over the real Analyzer gRPC protocol."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from pushguard import __version__
from pushguard.crossguard.build import pulumi_policy_yaml
from pushguard.gate.analyzer import AnalyzerResource, PackStartError, PolicyPackProcess
from pushguard.policy.settings import PackSettings
from pushguard.rules import RULES
from tests.crossguard.cases import ACCOUNT_URN, RUN_URN
from tests.crossguard.conftest import PACK
from tests.crossguard.wire import (
    PROJECT,
    PUSH_SA,
    UNKNOWN,
    account,
    push_config,
    resource,
    run_service,
    secret,
    subscription,
    urn,
)

ROOT = Path(__file__).resolve().parents[2]
PREVIEW_PREFIX = "can't run policy"
LB_URN = urn("gcp:compute/globalAddress:GlobalAddress", "lb")


def everything(pack: PolicyPackProcess, resources: list[AnalyzerResource]) -> list:
    found = []
    for r in resources:
        found += pack.analyze(r)
    return found + pack.analyze_stack(resources)


def settings_for_all(**settings: object) -> dict[str, object]:
    return {rule.id: dict(settings) for rule in RULES}


# --- the pack folder and start-up ---------------------------------------------------------


def test_pack_folder_is_what_the_cli_and_policy_publish_expect() -> None:
    spec = yaml.safe_load((PACK / "PulumiPolicy.yaml").read_text())
    assert spec["runtime"] == "python"
    assert spec["version"] == __version__
    requirements = (PACK / "requirements.txt").read_text().split()
    assert "pushguard" in requirements
    assert (PACK / "__main__.py").is_file()


def test_first_line_on_stdout_is_the_port(pack: PolicyPackProcess) -> None:
    assert pack.first_line.strip().isdigit()
    assert pack.first_line.endswith(b"\n")


def test_a_pack_that_prints_before_its_port_is_caught(tmp_path: Path) -> None:
    (tmp_path / "PulumiPolicy.yaml").write_text(pulumi_policy_yaml(__version__))
    (tmp_path / "__main__.py").write_text(
        textwrap.dedent("""
        print("loading rules...")
        from pushguard.crossguard import serve
        serve()
    """)
    )
    with (
        pytest.raises(PackStartError, match="loading rules"),
        PolicyPackProcess(tmp_path, timeout=30),
    ):
        pass


def test_analyzer_info_lists_every_rule_as_a_policy(pack: PolicyPackProcess) -> None:
    info = pack.info()
    assert info.name == "pushguard"
    assert info.supportsConfig
    *rules, numbers = info.policies
    assert [p.name for p in rules] == [r.id for r in RULES]
    assert numbers.name == "projectNumbers" and not numbers.HasField("configSchema")
    for policy, rule in zip(rules, RULES, strict=True):
        assert pack_level(policy.enforcementLevel) == rule.default_level.value
        assert policy.severity != 0
        assert policy.remediation_steps == rule.remediation
        assert policy.url.endswith(f"#{rule.id}")
        assert policy.displayName == rule.title
        assert policy.description and "\n" not in policy.description
        assert set(policy.configSchema.properties) == {
            f.alias for f in PackSettings.model_fields.values()
        }
    assert "push-endpoint-https" in info.readme


def pack_level(value: int) -> str:
    from pushguard.gate.analyzer import LEVEL_NAMES

    return LEVEL_NAMES[value]


# --- configuration ----------------------------------------------------------------------------

HTTP_SUB = subscription(pushConfig=push_config("http://events.example.com/"))


def test_default_levels_apply_without_config(pack: PolicyPackProcess) -> None:
    pack.configure({})
    found = pack.analyze(HTTP_SUB)
    assert [(d.policy, d.level) for d in found] == [("push-endpoint-https", "mandatory")]


def test_per_policy_level_override(pack: PolicyPackProcess) -> None:
    pack.configure({"push-endpoint-https": "advisory"})
    assert [d.level for d in pack.analyze(HTTP_SUB)] == ["advisory"]
    pack.configure({"push-endpoint-https": {"enforcementLevel": "disabled"}})
    assert pack.analyze(HTTP_SUB) == []
    pack.configure({"all": "disabled"})
    assert pack.analyze(HTTP_SUB) == []


def test_sample_policy_config_is_valid_and_applied(pack: PolicyPackProcess) -> None:
    config = json.loads((ROOT / "policy-config.json").read_text())
    pack.configure(config)
    sub = subscription(pushConfig=push_config("https://events.example.com/"))
    found = everything(pack, [sub])
    assert any(d.policy == "push-vpcsc-default-url" and d.level == "mandatory" for d in found), (
        found
    )


@pytest.mark.parametrize(
    ("settings", "field", "allowed"),
    [
        ({"perimeterProjects": ["Not A Project"]}, "perimeterProjects.0", "project ID"),
        ({"perimterProjects": ["acme"]}, "perimterProjects", "perimeterProjects"),
        ({"projectNumbers": {"acme-orders": "12ab"}}, "projectNumbers.acme-orders", "digits"),
        ({"exemptEndpointPrefixes": ["http://"]}, "exemptEndpointPrefixes.0", "every http://"),
        ({"unknownAtPreview": "maybe"}, "unknownAtPreview", "'warn' or 'enforce'"),
    ],
)
def test_invalid_config_is_a_clear_diagnostic(
    pack: PolicyPackProcess, settings: dict[str, object], field: str, allowed: str
) -> None:
    pack.configure({"push-vpcsc-default-url": settings}, validate=False)
    found = [d for d in everything(pack, [subscription()]) if d.policy == "push-vpcsc-default-url"]
    assert len(found) == 1, found
    assert found[0].level == "mandatory"
    assert f"invalid configuration for policy push-vpcsc-default-url: {field}:" in found[0].message
    assert allowed in found[0].message


# --- unknown values at preview ----------------------------------------------------------------


def test_endpoint_from_a_cloud_run_service_in_the_stack_is_undecided_naming_the_service(
    pack: PolicyPackProcess,
) -> None:
    """``svc.uri`` and a value computed from it look alike on the wire: neither is presumed to
    be the service's URL (issue 20; tests/crossguard/test_derived_urls.py)."""
    pack.configure(settings_for_all(perimeterProjects=[PROJECT]))
    sub = subscription(pushConfig=push_config(endpoint=UNKNOWN), deps={"pushConfig": (RUN_URN,)})
    found = everything(pack, [sub, run_service()])
    endpoint = [d for d in found if d.policy in ("push-endpoint-https", "push-vpcsc-default-url")]
    assert sorted(d.policy for d in endpoint) == ["push-endpoint-https", "push-vpcsc-default-url"]
    for d in endpoint:
        assert d.level == "advisory" and d.message.startswith(PREVIEW_PREFIX)
        assert "gcp:cloudrunv2/service:Service 'orders'" in d.message


def lb_sub() -> AnalyzerResource:
    return subscription(pushConfig=push_config(endpoint=UNKNOWN), deps={"pushConfig": (LB_URN,)})


LB = resource("gcp:compute/globalAddress:GlobalAddress", "lb", {"address": UNKNOWN})


def test_endpoint_that_cannot_be_resolved_is_an_advisory_diagnostic_naming_why(
    pack: PolicyPackProcess,
) -> None:
    pack.configure({})
    found = [d for d in everything(pack, [lb_sub(), LB]) if d.policy == "push-endpoint-https"]
    assert len(found) == 1
    assert found[0].level == "advisory"
    assert found[0].message.startswith(PREVIEW_PREFIX)
    assert "orders: the push endpoint is not known yet" in found[0].message
    assert "gcp:compute/globalAddress:GlobalAddress 'lb'" in found[0].message


def test_unknown_at_preview_enforce_fails_the_preview(pack: PolicyPackProcess) -> None:
    pack.configure({"push-endpoint-https": {"unknownAtPreview": "enforce"}})
    found = [d for d in everything(pack, [lb_sub(), LB]) if d.policy == "push-endpoint-https"]
    assert [(d.level, d.urn) for d in found] == [("mandatory", lb_sub().urn)]
    assert "could not be verified" in found[0].message


def test_account_created_in_the_stack_is_resolved_through_the_graph(
    pack: PolicyPackProcess,
) -> None:
    pack.configure({})
    sub = subscription(pushConfig=push_config(account=UNKNOWN), deps={"pushConfig": (ACCOUNT_URN,)})
    found = everything(pack, [sub, account()])
    assert not [d for d in found if d.policy in ("push-auth-oidc", "push-sa-same-project")]


def test_whole_push_config_unknown(pack: PolicyPackProcess) -> None:
    pack.configure({})
    sub = subscription(
        pushConfig="dd056dcd-154b-4c76-9bd3-c8f88648b5ff", deps={"pushConfig": (LB_URN,)}
    )
    found = everything(pack, [sub, LB])
    https = [d for d in found if d.policy == "push-endpoint-https"]
    assert len(https) == 1 and https[0].message.startswith(PREVIEW_PREFIX)


def test_perimeter_with_unknown_projects_is_reported_not_passed(pack: PolicyPackProcess) -> None:
    pack.configure({})
    perimeter = resource(
        "gcp:accesscontextmanager/servicePerimeter:ServicePerimeter",
        "p",
        {"status": {"resources": UNKNOWN, "restrictedServices": ["pubsub.googleapis.com"]}},
    )
    sub = subscription(pushConfig=push_config("https://events.example.com/"))
    found = [d for d in everything(pack, [sub, perimeter]) if d.policy == "push-vpcsc-default-url"]
    assert len(found) == 1 and found[0].message.startswith(PREVIEW_PREFIX)
    assert "projects of p are not known" in found[0].message


FUNCTION_URN = urn("gcp:cloudfunctionsv2/function:Function", "orders-fn")


@pytest.mark.parametrize(
    ("policy", "resources"),
    [
        (
            "push-vpcsc-default-url",
            [
                subscription(
                    pushConfig=push_config(endpoint=UNKNOWN), deps={"pushConfig": (FUNCTION_URN,)}
                ),
                resource(
                    "gcp:cloudfunctionsv2/function:Function",
                    "orders-fn",
                    {"name": "orders-fn", "url": UNKNOWN},
                ),
            ],
        ),
        (
            "push-no-exactly-once",
            [
                subscription(
                    enableExactlyOnceDelivery=UNKNOWN, deps={"enableExactlyOnceDelivery": (LB_URN,)}
                ),
                LB,
            ],
        ),
        (
            "push-agent-token-creator",
            [
                subscription(),
                resource(
                    "gcp:serviceaccount/iAMMember:IAMMember",
                    "tc",
                    {
                        "serviceAccountId": f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}",
                        "role": "roles/iam.serviceAccountTokenCreator",
                        "member": UNKNOWN,
                    },
                    property_dependencies={"member": (LB_URN,)},
                ),
                LB,
            ],
        ),
    ],
    ids=["function-endpoint-in-perimeter", "exactly-once-unknown", "token-creator-member-unknown"],
)
def test_undecidable_at_preview_is_reported(
    pack: PolicyPackProcess, policy: str, resources: list[AnalyzerResource]
) -> None:
    settings = {"perimeterProjects": [PROJECT], "projectNumbers": {PROJECT: "123456789012"}}
    pack.configure(settings_for_all(**settings))
    found = [d for d in everything(pack, resources) if d.policy == policy]
    assert len(found) == 1, found
    assert found[0].level == "advisory" and found[0].message.startswith(PREVIEW_PREFIX)


# --- secrets and malformed input --------------------------------------------------------------


def test_secret_values_are_never_echoed(pack: PolicyPackProcess) -> None:
    pack.configure({})
    token = "hunter2-abcdef"
    email = "sneaky@other-proj.iam.gserviceaccount.com"
    sub = subscription(
        pushConfig=secret(
            push_config(f"http://hooks.secret-partner.example/{token}?token={token}", account=email)
        )
    )
    found = everything(pack, [sub])
    assert {d.policy for d in found} >= {"push-endpoint-https", "push-sa-same-project"}
    for d in found:
        assert token not in d.message
        assert "secret-partner" not in d.message
        assert email not in d.message


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"pushConfig": "https://example.com/"}, "pushConfig must be an object, not a string"),
        (
            {"pushConfig": {"pushEndpoint": 42}},
            "pushConfig.pushEndpoint must be a string, not a number",
        ),
        ({"enableExactlyOnceDelivery": "yes"}, "enableExactlyOnceDelivery must be a boolean"),
        ({"project": ["a", "b"]}, "project must be a string, not a list"),
    ],
)
def test_malformed_properties_give_a_diagnostic_not_a_failed_call(
    pack: PolicyPackProcess, props: dict[str, object], expected: str
) -> None:
    pack.configure({})
    sub = subscription(**props)
    found = pack.analyze(sub)
    assert found and all(expected in d.message for d in found), found
    assert pack.analyze_stack([sub]) == []  # reported once, by the resource half


def test_undecodable_wire_value_gives_diagnostics_and_the_server_keeps_serving(
    pack: PolicyPackProcess,
) -> None:
    pack.configure({})
    sub = subscription(labels={"4dabf18193072939515e22adb298388d": "not-a-known-signature"})
    found = pack.analyze(sub)
    assert {d.policy for d in found} == {r.id for r in RULES}
    assert all("could not decode" in d.message for d in found)
    assert pack.info().name == "pushguard"
