"""Issue 34 in ``pushguard audit EXPORT --stacks STATE``: the push subscriptions a Deployment
Manager deployment's configuration declares are managed by the stack that holds the deployment:
matched against the live ones (no ``push-unmanaged``), their recorded push config compared
(``push-state-drift``). One run over an export and a state."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from pushguard.audit import command

from . import cai
from .conftest import write_lines
from .states import Stack, write

ORDERS, ORDERS_N = "acme-orders", "123456789012"
RUN = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
PUSH = f"orders-push@{ORDERS}.iam.gserviceaccount.com"
CONFIG = f"""resources:
- name: dm-first
  type: pubsub.v1.subscription
  properties:
    subscription: dm-first
    pushConfig:
      pushEndpoint: {RUN}
      oidcToken: {{serviceAccountEmail: {PUSH}}}
- name: dm-second
  type: gcp-types/pubsub-v1:projects.subscriptions
  properties:
    name: projects/{ORDERS}/subscriptions/dm-second
    pushConfig:
      pushEndpoint: {RUN}
      oidcToken: {{serviceAccountEmail: {PUSH}}}
"""


def _findings(out: Path, name: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    return [
        r
        for r in rows
        if r["rule_id"] in ("push-unmanaged", "push-state-drift")
        and r["asset_name"].endswith(f"/subscriptions/{name}")
    ]


def test_a_deployments_subscriptions_are_managed_by_its_stack(
    spark: SparkSession, tmp_path: Path
) -> None:
    export = write_lines(
        tmp_path / "in" / "export.json",
        [
            cai.project(ORDERS, ORDERS_N),
            cai.subscription(ORDERS, ORDERS_N, "dm-first", RUN, PUSH),
            # the endpoint was edited in the console: the deployment records RUN
            cai.subscription(ORDERS, ORDERS_N, "dm-second", "https://edited.example/push", PUSH),
        ],
    )
    stack = Stack("platform", "prod")
    deployment = {
        "name": "pubsub",
        "project": ORDERS,
        "target": {"config": {"content": CONFIG}},
        "deploymentId": "1234",
    }
    stack.resource("gcp:deploymentmanager/deployment:Deployment", "pubsub", deployment)
    state = write(tmp_path / "states" / "prod.json", stack.export())
    out, stderr = tmp_path / "out", io.StringIO()
    with redirect_stdout(io.StringIO()):
        command.run([str(export)], str(out), stacks=[str(state)], stderr=stderr)
    assert _findings(out, "dm-first") == [], stderr.getvalue()
    [drift] = _findings(out, "dm-second")
    assert drift["rule_id"] == "push-state-drift", drift
    assert drift["evidence"] == {"stack": "platform/prod", "fields": "push_endpoint"}
