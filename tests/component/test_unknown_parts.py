"""Issue 37: ``PushSubscription`` given a push endpoint that holds Pulumi's unknown sentinel, whole
or cut, under Pulumi's mock runtime at preview.

An offline preview hands a program a ``secure:`` config value or a plain data source's output as
a string that holds the sentinel. An endpoint built from one (``"http://" + host + "/push"``) is
not known, but its scheme is: the component refuses it as it refuses a plain ``http://`` endpoint,
at construction for a plain string, when it resolves for an Output. A cut of one
(``host[:12]``) is not known text: it is never registered as if it were the endpoint.
"""

from __future__ import annotations

from typing import Any

import pulumi

from pushguard.components import PushSubscription, PushSubscriptionInputError
from tests.helpers import UNKNOWN, cause, run, run_failing, secret_unknown_as_sent

SUB = "gcp:pubsub/subscription:Subscription"
TARGET = {"kind": "cloud-run", "name": "orders", "location": "europe-west1"}


def program(endpoint: Any, **extra: Any):
    return lambda: PushSubscription(
        "orders", {"topic": "orders", "push_endpoint": endpoint, "target": TARGET, **extra}
    )


def test_http_before_an_unknown_host_is_refused_at_construction() -> None:
    graph, error = run_failing(program(f"http://{UNKNOWN}/push"))
    assert isinstance(error, PushSubscriptionInputError), error
    problem = dict(error.problems)["push_endpoint"]
    assert "uses http://" in problem and "[push-endpoint-https]" in problem, problem
    assert "scheme is known at preview" in problem, problem
    assert UNKNOWN[:8] not in str(error)
    assert graph.records == [], "nothing may be registered for bad inputs"


def test_an_output_of_http_before_an_unknown_host_is_refused_when_it_resolves() -> None:
    graph, raised = run_failing(program(pulumi.Output.from_input(f"http://{UNKNOWN}/push")))
    error = cause(raised, PushSubscriptionInputError)
    assert isinstance(error, PushSubscriptionInputError), raised
    assert "uses http://" in dict(error.problems)["push_endpoint"]
    assert not graph.by_type(SUB), "the subscription must never receive an invalid value"


def test_a_cut_sentinel_is_not_registered_as_a_known_endpoint() -> None:
    """``https://orders-04da6b54-80e.a.run.app/push`` looks like a Cloud Run default URL, which a
    perimeter allows; it is a cut unknown, so the subscription gets an unknown endpoint."""
    endpoint = f"https://orders-{UNKNOWN[:12]}.a.run.app/push"
    graph = run(program(endpoint, in_service_perimeter=True))
    pushed = graph.one(SUB).inputs["pushConfig"]["pushEndpoint"]
    assert pushed == secret_unknown_as_sent(), pushed  # the SDK's wire form of an unknown secret
