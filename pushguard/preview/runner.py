"""``pushguard preview``: a team's program under pushguard's engine (:mod:`pushguard.engine`),
then a policy pack over the Analyzer protocol, as ``pulumi preview --policy-pack`` runs them.

The steps, each a failure that ends the run with :class:`PreviewError` (exit code 2):
find the project and the stack's config; read the policy config; run the program in its own
runtime against the engine's ``ResourceMonitor`` at preview, with provider-faithful plans,
recording every registration; start the pack as the CLI does;
configure it (schema defaults, the pack's initial config, the file); ``Analyze`` every resource
with its checked inputs and ``AnalyzeStack`` once with every resource's planned outputs. A
resource declared with ``import`` is planned and judged as the engine will have it after the
import (:mod:`pushguard.preview.imports`).

This module only orchestrates them: stack choice is in :mod:`pushguard.preview.stacks`, the
streaming analysis in :mod:`pushguard.preview.streaming`; pack discovery, the pack session and the
result model are the gate's (:mod:`pushguard.gate`), shared with ``pushguard analyze``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from pushguard.components.push_subscription import TYPE_TOKEN
from pushguard.crossguard.routes import MAPPED_SUBSCRIPTION_TYPES
from pushguard.crossguard.routes.shaped import unjudged_error
from pushguard.engine.launcher import run_engine
from pushguard.gate.analyzer import Diagnostic, PackStartError, PolicyPackProcess
from pushguard.gate.pack import pack_python, resolve_pack_dir
from pushguard.gate.result import ResourceRecord, StackResult, Violation, sort_violations
from pushguard.gate.unknowns import UnknownOffline, sorted_unknowns
from pushguard.policy.config_file import PolicyConfig, PolicyConfigError, load_policy_config
from pushguard.preview.imports import as_imported, import_note, wholly_imported
from pushguard.preview.isolation import IsolatedRun, ProgramEndedError
from pushguard.preview.kubernetes_invokes import UNANSWERABLE
from pushguard.preview.limits import DEFAULT_TIMEOUT
from pushguard.preview.mocks import GOOGLE_PACKAGES, PLACEHOLDER_PROJECT_NUMBER
from pushguard.preview.offline import (
    call_unknowns,
    enforce_error,
    enforcing,
    environment_unknowns,
)
from pushguard.preview.origin import PreviewError, ProgramOrigin
from pushguard.preview.program import ProgramFailure
from pushguard.preview.remote import not_checked, not_expanded, not_expanded_error
from pushguard.preview.stacks import (
    LoadedStack,
    default_provider_config,
    project_numbers,
    read_stack,
    stack_notes,
)
from pushguard.preview.streaming import AnalyzerRequests, StreamingAnalysis
from pushguard.preview.values import GivenValues, ValuesError, load_values
from pushguard.rules.identity import finding_id

_RULE_TAG = re.compile(r"\s*\[(?P<rule>[a-z0-9-]+)\]$")


@dataclass(frozen=True)
class PreviewOptions:
    """``program_dir``: a folder at or under a Pulumi project (default: the current folder);
    ``stack``: default the only stack with a config file; ``policy_pack``: a pack folder
    (default pushguard's own); ``policy_config``: a policy config JSON file; ``timeout``:
    seconds the program may run; ``values``: the ``--values`` file (stack references' outputs,
    ESC environments' values: :mod:`pushguard.preview.values`)."""

    program_dir: Path | None = None
    stack: str | None = None
    policy_pack: Path | None = None
    policy_config: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    values: Path | None = None


def run_preview(options: PreviewOptions) -> StackResult:
    """Run the preview. Returns the result (its ``exit_code`` is 0 or 1).

    The program runs in its own process and runtime (:mod:`pushguard.engine`); the result lists
    resources by URN and violations by level, policy and URN, so the same input gives the same
    report.

    Raises:
        PreviewError: the project, stack config, policy config or pack cannot be used, or the
            program did not finish normally (it raised, called ``sys.exit``, exited or was
            killed); ``PreviewError.result`` then holds what was known (for the report).
    """
    started = time.perf_counter()
    given = _given(options.values)
    loaded = read_stack(options.program_dir, options.stack, given.environments)
    project, stack, config, secrets = loaded.project, loaded.stack, loaded.config, loaded.secrets
    origin = ProgramOrigin(project, stack)
    result = StackResult(origin, project.name, stack, [], [])
    try:
        file_config = load_policy_config(options.policy_config) if options.policy_config else {}
    except PolicyConfigError as error:
        raise PreviewError(str(error), result) from None
    pack_dir = resolve_pack_dir(options.policy_pack)
    python = pack_python(pack_dir)
    environ = loaded.environ()
    mocks = _mocks(config, file_config, environ)
    pack = PolicyPackProcess(pack_dir, python=python)
    pack.start()  # the pack imports while the program runs, as with the CLI
    try:
        source = str(options.policy_config or "")
        stream = StreamingAnalysis(
            pack, AnalyzerRequests(project, stack, config, environ), file_config, source
        )
        clock = time.perf_counter()
        try:
            run = run_engine(
                project,
                stack,
                config=config,
                secret_keys=secrets,
                mocks=mocks,
                on_record=lambda record: stream.submit(as_imported(record)),
                timeout=options.timeout,
                stack_references=given.stack_references,
                environ=environ,
            )
        except ProgramEndedError as ended:
            stream.stop()
            result.program_output = ended.output
            raise PreviewError(str(ended), result) from None
        timings = {"program": time.perf_counter() - clock}
        _fill(result, run)
        result.unknown_offline = _unknowns(loaded, run)
        result.notes += stack_notes(config, environ)
        result.notes += _unused(loaded, given)
        diagnostics = _finish(stream, run.failure, result, timings)
    finally:
        pack.close()
    assert stream.session is not None  # _finish raised otherwise
    found = stream.session.violations(diagnostics)
    result.violations = sort_violations([*result.violations, *found])
    timings["total"] = time.perf_counter() - started
    result.timings = timings
    _refuse_unseen(result, run, enforcing(stream.session.resolved))
    return result


def _refuse_unseen(result: StackResult, run: IsolatedRun, enforced: list[str]) -> None:
    """End the run with :class:`PreviewError` (exit 2) where part of the stack was not seen:
    an unexpanded remote component, a provider function that creates resources, a push config
    the pack cannot read, a wholly imported subscription, and, under ``unknownAtPreview:
    enforce`` (the ``enforced`` policies), any value the real preview would know.

    Raises:
        PreviewError: the first of those found, with ``result``.
    """
    unexpanded = not_expanded(run.logs)[1]
    if unexpanded:  # what the engine would construct is not known: never a pass
        result.not_checked = [*result.not_checked, *not_checked(unexpanded)]
        raise PreviewError(not_expanded_error(unexpanded), result)
    unseen = sorted(set(run.unknown_calls) & set(UNANSWERABLE))
    if unseen:  # resources a provider function would create are not known: never a pass
        raise PreviewError(_unanswerable_error(unseen), result)
    unread = unjudged_error(result.resources)
    if unread:  # a push config the pack cannot read: never a pass
        raise PreviewError(unread, result)
    if whole := _wholly_imported(result):  # the cloud's push config, unread: never a pass
        raise PreviewError(_wholly_imported_error(whole), result)
    if result.unknown_offline and enforced:  # asked to judge every value: never a pass
        raise PreviewError(enforce_error(result.unknown_offline, enforced), result)


def _given(path: Path | None) -> GivenValues:
    """The ``--values`` file's values (none without one).

    Raises:
        PreviewError: the file cannot be used (:class:`~pushguard.preview.values.ValuesError`).
    """
    try:
        return load_values(path) if path else GivenValues()
    except ValuesError as error:
        raise PreviewError(str(error)) from None


def _mocks(
    config: dict[str, str],
    file_config: dict[str, PolicyConfig],
    environ: dict[str, str],
) -> dict[str, Any]:
    """The offline planner's options (:class:`~pushguard.preview.mocks.GcpMocks`): the
    default provider's project and region, project numbers, other packages' default
    providers, and the environment the providers read."""
    return {
        "project": config.get("gcp:project"),
        "region": config.get("gcp:region"),
        "project_numbers": project_numbers(config, file_config),
        "providers": {
            package: default_provider_config(package, config, environ)
            for package in (*GOOGLE_PACKAGES, "kubernetes")
            if package != "gcp"
        },
        "environ": environ,
    }


def _unknowns(loaded: LoadedStack, run: IsolatedRun) -> list[UnknownOffline]:
    """What the real preview would know and this run did not, in report order
    (:mod:`pushguard.preview.offline`)."""
    stack_file = str(loaded.project.stack_config_file(loaded.stack).resolve())
    return sorted_unknowns(
        [
            *environment_unknowns(stack_file, loaded.environment, loaded.resolved),
            *run.unknown_reads,
            *call_unknowns(
                run.unknown_calls, {t: _unknown_detail(t, run) for t in run.unknown_calls}
            ),
        ]
    )


def _unused(loaded: LoadedStack, given: GivenValues) -> list[str]:
    """Notes for the environments given values for that the stack does not import."""
    imported = {item.name for item in loaded.environment.imports}
    file = loaded.project.stack_config_file(loaded.stack).name
    return [
        f"--values gives environment {name}, which {file} does not import; it is not used"
        for name in sorted(set(given.environments) - imported)
    ]


def _wholly_imported(result: StackResult) -> list[ResourceRecord]:
    """The subscriptions imported with ``ignoreChanges: ["*"]``
    (:func:`~pushguard.preview.imports.wholly_imported`)."""
    return [
        r for r in result.resources if r.type in MAPPED_SUBSCRIPTION_TYPES and wholly_imported(r)
    ]


def _wholly_imported_error(records: list[ResourceRecord]) -> str:
    """The exit-2 message for subscriptions imported with ``ignoreChanges: ["*"]``."""
    named = ", ".join(f"{r.name} (import ID {r.import_id})" for r in records)
    return (
        f'{named}: imported with ignoreChanges ["*"], so every property, the push config '
        "included, will be what the cloud holds, which an offline preview cannot read; check "
        "this stack with `pulumi preview --policy-pack`"
    )


def _unanswerable_error(tokens: list[str]) -> str:
    """The exit-2 message for provider functions that create resources and cannot be answered
    offline (:data:`~pushguard.preview.kubernetes_invokes.UNANSWERABLE`), naming each."""
    named = "; ".join(f"{token} ({UNANSWERABLE[token]})" for token in tokens)
    return (
        f"provider function(s) {named} cannot be answered offline, so the resources they would "
        "create were not registered or checked; check this stack with "
        "`pulumi preview --policy-pack`"
    )


def _fill(result: StackResult, run: IsolatedRun) -> None:
    """What the run says, in a stable order (registrations arrive as the runtime completes
    them, which varies from run to run)."""
    result.resources = sorted(map(as_imported, run.records), key=lambda r: r.urn)
    result.logs = sorted(not_expanded(run.logs)[0])
    result.outputs = dict(sorted(run.outputs.items()))
    result.program_output = run.output
    result.call_stacks = run.call_stacks
    result.notes = _notes(run)
    result.notes += [note for r in result.resources if (note := import_note(r))]


def refusal_violations(result: StackResult, failure: ProgramFailure) -> list[Violation]:
    """The rule violations in a ``PushSubscription`` refusal, as findings of their rules at the
    line of the program that made the component (``[]`` for any other failure)."""
    if failure.component is None:
        return []
    urn = f"urn:pulumi:{result.stack}::{result.project}::{TYPE_TOKEN}::{failure.component}"
    found = []
    for field, message in failure.problems:
        tag = _RULE_TAG.search(message)
        if tag is None:
            continue
        meta = result.policies.get(tag["rule"])
        found.append(
            Violation(
                policy=tag["rule"],
                level="mandatory",
                urn=urn,
                message=f"PushSubscription {failure.component!r} refused {field}: "
                f"{message[: tag.start()]}",
                remediation=meta.remediation if meta else "",
                where=failure.where,
                finding_id=finding_id(urn, tag["rule"], f"component-input:{field}"),
            )
        )
    return found


def _finish(
    stream: StreamingAnalysis,
    failure: ProgramFailure | None,
    result: StackResult,
    timings: dict[str, float],
) -> list[Diagnostic]:
    """Collect the streamed ``Analyze`` answers, then ``AnalyzeStack`` once over the resources
    in URN order; fills the pack's metadata into ``result`` and the times into ``timings``
    (``analyze``: the wait for the pack after the program finished).

    A program that failed ends the preview with :class:`PreviewError` once the pack has
    answered, so the report can still say which rules the refusal of a ``PushSubscription``
    broke; only a refusal whose every problem is a rule violation is a result (exit 1) instead.
    """
    where = stream.pack.pack_dir
    refused: list[Violation] = []
    if failure is not None:
        found: list[Violation] = []
        try:  # the pack's metadata, for the remediation of a refusal's findings
            answered = stream.finish()
            _describe_pack(result, stream)
            assert stream.session is not None
            found = stream.session.violations(answered)
        except Exception:  # the program's error matters more than the pack's
            result.notes.append("the policy pack did not answer either")
        refused = refusal_violations(result, failure)
        if not refused or len(refused) < len(failure.problems):
            # The run failed (exit 2); the report still shows what the registrations broke.
            result.violations = sort_violations([*refused, *found])
            raise PreviewError(str(failure), result, failure.traceback)
    try:
        clock = time.perf_counter()
        diagnostics = stream.finish()
        timings["analyze"] = time.perf_counter() - clock
        timings.update(stream.timings)
        _describe_pack(result, stream)
        clock = time.perf_counter()
        root, *rest = stream.per_stack
        diagnostics += stream.pack.analyze_stack([root, *sorted(rest, key=lambda r: r.urn)])
        result.not_checked = list(stream.pack.not_applicable)
        result.google_managed = list(stream.pack.google_managed)
        timings["analyze_stack"] = time.perf_counter() - clock
    except PackStartError as error:
        raise PreviewError(f"the policy pack {where} did not start: {error}", result) from None
    except PolicyConfigError as error:
        raise PreviewError(str(error), result) from None
    except grpc.RpcError as error:
        detail = error.details() if hasattr(error, "details") else str(error)
        raise PreviewError(f"the policy pack {where} failed: {detail}", result) from None
    if failure is not None:
        result.notes.append(
            f"the program stopped at PushSubscription {failure.component!r} (its inputs break "
            "mandatory rules): resources declared after it were not previewed"
        )
        result.violations = refused
    return diagnostics


def _describe_pack(result: StackResult, stream: StreamingAnalysis) -> None:
    """The pack's name, version and policies into ``result`` (the session is open)."""
    assert stream.session is not None
    result.pack_name, result.pack_version = stream.session.name, stream.session.version
    result.policies = stream.session.policies


def _notes(run: IsolatedRun) -> list[str]:
    notes = [f"the program ran in {run.runtime}"] if run.runtime else []
    notes += [
        f"getProject answered project {project!r} with the placeholder number "
        f"{PLACEHOLDER_PROJECT_NUMBER}; add the project to the policy config's "
        "top-level projectNumbers map, which the pack reads too"
        for project in sorted(run.placeholder_projects)
    ]
    unknown = set(run.unknown_calls)  # listed as unknown offline (_unknowns)
    notes += [
        f"provider function {token} answered with its own arguments (no cloud calls offline)"
        for token in sorted(set(run.echoed_calls) - unknown)
    ]
    return notes


def _unknown_detail(token: str, run: IsolatedRun) -> str:
    """What the engine could not hand the program as unknown for ``token``."""
    if token in run.wholly_unknown_calls:
        return (
            "; pushguard does not know its outputs (no installed Pulumi SDK defines it), so its "
            "whole result is unknown, which a plain invoke (get_x rather than get_x_output) "
            "cannot take"
        )
    detail = ""
    names = run.uncarried_outputs.get(token)
    if names:
        detail += (
            f"; its boolean and number outputs ({', '.join(names)}) cannot reach the program as "
            "unknown (the SDK's typed result takes only a boolean or a number), so it got none: "
            "a property of the same name left unset on a resource registered after it is "
            "judged unknown, anything else built from them is not checked"
        )
    absent = run.absent_outputs.get(token)
    if absent:
        detail += (
            f"; its outputs {', '.join(absent)} are absent (a map, or a list of maps, booleans "
            "or numbers, cannot hold an unknown)"
        )
    return detail
