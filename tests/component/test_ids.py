"""Generated IDs over any component name (hypothesis): every ID the component registers is valid
for Google, and no two components of one stack, nor the same component in two stacks of one
program in one project, share one.

Google's rules: subscription and topic IDs start with a letter, have 3 to 255 characters of
letters, digits and ``- _ . ~ + %`` and do not start with ``goog``
(https://cloud.google.com/pubsub/docs/pubsub-basics#resource_names); service account IDs have 6 to
30 characters matching ``[a-z]([-a-z0-9]*[a-z0-9])``
(https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts/create). The
patterns below are written from those pages, not imported from the code under test.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushguard.components import TYPE_TOKEN, PushSubscription
from pushguard.components.ids import account_id, pubsub_id
from tests.helpers import PROJECT, mocks
from tests.mock_runtime.engine import run_program

PUBSUB_ID = re.compile(r"[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}")
ACCOUNT_ID = re.compile(r"[a-z](?:[-a-z0-9]{4,28})[a-z0-9]")

NAMES = st.text(min_size=1, max_size=80)
"""Any Unicode string a team may name a component (Pulumi's names are free text)."""


def valid_pubsub_id(value: str) -> bool:
    return bool(PUBSUB_ID.fullmatch(value)) and not value.lower().startswith("goog")


def urn(name: str, stack: str = "prod") -> str:
    return f"urn:pulumi:{stack}::team::{TYPE_TOKEN}::{name}"


@settings(max_examples=300, deadline=None)
@given(name=NAMES, suffix=st.sampled_from(["", "dead-letter"]))
def test_every_generated_id_is_valid_for_google(name: str, suffix: str) -> None:
    assert valid_pubsub_id(pubsub_id(PROJECT, urn(name), suffix))
    assert ACCOUNT_ID.fullmatch(account_id(PROJECT, urn(name)))


@settings(max_examples=300, deadline=None)
@given(names=st.lists(NAMES, min_size=2, max_size=2, unique=True))
def test_ids_differ_between_components_and_between_stacks(names: list[str]) -> None:
    first, second = names
    for make in (pubsub_id, account_id):
        assert make(PROJECT, urn(first)) != make(PROJECT, urn(second))
        assert make(PROJECT, urn(first, "prod")) != make(PROJECT, urn(first, "staging"))


def registered_ids(names: list[str], stack: str) -> set[tuple[str, str]]:
    """The IDs one stack registers for components named ``names``, as (namespace, ID)."""

    def program() -> None:
        for name in names:
            PushSubscription(
                name,
                {
                    "topic": "orders",
                    "push_endpoint": "https://orders-3kq2x7ab9c-ew.a.run.app/push",
                    "target": {"kind": "cloud-run", "name": "orders", "location": "europe-west1"},
                    "dead_letter": {},
                },
            )

    graph = run_program(
        program, mocks(), project="team", stack=stack, config={"gcp:project": PROJECT}
    )
    found: list[tuple[str, str]] = []
    for record in graph.records:
        inputs: dict[str, Any] = dict(record.inputs)
        if record.type == "gcp:pubsub/subscription:Subscription":
            found.append(("subscription", inputs["name"]))
        elif record.type == "gcp:pubsub/topic:Topic":
            found.append(("topic", inputs["name"]))
        elif record.type == "gcp:serviceaccount/account:Account":
            found.append(("account", inputs["accountId"]))
    assert len(found) == 4 * len(names), (
        "a push and a dead-letter subscription, a topic, an account"
    )
    assert len(set(found)) == len(found), "no two components of one stack share an ID"
    return set(found)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(NAMES, min_size=2, max_size=3, unique=True))
def test_registered_ids_are_valid_and_unique_per_stack_and_project(names: list[str]) -> None:
    prod, staging = registered_ids(names, "prod"), registered_ids(names, "staging")
    for namespace, value in prod | staging:
        valid = ACCOUNT_ID.fullmatch(value) if namespace == "account" else valid_pubsub_id(value)
        assert valid, (namespace, value)
    assert not prod & staging, "the same component in two stacks of one project"
