"""``push-no-query-token``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from typing import Any

from tests.crossguard.wire import RUN_URL, UNKNOWN, push_config, subscription
from tests.rules.cases._build import (
    FactCase,
    WireCase,
    eventarc_trigger,
    fact,
    trigger_fact,
    wire,
)

RULE_ID = "push-no-query-token"


def unknown_after(prefix: str) -> dict[str, Any]:
    """Facts of an endpoint not known yet that starts with ``prefix``."""
    return {
        "push_endpoint": None,
        "push_endpoint_prefix": prefix,
        "unknown": frozenset({"push_endpoint"}),
    }


FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "no query"),
    fact(RULE_ID, "pass", "harmless query", push_endpoint=f"{RUN_URL}?tenant=a&v=2"),
    fact(RULE_ID, "fail", "token", push_endpoint=f"{RUN_URL}?token=s3cr3t"),
    fact(RULE_ID, "fail", "api key spelled oddly", push_endpoint=f"{RUN_URL}?API-Key=x"),
    fact(RULE_ID, "fail", "blank secret", push_endpoint=f"{RUN_URL}?secret="),
    fact(RULE_ID, "fail", "x-api-key", push_endpoint=f"{RUN_URL}?x-api-key=k"),
    fact(RULE_ID, "fail", "azure functions code", push_endpoint=f"{RUN_URL}?code=k"),
    fact(
        RULE_ID,
        "fail",
        "webhook verify token",
        push_endpoint=f"{RUN_URL}?hub.mode=subscribe&hub.verify_token=k",
        message=("(parameter hub.verify_token)",),
    ),
    fact(
        RULE_ID,
        "fail",
        "token beside userinfo (a malformed endpoint)",
        push_endpoint="https://user:pw@orders.example.com/p?token=X",
    ),
    fact(
        RULE_ID,
        "fail",
        "token named in the known start of an unknown endpoint",
        **unknown_after(f"{RUN_URL}?v=2&token="),
        message=("(parameter token) (known at preview",),
    ),
    fact(
        RULE_ID,
        "fail",
        "token named before another parameter is cut off",
        **unknown_after(f"{RUN_URL}?token&v"),
    ),
    fact(RULE_ID, "pass", "a name cut off may go on", **unknown_after(f"{RUN_URL}?tok")),
    fact(RULE_ID, "pass", "harmless known start", **unknown_after(f"{RUN_URL}?tenant=")),
    fact(RULE_ID, "pass", "token only in the fragment", **unknown_after(f"{RUN_URL}#token=")),
    fact(RULE_ID, "pass", "only the scheme is known", **unknown_after("https://")),
    trigger_fact(RULE_ID, "pass", "no query"),
    trigger_fact(
        RULE_ID,
        "fail",
        "token",
        push_endpoint="https://10.0.0.5/e?token=s3cr3t",
        message=("trigger's HTTP endpoint carries a shared secret",),
    ),
]

WIRE_CASES: list[WireCase] = [
    wire(
        RULE_ID,
        "pass",
        "harmless parameter",
        subscription(pushConfig=push_config(RUN_URL + "?tenant=eu")),
    ),
    wire(
        RULE_ID,
        "fail",
        "token parameter",
        subscription(pushConfig=push_config(RUN_URL + "?token=s3cr3t")),
    ),
    wire(
        RULE_ID,
        "fail",
        "api_key parameter",
        subscription(pushConfig=push_config(RUN_URL + "?API-Key=x")),
    ),
    wire(
        RULE_ID,
        "fail",
        "token parameter before an unknown value",
        subscription(pushConfig=push_config(f"{RUN_URL}?token={UNKNOWN}")),
    ),
    wire(
        RULE_ID,
        "pass",
        "a parameter name cut off by an unknown value",
        subscription(pushConfig=push_config(f"{RUN_URL}?to{UNKNOWN}")),
    ),
    wire(RULE_ID, "pass", "eventarc trigger without a query", eventarc_trigger()),
    wire(
        RULE_ID,
        "fail",
        "eventarc trigger with a token parameter",
        eventarc_trigger(destination={"httpEndpoint": {"uri": "https://10.0.0.5/e?token=s3cr3t"}}),
    ),
]
