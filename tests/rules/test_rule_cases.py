"""Every rule against its fact-level pass and fail fixtures (tests/rules/cases/, one file per
rule), and the rule set's public contract."""

from __future__ import annotations

import pytest

from pushguard.rules import (
    RULES,
    RULES_BY_ID,
    EnforcementLevel,
    InvokerTarget,
    Status,
    SubscriptionFacts,
    evaluate,
)
from tests.rules.cases import BASE, FACT_CASES, FactCase


@pytest.mark.parametrize("case", FACT_CASES, ids=lambda c: c.id)
def test_rule_case(case: FactCase) -> None:
    results = list(RULES_BY_ID[case.rule].check(SubscriptionFacts(**case.facts)))
    violations = [r for r in results if r.status is Status.VIOLATION]
    if case.expect == "fail":
        assert violations, f"{case.rule} should fail: {case.name}"
        for text in case.message:
            assert any(text in v.message for v in violations), (text, violations)
    else:
        assert not violations, f"{case.rule} should pass: {case.name}: {violations}"


def test_rule_ids_and_levels_are_the_public_contract() -> None:
    assert {r.id: r.default_level.value for r in RULES} == {
        "push-endpoint-https": "mandatory",
        "push-auth-oidc": "mandatory",
        "push-sa-same-project": "mandatory",
        "push-vpcsc-default-url": "mandatory",
        "push-no-exactly-once": "mandatory",
        "push-agent-token-creator": "advisory",
        "push-invoker-binding": "advisory",
        "push-dead-letter-iam": "advisory",
        "push-no-query-token": "advisory",
        "push-audience-explicit": "advisory",
        "push-sa-broad-grants": "advisory",
        "push-shared-iam-binding": "advisory",
        "push-unmanaged": "advisory",
        "push-state-drift": "advisory",
        "push-target-requires-auth": "advisory",
    }


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_is_documented(rule) -> None:
    assert rule.title and not rule.title.endswith(".")
    assert len(rule.description) > 200, "the module docstring is the rule's rationale"
    assert rule.remediation


def test_secret_query_value_never_appears_in_findings() -> None:
    facts = SubscriptionFacts(**{**BASE, "push_endpoint": "http://h.example.com/p?token=hunter2"})
    findings = evaluate(facts)
    assert {f.rule_id for f in findings if f.is_violation} >= {
        "push-endpoint-https",
        "push-no-query-token",
    }
    assert all(
        "hunter2" not in f.message and "hunter2" not in str(dict(f.evidence)) for f in findings
    )


def test_userinfo_password_never_appears_in_findings() -> None:
    facts = SubscriptionFacts(**{**BASE, "push_endpoint": "https://bob:hunter2@h.example.com/"})
    assert all("hunter2" not in f.message for f in evaluate(facts))


def test_levels_override_and_disable() -> None:
    facts = SubscriptionFacts(**{**BASE, "audience": None})
    levels = {"push-audience-explicit": EnforcementLevel.MANDATORY}
    [finding] = [f for f in evaluate(facts, levels) if f.rule_id == "push-audience-explicit"]
    assert finding.level is EnforcementLevel.MANDATORY
    disabled = {"push-audience-explicit": EnforcementLevel.DISABLED}
    assert not [f for f in evaluate(facts, disabled) if f.rule_id == "push-audience-explicit"]


def test_unknown_endpoint_is_undecided_not_passed() -> None:
    facts = SubscriptionFacts(
        **{**BASE, "push_endpoint": None, "in_service_perimeter": True},
        unknown=frozenset({"push_endpoint"}),
    )
    statuses = {f.rule_id: f.status for f in evaluate(facts)}
    assert statuses["push-endpoint-https"] is Status.UNKNOWN
    assert statuses["push-vpcsc-default-url"] is Status.UNKNOWN


def test_unknown_push_auth_account_is_undecided_for_the_rules_that_need_it() -> None:
    """A push config whose account is not known (a secret pushConfig in a state file, an Output
    at preview) leaves the grant rules undecided: never passed quietly."""
    facts = SubscriptionFacts(
        **{**BASE, "push_auth_account": None}, unknown=frozenset({"push_auth_account"})
    )
    statuses = {f.rule_id: f.status for f in evaluate(facts)}
    for rule in ("push-auth-oidc", "push-agent-token-creator", "push-invoker-binding"):
        assert statuses[rule] is Status.UNKNOWN, rule


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (None, "the service behind the push endpoint is not known"),
        (
            InvokerTarget(kind="cloud-run", name="orders"),
            "the target's IAM grants were not collected",
        ),
    ],
    ids=["target not known", "grants not collected"],
)
def test_an_unknown_target_or_its_uncollected_grants_leave_the_target_rules_undecided(
    target: InvokerTarget | None, message: str
) -> None:
    """Neither passed nor violated: the pack lists them as not checked, the audit as unknown."""
    facts = SubscriptionFacts(**{**BASE, "invoker_target": target})
    found = {f.rule_id: f for f in evaluate(facts)}
    for rule in ("push-invoker-binding", "push-target-requires-auth"):
        assert found[rule].status is Status.UNKNOWN, rule
        assert (found[rule].message, found[rule].field) == (message, "target"), rule


def test_pull_subscription_has_no_findings() -> None:
    facts = SubscriptionFacts(resource="s", push_endpoint=None, exactly_once_delivery=True)
    assert evaluate(facts) == []


def test_only_the_rules_that_judge_triggers_say_anything_of_one() -> None:
    """An Eventarc trigger's facts lack everything of the subscription Eventarc manages (no
    audience, no OIDC setting, no grants): a rule that does not judge triggers must neither
    fail it nor call it undecided."""
    from tests.rules.cases._build import TRIGGER_FACTS

    foreign = {**TRIGGER_FACTS, "push_endpoint": "http://10.0.0.5/push"}
    foreign["push_auth_account"] = "events@acme-shared.iam.gserviceaccount.com"
    found = evaluate(SubscriptionFacts(**foreign))
    assert {f.rule_id for f in found} == {"push-endpoint-https", "push-sa-same-project"}
    assert all(f.is_violation for f in found)
    assert evaluate(SubscriptionFacts(**TRIGGER_FACTS)) == []
