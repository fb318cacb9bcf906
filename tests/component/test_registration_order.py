"""PushSubscription registers its children in a fixed order (the order of constructor calls; the
monitor sees them complete asynchronously, so its record order is not the registration order)."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from pushguard.components import PushSubscription
from tests.helpers import run

RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app/push"


def registered(monkeypatch: pytest.MonkeyPatch, **overrides: Any) -> list[str]:
    names: list[str] = []
    original = pulumi.Resource.__init__

    def record(self: pulumi.Resource, t: str, name: str, *rest: Any, **kwargs: Any) -> None:
        names.append(name)
        original(self, t, name, *rest, **kwargs)

    monkeypatch.setattr(pulumi.Resource, "__init__", record)
    target = {"kind": "cloud-run", "name": "orders", "location": "europe-west1"}
    args = {"topic": "orders", "push_endpoint": RUN_URL, "target": target, **overrides}
    run(lambda: PushSubscription("orders", args))
    return [n for n in names if n != "pushguard-dev"]


def test_every_child_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    deployers = ["group:platform@example.com", "user:alice@example.com"]
    names = registered(monkeypatch, dead_letter={}, deployers=deployers)
    assert names[:3] == ["orders", "orders-push-auth", "orders-token-creator"]
    assert names[3].startswith("orders-act-as-group-platform-example-com-")
    assert names[4].startswith("orders-act-as-user-alice-example-com-")
    assert names[5:] == [
        "orders-invoker",
        "orders-dead-letter",  # the topic
        "orders-dead-letter",  # the pull subscription that keeps the dead letters
        "orders-dead-letter-publisher",
        "orders",
        "orders-dead-letter-subscriber",
    ]


def test_existing_account_and_topic_are_only_referenced(monkeypatch: pytest.MonkeyPatch) -> None:
    names = registered(
        monkeypatch,
        push_auth_service_account_email="push@acme-orders.iam.gserviceaccount.com",
        token_creator_grant="project",
        dead_letter={"topic": "orders-dlq"},
    )
    shared = [n for n in names if n.startswith("pushguard-grant-")]
    assert len(shared) == 3, "grants on the project and on existing resources are shared"
    assert [n for n in names if n not in shared] == [
        "orders",
        "orders",
        "orders-dead-letter-subscriber",
    ]
    assert names.index(shared[-1]) < names.index("orders", 1), "grants before the subscription"
