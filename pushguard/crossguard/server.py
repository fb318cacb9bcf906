"""Serving the pushguard policy pack over Pulumi's Analyzer gRPC protocol.

:func:`serve` does what ``pulumi_policy.PolicyPack(...)`` does (start a gRPC server on a free
loopback port, print the port as the first line of stdout, serve until killed) with pulumi-policy's
own Analyzer servicer, extended in two ways:

- each request runs in its own :class:`~pushguard.crossguard.scope.RequestScope`: the secret
  strings of the request (taken before pulumi-policy unwraps their envelopes; for
  ``AnalyzeStack``, whose outputs the engine makes secret a whole property at a time, without
  what each resource's ``Analyze`` inputs hold plain at the same place) for
  :func:`pushguard.crossguard.secrets.scrub`, so no policy message repeats them, and, for
  ``AnalyzeStack``, the shared stack analysis and what the policies could not decide (answered
  as ``not_applicable`` entries, :mod:`pushguard.crossguard.not_checked`);
- a request pulumi-policy itself cannot decode (an unrecognised signature in the properties, for
  example) gets a diagnostic per enabled policy instead of a failed gRPC call;
- each policy checks a subscription twice, from its inputs (``Analyze``) and from the stack's
  outputs and graph (``AnalyzeStack``); a stack diagnostic that repeats a resource diagnostic
  (same policy, URN and finding ID, or message for a diagnostic without an ID) is dropped, so a
  finding is shown once and one only the outputs show (a project the provider filled in, a
  drifted endpoint) is still shown;
- a resource the pack cannot judge ("cannot be checked": a subscription type pushguard does not
  map, a resource of an unmapped type shaped like a push configuration,
  :mod:`pushguard.crossguard.routes.shaped`) is a violation of every enabled policy at the
  mandatory level, whatever the level configured for the policy (:func:`_raise_unjudged`).
  pulumi-policy never runs a disabled policy, so a disabled policy reports nothing; the
  resource still fails the run through every policy left enabled (and ``pushguard preview`` and
  ``analyze`` fail it, exit 2, whatever the levels). Only a pack whose every policy is disabled,
  which enforces nothing, lets it through.

pulumi-policy's servicer class is internal (``_PolicyAnalyzerServicer``); the supported range in
``pyproject.toml`` is pinned and the protocol tests start this server exactly as the Pulumi CLI
starts a Python pack (``python -m pulumi.policy ENGINE PACK_DIR``). With pushguard's own policies,
``AnalyzeStack`` runs a copy of pulumi-policy's loop that deserialises each resource once for all
policies instead of once per policy (:mod:`pushguard.crossguard.stack_call`; tests/crossguard/
test_stack_call.py pins the loop copied and compares the answers of both).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent import futures
from types import MappingProxyType
from typing import Any

import grpc
from google.protobuf import json_format
from pulumi.runtime import proto
from pulumi.runtime.proto import analyzer_pb2_grpc
from pulumi_policy import EnforcementLevel, Policy
from pulumi_policy.policy import _GRPC_CHANNEL_OPTIONS, _PolicyAnalyzerServicer

from pushguard import __version__
from pushguard._about import project_url
from pushguard.crossguard.finding_note import decode
from pushguard.crossguard.not_checked import encode
from pushguard.crossguard.policies import (
    ProjectNumbersPolicy,
    PushguardPolicy,
    build_policies,
)
from pushguard.crossguard.routes import (
    MAPPED_SUBSCRIPTION_TYPES,
    TRIGGER_TYPES,
    UNCHECKABLE_TYPES,
)
from pushguard.crossguard.routes.shaped import mentions_push
from pushguard.crossguard.scope import RequestScope, StackNotes, Unverified, request_scope
from pushguard.crossguard.stack_call import analyze_stack
from pushguard.crossguard.wire import SECRET_SIG, record_secrets, secret_strings
from pushguard.policy.config_file import (
    ALL,
    PROJECT_NUMBERS,
    all_settings_problem,
    every_project_number,
    project_number_problems,
    with_project_numbers,
)
from pushguard.rules.docs import rules_markdown

PACK_NAME = "pushguard"
PACK_DESCRIPTION = (
    "Safe Google Cloud Pub/Sub push subscriptions: HTTPS endpoints, same-project push-auth "
    "service accounts, VPC Service Controls default URLs, IAM for push and dead-lettering. "
    "Checks subscriptions made with pulumi-gcp, Google Cloud Native, Config Connector and "
    "Crossplane (pulumi-kubernetes), the bridged Terraform google/google-beta providers and "
    "Deployment Manager deployments."
)
PACK_VERSION = __version__
"""Reported in messages; ``PulumiPolicy.yaml`` carries the same version (a test checks)."""


class _GuardedServicer(_PolicyAnalyzerServicer):
    def __init__(self, policies: list[Policy]) -> None:
        super().__init__(
            name=PACK_NAME,
            version=PACK_VERSION,
            policies=policies,
            enforcement_level=EnforcementLevel.ADVISORY,
            initial_config=None,
            description=PACK_DESCRIPTION,
            display_name="pushguard",
            readme=rules_markdown(),
            provider="gcp",
            tags=["gcp", "pubsub"],
            repository=project_url("Repository"),
        )
        self._policies = policies
        self._declared: dict[str, Any] = {}
        """URN -> the inputs (a ``Struct``) of each resource ``Analyze`` looked at since
        ``Configure`` or the last ``AnalyzeStack``: what the program declared plain, which
        ``AnalyzeStack``'s outputs may hold inside a whole-property secret
        (:func:`~pushguard.crossguard.wire.record_secrets`)."""
        self._reported: set[tuple[str, str, str]] = set()
        """:func:`_once_key` of the ``Analyze`` diagnostics since ``Configure`` or the last
        ``AnalyzeStack``, so ``AnalyzeStack`` does not repeat them (the engine sends it once,
        after every ``Analyze`` of the stack)."""
        own = all(isinstance(p, PushguardPolicy | ProjectNumbersPolicy) for p in policies)
        # The resource types the resource halves check, when every policy is pushguard's own.
        self._resource_types: frozenset[str] | None = (
            MAPPED_SUBSCRIPTION_TYPES | UNCHECKABLE_TYPES | TRIGGER_TYPES if own else None
        )
        self._own = own
        """Every policy is pushguard's own: ``AnalyzeStack`` deserialises each resource once
        for all of them (:mod:`pushguard.crossguard.stack_call`)."""
        self._stack_tags: Mapping[str, str] = MappingProxyType({})

    def Configure(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        """Refuse settings under ``all`` (the Pulumi CLI passes them on but no policy would read
        them; see :mod:`pushguard.policy.config_file`), then configure as pulumi-policy does."""
        everything = request.policyConfig.get(ALL)
        if everything is not None and everything.properties.fields:
            problem = all_settings_problem(everything.properties.fields.keys())
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"pushguard policy config: {problem}")
        defaults = {
            p.name: self._map_enforcement_level(p.enforcement_level or EnforcementLevel.ADVISORY)
            for p in self._policies
        }
        problem = _lay_project_numbers(request, defaults)
        if problem:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"pushguard policy config: {problem}")
        self._reported.clear()  # a new run
        self._declared.clear()
        return super().Configure(request, context)  # type: ignore[no-untyped-call]

    def ConfigureStack(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        """Keep the stack's tags for :meth:`_stack_call`, then configure as pulumi-policy does."""
        self._stack_tags = MappingProxyType(dict(request.tags))
        return super().ConfigureStack(request, context)

    def Analyze(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        if (
            self._resource_types is not None
            and request.type not in self._resource_types
            and not _maybe_push_shaped(request)
        ):
            # No policy's resource half looks at this resource: answer without pulumi-policy
            # deserialising the properties once per policy (most of a stack is such resources).
            return proto.AnalyzeResponse()
        self._declared[request.urn] = request.properties
        response, scope = self._guarded(
            super().Analyze, request, context, _secrets([request.properties]), urn=request.urn
        )
        _lower_excepted(response, scope)
        _raise_unjudged(response, scope)
        self._reported.update(
            _once_key(d.policyName, d.urn or request.urn, d.message) for d in response.diagnostics
        )
        return response

    def AnalyzeStack(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        declared, self._declared = self._declared, {}
        secrets = _secrets(
            [r.properties for r in request.resources],
            [declared.get(r.urn) for r in request.resources],
        )
        response, scope = self._guarded(self._stack_call, request, context, secrets, stack=True)
        notes = scope.notes or StackNotes()
        for entry in sorted(set(notes.not_checked), key=lambda n: (n.policy, n.urn, n.reason)):
            policy, reason = encode(entry)
            response.not_applicable.append(
                proto.PolicyNotApplicable(policy_name=policy, reason=reason)
            )
        _place_unverified(response, notes.unverified)
        _lower_excepted(response, scope)
        _raise_unjudged(response, scope)
        new = [
            d
            for d in response.diagnostics
            if _once_key(d.policyName, d.urn, d.message) not in self._reported
        ]
        del response.diagnostics[:]
        response.diagnostics.extend(new)
        self._reported.clear()  # the stack is done; the next Analyze calls are another stack's
        return response

    def _stack_call(self, request: Any, context: Any) -> Any:
        """pulumi-policy's ``AnalyzeStack``: with pushguard's own policies only, the same loop
        with each resource deserialised once (:func:`~pushguard.crossguard.stack_call.
        analyze_stack`), else pulumi-policy's own."""
        if not self._own:
            return super().AnalyzeStack(request, context)  # type: ignore[no-untyped-call]
        pack = (PACK_NAME, PACK_VERSION)
        return analyze_stack(self, request, self._policies, self._stack_tags, pack)

    def _guarded(
        self,
        call: Callable[[Any, Any], Any],
        request: Any,
        context: Any,
        secrets: set[str],
        *,
        urn: str = "",
        stack: bool = False,
    ) -> tuple[Any, RequestScope]:
        """``call(request, context)`` in a new :class:`RequestScope` holding ``secrets`` (the
        request's, :func:`_secrets`); a request it cannot decode gets :meth:`_undecodable`
        diagnostics on ``urn`` instead of a failed gRPC call. Returns the response and the
        scope (its notes, for ``AnalyzeStack``)."""
        with request_scope(secrets, stack=stack) as scope:
            try:
                return call(request, context), scope
            except RecursionError:
                # A value nested deeper than Python decodes is no finding of a push rule: the
                # request is refused, naming why (the caller names the stack or resource).
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, TOO_DEEP)
                raise  # not reached: abort raises
            except Exception as error:
                return self._undecodable(error, urn), scope

    def _undecodable(self, error: Exception, urn: str) -> Any:
        response = proto.AnalyzeResponse()
        for policy in self._policies:
            level = self._get_enforcement_level(policy)
            if level == EnforcementLevel.DISABLED or isinstance(policy, ProjectNumbersPolicy):
                continue
            response.diagnostics.append(
                proto.AnalyzeDiagnostic(
                    policyName=policy.name,
                    policyPackName=PACK_NAME,
                    policyPackVersion=PACK_VERSION,
                    message=(
                        f"{policy.description}\npushguard could not decode the resource "
                        f"properties ({type(error).__name__}), so {policy.name} could not run."
                    ),
                    urn=urn,
                    description=policy.description,
                    enforcementLevel=self._map_enforcement_level(level),
                )
            )
        return response


def _lay_project_numbers(request: Any, defaults: dict[str, Any]) -> str:
    """Lay the top-level ``projectNumbers`` entry of a ``Configure`` request under each policy's
    own ``projectNumbers`` (:func:`~pushguard.policy.config_file.with_project_numbers`), in
    place; a policy the request leaves out gets an entry at its default level (``defaults``:
    policy name -> proto level), as the CLI would have sent. Returns what is wrong (a malformed
    map, two numbers for one project), or ``""``."""
    entry = request.policyConfig.get(PROJECT_NUMBERS)
    top = json_format.MessageToDict(entry.properties) if entry is not None else {}
    problems = project_number_problems(top)
    if problems:
        return f"{PROJECT_NUMBERS}: " + "; ".join(problems)
    given = {n: json_format.MessageToDict(c.properties) for n, c in request.policyConfig.items()}
    try:
        numbers = every_project_number(top, given)
    except ValueError as error:
        return str(error)
    if not numbers:
        return ""
    for name, level in sorted(defaults.items()):
        if name == PROJECT_NUMBERS:
            continue
        if name not in request.policyConfig:
            request.policyConfig[name].enforcementLevel = level
        config = request.policyConfig[name]
        merged = with_project_numbers(json_format.MessageToDict(config.properties), numbers)
        config.properties.Clear()
        config.properties.update(merged)
    return ""


def _secrets(structs: list[Any], declared: list[Any] | None = None) -> set[str]:
    """The secret strings of a request's property ``Struct`` values, taken before pulumi-policy
    unwraps their envelopes. With ``declared`` (per struct, the resource's inputs as its
    ``Analyze`` got them, or ``None``), a string inside a secret output that the inputs hold,
    plain, at the same place is not one (:func:`~pushguard.crossguard.wire.record_secrets`: the
    engine makes a whole output property secret when a part of its input was). A value that
    cannot be decoded gives none (the request then gets its own diagnostics)."""
    found: set[str] = set()
    try:
        for index, struct in enumerate(structs):
            twin = declared[index] if declared is not None else None
            if not _enveloped(struct) and (twin is None or not _enveloped(twin)):
                continue  # no secret envelope: nothing to convert and walk
            values = json_format.MessageToDict(struct)
            if twin is None:
                found.update(secret_strings(values))
            else:
                found.update(record_secrets(json_format.MessageToDict(twin), values))
    except Exception:
        return set()
    return found


_SECRET_SIG_BYTES = SECRET_SIG.encode()


def _enveloped(struct: Any) -> bool:
    """Whether a property ``Struct`` may hold a secret envelope: its serialized bytes hold the
    envelope's signature (a string field is serialized as its UTF-8 bytes), a necessary
    condition read at C speed."""
    return _SECRET_SIG_BYTES in struct.SerializeToString()


def _once_key(policy: str, urn: str, message: str) -> tuple[str, str, str]:
    """What makes two diagnostics one finding: policy, URN and the finding's ID
    (:mod:`pushguard.crossguard.finding_note`), or the message for one without an ID. Not the
    message alone: the two halves see a value through different envelopes (``AnalyzeStack``
    gets outputs, where the engine makes a whole property secret), so one finding's message may
    hide a secret in one half and not need to in the other."""
    return policy, urn, decode(message).finding_id or message


THREAD_STACK_BYTES = 256 * 1024 * 1024
"""The stack of the server's threads: 256 MiB of address space (only what is used is memory).
protobuf's decoder (upb) recurses once per nested message and refuses more than 65,535 levels
(``kUpb_WireFormat_DefaultDepthLimit`` raised to ``UINT16_MAX`` by the Python binding) with a
``DecodeError``; on a default 8 MiB thread stack a ``Struct`` a few thousand levels deep overflows
the stack first and the process dies (SIGSEGV) before any pushguard code runs. With this stack
the decoder's own limit is reached first, and gRPC answers the call with an error."""
RECURSION_LIMIT = 20_000
"""Python's recursion limit in the pack: property values nested a few hundred levels deep
(pulumi-policy and protobuf's ``MessageToDict`` recurse a few frames per level) are decoded;
deeper ones raise ``RecursionError``, answered as :data:`TOO_DEEP`."""
TOO_DEEP = (
    "pushguard policy pack: a property value is nested too deeply to decode; the request was "
    "not analysed"
)


def _lower_excepted(response: Any, scope: RequestScope) -> None:
    """Lower to advisory each diagnostic a policy reported under an active exception
    (:mod:`pushguard.policy.exceptions`): the Pulumi CLI then shows it as a warning, with the
    exception's reason and expiry in its message, and does not fail on it."""
    _set_level(response, scope.excepted, "ADVISORY")


def _maybe_push_shaped(request: Any) -> bool:
    """Whether an ``Analyze`` request of a type no resource half checks may be shaped like a
    push configuration (:func:`~pushguard.crossguard.routes.shaped.push_shaped`, which the
    policies run): a resource with a provider (a component has none) whose serialized properties
    :func:`~pushguard.crossguard.routes.shaped.mentions_push` (about 10 µs; converting them to
    search them would take a millisecond per resource)."""
    return request.HasField("provider") and mentions_push(request.properties.SerializeToString())


def _raise_unjudged(response: Any, scope: RequestScope) -> None:
    """Raise to mandatory each diagnostic a policy reported as "cannot be checked" (a resource
    the pack cannot judge): whatever a policy's configured level, the Pulumi CLI fails on it, as
    ``pushguard preview`` and ``analyze`` do (exit 2)."""
    _set_level(response, scope.mandatory, "MANDATORY")


def _set_level(response: Any, marked: set[tuple[str, str]] | None, level: str) -> None:
    """Set ``level`` on each diagnostic whose ``(policy, message)`` is in ``marked``.
    pulumi-policy writes a violation's message as ``DESCRIPTION\nMESSAGE``
    (``report_violation``): the message is compared without the description."""
    if not marked:
        return
    value = proto.EnforcementLevel.Value(level)
    for diagnostic in response.diagnostics:
        if (diagnostic.policyName, diagnostic.message.split("\n", 1)[-1]) in marked:
            diagnostic.enforcementLevel = value


UNVERIFIED_MARK = "during preview:"
"""pulumi-policy's wording of a policy that raised ``UnknownValueError``: one diagnostic for the
whole stack, ``can't run policy 'P' from policy pack 'PACK@vV' during preview: MESSAGE``
(``pulumi_policy/policy.py``, ``AnalyzeStack``; pinned by tests/crossguard/test_private_api.py).
The one place pushguard reads pulumi-policy's text."""


def _place_unverified(response: Any, unverified: list[Unverified]) -> None:
    """pulumi-policy answers a policy that cannot decide at preview with one advisory
    diagnostic for the whole stack (no URN). Replace it with one per subscription, on that
    subscription's URN, so the CLI and the preview show it where the subscription is declared.
    The head (``can't run policy ... during preview:``) is kept as pulumi-policy wrote it."""
    by_policy: dict[str, list[Unverified]] = {}
    for entry in unverified:
        by_policy.setdefault(entry.policy, []).append(entry)
    kept, placed = [], []
    for diagnostic in response.diagnostics:
        entries = by_policy.get(diagnostic.policyName)
        head, mark, _ = diagnostic.message.partition(UNVERIFIED_MARK)
        if diagnostic.urn or not entries or not mark:
            kept.append(diagnostic)
            continue
        for entry in entries:
            one = proto.AnalyzeDiagnostic()
            one.CopyFrom(diagnostic)
            one.urn, one.message = entry.urn, f"{head}{mark} {entry.message}"
            placed.append(one)
    del response.diagnostics[:]
    response.diagnostics.extend([*kept, *placed])


def serve(policies: list[Policy] | None = None) -> None:
    """Serve the pack on a free loopback port until interrupted.

    The port is written to stdout as the first and only line, as the Pulumi CLI expects
    (``policies`` default: :func:`~pushguard.crossguard.policies.build_policies`).
    """
    servicer = _GuardedServicer(policies if policies is not None else build_policies())
    threading.stack_size(THREAD_STACK_BYTES)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    _stop_with_parent()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=_GRPC_CHANNEL_OPTIONS)
    analyzer_pb2_grpc.add_AnalyzerServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    sys.stdout.buffer.write(f"{port}\n".encode())
    sys.stdout.flush()
    try:
        server.wait_for_termination()
    except KeyboardInterrupt:
        server.stop(0)


PARENT_PIPE_ENV = "PUSHGUARD_PARENT_PIPE_FD"
"""Set by pushguard's own client (:class:`pushguard.gate.analyzer.PolicyPackProcess`) to the
file descriptor of a pipe whose other end only the client holds. When the client dies, however
it dies (SIGKILL included), the pipe reads end-of-file and the pack exits, so it never outlives
a killed ``pushguard preview`` or ``analyze``. The Pulumi CLI does not set it; then nothing is
watched."""


def _stop_with_parent() -> None:
    """Watch :data:`PARENT_PIPE_ENV`'s pipe on a daemon thread and exit the process at its
    end-of-file."""
    value = os.environ.get(PARENT_PIPE_ENV, "")
    if not value.isdigit():
        return
    fd = int(value)

    def watch() -> None:
        try:
            while os.read(fd, 1024):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=watch, name="pushguard-parent-watch", daemon=True).start()
