"""The component as platform teams deploy it, through ``pushguard preview`` as users run it: IDs
Google accepts and that do not collide, audiences Cloud Run accepts, dead letters kept, no silent
backlog loss, grants shared instead of duplicated, and the JSON report a reviewer reads.

One team program, previewed once per stack (``prod`` and ``staging`` of the same program in the
same Google Cloud project), carries every accepted case; each refusal is one more preview of a
one-component program, which must end with exit 2 naming the field and what is allowed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app

PROJECT = "acme-orders"
NUMBER = "123456789012"
RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app"
SUB = "gcp:pubsub/subscription:Subscription"
TOPIC = "gcp:pubsub/topic:Topic"
SA = "gcp:serviceaccount/account:Account"
PROJECT_MEMBER = "gcp:projects/iAMMember:IAMMember"
RUN_MEMBER = "gcp:cloudrunv2/serviceIamMember:ServiceIamMember"
FN_MEMBER = "gcp:cloudfunctions/functionIamMember:FunctionIamMember"
COMPONENT = "pushguard:index:PushSubscription"

SUBSCRIPTION_ID = re.compile(r"^[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$")
ACCOUNT_ID = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])$")

TEAM_NAMES = ["3pl-shipments", "google-sheets", "orders sync", "orders.created", "orders_created"]

TEAM_PROGRAM = f"""
import pulumi
import pulumi_gcp as gcp
from pushguard.components import PushSubscription

RUN = {RUN_URL!r}
ORDERS = {{"kind": "cloud-run", "name": "orders", "location": "europe-west1"}}
for name in {TEAM_NAMES!r}:
    PushSubscription(name, {{
        "topic": "orders",
        "push_endpoint": RUN + "/push/" + name.replace(" ", "-"),
        "target": ORDERS,
        "token_creator_grant": "project",
    }})

legacy = PushSubscription("legacy-fn", {{
    "topic": "invoices",
    "push_endpoint": "https://europe-west1-acme-orders.cloudfunctions.net/legacy",
    "target": {{"kind": "cloud-function-v1", "name": "legacy", "location": "europe-west1"}},
    "dead_letter": {{"max_delivery_attempts": 10}},
}})
pulumi.export("deadLetterTopic", legacy.dead_letter_topic)
pulumi.export("deadLetterSubscription", legacy.dead_letter_subscription)

PushSubscription("custom-audience", {{
    "topic": "orders",
    "push_endpoint": "https://orders.example.com/push",
    "target": {{**ORDERS, "custom_audiences": ["orders-api"]}},
    "audience": "orders-api",
}})
PushSubscription("paused", {{
    "topic": "orders", "push_endpoint": RUN + "/push", "target": ORDERS, "paused": True,
}})
SHARED = "shared-push@acme-orders.iam.gserviceaccount.com"
for name in ("shared-a", "shared-b"):
    PushSubscription(name, {{
        "topic": name,
        "push_endpoint": RUN + "/push",
        "target": ORDERS,
        "push_auth_service_account_email": SHARED,
        "grant_invoker": False,
    }})

# The shared account's invoker grant, managed by hand, twice (two modules of the stack).
for copy in ("a", "b"):
    gcp.cloudrunv2.ServiceIamMember(
        f"orders-invoker-{{copy}}",
        project="acme-orders",
        location="europe-west1",
        name="orders",
        role="roles/run.invoker",
        member="serviceAccount:" + SHARED,
    )
"""


def preview(folder: Path, *args: str) -> tuple[int, str]:
    """``pushguard preview FOLDER ARGS``, as a user runs it: (exit code, stdout and stderr)."""
    result = CliRunner().invoke(app, ["preview", str(folder), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


def project(folder: Path, program: str, stacks: tuple[str, ...] = ("prod",)) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (folder / "__main__.py").write_text(program)
    config = {"gcp:project": PROJECT}
    for stack in stacks:
        (folder / f"Pulumi.{stack}.yaml").write_text(json.dumps({"config": config}))
    return folder


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The team program's JSON report for the ``prod`` and ``staging`` stacks."""
    folder = project(tmp_path_factory.mktemp("team"), TEAM_PROGRAM, ("prod", "staging"))
    out: dict[str, dict[str, Any]] = {}
    for stack in ("prod", "staging"):
        code, _ = preview(
            folder, "--stack", stack, "--format", "json", "--output", str(folder / f"{stack}.json")
        )
        report = json.loads((folder / f"{stack}.json").read_text())
        assert code in (0, 1), report
        out[stack] = report
    return out


