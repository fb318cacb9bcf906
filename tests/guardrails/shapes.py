"""Every subscription the project's tests know, as the REST resource (``resource.data``) the
compiled conditions read: the rule case files (tests/rules/cases/*.py, their facts written as
the resource), the Google-managed forms and look-alikes (tests/rules/test_google_managed.py), the
real shapes in tests/fixtures (Terraform's tfplan2cai, Forseti's CAI dumps, gcpdiag's API
answers), and the shapes a condition must not err on (pull, no pushConfig, no oidcToken, no name).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pushguard.rules.google_managed import topic_path
from tests.rules import cases
from tests.rules.test_google_managed import LOOK_ALIKES, RECOGNISED, P

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
Shape = tuple[str, dict[str, Any]]


def rest(
    name: str,
    endpoint: str | None = None,
    account: str | None = None,
    audience: str | None = None,
    *,
    topic: str | None = None,
    exactly_once: bool = False,
) -> dict[str, Any]:
    """A ``Subscription`` REST resource with these fields (absent when ``None``)."""
    data: dict[str, Any] = {"name": name, "topic": topic or "projects/acme-orders/topics/orders"}
    push: dict[str, Any] = {}
    if endpoint is not None:
        push["pushEndpoint"] = endpoint
    token = {k: v for k, v in (("serviceAccountEmail", account), ("audience", audience)) if v}
    if token:
        push["oidcToken"] = token
    data["pushConfig"] = push
    if exactly_once:
        data["enableExactlyOnceDelivery"] = True
    return data


def _convertible(facts: dict[str, Any]) -> bool:
    return not (
        facts.get("unknown")
        or facts.get("kind", "subscription") != "subscription"
        or facts.get("push_endpoint_source")
        or facts.get("push_auth_account_project")
        or not str(facts["resource"]).startswith("projects/")
    )


def case_shapes() -> Iterator[Shape]:
    """The rule cases whose facts a subscription resource can hold."""
    for module in pkgutil.iter_modules(cases.__path__):
        if module.name.startswith("_"):
            continue
        for case in importlib.import_module(f"tests.rules.cases.{module.name}").FACT_CASES:
            facts = case.facts
            if _convertible(facts):
                yield (
                    f"case {case.id}",
                    rest(
                        facts["resource"],
                        facts.get("push_endpoint"),
                        facts.get("push_auth_account"),
                        facts.get("audience"),
                        exactly_once=bool(facts.get("exactly_once_delivery")),
                    ),
                )


def managed_shapes(table: list[tuple[Any, ...]] | dict[str, tuple[Any, ...]]) -> Iterator[Shape]:
    """tests/rules/test_google_managed.py's rows as resources in project ``P``."""
    rows = table.items() if isinstance(table, dict) else ((r[0], r) for r in table)
    for label, (sub_id, endpoint, topic, account, *_) in rows:
        name = f"projects/{P}/subscriptions/{sub_id}"
        full_topic = topic_path(topic, P) or f"projects/{P}/topics/other-topic"
        yield f"managed {label}", rest(name, endpoint, account, topic=full_topic)


def fixture_shapes() -> Iterator[Shape]:
    """The subscriptions of tests/fixtures: ``resource.data`` of CAI records, gcpdiag answers."""
    tfplan = json.loads((FIXTURES / "cai/tfplan2cai/example_pubsub_subscription.json").read_text())
    for asset in tfplan:
        data = json.loads(
            json.dumps(asset["resource"]["data"]).replace("{{.Provider.project}}", "tf-proj-1")
        )
        yield (
            f"tfplan2cai {asset['name']}",
            {
                "name": asset["name"]
                .split("//pubsub.googleapis.com/")[1]
                .replace("{{.Provider.project}}", "tf-proj-1"),
                **data,
            },
        )
    for dump in sorted((FIXTURES / "cai/forseti").glob("*resources*.dump")):
        for line in dump.read_text().splitlines():
            if not line.strip().startswith("{"):
                continue
            record = json.loads(line)
            if record.get("asset_type") == "pubsub.googleapis.com/Subscription":
                yield f"forseti {record['name']}", record["resource"]["data"]
    gcpdiag = FIXTURES / "gcpdiag/pubsub1"
    for sub in json.loads((gcpdiag / "subscriptions.json").read_text())["subscriptions"]:
        yield f"gcpdiag {sub['name']}", sub
    for name in ("pull-subscription.json", "bq-subscription.json", "gcs-subscription.json"):
        yield f"gcpdiag {name}", json.loads((gcpdiag / name).read_text())


