"""Issue 37 over the pack's Analyzer protocol, as the Pulumi CLI calls it at preview: a push
endpoint that holds Pulumi's unknown sentinel, whole or cut.

A program that builds an endpoint from known text and a plain value a preview does not know
(``"http://" + host + "/push"``) sends a string that holds the sentinel: its scheme is known and
judged. A program that cuts an unknown value (``s[:12]``) sends a part of the sentinel, which is
not a host the cloud will see: the rules that need the host do not pass on it.
"""

from __future__ import annotations

from pushguard.gate.analyzer import Diagnostic, PolicyPackProcess
from pushguard.rules import RULES
from tests.crossguard.wire import UNKNOWN, push_config, subscription
from tests.helpers import PROJECT

HTTPS = "push-endpoint-https"
VPCSC = "push-vpcsc-default-url"
PREVIEW = "can't run policy"


def _configure(pack: PolicyPackProcess, **settings: object) -> None:
    pack.configure({rule.id: dict(settings) for rule in RULES})


def _of(found: list[Diagnostic], policy: str) -> list[Diagnostic]:
    return [d for d in found if d.policy == policy]


def test_the_resource_half_refuses_http_before_an_unknown_host(pack: PolicyPackProcess) -> None:
    """``Analyze`` of the subscription alone, as at preview: ``http://`` + the sentinel is a
    mandatory violation that says the scheme is known, and never shows the sentinel."""
    _configure(pack)
    for endpoint in (f"http://{UNKNOWN}/push", f"HTTP://{UNKNOWN}{UNKNOWN}", f"ftp://{UNKNOWN}"):
        sub = subscription(pushConfig=push_config(endpoint))
        [found] = _of(pack.analyze(sub), HTTPS)
        assert found.level == "mandatory", found
        assert "scheme is known at preview" in found.message, found
        assert "://;" in found.message and UNKNOWN[:8] not in found.message, found


def test_the_stack_half_reports_the_known_scheme_once(pack: PolicyPackProcess) -> None:
    _configure(pack)
    sub = subscription(pushConfig=push_config(f"http://{UNKNOWN}/push"))
    found = _of(pack.analyze(sub) + pack.analyze_stack([sub]), HTTPS)
    assert [(d.level, "uses http://" in d.message) for d in found] == [("mandatory", True)], found


def test_https_before_a_cut_sentinel_is_undecided_not_passed(pack: PolicyPackProcess) -> None:
    """``https://04da6b54-80e.example.com/push`` holds a part of the sentinel where the host is:
    the scheme is right, the host is not known, so the rule neither passes nor fails it."""
    _configure(pack)
    sub = subscription(pushConfig=push_config(f"https://{UNKNOWN[:12]}.example.com/push"))
    assert _of(pack.analyze(sub), HTTPS) == []
    [found] = _of(pack.analyze_stack([sub]), HTTPS)
    assert (found.level, found.message.startswith(PREVIEW)) == ("advisory", True), found
    assert "push endpoint is not known yet" in found.message, found


def test_a_cut_sentinel_is_no_run_app_host_inside_a_perimeter(pack: PolicyPackProcess) -> None:
    """``"https://orders-" + host[:12] + ".a.run.app/push"`` reads as a Cloud Run default URL
    (``orders-04da6b54-80e``); the host is not known, so the perimeter rule does not pass it:
    undecided at preview, a violation with ``unknownAtPreview: enforce``."""
    sub = subscription(pushConfig=push_config(f"https://orders-{UNKNOWN[:12]}.a.run.app/push"))
    _configure(pack, perimeterProjects=[PROJECT])
    [found] = _of(pack.analyze(sub) + pack.analyze_stack([sub]), VPCSC)
    assert (found.level, found.message.startswith(PREVIEW)) == ("advisory", True), found
    assert "push endpoint is not known yet" in found.message, found
    assert UNKNOWN[:8] not in found.message, found

    _configure(pack, perimeterProjects=[PROJECT], unknownAtPreview="enforce")
    [enforced] = _of(pack.analyze(sub) + pack.analyze_stack([sub]), VPCSC)
    assert enforced.level == "mandatory" and "could not be verified" in enforced.message