def resources(report: dict[str, Any], type_: str) -> list[dict[str, Any]]:
    return [r for r in report["resources"] if r["type"] == type_]


def by_name(report: dict[str, Any], type_: str) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in resources(report, type_)}


def generated_ids(report: dict[str, Any]) -> list[tuple[str, str]]:
    """Every generated ID as (namespace, ID): subscriptions, topics and accounts are named apart
    (a dead-letter topic and the subscription that keeps its messages may share an ID)."""
    subs = [("subscription", r["inputs"]["name"]) for r in resources(report, SUB)]
    topics = [("topic", r["inputs"]["name"]) for r in resources(report, TOPIC)]
    accounts = [("account", r["inputs"]["accountId"]) for r in resources(report, SA)]
    return subs + topics + accounts


def test_generated_ids_are_valid_for_google_and_never_collide(reports) -> None:
    for report in reports.values():
        subs = by_name(report, SUB)
        for name in TEAM_NAMES:
            sub_id = subs[name]["inputs"]["name"]
            assert SUBSCRIPTION_ID.match(sub_id) and not sub_id.lower().startswith("goog"), sub_id
        accounts = [r["inputs"]["accountId"] for r in resources(report, SA)]
        assert all(ACCOUNT_ID.match(a) and 6 <= len(a) <= 30 for a in accounts), accounts
        ids = generated_ids(report)
        assert len(ids) == len(set(ids)), "no two components of one stack share an ID"
    prod, staging = (set(generated_ids(reports[s])) for s in ("prod", "staging"))
    assert not prod & staging, "two stacks of one program in one project share no ID"


def test_audience_is_what_cloud_run_or_the_function_accepts(reports) -> None:
    subs = by_name(reports["prod"], SUB)
    oidc = subs["orders sync"]["inputs"]["pushConfig"]["oidcToken"]
    assert oidc["audience"] == RUN_URL, "Cloud Run accepts its service URL"
    legacy = subs["legacy-fn"]["inputs"]["pushConfig"]["oidcToken"]
    assert legacy["audience"] == "https://europe-west1-acme-orders.cloudfunctions.net/legacy"
    custom = subs["custom-audience"]["inputs"]["pushConfig"]["oidcToken"]
    assert custom["audience"] == "orders-api", "configured on the service, so accepted"


def test_auto_created_dead_letter_topic_has_a_pull_subscription_and_outputs(reports) -> None:
    report = reports["prod"]
    [topic] = resources(report, TOPIC)
    kept = by_name(report, SUB)["legacy-fn-dead-letter"]
    assert "pushConfig" not in kept["inputs"], "a pull subscription keeps the dead letters"
    assert kept["inputs"]["messageRetentionDuration"] == "604800s"
    assert kept["inputs"]["expirationPolicy"] == {"ttl": ""}
    assert (
        kept["inputs"]["topic"] == topic["inputs"]["name"] or topic["urn"] in kept["dependencies"]
    )
    assert set(report["outputs"]) >= {"deadLetterTopic", "deadLetterSubscription"}


def test_paused_subscription_never_expires(reports) -> None:
    paused = by_name(reports["prod"], SUB)["paused"]["inputs"]
    assert "pushConfig" not in paused
    assert paused["expirationPolicy"] == {"ttl": ""}


