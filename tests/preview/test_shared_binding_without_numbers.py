"""Issue 26 (a new user's trial): ``push-shared-iam-binding`` without ``projectNumbers``.

The service agent's member (``service-PROJECT_NUMBER@gcp-sa-pubsub...``) is not known when the
project's number is not configured; the rule used to skip the agent's grants then, so duplicated
token-creator and dead-letter publisher bindings passed silently. Identical grants to a Pub/Sub
service agent are now matched by the agent's form: whichever project's agent it is, deleting
either holder removes the binding for both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.preview.conftest import Invocation

POLICY = "push-shared-iam-binding"

PROGRAM = """\
import pulumi, pulumi_gcp as gcp

AGENT = "serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com"
URL = "https://orders-3kq2x7ab9c-ew.a.run.app"


def sub(name, account, dead_letter, grants):
    return gcp.pubsub.Subscription(name, name=f"{name}-x", topic="orders", project="acme-orders",
        push_config={"push_endpoint": URL + "/push",
                     "oidc_token": {"service_account_email": account, "audience": URL}},
        dead_letter_policy={"dead_letter_topic": dead_letter, "max_delivery_attempts": 5},
        opts=pulumi.ResourceOptions(depends_on=grants))


SHARED = "shared-push@acme-orders.iam.gserviceaccount.com"
DLQ = "projects/acme-orders/topics/shared-dlq"
for i in range(2):  # hand-wired: each subscription declares the same two bindings again
    tc = gcp.serviceaccount.IAMMember(f"tc-{i}", role="roles/iam.serviceAccountTokenCreator",
        service_account_id=f"projects/acme-orders/serviceAccounts/{SHARED}", member=AGENT)
    pub = gcp.pubsub.TopicIAMMember(f"pub-{i}", topic=DLQ, role="roles/pubsub.publisher",
        member=AGENT)
    sub(f"sub-{i}", SHARED, DLQ, [tc, pub])

# its own account and dead-letter topic, each bound once: nothing shared
OWN = "own-push@acme-orders.iam.gserviceaccount.com"
OWN_DLQ = "projects/acme-orders/topics/own-dlq"
tc = gcp.serviceaccount.IAMMember("tc-own", role="roles/iam.serviceAccountTokenCreator",
    service_account_id=f"projects/acme-orders/serviceAccounts/{OWN}", member=AGENT)
pub = gcp.pubsub.TopicIAMMember("pub-own", topic=OWN_DLQ, role="roles/pubsub.publisher",
    member=AGENT)
sub("sub-own", OWN, OWN_DLQ, [tc, pub])
"""


def test_duplicated_agent_grants_are_reported_without_project_numbers(
    preview: Callable[..., Invocation], make_project: Callable[..., Any]
) -> None:
    """No policy config: no project number anywhere. Before: no finding of the rule."""
    result = preview(str(make_project(PROGRAM)), "--format", "json")
    assert result.exit_code == 0, result.stderr  # an advisory rule
    found = sorted(
        (v["urn"].rsplit("::", 1)[1], v["message"])
        for v in result.json()["violations"]
        if v["policy"] == POLICY
    )
    assert [name for name, _ in found] == ["sub-0", "sub-0", "sub-1", "sub-1"]
    messages = " ".join(message for _, message in found)
    assert "(tc-0, tc-1)" in messages
    assert "(pub-0, pub-1)" in messages
    assert "project number is not configured" in messages