EDGE_SHAPES: list[Shape] = [
    ("no pushConfig", {"name": "projects/acme-orders/subscriptions/pull"}),
    ("empty pushConfig", {"name": "projects/acme-orders/subscriptions/pull", "pushConfig": {}}),
    ("empty endpoint", rest("projects/acme-orders/subscriptions/e", "")),
    ("no name, push", {"pushConfig": {"pushEndpoint": "http://x.example/"}}),
    ("no name, nothing", {}),
    (
        "oidcToken without account",
        {
            "name": "projects/acme-orders/subscriptions/t",
            "pushConfig": {"pushEndpoint": "https://x.example/", "oidcToken": {}},
        },
    ),
    (
        "audience only",
        rest("projects/acme-orders/subscriptions/a", "https://x.example/", audience="aud"),
    ),
    (
        "blank audience",
        rest(
            "projects/acme-orders/subscriptions/b",
            "https://x.example/",
            "sa@acme-orders.iam.gserviceaccount.com",
            " \u3000",
        ),
    ),
    (
        "exactly once push",
        rest(
            "projects/acme-orders/subscriptions/x",
            "https://x.example/",
            "sa@acme-orders.iam.gserviceaccount.com",
            "a",
            exactly_once=True,
        ),
    ),
    (
        "exactly once pull",
        {"name": "projects/acme-orders/subscriptions/x", "enableExactlyOnceDelivery": True},
    ),
    ("by number", rest("projects/111111111111/subscriptions/legacy", "http://legacy.example/")),
    ("excepted by id", rest("projects/acme-orders/subscriptions/legacy", "http://legacy.example/")),
    (
        "query secret api_key",
        rest("projects/acme-orders/subscriptions/q", "https://x.example/p?api_key=1"),
    ),
    (
        "query secret in fragment",
        rest("projects/acme-orders/subscriptions/q", "https://x.example/p#?token=1"),
    ),
    (
        "query dotted",
        rest("projects/acme-orders/subscriptions/q", "https://x.example/p?a=1&hub.verify_token=2"),
    ),
    ("query upper", rest("projects/acme-orders/subscriptions/q", "https://x.example/p?TOKEN=2")),
    (
        "run.app look-alike",
        rest("projects/acme-orders/subscriptions/r", "https://svc-abc-uc.a.run.app.evil.example/"),
    ),
    (
        "run.app userinfo",
        rest("projects/acme-orders/subscriptions/r", "https://svc.a.run.app@evil.example/"),
    ),
    (
        "partner with port",
        rest("projects/acme-orders/subscriptions/p", "http://partner.example:8080/hooks/x"),
    ),
    (
        "partner upper case",
        rest("projects/acme-orders/subscriptions/p", "HTTP://PARTNER.EXAMPLE/hooks/x"),
    ),
    (
        "partner trailing dots",
        rest("projects/acme-orders/subscriptions/p", "http://partner.example../hooks"),
    ),
    (
        "partner look-alike",
        rest("projects/acme-orders/subscriptions/p", "http://partner.example.evil.test/hooks"),
    ),
    (
        "quoted prefix",
        rest("projects/acme-orders/subscriptions/p", 'http://quote.example/a"b\\c/d'),
    ),
]


def all_shapes() -> list[Shape]:
    """Every shape, in a stable order."""
    return [
        *case_shapes(),
        *managed_shapes(RECOGNISED),
        *managed_shapes(LOOK_ALIKES),
        *fixture_shapes(),
        *EDGE_SHAPES,
    ]
