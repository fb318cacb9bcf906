"""``push-endpoint-https``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from typing import Any

from tests.crossguard.wire import UNKNOWN, push_config, run_service, subscription
from tests.rules.cases._build import (
    FactCase,
    WireCase,
    cloud_run_sub,
    eventarc_trigger,
    fact,
    trigger_fact,
    wire,
)

RULE_ID = "push-endpoint-https"


def partly_known(prefix: str) -> dict[str, Any]:
    """Facts of an endpoint not known yet that starts with ``prefix``."""
    return {
        "push_endpoint": None,
        "push_endpoint_prefix": prefix,
        "unknown": frozenset({"push_endpoint"}),
    }


FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "cloud run default url"),
    fact(RULE_ID, "pass", "custom domain", push_endpoint="https://events.example.com/p"),
    fact(RULE_ID, "pass", "explicit 443", push_endpoint="https://events.example.com:443/"),
    fact(RULE_ID, "pass", "pull subscription", push_endpoint=None),
    fact(
        RULE_ID,
        "pass",
        "exempt prefix",
        push_endpoint="rpc://pubsub.internal/x",
        exempt_endpoint_prefixes=("rpc://",),
    ),
    fact(
        RULE_ID,
        "fail",
        "exempt host is a prefix of the endpoint's host",
        push_endpoint="http://partner.example.attacker.net/push",
        exempt_endpoint_prefixes=("http://partner.example",),
    ),
    fact(
        RULE_ID,
        "fail",
        "exempt host as userinfo",
        push_endpoint="https://partner.example@attacker.net/push",
        exempt_endpoint_prefixes=("https://partner.example",),
    ),
    fact(
        RULE_ID,
        "fail",
        "exempt host with userinfo and a port",
        push_endpoint="http://partner.example:1@10.0.0.1/push",
        exempt_endpoint_prefixes=("http://partner.example",),
    ),
    fact(
        RULE_ID,
        "fail",
        "exempt path is a string prefix of another segment",
        push_endpoint="http://partner.example/hooks-evil",
        exempt_endpoint_prefixes=("http://partner.example/hooks",),
    ),
    fact(
        RULE_ID,
        "pass",
        "exempt host and path",
        push_endpoint="http://PARTNER.example/hooks/orders",
        exempt_endpoint_prefixes=("http://partner.example/hooks",),
    ),
    fact(
        RULE_ID,
        "fail",
        "prefix of another host",
        exempt_endpoint_prefixes=("https://partner.example/",),
        push_endpoint="http://partner.example.evil.test/",
    ),
    fact(RULE_ID, "fail", "plain http", push_endpoint="http://events.example.com/p"),
    fact(RULE_ID, "fail", "upper-case HTTP", push_endpoint="HTTP://events.example.com/"),
    fact(RULE_ID, "fail", "userinfo", push_endpoint="https://u:p@events.example.com/"),
    fact(RULE_ID, "fail", "relative", push_endpoint="/push"),
    fact(RULE_ID, "fail", "no host", push_endpoint="https:///push"),
    fact(RULE_ID, "fail", "space", push_endpoint="https://events.example.com/a b"),
    fact(RULE_ID, "fail", "newline", push_endpoint="https://events.example.com/\n"),
    fact(RULE_ID, "fail", "metadata server", push_endpoint="https://169.254.169.254/"),
    fact(RULE_ID, "fail", "private address", push_endpoint="https://10.1.2.3/push"),
    fact(RULE_ID, "fail", "localhost", push_endpoint="https://localhost/push"),
    fact(RULE_ID, "fail", "internal name", push_endpoint="https://svc.corp.internal/"),
    fact(
        RULE_ID,
        "fail",
        "single-label name",
        push_endpoint="https://metadata/computeMetadata/v1/",
        message=("single-label name",),
    ),
    fact(RULE_ID, "fail", "port 0", push_endpoint="https://hooks.example.com:0/push"),
    fact(RULE_ID, "fail", "octal-ish host", push_endpoint="https://0x7f.1/"),
    fact(RULE_ID, "fail", "ftp", push_endpoint="ftp://events.example.com/"),
    # Issue 37: an endpoint not known yet whose start is known ("http://" + an unknown value).
    fact(
        RULE_ID,
        "fail",
        "http:// before an unknown part",
        **partly_known("http://"),
        message=("uses http://", "scheme is known at preview", "rest of it is not known yet"),
    ),
    fact(RULE_ID, "fail", "http: before an unknown part", **partly_known("HTTP:")),
    fact(RULE_ID, "fail", "ftp:// before an unknown part", **partly_known("ftp://")),
    fact(
        RULE_ID,
        "fail",
        "a start no https URL has",
        **partly_known("ftp"),
        message=("cannot be an https:// URL", "rest of it is not known yet"),
    ),
    fact(RULE_ID, "fail", "no scheme before an unknown part", **partly_known("/push/")),
    fact(RULE_ID, "pass", "https:// before an unknown part: undecided", **partly_known("https://")),
    fact(RULE_ID, "pass", "h before an unknown part: undecided", **partly_known("h")),
    fact(RULE_ID, "pass", "http before an unknown part: undecided", **partly_known("http")),
    fact(RULE_ID, "pass", "nothing known: undecided", **partly_known("")),
    fact(
        RULE_ID,
        "pass",
        "http:// before an unknown part, an http prefix exempt: undecided",
        **partly_known("http://"),
        exempt_endpoint_prefixes=("http://partner.example/hooks",),
    ),
    fact(
        RULE_ID,
        "fail",
        "http:// before an unknown part, another scheme exempt",
        **partly_known("http://"),
        exempt_endpoint_prefixes=("rpc://",),
    ),
    trigger_fact(
        RULE_ID,
        "fail",
        "http:// before an unknown part of a trigger's endpoint",
        **partly_known("http://"),
        message=("trigger's HTTP endpoint uses http://", "scheme is known at preview"),
    ),
    trigger_fact(RULE_ID, "pass", "https internal name"),
    trigger_fact(RULE_ID, "pass", "https private address", push_endpoint="https://10.0.0.5/e"),
    trigger_fact(
        RULE_ID,
        "pass",
        "cloud run destination: google manages the endpoint",
        push_endpoint=None,
        trigger_destination="cloudRunService",
    ),
    trigger_fact(
        RULE_ID,
        "fail",
        "http endpoint",
        push_endpoint="http://10.0.0.5/push",
        message=("trigger's HTTP endpoint uses http://", "cleartext"),
    ),
    trigger_fact(
        RULE_ID,
        "fail",
        "metadata server",
        push_endpoint="https://metadata.google.internal/computeMetadata/v1/",
        message=("cannot be a service in a VPC network", "metadata server"),
    ),
    trigger_fact(
        RULE_ID,
        "fail",
        "link-local address",
        push_endpoint="https://169.254.169.254/",
        message=("loopback, link-local or unspecified",),
    ),
    trigger_fact(
        RULE_ID,
        "fail",
        "userinfo",
        push_endpoint="https://10.0.0.5@evil.example/",
        message=("userinfo",),
    ),
]

WIRE_CASES: list[WireCase] = [
    wire(RULE_ID, "pass", "cloud run default url", subscription()),
    wire(RULE_ID, "pass", "pull subscription", subscription(pushConfig=None)),
    wire(
        RULE_ID,
        "pass",
        "exempt prefix",
        subscription(pushConfig=push_config("rpc://x/y")),
        exemptEndpointPrefixes=["rpc://"],
    ),
    wire(
        RULE_ID,
        "pass",
        "uri of a cloud run service in the stack: undecided at preview, no violation",
        cloud_run_sub(),
        run_service(),
    ),
    wire(
        RULE_ID,
        "fail",
        "uri of a cloud run service in the stack, enforce: not presumed https",
        cloud_run_sub(),
        run_service(),
        message=("could not be verified", "gcp:cloudrunv2/service:Service 'orders'"),
        unknownAtPreview="enforce",
    ),
    wire(
        RULE_ID,
        "fail",
        "plain http",
        subscription(pushConfig=push_config("http://events.example.com/p")),
    ),
    wire(
        RULE_ID,
        "fail",
        "userinfo",
        subscription(pushConfig=push_config("https://a:b@events.example.com/")),
    ),
    wire(
        RULE_ID,
        "fail",
        "metadata server",
        subscription(pushConfig=push_config("https://169.254.169.254/")),
    ),
    wire(
        RULE_ID,
        "fail",
        "exemption is for another scheme",
        subscription(pushConfig=push_config("http://events.example.com/")),
        exemptEndpointPrefixes=["rpc://"],
    ),
    wire(
        RULE_ID,
        "fail",
        "nested list form",
        subscription(pushConfig=[push_config("http://x.example.com/")]),
    ),
    wire(RULE_ID, "pass", "eventarc trigger to a private https endpoint", eventarc_trigger()),
    wire(
        RULE_ID,
        "fail",
        "eventarc trigger to an http endpoint",
        eventarc_trigger(destination={"httpEndpoint": {"uri": "http://10.0.0.5/push"}}),
        message=("trigger's HTTP endpoint uses http://",),
    ),
    wire(
        RULE_ID,
        "fail",
        "http:// and an unknown sentinel: the scheme is known",
        subscription(pushConfig=push_config(f"http://{UNKNOWN}/push")),
        message=("uses http://", "scheme is known at preview"),
    ),
    wire(
        RULE_ID,
        "fail",
        "http:// and a fragment of the sentinel: the scheme is known",
        subscription(pushConfig=push_config(f"http://{UNKNOWN[:12]}/push")),
        message=("uses http://", "scheme is known at preview"),
    ),
    wire(
        RULE_ID,
        "fail",
        "eventarc trigger to http:// and an unknown sentinel",
        eventarc_trigger(destination={"httpEndpoint": {"uri": f"http://{UNKNOWN}/push"}}),
        message=("trigger's HTTP endpoint uses http://", "scheme is known at preview"),
    ),
]
