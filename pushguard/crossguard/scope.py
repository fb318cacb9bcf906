"""What one Analyzer request shares with the policies it runs: the request scope.

pulumi-policy calls each policy's ``validate`` with the request's resources only, so whatever
else a pushguard policy needs from its request travels in one :class:`RequestScope`, set by the
server (:mod:`pushguard.crossguard.server`) around each ``Analyze`` and ``AnalyzeStack`` call
(a ``ContextVar``, so concurrent requests on the server's threads never see each other's):

- ``secrets``: the secret strings of the request, taken before pulumi-policy unwraps their
  envelopes, which :func:`pushguard.crossguard.secrets.scrub` removes from every message;
- ``stack_cache`` (``AnalyzeStack`` only): the stack analysis (graph and every subscription's
  facts) per settings, shared by the policies instead of each building its own;
- ``notes`` (``AnalyzeStack`` only): what the policies could not decide, which the server answers
  precisely (:class:`StackNotes`);
- ``excepted``: ``(policy, message)`` of each violation reported under an active exception
  (:mod:`pushguard.policy.exceptions`), whose diagnostic the server lowers to advisory;
- ``mandatory``: ``(policy, message)`` of each "cannot be checked" report (a resource the pack
  cannot judge, :mod:`pushguard.crossguard.routes.shaped`), whose diagnostic the server raises to
  mandatory whatever the policy's level.

Outside a request (a policy called by a team's own pack, or a test), :func:`current_scope` is an
empty scope: no secrets known, nothing cached, nothing collected.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pushguard.crossguard.not_checked import NotChecked


@dataclass(frozen=True)
class Unverified:
    """A subscription ``urn`` that ``policy`` could not verify at preview (a value it needs is
    known only after deployment); ``message`` says which and why."""

    policy: str
    urn: str
    message: str


@dataclass
class StackNotes:
    """What the policies of one ``AnalyzeStack`` request could not decide: ``not_checked`` for
    want of configuration (answered as ``not_applicable`` entries), ``unverified`` for want of
    values at preview (answered as one diagnostic per subscription)."""

    not_checked: list[NotChecked] = field(default_factory=list)
    unverified: list[Unverified] = field(default_factory=list)


@dataclass(frozen=True)
class RequestScope:
    """The state of one Analyzer request (see the module docstring)."""

    secrets: frozenset[str] = frozenset()
    stack_cache: dict[str, Any] | None = None
    notes: StackNotes | None = None
    memo: dict[str, Any] = field(default_factory=dict, compare=False)
    """What is built once per request from the above (the secrets' scrubber)."""
    excepted: set[tuple[str, str]] | None = None
    mandatory: set[tuple[str, str]] | None = None


_EMPTY = RequestScope()
_SCOPE: ContextVar[RequestScope] = ContextVar("pushguard_request_scope", default=_EMPTY)


def current_scope() -> RequestScope:
    """The scope of the request being served (an empty one outside a request)."""
    return _SCOPE.get()


@contextmanager
def request_scope(secrets: Iterable[str] = (), *, stack: bool = False) -> Iterator[RequestScope]:
    """Within the block, :func:`current_scope` is a new scope with ``secrets``; with ``stack``
    (an ``AnalyzeStack`` request) it also has an empty stack cache and :class:`StackNotes`."""
    scope = RequestScope(
        secrets=frozenset(secrets),
        stack_cache={} if stack else None,
        notes=StackNotes() if stack else None,
        excepted=set(),
        mandatory=set(),
    )
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)
