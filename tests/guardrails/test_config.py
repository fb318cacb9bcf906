"""The policy config as every enforcement point applies it: disabled rules left out (and said),
levels to enforcement and severity, exempt prefixes, perimeter projects (by either name), and the
exceptions of "Findings with memory" (active ones let through, expired ones refused)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pushguard.guardrails import GuardrailError, Options, Status, compile_guardrails
from pushguard.guardrails.resource import evaluate
from pushguard.policy.exceptions import utc_today
from tests.guardrails.configs import LEGACY, config, in_days, rich_raw
from tests.guardrails.shapes import rest

ORG = "123456789012"


def by_rule(items, rule_id):
    return [i for i in items if i.rule_id == rule_id]


def test_a_disabled_rule_is_left_out_and_said() -> None:
    guardrails = compile_guardrails(config({"push-auth-oidc": "disabled"}), ORG)
    assert not by_rule(guardrails.constraints, "push-auth-oidc")
    assert not by_rule(guardrails.modules, "push-auth-oidc")
    assert not by_rule(guardrails.policies, "push-auth-oidc")
    for coverage in by_rule(guardrails.coverage, "push-auth-oidc"):
        assert coverage.status is Status.NOT_COMPILED
        assert "disabled" in coverage.reason


def test_dry_run_by_default_and_enforce_only_mandatory() -> None:
    raw = {"push-auth-oidc": "advisory", "push-no-query-token": "mandatory"}
    dry = compile_guardrails(config(raw), ORG)
    assert dry.policies and not any(p.enforced for p in dry.policies)
    enforced = compile_guardrails(config(raw), ORG, Options(enforce=True))
    levels = config(raw).levels
    for policy in enforced.policies:
        assert policy.enforced == (levels[policy.rule_id].value == "mandatory"), policy.rule_id
    assert not by_rule(enforced.policies, "push-auth-oidc")[0].enforced
    assert by_rule(enforced.policies, "push-no-query-token")[0].enforced


def test_levels_map_to_severities() -> None:
    modules = compile_guardrails(config({"push-auth-oidc": "advisory"}), ORG).modules
    severity = {m.rule_id: m.severity for m in modules}
    assert severity["push-auth-oidc"] == "LOW"  # advisory
    assert severity["push-endpoint-https"] == "CRITICAL"  # mandatory, the rule's severity
    assert severity["push-no-exactly-once"] == "MEDIUM"


def test_an_exempt_prefix_lets_its_endpoints_through() -> None:
    raw = {"push-endpoint-https": {"exemptEndpointPrefixes": ["http://partner.example/hooks"]}}
    condition = by_rule(compile_guardrails(config(raw), ORG).constraints, "push-endpoint-https")[
        0
    ].condition
    name = "projects/acme-orders/subscriptions/s"
    assert not evaluate(condition, rest(name, "http://partner.example/hooks/a"))
    assert evaluate(condition, rest(name, "http://partner.example/other"))
    assert evaluate(condition, rest(name, "http://evil.example/hooks/a"))


def test_perimeter_projects_get_one_policy_each_and_the_module_names_them() -> None:
    guardrails = compile_guardrails(config(rich_raw()), ORG)
    policies = by_rule(guardrails.policies, "push-vpcsc-default-url")
    assert sorted(p.name for p in policies) == [
        "projects/222222222222/policies/custom.pushguardPushVpcscDefaultUrl",
        "projects/acme-orders/policies/custom.pushguardPushVpcscDefaultUrl",
    ]
    assert all(p.tag_condition is None for p in policies)
    module = by_rule(guardrails.modules, "push-vpcsc-default-url")[0]
    custom = "https://orders.example.com/push"
    for project in ("acme-orders", "111111111111", "222222222222"):  # by ID, by number (map)
        assert evaluate(module.expression, rest(f"projects/{project}/subscriptions/s", custom))
    assert not evaluate(module.expression, rest("projects/other-proj/subscriptions/s", custom))


def test_a_perimeter_tag_conditions_one_organization_policy() -> None:
    guardrails = compile_guardrails(
        config(rich_raw()), ORG, Options(perimeter_tag=("perimeter", "inside"))
    )
    (policy,) = by_rule(guardrails.policies, "push-vpcsc-default-url")
    assert policy.name == f"organizations/{ORG}/policies/custom.pushguardPushVpcscDefaultUrl"
    assert policy.tag_condition == f'resource.matchTag("{ORG}/perimeter", "inside")'
    with pytest.raises(GuardrailError, match="--perimeter-tag"):
        compile_guardrails(config(None), ORG, Options(perimeter_tag=("a'b", "x")))


def test_without_perimeter_projects_the_perimeter_rule_is_said_unattached() -> None:
    guardrails = compile_guardrails(config(None), ORG)
    assert not by_rule(guardrails.policies, "push-vpcsc-default-url")
    constraint, sha = by_rule(guardrails.coverage, "push-vpcsc-default-url")
    assert "no policy attaches it" in constraint.reason
    assert sha.status is Status.NOT_COMPILED and "perimeterProjects" in sha.reason


def test_an_active_exception_is_let_through_by_either_project_name() -> None:
    guardrails = compile_guardrails(config(rich_raw()), ORG)
    constraint = by_rule(guardrails.constraints, "push-auth-oidc")[0]
    assert not evaluate(constraint.condition, rest(LEGACY, "https://x.example/"))
    by_number = LEGACY.replace("acme-orders", "111111111111")
    assert not evaluate(constraint.condition, rest(by_number, "https://x.example/"))
    other = "projects/acme-orders/subscriptions/legacy2"
    assert evaluate(constraint.condition, rest(other, "https://x.example/"))
    assert "Google cannot end an exception" in constraint.description
    assert f"until {in_days(30)}" in constraint.description


def test_an_expired_exception_is_refused_with_its_field() -> None:
    yesterday = (utc_today() - timedelta(days=1)).isoformat()
    raw = {
        "push-no-exactly-once": {
            "exceptions": [{"resource": LEGACY, "reason": "old", "expires": yesterday}]
        }
    }
    with pytest.raises(GuardrailError) as error:
        compile_guardrails(config(raw), ORG)
    assert error.value.field == "push-no-exactly-once.exceptions[0].expires"
    assert "expired" in error.value.message
    # judged on the day given: the same exception was active yesterday
    compile_guardrails(config(raw), ORG, Options(today=utc_today() - timedelta(days=1)))
