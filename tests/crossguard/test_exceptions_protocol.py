"""Issue 22: finding IDs and exceptions in the pack itself, over the Analyzer gRPC protocol, as
the Pulumi CLI sees them (`pulumi preview --policy-pack`): an active exception lowers the
diagnostic to advisory and says why until when; an expired one counts again and says so; a
malformed or too distant one is refused by the pack's schema and by the pack."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pushguard.crossguard.finding_note import decode
from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from pushguard.policy.config_file import PolicyConfigError
from pushguard.policy.exceptions import utc_today
from tests.crossguard.wire import PROJECT, push_config, subscription, urn

HTTPS_RULE = "push-endpoint-https"


def _http(name: str) -> AnalyzerResource:
    return subscription(name, pushConfig=push_config(f"http://{name}.example.com/"))


def _everything(pack: PolicyPackProcess, resources: list[AnalyzerResource]) -> list:
    found = []
    for r in resources:
        found += [(r.urn, d) for d in pack.analyze(r)]
    return found + [(d.urn, d) for d in pack.analyze_stack(resources)]


def _days(n: int) -> str:
    return (utc_today() + timedelta(days=n)).isoformat()


def _exceptions(*items: dict[str, str]) -> dict[str, object]:
    return {HTTPS_RULE: {"exceptions": list(items)}}


def test_active_expired_and_unexcepted_findings_over_the_protocol(
    pack: PolicyPackProcess,
) -> None:
    legacy, old, other = _http("legacy"), _http("old"), _http("other")
    pack.configure(
        _exceptions(
            {"resource": legacy.urn, "reason": "partner moves to HTTPS", "expires": _days(30)},
            # by subscription path: the project comes from the provider, the name from `name`
            {
                "resource": f"projects/{PROJECT}/subscriptions/old",
                "reason": "was accepted",
                "expires": _days(-1),
            },
        )
    )
    found = [(u, d) for u, d in _everything(pack, [legacy, old, other]) if d.policy == HTTPS_RULE]
    by_urn = {u: d for u, d in found}
    assert set(by_urn) == {legacy.urn, old.urn, other.urn}, found
    active, expired, plain = (decode(by_urn[u].message) for u in (legacy.urn, old.urn, other.urn))
    # excepted: the CLI sees an advisory diagnostic that says why and until when
    assert by_urn[legacy.urn].level == "advisory"
    assert active.excepted is not None and active.excepted.active
    assert active.excepted.reason == "partner moves to HTTPS"
    assert f"excepted until {_days(30)}: partner moves to HTTPS]" in by_urn[legacy.urn].message
    # expired yesterday: mandatory again, and the message says the exception expired
    assert by_urn[old.urn].level == "mandatory"
    assert expired.excepted is not None and not expired.excepted.active
    assert f"exception expired {_days(-1)}: was accepted]" in by_urn[old.urn].message
    assert by_urn[other.urn].level == "mandatory" and plain.excepted is None
    # every finding has a distinct stable ID
    ids = {n.finding_id for n in (active, expired, plain)}
    assert len(ids) == 3 and all(i.startswith("pg1-") for i in ids)


def test_finding_id_is_stable_across_runs_and_independent_of_the_name_in_the_message(
    pack: PolicyPackProcess,
) -> None:
    pack.configure({})
    first = decode(pack.analyze(_http("orders"))[0].message).finding_id
    again = decode(pack.analyze(_http("orders"))[0].message).finding_id
    assert first == again
    # another endpoint host is another cause; another resource another asset
    other_host = subscription("orders", pushConfig=push_config("http://elsewhere.example.com/"))
    assert decode(pack.analyze(other_host)[0].message).finding_id != first
    assert decode(pack.analyze(_http("billing"))[0].message).finding_id != first


def test_an_exception_for_another_policy_or_resource_changes_nothing(
    pack: PolicyPackProcess,
) -> None:
    sub = _http("orders")
    pack.configure(
        {
            "push-auth-oidc": {
                "exceptions": [{"resource": sub.urn, "reason": "r", "expires": _days(5)}]
            },
            HTTPS_RULE: {
                "exceptions": [
                    {
                        "resource": urn("gcp:pubsub/subscription:Subscription", "orders-2"),
                        "reason": "r",
                        "expires": _days(5),
                    }
                ]
            },
        }
    )
    [found] = [d for d in pack.analyze(sub) if d.policy == HTTPS_RULE]
    assert found.level == "mandatory" and decode(found.message).excepted is None


def test_a_forged_exception_note_in_a_resource_name_is_not_an_exception(
    pack: PolicyPackProcess,
) -> None:
    forged = f"x [finding pg1-{'0' * 24}; excepted until {_days(3)}: forged]"
    sub = subscription(forged, pushConfig=push_config("http://events.example.com/"))
    pack.configure({})
    [found] = [d for d in pack.analyze(sub) if d.policy == HTTPS_RULE]
    assert found.level == "mandatory"
    note = decode(found.message)
    assert note.excepted is None and note.finding_id != f"pg1-{'0' * 24}"


@pytest.mark.parametrize(
    ("exception", "expected"),
    [
        ({"resource": "projects/p/subscriptions/s", "expires": "2026-01-01"}, "reason"),
        ({"resource": "projects/p/subscriptions/s", "reason": "r"}, "expires"),
        ({"reason": "r", "expires": "2026-01-01"}, "resource"),
        ({"resource": "r", "reason": "r", "expires": "01/02/2026"}, "does not match"),
        ({"resource": "r", "reason": "r", "expires": "2026-01-01", "until": "x"}, "until"),
    ],
)
def test_malformed_exceptions_are_refused_by_the_packs_schema(
    pack: PolicyPackProcess, exception: dict[str, str], expected: str
) -> None:
    with pytest.raises(PolicyConfigError) as caught:
        pack.configure(_exceptions(exception))
    assert f"{HTTPS_RULE}: exceptions.0" in str(caught.value) or expected in str(caught.value)
    assert expected in str(caught.value)


ORDERS_PATH = f"projects/{PROJECT}/subscriptions/orders"


@pytest.mark.parametrize(
    ("settings", "field", "allowed"),
    [
        (
            {"exceptions": [{"resource": ORDERS_PATH, "reason": "r", "expires": "2099-01-01"}]},
            "exceptions",
            "more than 365 days ahead",
        ),
        (
            {"exceptions": [{"resource": ORDERS_PATH, "reason": "r", "expires": "2026-02-30"}]},
            "exceptions.0.expires",
            "not a calendar date",
        ),
        (
            {
                "exceptions": [
                    {"resource": ORDERS_PATH, "reason": "see [x]", "expires": "2026-02-03"}
                ]
            },
            "exceptions.0.reason",
            "without [ or ]",
        ),
        ({"exceptionMaxDays": 0}, "exceptionMaxDays", "greater than or equal to 1"),
        # issue 35: a resource that can match nothing, and two exceptions for one resource
        (
            {
                "exceptions": [
                    {
                        "resource": f"projects/{PROJECT}/subscription/orders",
                        "reason": "typo",
                        "expires": _days(5),
                    }
                ]
            },
            "exceptions.0.resource",
            "is not a resource an exception can name",
        ),
        (
            {"exceptions": [{"resource": "*", "reason": "everything", "expires": _days(5)}]},
            "exceptions.0.resource",
            "wildcards are not supported",
        ),
        (
            {
                "exceptions": [
                    {"resource": ORDERS_PATH, "reason": "first", "expires": _days(5)},
                    {
                        "resource": f"//pubsub.googleapis.com/{ORDERS_PATH}",
                        "reason": "second",
                        "expires": _days(9),
                    },
                ]
            },
            "exceptions",
            "item 1: names " + ORDERS_PATH + ", as item 0 does",
        ),
    ],
)
def test_the_pack_itself_refuses_what_the_schema_cannot_say(
    pack: PolicyPackProcess, settings: dict[str, object], field: str, allowed: str
) -> None:
    pack.configure({HTTPS_RULE: settings}, validate=False)
    [found] = [d for d in pack.analyze(_http("orders")) if d.policy == HTTPS_RULE]
    assert found.level == "mandatory"
    assert f"invalid configuration for policy {HTTPS_RULE}: {field}:" in found.message
    assert allowed in found.message


def test_an_exception_by_the_cai_full_name_holds_in_the_pack(pack: PolicyPackProcess) -> None:
    """Issue 35: the CAI full name, the audit's asset_name, names the subscription everywhere."""
    sub = _http("orders")
    pack.configure(
        _exceptions(
            {
                "resource": f"//pubsub.googleapis.com/{ORDERS_PATH}",
                "reason": "vendor endpoint",
                "expires": _days(5),
            }
        )
    )
    [found] = [d for d in pack.analyze(sub) if d.policy == HTTPS_RULE]
    assert found.level == "advisory"
    assert f"excepted until {_days(5)}: vendor endpoint]" in found.message


def test_the_config_can_raise_the_expiry_limit(pack: PolicyPackProcess) -> None:
    sub = _http("orders")
    far = _days(700)
    pack.configure(
        {
            HTTPS_RULE: {
                "exceptionMaxDays": 730,
                "exceptions": [{"resource": sub.urn, "reason": "long contract", "expires": far}],
            }
        }
    )
    [found] = [d for d in pack.analyze(sub) if d.policy == HTTPS_RULE]
    assert found.level == "advisory" and f"excepted until {far}" in found.message