def test_identical_grants_are_made_once_and_invoker_can_be_skipped(reports) -> None:
    report = reports["prod"]
    project_grants = resources(report, PROJECT_MEMBER)
    assert len(project_grants) == 1, [g["name"] for g in project_grants]
    subs = by_name(report, SUB)
    for name in TEAM_NAMES:
        assert project_grants[0]["urn"] in subs[name]["dependencies"]
    shared_token = [
        r
        for r in resources(report, "gcp:serviceaccount/iAMMember:IAMMember")
        if "shared-push@" in r["inputs"]["serviceAccountId"]
    ]
    assert len(shared_token) == 1, "one token-creator grant on the shared account"
    invokers = [r["name"] for r in resources(report, RUN_MEMBER)]
    assert not any(n.startswith("shared-") for n in invokers), invokers


def test_pack_flags_identical_iam_member_bindings_held_twice(reports) -> None:
    flagged = [v for v in reports["prod"]["violations"] if v["policy"] == "push-shared-iam-binding"]
    assert flagged and all(v["level"] == "advisory" for v in flagged)
    assert {v["urn"].rsplit("::", 1)[1] for v in flagged} == {"shared-a", "shared-b"}
    assert all("orders-invoker-a, orders-invoker-b" in v["message"] for v in flagged), flagged


def test_json_report_gives_dependencies_provider_and_options(reports) -> None:
    report = reports["prod"]
    sub = by_name(report, SUB)["orders sync"]
    grants = {r["urn"] for r in resources(report, RUN_MEMBER) if r["name"] == "orders sync-invoker"}
    assert grants and grants <= set(sub["dependencies"]), "grants come before the subscription"
    assert sub["provider"].startswith("urn:pulumi:prod::team::pulumi:providers:gcp::")
    assert sub["options"] == {
        "protect": False,
        "deleteBeforeReplace": False,
        "replaceOnChanges": [],
        "ignoreChanges": [],
        "import": "",
    }
    component = by_name(report, COMPONENT)["orders sync"]
    assert component["provider"] == "" and component["dependencies"] == []


REFUSALS = [
    (
        {"audience": "orders-api"},
        "audience",
        "configured on the service",
    ),
    (
        {
            "target": {"kind": "cloud-function-v1", "name": "fn", "location": "europe-west1"},
            "push_endpoint": "https://europe-west1-acme-orders.cloudfunctions.net/fn",
            "audience": "fn-api",
        },
        "audience",
        "https://europe-west1-acme-orders.cloudfunctions.net/fn",
    ),
    ({"dead_letter": {"topic": "orders"}}, "dead_letter.topic", "the subscription's own topic"),
    (
        {"in_service_perimeter": True, "paused": True},
        "paused",
        "accept_backlog_loss",
    ),
    ({"filter": 'attributes.k = "' + "é" * 130 + '"'}, "filter", "256 bytes"),
    (
        {"target": {"kind": "cloud-run", "name": "Orders_API", "location": "europe-west1"}},
        "target.name",
        "lower-case",
    ),
    (
        {"enable_exactly_once_delivery": True},
        "enable_exactly_once_delivery",
        "not supported for push subscriptions",
    ),
    ({"ack_deadline_seconds": "60"}, "ack_deadline_seconds", "an integer"),
    ({"expiration_ttl": "86400s"}, "expiration_ttl", "not be shorter than the message retention"),
    ({"filter": 'eventType = "order.paid"'}, "filter", "attribute KEY is written attributes.KEY"),
    (
        {"push_endpoint": "https://orders-210987654321.us-central1.run.app/push"},
        "target.location",
        "set target.location to 'us-central1'",
    ),
]


@pytest.mark.parametrize(
    ("overrides", "field", "allowed"),
    REFUSALS,
    ids=[r[1] + "-" + str(i) for i, r in enumerate(REFUSALS)],
)
def test_refused_through_preview_naming_the_field(
    tmp_path: Path, overrides: dict[str, Any], field: str, allowed: str
) -> None:
    args = {
        "topic": "orders",
        "push_endpoint": RUN_URL + "/push",
        "target": {"kind": "cloud-run", "name": "orders", "location": "europe-west1"},
        **overrides,
    }
    program = (
        f"from pushguard.components import PushSubscription\nPushSubscription('orders', {args!r})\n"
    )
    code, stdout = preview(project(tmp_path / "p", program), "--stack", "prod")
    assert code == 2, stdout
    assert f"  - {field}: " in stdout and allowed in stdout, stdout
