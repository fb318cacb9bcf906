"""``pushguard audit EXPORT --stacks STATE...``: unmanaged, drifted, deleted-out-of-band and
matching push subscriptions, through the command, in one run over an export and states that
hold every case (states of several backends, versions and routes, secrets encrypted and in
plaintext); and states that cannot be read. Without ``--stacks``: tests/audit/test_scenarios.py.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from pushguard.audit import command
from pushguard.crossguard.routes import MAPPED_SUBSCRIPTION_TYPES
from pushguard.crossguard.routes.kcc import SUBSCRIPTION_PATCH
from pushguard.policy.exceptions import utc_today
from pushguard.rules import RULES_BY_ID
from pushguard.state.subscriptions import STATE_SUBSCRIPTION_TYPES

from . import cai
from .conftest import write_lines
from .states import Stack, encrypted, output_value, push_config, shown, write

ORDERS, ORDERS_N = "acme-orders", "123456789012"
ELSEWHERE = "acme-elsewhere"  # no asset of it in the export
RUN = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
OLD_RUN = "https://orders-old-3kq2x7ab9c-ew.a.run.app/push?token=s3cret-in-query"
PUSH = f"orders-push@{ORDERS}.iam.gserviceaccount.com"
OTHER = f"someone-else@{ORDERS}.iam.gserviceaccount.com"
HIDDEN = f"hidden-value@{ORDERS}.iam.gserviceaccount.com"
RULE_IDS = {"push-unmanaged", "push-state-drift"}


def _sub(name: str, endpoint: str | None = RUN, account: str | None = PUSH, **extra: Any) -> dict:
    asset = cai.subscription(ORDERS, ORDERS_N, name, endpoint, account, "orders")
    asset["resource"]["data"]["pushConfig"].update(extra)
    return asset


def build_export(folder: Path) -> Path:
    assets = [
        cai.folder(),
        cai.project(ORDERS, ORDERS_N),
        _sub("matching", attributes={"x-goog-version": "v1"}),
        _sub("edited"),  # the endpoint was edited in the console
        _sub("swapped", account=OTHER),  # the account was swapped, the state shows it
        _sub("hidden"),  # the state holds the account encrypted: not checked
        _sub("paused", endpoint=None, account=None),
        _sub("unwrapped"),  # the state records noWrapper, the live one is wrapped
        _sub("rogue"),  # made outside any stack
        _sub("read-only"),  # a stack reads it (Subscription.get): not managed by it
        _sub("accepted"),  # made outside any stack, under an exception of the policy config
        _sub("pulled", endpoint=None, account=None),  # a pull subscription no stack manages
        _sub("native"),
        _sub("bridged"),
        _sub("kcc"),
        _sub("from-checkpoint"),
        _sub("from-v2"),
    ]
    return write_lines(folder / "export.json", assets)


def build_states(folder: Path) -> list[Path]:
    """Three inputs: a folder of exports (v3, v4, v2 and a package.json), a self-managed backend
    folder (a gzipped checkpoint, a history copy that is skipped) and one export file."""
    exports = folder / "exports"
    prod = Stack("orders", "prod")
    prod.subscription(
        ORDERS, "matching", push_config(RUN, PUSH, "orders", attributes={"x-goog-version": "v1"})
    )
    prod.subscription(ORDERS, "edited", push_config(OLD_RUN, PUSH, "orders"))
    component = prod.component("swapped")
    prod.subscription(ORDERS, "swapped", push_config(RUN, shown(PUSH), "orders"), parent=component)
    prod.subscription(ORDERS, "hidden", {**push_config(RUN), "oidcToken": encrypted(HIDDEN)})
    prod.subscription(ORDERS, "paused", push_config(RUN, PUSH, "orders"))
    prod.subscription(ORDERS, "unwrapped", push_config(RUN, PUSH, "orders", no_wrapper=True))
    prod.subscription(ORDERS, "deleted", push_config(RUN, PUSH, "orders"))
    prod.subscription(ELSEWHERE, "ghost", push_config(RUN, PUSH, "orders"))
    prod.subscription(ORDERS, "read-only", push_config(RUN, PUSH, "orders"))
    prod.resources[-1]["external"] = True  # how Pulumi records a read resource
    write(exports / "prod.json", prod.export())
    write(exports / "prod-copy.json.gz", prod.export(), gzipped=True)  # the same state twice

    routes = Stack("routes", "dev")
    routes.resource(
        "google-native:pubsub/v1:Subscription",
        "native",
        {
            "name": f"projects/{ORDERS}/subscriptions/native",
            "pushConfig": output_value(
                {
                    "pushEndpoint": RUN,
                    "oidcToken": {"serviceAccountEmail": PUSH, "audience": "orders"},
                }
            ),
        },
        resource_id=f"projects/{ORDERS}/subscriptions/native",
    )
    routes.resource(
        "google:index/pubsubSubscription:PubsubSubscription",
        "bridged",
        {"name": "bridged", "project": ORDERS, "pushConfig": push_config(RUN, PUSH, "orders")},
        resource_id=f"projects/{ORDERS}/subscriptions/bridged",
    )
    routes.resource(
        "kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:PubSubSubscription",
        "kcc",
        {
            "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
            "kind": "PubSubSubscription",
            "metadata": {
                "name": "kcc",
                "namespace": "team",
                "annotations": {"cnrm.cloud.google.com/project-id": ORDERS},
            },
            "spec": {
                "topicRef": {"name": "orders"},
                "pushConfig": push_config(RUN, PUSH, "orders"),
            },
        },
        resource_id="team/kcc",
    )
    write(exports / "routes.json", routes.export(version=4))
    old = Stack("legacy", "prod")
    old.subscription(ORDERS, "from-v2", push_config(RUN, PUSH, "orders"))
    write(exports / "legacy.json", old.export(version=2))
    write(exports / "package.json", {"name": "team-stacks", "version": "1.0.0"})

    backend = folder / "backend"
    checkpoint = Stack("billing", "prod")
    checkpoint.subscription(ORDERS, "from-checkpoint", push_config(RUN, PUSH, "orders"))
    write(
        backend / ".pulumi/stacks/billing/prod.json.gz", checkpoint.checkpoint("acme"), gzipped=True
    )
    stale = Stack("billing", "prod")
    stale.subscription(ORDERS, "stale-copy", push_config(RUN, PUSH, "orders"))
    write(backend / ".pulumi/history/billing/prod/prod-1.checkpoint.json", stale.checkpoint("acme"))
    return [exports, backend]


@dataclass
class Run:
    code: int
    out: Path
    stdout: str
    stderr: str

    @property
    def summary(self) -> dict[str, Any]:
        return json.loads((self.out / "summary.json").read_text())

    def findings(self, rule: str | None = None) -> list[dict[str, Any]]:
        text = (self.out / "findings.jsonl").read_text()
        rows = [json.loads(line) for line in text.splitlines()]
        return [r for r in rows if rule is None or r["rule_id"] == rule]

    def of(self, name: str) -> list[dict[str, Any]]:
        return [
            r
            for r in self.findings()
            if r["rule_id"] in RULE_IDS and r["asset_name"].endswith(f"/subscriptions/{name}")
        ]


def run(
    tmp: Path, export: Path, stacks: list[Path] | None = None, config: Path | None = None
) -> Run:
    out, stdout, stderr = tmp / "out", io.StringIO(), io.StringIO()
    with redirect_stdout(stdout):
        code = command.run(
            [str(export)],
            str(out),
            stacks=[str(s) for s in stacks or ()],
            stderr=stderr,
            policy_config=config,
        )
    return Run(code, out, stdout.getvalue(), stderr.getvalue())


def policy_config(path: Path) -> Path:
    """push-state-drift made mandatory; an exception for one unmanaged subscription."""
    accepted = {
        "resource": f"projects/{ORDERS}/subscriptions/accepted",
        "reason": "legacy",
        "expires": (utc_today() + timedelta(days=30)).isoformat(),
    }
    path.write_text(
        json.dumps(
            {
                "push-state-drift": {"enforcementLevel": "mandatory"},
                "push-unmanaged": {"exceptions": [accepted]},
            }
        )
    )
    return path


@pytest.fixture(scope="module")
def audited(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("stacks")
    config = policy_config(tmp / "policy-config.json")
    return run(tmp, build_export(tmp / "in"), build_states(tmp / "states"), config)


def test_a_matching_subscription_has_no_finding_of_either_rule(audited: Run) -> None:
    assert audited.code == 1, audited.stderr  # push-state-drift is mandatory in the config
    for name in ("matching", "native", "bridged", "kcc", "from-checkpoint", "from-v2"):
        assert audited.of(name) == [], name


def test_an_unmanaged_push_subscription_is_reported_and_a_pull_one_is_not(audited: Run) -> None:
    [rogue] = audited.of("rogue")
    assert rogue["rule_id"] == "push-unmanaged" and rogue["status"] == "violation"
    assert rogue["level"] == "advisory" and rogue["finding_id"].startswith("pg1-")
    assert rogue["project_number"] == ORDERS_N
    assert audited.of("pulled") == []
    [accepted] = audited.of("accepted")
    assert accepted["status"] == "excepted" and accepted["exception_reason"] == "legacy"
    [read_only] = audited.of("read-only")
    assert read_only["rule_id"] == "push-unmanaged" and read_only["status"] == "violation"
    violations = [r for r in audited.findings("push-unmanaged") if r["status"] == "violation"]
    assert sorted(r["asset_name"] for r in violations) == sorted(
        [read_only["asset_name"], rogue["asset_name"]]
    )


def test_drift_names_the_stack_and_the_fields_redacted(audited: Run) -> None:
    [edited] = audited.of("edited")
    assert edited["rule_id"] == "push-state-drift" and edited["status"] == "violation"
    assert edited["level"] == "mandatory"  # from the policy config
    assert edited["evidence"] == {"stack": "orders/prod", "fields": "push_endpoint"}
    assert "orders/prod" in edited["message"] and "push_endpoint" in edited["message"]
    assert "s3cret-in-query" not in json.dumps(audited.findings())
    assert "[redacted]" in edited["message"]
    [paused] = audited.of("paused")
    assert paused["evidence"]["fields"] == "paused"
    [unwrapped] = audited.of("unwrapped")
    assert unwrapped["evidence"]["fields"] == "no_wrapper"


def test_a_plaintext_secret_is_compared_but_never_shown(audited: Run) -> None:
    [swapped] = audited.of("swapped")  # a PushSubscription component's child
    assert swapped["status"] == "violation"
    assert swapped["evidence"]["fields"] == "push_auth_account"
    assert "stack [secret]" in swapped["message"] and PUSH not in swapped["message"]


def test_an_encrypted_value_is_not_checked_never_presumed(audited: Run) -> None:
    [hidden] = audited.of("hidden")
    assert hidden["status"] == "unknown", hidden
    assert "not checked" in hidden["message"] and "push_auth_account" in hidden["message"]
    assert HIDDEN not in json.dumps(audited.findings())


def test_deleted_out_of_band_only_when_the_export_holds_its_project(audited: Run) -> None:
    [deleted] = audited.of("deleted")
    assert (
        deleted["asset_name"] == f"//pubsub.googleapis.com/projects/{ORDERS}/subscriptions/deleted"
    )
    assert deleted["status"] == "violation" and "deleted out of band" in deleted["message"]
    assert (
        deleted["project_number"] == ORDERS_N and deleted["ancestors"][0] == f"projects/{ORDERS_N}"
    )
    [ghost] = audited.of("ghost")
    assert ghost["status"] == "unknown" and "not checked" in ghost["message"]
    assert audited.of("stale-copy") == []  # a backend's history folder is not a stack


def test_the_summary_counts_per_project_and_per_stack(audited: Run) -> None:
    stacks = audited.summary["stacks"]
    assert stacks["checked"] is True
    assert stacks["states"] == 5 and stacks["files_skipped"] == 2  # prod.json read twice
    # the copy of prod.json adds no finding and no count: one record per stack resource
    assert stacks["by_project"] == {ORDERS: {"managed": 10, "unmanaged": 3}}
    assert stacks["drifted_by_stack"] == {"orders/prod": 4}
    assert stacks["deleted_by_stack"] == {"orders/prod": 1}
    assert "3 push subscriptions unmanaged, 4 drifted, 1 deleted out of band" in audited.stdout
    assert audited.summary["findings"]["excepted_by_rule"] == {"push-unmanaged": 1}
    report = (audited.out / "report.html").read_text()
    assert "<h2>Drift per stack</h2>" in report and "<code>orders/prod</code>" in report


def test_an_unreadable_state_fails_the_run_naming_it(spark: SparkSession, tmp_path: Path) -> None:
    export = build_export(tmp_path / "in")
    states = tmp_path / "states"
    good = Stack("orders", "prod")
    good.subscription(ORDERS, "matching", push_config(RUN, PUSH, "orders"))
    write(states / "good.json", good.export())
    write(states / "future.json", {**good.export(), "version": 5})
    (states / "broken.json").write_text('{"version": 3, "deployment": {"resources": [')
    failed = run(tmp_path, export, [states])
    assert failed.code == 2
    assert "2 state file(s) cannot be read" in failed.stderr
    assert "broken.json: is not JSON" in failed.stderr
    assert "future.json: deployment version 5 is newer" in failed.stderr
    assert not (tmp_path / "out").exists(), "nothing is published"
    missing = run(tmp_path, export, [tmp_path / "nowhere"])
    assert missing.code == 2 and "nowhere: does not exist" in missing.stderr
    no_state = tmp_path / "not-states"
    write(no_state / "package.json", {"name": "web", "version": "1.0.0"})
    nothing = run(tmp_path, export, [no_state])
    assert nothing.code == 2 and "no Pulumi state among the 1 JSON file(s)" in nothing.stderr


def test_every_type_the_pack_maps_as_a_subscription_is_read_from_state() -> None:
    assert MAPPED_SUBSCRIPTION_TYPES - {SUBSCRIPTION_PATCH} <= STATE_SUBSCRIPTION_TYPES


def test_the_pack_registers_both_rules_and_never_decides_them() -> None:
    from pushguard.crossguard.policies import PushguardPolicy

    for rule_id in RULE_IDS:
        policy = PushguardPolicy(RULES_BY_ID[rule_id])
        assert "Audit only" in policy.description and "not applicable" in policy.description
        reported: list[str] = []
        policy.validate(object(), lambda message, urn=None, seen=reported: seen.append(message))
        assert reported == []


# Stacks are who they are (issue 35, item 2): two self-managed backends built from one template
# each hold `organization/infra/prod` with a subscription `events` (same name, same URN, other
# projects); both also claim one subscription; and one stack's state is given as two dated
# `pulumi stack export` files, the older first by name.
TEAM_A, TEAM_A_N = "team-a-prod", "111000111000"
TEAM_B, TEAM_B_N = "team-b-prod", "222000222000"
RUN_A = "https://events-a-3kq2x7ab9c-ew.a.run.app/push"
RUN_B = "https://events-b-3kq2x7ab9c-ew.a.run.app/push"
EVIL = "https://evil.example/collect"
OCTOBER, NOVEMBER = "2026-10-05T08:00:00.5Z", "2026-11-02T09:14:07.123456789+01:00"


def _team_sub(project: str, number: str, name: str, endpoint: str) -> dict:
    account = f"events@{project}.iam.gserviceaccount.com"
    return cai.subscription(project, number, name, endpoint, account, "events")


def build_template_export(folder: Path) -> Path:
    assets = [
        cai.folder(),
        cai.project(TEAM_A, TEAM_A_N),
        cai.project(TEAM_B, TEAM_B_N),
        cai.project(ORDERS, ORDERS_N),
        _team_sub(TEAM_A, TEAM_A_N, "events", RUN_A),
        _team_sub(TEAM_B, TEAM_B_N, "events", EVIL),  # team B's endpoint, re-pointed by hand
        _team_sub(TEAM_A, TEAM_A_N, "shared", RUN_A),
        _sub("dated"),
    ]
    return write_lines(folder / "export.json", assets)


def _backend(root: Path, project: str, number: str, endpoint: str) -> Path:
    stack = Stack("infra", "prod")
    account = f"events@{project}.iam.gserviceaccount.com"
    stack.subscription(project, "events", push_config(endpoint, account, "events"))
    account_a = f"events@{TEAM_A}.iam.gserviceaccount.com"
    stack.subscription(TEAM_A, "shared", push_config(RUN_A, account_a, "events"))
    write(root / ".pulumi" / "stacks" / "infra" / "prod.json", stack.checkpoint("organization"))
    return root


def _dated(folder: Path, time: str, endpoint: str, name: str) -> Path:
    stack = Stack("orders", "dev", time=time)
    stack.subscription(ORDERS, "dated", push_config(endpoint, PUSH, "orders"))
    return write(folder / name, stack.export())


def build_template_states(folder: Path) -> list[Path]:
    exports = folder / "exports"
    _dated(exports, OCTOBER, OLD_RUN, "orders-dev-2026-10.json")
    _dated(exports, NOVEMBER, RUN, "orders-dev-2026-11.json")
    return [
        _backend(folder / "backend-a", TEAM_A, TEAM_A_N, RUN_A),
        _backend(folder / "backend-b", TEAM_B, TEAM_B_N, RUN_B),
        exports,
    ]


@pytest.fixture(scope="module")
def template(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("template")
    return run(tmp, build_template_export(tmp / "in"), build_template_states(tmp / "states"))


def _named(run_: Run, project: str, name: str) -> list[dict[str, Any]]:
    return [
        r
        for r in run_.findings()
        if r["rule_id"] in RULE_IDS and r["asset_name"].endswith(f"/{project}/subscriptions/{name}")
    ]


def test_two_backends_with_one_stack_name_both_count(template: Run) -> None:
    """Team B's `events` is managed (by its own backend's `organization/infra/prod`), and the
    drift of its endpoint to evil.example is reported, naming that backend."""
    assert template.code != 2, template.stderr
    assert _named(template, TEAM_A, "events") == []
    [drift] = _named(template, TEAM_B, "events")
    backend_b = str((template.out.parent / "states" / "backend-b").resolve())
    assert drift["rule_id"] == "push-state-drift" and drift["status"] == "violation"
    assert drift["evidence"] == {
        "stack": f"organization/infra/prod ({backend_b})",
        "fields": "push_endpoint",
    }
    assert "live https://evil.example/collect" in drift["message"]
    stacks = template.summary["stacks"]
    assert stacks["drifted_by_stack"] == {f"organization/infra/prod ({backend_b})": 1}
    assert stacks["unmanaged"] == 0 and stacks["managed"] == 4


def test_a_subscription_two_stacks_manage_is_reported(template: Run) -> None:
    [claimed] = _named(template, TEAM_A, "shared")
    root = (template.out.parent / "states").resolve()
    names = [f"organization/infra/prod ({root / b})" for b in ("backend-a", "backend-b")]
    assert claimed["rule_id"] == "push-state-drift" and claimed["status"] == "violation"
    assert claimed["evidence"] == {"stacks": "; ".join(names), "fields": "claimed"}
    assert "2 given stacks manage this subscription" in claimed["message"]
    assert template.summary["stacks"]["claimed_by_several_stacks"] == 1


def test_the_newest_snapshot_of_a_stack_is_used_and_the_summary_says_which(
    template: Run,
) -> None:
    """The October export sorts first by name; its November snapshot (the live endpoint) is
    the stack's state, so `dated` has not drifted."""
    assert _named(template, ORDERS, "dated") == []
    exports = template.out.parent / "states" / "exports"
    assert template.summary["stacks"]["snapshots"] == [
        {
            "stack": "orders/dev",
            "used": str(exports / "orders-dev-2026-11.json"),
            "manifest_time": "2026-11-02T08:14:07.123456789Z",
            "ignored": [str(exports / "orders-dev-2026-10.json")],
        }
    ]
    assert template.summary["stacks"]["states"] == 4
    report = (template.out / "report.html").read_text()
    assert "<h2>Stacks given more than once</h2>" in report
    assert "orders-dev-2026-10.json" in report and "2026-11-02T08:14:07.123456789Z" in report


def test_two_snapshots_of_one_time_that_differ_stop_the_run(
    spark: SparkSession, tmp_path: Path
) -> None:
    states = tmp_path / "states"
    _dated(states, NOVEMBER, OLD_RUN, "one.json")
    _dated(states, NOVEMBER, RUN, "two.json")
    failed = run(tmp_path, build_template_export(tmp_path / "in"), [states])
    assert failed.code == 2
    assert "same manifest.time" in failed.stderr and "one.json" in failed.stderr
    assert not (tmp_path / "out").exists()
