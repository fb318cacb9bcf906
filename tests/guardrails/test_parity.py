"""Parity: every generated condition and predicate, evaluated with cel-python over the REST
resource, gives on every subscription the tests know (tests/guardrails/shapes.py) the rule's
verdict on the facts the resource alone decides; where it does not, the rule is ``partial`` and
the condition only ever lets through what the rule reports (never flags what the rule allows).
No condition errs on any shape; no condition flags a Google-managed subscription."""

from __future__ import annotations

from typing import Any

import pytest

from pushguard.guardrails import Guardrails, Options, Status, compile_guardrails
from pushguard.guardrails.resource import evaluate, resource_facts
from pushguard.policy.config_file import RuleConfig
from pushguard.policy.exceptions import utc_today
from pushguard.rules import RULES_BY_ID, EnforcementLevel
from pushguard.rules.base import evaluate_rules
from pushguard.rules.google_managed import google_managed
from tests.guardrails.configs import config, rich_raw
from tests.guardrails.shapes import all_shapes, managed_shapes
from tests.rules.test_google_managed import RECOGNISED

CONFIGS = {"defaults": None, "rich": "rich"}
SHAPES = all_shapes()


def compiled(name: str) -> tuple[RuleConfig, Guardrails]:
    rule_config = config(rich_raw() if name == "rich" else None)
    return rule_config, compile_guardrails(rule_config, "123456789012", Options())


def rule_verdict(rule_id: str, rule_config: RuleConfig, resource: dict[str, Any]) -> bool:
    """The rule's violation on what the resource decides, as the audit judges it: settings laid
    over the facts, Google-managed set aside, active exceptions honoured."""
    settings = rule_config.settings[rule_id]
    facts = settings.apply(resource_facts(resource))
    if google_managed(facts) is not None:
        return False
    findings = evaluate_rules([RULES_BY_ID[rule_id]], facts, rule_config.levels)
    if not any(f.is_violation for f in findings):
        return False
    excepted = settings.exception_for(facts.resource, today=utc_today())
    return not (excepted and excepted.active)


def cel_verdicts(guardrails: Guardrails, rule_config: RuleConfig, resource: dict[str, Any]):
    """``(rule ID, target, verdict)`` for every constraint (where a policy attaches it: a
    perimeter project for the perimeter rule) and every module."""
    for constraint in guardrails.constraints:
        verdict = evaluate(constraint.condition, resource)
        if constraint.rule_id == "push-vpcsc-default-url":
            settings = rule_config.settings[constraint.rule_id]
            verdict = verdict and settings.apply(resource_facts(resource)).in_service_perimeter
        yield constraint.rule_id, "constraint", verdict
    for module in guardrails.modules:
        yield module.rule_id, "sha", evaluate(module.expression, resource)


@pytest.mark.parametrize("name", CONFIGS)
def test_every_condition_agrees_with_its_rule_on_every_known_subscription(name: str) -> None:
    rule_config, guardrails = compiled(name)
    status = {(c.rule_id, c.target): c.status for c in guardrails.coverage}
    wrong, partial_gaps = [], set()
    for label, resource in SHAPES:
        for rule_id, target, verdict in cel_verdicts(guardrails, rule_config, resource):
            expected = rule_verdict(rule_id, rule_config, resource)
            if verdict == expected:
                continue
            if status[(rule_id, target)] is Status.PARTIAL and expected and not verdict:
                partial_gaps.add((rule_id, target))
                continue
            wrong.append(f"{rule_id} ({target}) on {label}: CEL {verdict}, rule {expected}")
    assert not wrong, "\n".join(wrong)
    if name == "rich":  # the corpus shows each partial gap it claims for the endpoint rules
        assert ("push-endpoint-https", "constraint") in partial_gaps


@pytest.mark.parametrize("name", CONFIGS)
def test_no_condition_errs_on_any_shape(name: str) -> None:
    _, guardrails = compiled(name)
    expressions = [c.condition for c in guardrails.constraints]
    expressions += [m.expression for m in guardrails.modules]
    for label, resource in SHAPES:
        for expression in expressions:
            evaluate(expression, resource)  # raises CELEvalError on a field read without has()
        del label


def test_google_managed_subscriptions_are_never_denied() -> None:
    for name in CONFIGS:
        _, guardrails = compiled(name)
        for label, resource in managed_shapes(RECOGNISED):
            for constraint in guardrails.constraints:
                assert not evaluate(constraint.condition, resource), (label, constraint.rule_id)
            for module in guardrails.modules:
                assert not evaluate(module.expression, resource), (label, module.rule_id)


def test_the_managed_forms_would_be_denied_without_the_guard() -> None:
    """The guard is what lets them through: a Cloud Build subscription has no OIDC token, so the
    auth rule's bare condition flags it."""
    from pushguard.guardrails.conditions import auth_oidc

    _, resource = next(managed_shapes(RECOGNISED))
    rule_config = config(None)
    assert evaluate(auth_oidc(rule_config.settings["push-auth-oidc"]), resource)


def test_a_disabled_rule_has_no_condition() -> None:
    rule_config, guardrails = compiled("rich")
    assert rule_config.levels["push-sa-broad-grants"] is EnforcementLevel.DISABLED
    compiled_rules = {c.rule_id for c in guardrails.constraints}
    assert "push-auth-oidc" in compiled_rules
