"""Property-based tests of what a string not wholly known says (issue 37).

The claims: a cut of an unknown sentinel of 8 characters or more is found wherever it stands, in
any case, and what comes before it is what is known; and what ``push-endpoint-https`` decides from
the known start of an endpoint holds for every value the endpoint may turn out to be.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pushguard.components.spec import holds_unknown as component_holds_unknown
from pushguard.crossguard.wire import UNKNOWN_PARTS, UNKNOWN_SENTINELS, holds_unknown
from pushguard.rules import RULES_BY_ID, Status, SubscriptionFacts
from pushguard.rules.endpoint import EndpointError, parse_endpoint, prefix_scheme
from pushguard.rules.unknown_text import FRAGMENT_LENGTH
from tests.helpers import UNKNOWN

RULE = RULES_BY_ID["push-endpoint-https"]
SENTINELS = sorted(UNKNOWN_SENTINELS)
TOKENS = [
    "https://", "http://", "HTTPS://", "hTTp:", "https", "http", "h", "ht", "s", "ftp", "ftp://",
    "rpc://", ":", "/", "//", "\\", " ", "@", "?", "#", "x", "1", "+", ".", "-", "é", "ｈ",
    "events.example.com", "partner.example", "/push", ":8443", "%2e", "\t",
]  # fmt: skip
EXEMPT = ["rpc://", "http://partner.example/hooks", "ftp://", "hooks", "https://partner.example"]

known_text = st.lists(st.sampled_from(TOKENS), max_size=6).map("".join)


@st.composite
def cuts(draw: st.DrawFn) -> str:
    """A part of a sentinel at least :data:`FRAGMENT_LENGTH` characters long, in either case."""
    sentinel = draw(st.sampled_from(SENTINELS))
    start = draw(st.integers(0, len(sentinel) - FRAGMENT_LENGTH))
    end = draw(st.integers(start + FRAGMENT_LENGTH, len(sentinel)))
    cut = sentinel[start:end]
    return cut.upper() if draw(st.booleans()) else cut


@settings(max_examples=500)
@given(known_text, cuts(), st.text(max_size=20))
@example("https://", UNKNOWN[:12], "/push")
@example("http://", UNKNOWN.split("-")[0], "")
@example("", UNKNOWN, "")
def test_a_cut_sentinel_is_unknown_wherever_it_stands(before: str, cut: str, after: str) -> None:
    text = before + cut + after
    assert holds_unknown(text)
    prefix = UNKNOWN_PARTS.known_prefix(text)
    assert prefix is not None and before.startswith(prefix), (text, prefix)
    if cut.lower() in UNKNOWN.lower():
        assert component_holds_unknown(text)


@settings(max_examples=300)
@given(known_text)
def test_known_text_holds_nothing_unknown(text: str) -> None:
    assert not holds_unknown(text)
    assert UNKNOWN_PARTS.known_prefix(text) is None


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(known_text, known_text, st.lists(st.sampled_from(EXEMPT), max_size=2).map(tuple))
@example("http://", "events.example.com/push", ())
@example("http", "s://events.example.com/push", ())
@example("http://", "partner.example/hooks/x", ("http://partner.example/hooks",))
def test_a_verdict_on_the_known_start_holds_for_every_endpoint_it_may_become(
    prefix: str, rest: str, exempt: tuple[str, ...]
) -> None:
    """A violation on an endpoint of which only ``prefix`` is known is a violation on
    ``prefix + rest``, whatever ``rest`` is; the scheme ``prefix`` decides is the scheme of
    ``prefix + rest``."""
    partly = SubscriptionFacts(
        resource="s",
        push_endpoint_prefix=prefix,
        unknown=frozenset({"push_endpoint"}),
        exempt_endpoint_prefixes=exempt,
    )
    whole = SubscriptionFacts(
        resource="s", push_endpoint=prefix + rest, exempt_endpoint_prefixes=exempt
    )
    [verdict] = RULE.check(partly)
    if verdict.status is Status.VIOLATION and prefix + rest:
        found = [r.status for r in RULE.check(whole)]
        assert Status.VIOLATION in found, (prefix, rest, exempt, verdict.message)
    decided = prefix_scheme(prefix)
    if decided is not None:
        try:
            scheme = parse_endpoint(prefix + rest).scheme
        except EndpointError:
            return
        assert scheme == decided, (prefix, rest)
