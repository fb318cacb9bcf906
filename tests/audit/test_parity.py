"""Parity: the audit and the policy pack give the same verdict on the same subscription.

Hypothesis draws batches of subscriptions. Each batch is written as a CAI export (with the
project and perimeter assets) and audited on Spark; the same subscriptions, as the Pulumi engine
sends them, go to the real policy pack over the Analyzer protocol, configured with the same facts
(project numbers, perimeter projects). The verdicts of every rule that a subscription's own
properties decide must be equal. Rules that need IAM grants are compared in test_scenarios.py,
since a stack and an export hold grants in different shapes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from pushguard.rules import RULES
from tests.crossguard.conftest import PACK

from . import cai
from .conftest import audit, write_lines

RESOURCE_RULES = (
    "push-endpoint-https",
    "push-auth-oidc",
    "push-sa-same-project",
    "push-vpcsc-default-url",
    "push-no-exactly-once",
    "push-no-query-token",
    "push-audience-explicit",
)
PROJECTS = {"acme-orders": "123456789012", "acme-payments": "987654321098"}
PERIMETER = "acme-payments"
ENDPOINTS = [
    None,
    "http://orders.example.com/push",
    "https://orders.example.com/push",
    "https://orders.example.com/push?token=s3cr3t",
    "https://orders-3kq2x7ab9c-ew.a.run.app/push",
    "https://orders-987654321098.europe-west1.run.app/push",
    "HTTPS://ORDERS.EXAMPLE.COM./push",
    "https://orders-3kq2x7ab9c-ew.a.run.app.evil.example/push",
]
ACCOUNTS = [
    None,
    "push@acme-orders.iam.gserviceaccount.com",
    "push@acme-shared.iam.gserviceaccount.com",
    "push@acme-payments.iam.gserviceaccount.com",
    "123-compute@developer.gserviceaccount.com",
]

subscriptions = st.lists(
    st.fixed_dictionaries(
        {
            "project": st.sampled_from(sorted(PROJECTS)),
            "endpoint": st.sampled_from(ENDPOINTS),
            "account": st.sampled_from(ACCOUNTS),
            "audience": st.sampled_from([None, "orders-api"]),
            "exactly_once": st.booleans(),
        }
    ),
    min_size=8,
    max_size=30,
)


@pytest.fixture(scope="module")
def pack() -> Iterator[PolicyPackProcess]:
    with PolicyPackProcess(PACK) as process:
        settings_ = {"projectNumbers": PROJECTS, "perimeterProjects": [PERIMETER]}
        process.configure({rule.id: dict(settings_) for rule in RULES})
        yield process


def _wire(n: int, spec: dict[str, Any]) -> AnalyzerResource:
    push: dict[str, Any] = {}
    if spec["endpoint"] is not None:
        push["pushEndpoint"] = spec["endpoint"]
        if spec["account"]:
            push["oidcToken"] = {"serviceAccountEmail": spec["account"]}
            if spec["audience"]:
                push["oidcToken"]["audience"] = spec["audience"]
    props: dict[str, Any] = {
        "name": f"sub-{n}",
        "project": spec["project"],
        "topic": f"projects/{spec['project']}/topics/orders",
        "enableExactlyOnceDelivery": spec["exactly_once"],
    }
    if push:
        props["pushConfig"] = push
    kind = "gcp:pubsub/subscription:Subscription"
    return AnalyzerResource(
        urn=f"urn:pulumi:dev::team::{kind}::sub-{n}",
        type=kind,
        name=f"sub-{n}",
        properties=props,
        provider={"project": spec["project"]},
    )


def _asset(n: int, spec: dict[str, Any]) -> dict[str, Any]:
    project = spec["project"]
    asset = cai.subscription(
        project,
        PROJECTS[project],
        f"sub-{n}",
        spec["endpoint"],
        spec["account"] if spec["endpoint"] is not None else None,
        spec["audience"],
    )
    asset["resource"]["data"]["enableExactlyOnceDelivery"] = spec["exactly_once"]
    return asset


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=subscriptions)
def test_audit_and_pack_agree(
    spark: SparkSession,
    pack: PolicyPackProcess,
    tmp_path_factory: pytest.TempPathFactory,
    batch: list[dict[str, Any]],
) -> None:
    root = tmp_path_factory.mktemp("parity")
    assets = [cai.project(p, n) for p, n in PROJECTS.items()] + [cai.perimeter(PROJECTS[PERIMETER])]
    export = write_lines(root / "export.json", assets + [_asset(n, s) for n, s in enumerate(batch)])
    result = audit(spark, [export], root / "out")
    for n, spec in enumerate(batch):
        from_pack = {
            d.policy
            for d in pack.analyze(_wire(n, spec))
            if d.policy in RESOURCE_RULES and not d.message.startswith("can't run policy")
        }
        from_audit = result.violations(f"sub-{n}") & set(RESOURCE_RULES)
        assert from_audit == from_pack, (spec, from_audit, from_pack)
