"""The one sentence of pulumi-policy's that the pack reads: a policy that raised
``UnknownValueError`` during ``AnalyzeStack`` is answered with one diagnostic for the whole stack,
``can't run policy ... during preview: MESSAGE``. The server puts it on each subscription's URN
(``pushguard.crossguard.server.UNVERIFIED_MARK``); a pulumi-policy release that words it
otherwise fails here."""

from __future__ import annotations

from typing import Any

from pulumi.runtime import proto
from pulumi_policy import EnforcementLevel, StackValidationPolicy
from pulumi_policy.policy import _PolicyAnalyzerServicer
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from pushguard.crossguard.server import UNVERIFIED_MARK


def _cannot_decide(args: Any, report_violation: Any) -> None:
    error = UnknownValueError(UNKNOWN_STRING_VALUE, [])
    error.message = "orders: the endpoint is not known yet"
    raise error


def test_pulumi_policy_words_an_undecided_stack_policy_as_the_server_reads_it() -> None:
    policy = StackValidationPolicy(name="p", description="d", validate=_cannot_decide)
    servicer = _PolicyAnalyzerServicer(
        name="pack",
        version="1.0.0",
        policies=[policy],
        enforcement_level=EnforcementLevel.ADVISORY,
        initial_config=None,
        description=None,
        display_name=None,
        readme=None,
        provider=None,
        tags=None,
        repository=None,
    )
    response = servicer.AnalyzeStack(proto.AnalyzeStackRequest(), None)
    [diagnostic] = response.diagnostics
    head, mark, message = diagnostic.message.partition(UNVERIFIED_MARK)
    assert mark and diagnostic.urn == ""
    assert head.startswith("can't run policy 'p'")
    assert message == " orders: the endpoint is not known yet"
