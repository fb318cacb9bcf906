"""The rules package as the project's dictionary: target kinds, roles, e-mails, result fields."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pushguard.components.args import PushSubscriptionArgs, PushTargetArgs
from pushguard.rules.accounts import (
    pubsub_service_agent_email,
    service_account_email,
    service_account_project,
)
from pushguard.rules.base import COMPONENT_INPUTS, RESULT_FIELDS
from pushguard.rules.facts import PROJECT_ID_PATTERN, TargetKind
from pushguard.rules.iam import ACT_AS, INVOKER, PUBLISHER, SUBSCRIBER, TOKEN_CREATOR


def test_every_result_field_names_a_component_input() -> None:
    inputs = PushSubscriptionArgs.__required_keys__ | PushSubscriptionArgs.__optional_keys__
    assert set(COMPONENT_INPUTS) == set(RESULT_FIELDS) - {"exactly_once_delivery"}
    assert set(COMPONENT_INPUTS.values()) <= inputs


def test_the_component_takes_the_rules_target_kind() -> None:
    assert PushTargetArgs.__annotations__["kind"] is TargetKind


def test_every_target_but_external_has_one_invoker_role() -> None:
    assert set(INVOKER) == set(TargetKind) - {TargetKind.EXTERNAL}
    assert INVOKER[TargetKind.CLOUD_FUNCTION_V2] is INVOKER[TargetKind.CLOUD_RUN]
    assert INVOKER[TargetKind.CLOUD_FUNCTION_V1].granted == "roles/cloudfunctions.invoker"


def test_each_role_accepts_the_role_pushguard_grants() -> None:
    for role in (TOKEN_CREATOR, ACT_AS, PUBLISHER, SUBSCRIBER, *INVOKER.values()):
        assert role.granted in role.accepted
        assert role.source.startswith("https://cloud.google.com/")


@given(
    account=st.from_regex(r"\A[a-z][a-z0-9-]{4,28}[a-z0-9]\Z"),
    project=st.from_regex(PROJECT_ID_PATTERN.replace("^", r"\A").replace("$", r"\Z")),
)
def test_an_account_email_names_its_project(account: str, project: str) -> None:
    owner = service_account_project(service_account_email(account, project))
    assert owner is not None and owner.project_id == project


@given(number=st.from_regex(r"\A[1-9][0-9]{5,15}\Z"))
def test_the_service_agent_email_names_its_project_number(number: str) -> None:
    owner = service_account_project(pubsub_service_agent_email(number))
    assert owner is not None and owner.project_number == number
