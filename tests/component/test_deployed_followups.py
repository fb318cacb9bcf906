"""Follow-ups on the component as teams deploy it (a new user's trial), through
``pushguard preview`` as users run it: grants made once whichever Google provider each component
uses, targets that cannot work refused naming the field, duplicated deployers, renames with
``aliases`` warned about, long names keeping ``-dead-letter-``.

One accepted program is previewed once for the module; each refusal is one more preview of a
small program, which must end with exit 2 naming the field.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.component.test_as_deployed import PROJECT, RUN_URL, preview, project, resources

SHARED = f"shared-push@{PROJECT}.iam.gserviceaccount.com"
EU_SA = f"eu-push@{PROJECT}.iam.gserviceaccount.com"
ACCOUNT_MEMBER = "gcp:serviceaccount/iAMMember:IAMMember"
RUN_MEMBER = "gcp:cloudrunv2/serviceIamMember:ServiceIamMember"
TOPIC_MEMBER = "gcp:pubsub/topicIAMMember:TopicIAMMember"
TOPIC = "gcp:pubsub/topic:Topic"
LONG = "x" * 240

PROGRAM = f"""
import pulumi
import pulumi_gcp as gcp
from pushguard.components import PushSubscription

ORDERS = {{"kind": "cloud-run", "name": "orders", "location": "europe-west1"}}
COMMON = {{"push_endpoint": {RUN_URL!r} + "/push", "target": ORDERS,
           "project_number": "123456789012"}}

# One explicit provider, no project input: its components share their grants.
eu = gcp.Provider("eu", project={PROJECT!r}, region="europe-west1")
for i in range(2):
    PushSubscription(f"eu-{{i}}", {{**COMMON, "topic": f"eu-{{i}}",
        "push_auth_service_account_email": {EU_SA!r},
        "deployers": ["group:platform@example.com"],
        "dead_letter": {{"topic": "eu-dlq"}}}}, opts=pulumi.ResourceOptions(provider=eu))

# Two providers named "gcp" under parents of different types, and the default provider, with
# the project given: one grant per binding.
class Team(pulumi.ComponentResource):
    def __init__(self, type_, name):
        super().__init__(type_, name)
        gcp_ = gcp.Provider("gcp", project={PROJECT!r}, opts=pulumi.ResourceOptions(parent=self))
        PushSubscription(f"{{name}}-evt", {{**COMMON, "topic": f"{{name}}-evt",
            "project": {PROJECT!r}, "push_auth_service_account_email": {SHARED!r},
            "deployers": ["group:platform@example.com"], "dead_letter": {{"topic": "shared-dlq"}}}},
            opts=pulumi.ResourceOptions(parent=self, provider=gcp_))
Team("acme:index:EuTeam", "eu-team")
Team("acme:index:UsTeam", "us-team")
PushSubscription("default-evt", {{**COMMON, "topic": "default-evt",
    "push_auth_service_account_email": {SHARED!r},
    "deployers": ["group:platform@example.com", "group:platform@example.com"],
    "dead_letter": {{"topic": "shared-dlq"}}}})

# Renamed with an alias, and a long name with a dead-letter topic it creates.
PushSubscription("orders-created", {{**COMMON, "topic": "orders",
    "deployers": ["group:a@example.com", "group:a@example.com"]}},
    opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(name="orders")]))
PushSubscription({LONG!r}, {{**COMMON, "topic": "orders", "dead_letter": {{}}}})
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = project(tmp_path_factory.mktemp("providers"), PROGRAM)
    out = folder / "prod.json"
    code, stdout = preview(folder, "--stack", "prod", "--format", "json", "--output", str(out))
    assert code in (0, 1), stdout
    return json.loads(out.read_text())


def _bindings(report: dict[str, Any]) -> Counter[tuple[str, ...]]:
    """Every IAM member binding of the plan on a known resource: (type, resource, role,
    member) -> how many resources hold it."""
    found: Counter[tuple[str, ...]] = Counter()
    for type_, where in (
        (ACCOUNT_MEMBER, "serviceAccountId"),
        (RUN_MEMBER, "name"),
        (TOPIC_MEMBER, "topic"),
    ):
        for grant in resources(report, type_):
            inputs = grant["inputs"]
            if "unknown" in str(inputs[where]) + inputs["member"]:  # own account: not shared
                continue
            found[(type_, str(inputs[where]), inputs["role"], inputs["member"])] += 1
    return found


