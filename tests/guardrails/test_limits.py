"""The documented limits and the documented CEL subset, enforced by the compiler; CEL string
literals for any config value."""

from __future__ import annotations

import pytest

from pushguard.guardrails import GuardrailError, Options, cel, compile_guardrails, limits
from pushguard.guardrails.resource import evaluate
from pushguard.guardrails.subset import check_expression
from tests.guardrails.configs import config


def test_a_function_outside_the_subset_is_refused() -> None:
    with pytest.raises(GuardrailError, match=r"startsWith.*outside the documented subset"):
        check_expression('resource.name.startsWith("projects/")', "constraint", "condition")
    with pytest.raises(GuardrailError, match=r"size"):
        check_expression("size(resource.name) > 3", "sha", "predicate.expression")
    with pytest.raises(GuardrailError, match=r"exists"):
        check_expression('resource.labels.exists(k, k == "x")', "constraint", "condition")


def test_the_generated_expressions_are_inside_the_subset() -> None:
    guardrails = compile_guardrails(config(None), "1")
    for constraint in guardrails.constraints:
        check_expression(constraint.condition, "constraint", constraint.rule_id)
    assert guardrails.constraints


@pytest.mark.parametrize(
    "value",
    ['a"b', "a\\b", 'end\\"', "new\nline", "tab\tand\x00nul", "unicode \u2028 é", "\\x41"],
)
def test_any_value_becomes_one_cel_literal(value: str) -> None:
    literal = cel.string(value)
    assert evaluate(f"resource.v == {literal}", {"v": value})
    assert not evaluate(f"resource.v == {literal}", {"v": value + "x"})


@pytest.mark.parametrize(
    "text", ["a.b", "https://p.example/a?b=(c)", "x|y", 'q"uo\\te', "^$[]{}*+"]
)
def test_an_re2_literal_matches_its_text_only(text: str) -> None:
    pattern = "^" + cel.re2_literal(text) + "$"
    assert evaluate(cel.matches("resource.v", pattern), {"v": text})
    assert not evaluate(cel.matches("resource.v", pattern), {"v": text + "z"})
    assert not evaluate(cel.matches("resource.v", pattern), {"v": "z" + text})


def test_an_exempt_prefix_with_quotes_and_backslashes_compiles_and_matches() -> None:
    prefix = 'http://quote.example/a"b\\c'
    raw = {"push-endpoint-https": {"exemptEndpointPrefixes": [prefix]}}
    condition = next(
        c.condition
        for c in compile_guardrails(config(raw), "1").constraints
        if c.rule_id == "push-endpoint-https"
    )
    push = {"name": "projects/acme-orders/subscriptions/s", "pushConfig": {}}
    push["pushConfig"]["pushEndpoint"] = prefix + "/d"
    assert not evaluate(condition, push)
    push["pushConfig"]["pushEndpoint"] = 'http://quote.example/a"bXc/d'
    assert evaluate(condition, push)


def test_the_condition_limit() -> None:
    many = [f"https://partner{i}.example/hooks" for i in range(12)]
    raw = {"push-endpoint-https": {"exemptEndpointPrefixes": many}}
    with pytest.raises(GuardrailError) as error:
        compile_guardrails(config(raw), "1")
    assert error.value.field == "push-endpoint-https: condition"
    assert "at most 1000" in error.value.message


def test_the_constraint_name_limits() -> None:
    limits.check_constraint_id("custom." + "a" * 63)
    with pytest.raises(GuardrailError, match="71 characters; at most 70"):
        limits.check_constraint_id("custom." + "a" * 64)
    with pytest.raises(GuardrailError, match="letters and digits only"):
        limits.check_constraint_id("custom.push-auth")
    guardrails = compile_guardrails(config(None), "1")
    for constraint in guardrails.constraints:
        assert len(constraint.constraint_id) <= 70
        assert len(constraint.description) <= 2000
        assert len(constraint.display_name) <= 200


@pytest.mark.parametrize(
    "org", ["", "abc", "organizations/", "12 34", "0123", "organizations/12/x"]
)
def test_a_malformed_organization_is_refused(org: str) -> None:
    with pytest.raises(GuardrailError) as error:
        compile_guardrails(config(None), org)
    assert error.value.field == "--organization"


def test_the_method_types() -> None:
    create = compile_guardrails(config(None), "organizations/7", Options(method_types="create"))
    assert {c.method_types for c in create.constraints} == {("CREATE",)}
    both = compile_guardrails(config(None), "7")
    assert {c.method_types for c in both.constraints} == {("CREATE", "UPDATE")}
    with pytest.raises(GuardrailError, match="--method-types"):
        compile_guardrails(config(None), "7", Options(method_types="update"))