def test_each_binding_is_held_once_whatever_the_provider(report) -> None:
    bindings = _bindings(report)
    assert bindings, report["resources"]
    assert all(count == 1 for count in bindings.values()), bindings
    for account in (SHARED, EU_SA):
        on_account = [b for b in bindings if b[0] == ACCOUNT_MEMBER and account in b[1]]
        roles = sorted(role for _, _, role, _ in on_account)
        assert roles == ["roles/iam.serviceAccountTokenCreator", "roles/iam.serviceAccountUser"]
        invokers = [b for b in bindings if b[0] == RUN_MEMBER and b[3].endswith(account)]
        assert len(invokers) == 1, invokers
    publishers = sorted(b[1] for b in bindings if b[0] == TOPIC_MEMBER and b[1].endswith("dlq"))
    assert publishers == [f"projects/{PROJECT}/topics/{t}" for t in ("eu-dlq", "shared-dlq")]
    shared = [r for r in report["resources"] if r["name"].startswith("pushguard-grant-")]
    # Per account: token creator, act-as, invoker; and the two named topics' publisher grants.
    assert len({r["urn"] for r in shared}) == len(shared) == 2 * 3 + 2, [r["name"] for r in shared]
    assert not [v for v in report["violations"] if v["policy"] == "push-shared-iam-binding"]


def test_renaming_with_aliases_warns_that_generated_ids_change(report) -> None:
    warnings = [log["message"] for log in report["logs"] if log["level"] == "warning"]
    renamed = [w for w in warnings if "'orders-created'" in w]
    assert len(renamed) == 1, warnings
    assert "subscription_name and push_auth_account_id" in renamed[0]
    assert not [w for w in warnings if "aliases" in w and "'orders-created'" not in w], warnings


def test_long_name_keeps_dead_letter_in_the_topic_id(report) -> None:
    (topic,) = [t for t in resources(report, TOPIC) if t["name"] == f"{LONG}-dead-letter"]
    assert "-dead-letter-" in topic["inputs"]["name"], topic["inputs"]["name"]
    assert len(topic["inputs"]["name"]) <= 255


MIXED = f"""
import pulumi
import pulumi_gcp as gcp
from pushguard.components import PushSubscription

eu = gcp.Provider("eu", project={PROJECT!r})
for i, opts in enumerate((pulumi.ResourceOptions(provider=eu), None)):
    PushSubscription(f"evt-{{i}}", {{"topic": f"evt-{{i}}", "push_endpoint": {RUN_URL!r} + "/push",
        "target": {{"kind": "cloud-run", "name": "orders", "location": "europe-west1"}},
        "project_number": "123456789012", "push_auth_service_account_email": {SHARED!r}}}, opts)
"""


def test_default_and_explicit_provider_of_one_project_without_project_fails_closed(
    tmp_path: Path,
) -> None:
    code, stdout = preview(project(tmp_path / "p", MIXED), "--stack", "prod")
    assert code == 2, stdout
    assert "  - project: " in stdout and "set the project input" in stdout, stdout
    assert "DuplicateResourceURNError" not in stdout


_FN = {"kind": "cloud-function-v1", "name": "legacy", "location": "europe-west1"}
REFUSALS: list[tuple[dict[str, Any], str, str]] = [
    (
        {
            "target": {
                "kind": "cloud-run",
                "name": "orders",
                "location": "europe-west1",
                "url": "https://orders.acme.com",
            },
            "push_endpoint": "https://orders.acme.com/push",
        },
        "target.url",
        "custom_audiences",
    ),
    (
        {
            "target": _FN,
            "push_endpoint": "https://europe-west1-acme-billing.cloudfunctions.net/legacy",
        },
        "target",
        "https://europe-west1-acme-orders.cloudfunctions.net/legacy",
    ),
    (
        {"push_endpoint": "https://payments-3kq2x7ab9c-ew.a.run.app/push"},
        "target.name",
        "'payments'",
    ),
    (
        {"target": _FN, "in_service_perimeter": True, "push_endpoint": RUN_URL + "/"},
        "target.kind",
        "service perimeter",
    ),
    (
        {"dead_letter": {"topic": "dlq-x", "message_retention_duration": "700s"}},
        "dead_letter.message_retention_duration",
        "dead_letter.topic",
    ),
]


@pytest.mark.parametrize(("overrides", "field", "allowed"), REFUSALS, ids=[r[1] for r in REFUSALS])
def test_targets_that_cannot_work_are_refused_naming_the_field(
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


def test_args_that_are_not_a_mapping_are_an_input_error() -> None:
    from pushguard.components import PushSubscription, PushSubscriptionInputError

    with pytest.raises(PushSubscriptionInputError, match=r"  - args: must be a mapping"):
        PushSubscription("orders", None)  # type: ignore[arg-type]


def test_a_duplicated_deployer_gets_one_grant(report) -> None:
    act_as = [
        r
        for r in resources(report, ACCOUNT_MEMBER)
        if r["name"].startswith("orders-created-act-as-")
    ]
    assert len(act_as) == 1, [r["name"] for r in act_as]
    assert act_as[0]["inputs"]["member"] == "group:a@example.com"
