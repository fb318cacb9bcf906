"""Running a policy pack over existing stacks, as ``pulumi policy analyze`` does
(``deploy.AnalyzeSnapshot``,
https://github.com/pulumi/pulumi/blob/master/pkg/resource/deploy/analyze_snapshot.go):

- every resource not marked for deletion goes to ``Analyze`` with its *inputs* (what ``Analyze``
  gets during a deployment), its name (the URN's last part), its options (``parent``,
  ``protect``, ``ignoreChanges``, ``additionalSecretOutputs``, ``aliases``) and its provider
  (the provider resource's URN, type, name and inputs, found through the resource's provider
  reference ``URN::ID``); a diagnostic without a URN is about the analysed resource;
- ``AnalyzeStack`` then gets every such resource with its *outputs* (the deployed state), parent,
  dependencies and property dependencies.

One pack process serves every stack: it is started and configured once (schema defaults, the
pack's initial config, the policy config file), as the preview does.

What the pack says about a preview is worded for a state (:mod:`pushguard.analyze.wording`):
nothing checks a state's encrypted value later. A policy that, under ``unknownAtPreview:
enforce``, could not decide a value makes its stack incomplete (exit 2, naming each: a value
the state does not show is neither a pass nor a violation found).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc

from pushguard.analyze.baseline import BaselineError, BaselineFinding, compare, load_baseline
from pushguard.analyze.deployment import (
    NotStateError,
    StackState,
    StateFileError,
    StateResource,
    find_state_files,
    read_state,
)
from pushguard.analyze.origin import StateOrigin
from pushguard.analyze.wording import not_checked_for_state, unverified, violation_for_state
from pushguard.crossguard.routes.shaped import unjudged_error
from pushguard.crossguard.urn import PROVIDER_TYPE_PREFIX, STACK_TYPE, provider_urn
from pushguard.gate.analyzer import (
    AnalyzerResource,
    Diagnostic,
    MessageTooLargeError,
    PackStartError,
    PolicyPackProcess,
)
from pushguard.gate.pack import PackError, pack_python, resolve_pack_dir
from pushguard.gate.result import ResourceRecord, StackResult, sort_violations
from pushguard.gate.session import PackSession
from pushguard.policy.config_file import PolicyConfigError, load_policy_config


@dataclass(frozen=True)
class AnalyzeOptions:
    """``paths``: state files or folders of them; ``policy_pack``: a pack folder (default
    pushguard's own); ``policy_config``: a policy config JSON file."""

    paths: list[Path]
    policy_pack: Path | None = None
    policy_config: Path | None = None
    baseline: Path | None = None
    """A previous ``analyze --format json`` report (:mod:`pushguard.analyze.baseline`)."""


@dataclass
class AnalysisRun:
    """What ``pushguard analyze`` found: one :class:`StackResult` per stack read (in the order
    of the files), the files that could not be read, the files found in a folder that are not
    Pulumi state (skipped, each with the reason), and the error that stopped the run, if any
    (the results analysed before it are kept)."""

    stacks: list[StackResult] = field(default_factory=list)
    unreadable: list[StateFileError] = field(default_factory=list)
    skipped: list[NotStateError] = field(default_factory=list)
    error: str | None = None
    baseline: Path | None = None
    """The baseline compared with, if any."""
    resolved: list[BaselineFinding] = field(default_factory=list)
    """The baseline's findings gone in this run (with a baseline)."""

    @property
    def exit_code(self) -> int:
        """2 when the run failed, a file could not be read or a stack could not be fully
        checked (:attr:`~pushguard.gate.result.StackResult.unjudged`: a gate fails closed),
        else 1 when a stack has a mandatory violation, else 0."""
        if self.error is not None or self.unreadable:
            return 2
        return max((r.exit_code for r in self.stacks), default=0)


def run_analyze(options: AnalyzeOptions) -> AnalysisRun:
    """Read every state file, then analyse each stack with one pack process.

    A file that cannot be read is listed in :attr:`AnalysisRun.unreadable` and the others are
    still analysed. A JSON file found in a folder that is not Pulumi state at all
    (:class:`NotStateError`: a ``package.json``) is listed in :attr:`AnalysisRun.skipped`; named
    on the command line, it is unreadable. A policy config or pack that cannot be used, a pack
    that fails during the analysis, a stack too large for the pack's messages, or nothing to
    analyse at all end the run: :attr:`AnalysisRun.error` says why (exit 2).
    """
    run = AnalysisRun()
    states = _read_states(options.paths, run)
    if not states and not run.unreadable:
        run.error = (
            f"no state files: the {len(run.skipped)} JSON file(s) found are not Pulumi state"
            if run.skipped
            else "no state files given"
        )
        return run
    try:
        file_config = load_policy_config(options.policy_config) if options.policy_config else {}
        pack_dir = resolve_pack_dir(options.policy_pack)
        python = pack_python(pack_dir)
        baseline = load_baseline(options.baseline) if options.baseline else None
    except (PolicyConfigError, PackError, BaselineError) as error:
        run.error = str(error)
        return run
    if not states:
        return run
    source = str(options.policy_config or "")
    pack = PolicyPackProcess(pack_dir, python=python)
    try:
        pack.start()
        session = PackSession.open(pack, file_config, source)
        for state in states:
            try:
                run.stacks.append(_analysed(session, state))
            except grpc.RpcError as error:
                if _code(error) != grpc.StatusCode.INVALID_ARGUMENT:
                    raise
                # The pack refused this stack's request (a value nested too deeply to decode):
                # the file is named, the other stacks are still analysed.
                run.unreadable.append(
                    StateFileError(state.path, f"the policy pack refused it: {_details(error)}")
                )
        if baseline is not None:
            run.baseline = options.baseline
            run.resolved = compare(run.stacks, baseline)
    except PackStartError as error:
        run.error = f"the policy pack {pack_dir} did not start: {error}"
    except (PolicyConfigError, MessageTooLargeError) as error:
        run.error = str(error)
    except grpc.RpcError as error:
        run.error = f"the policy pack {pack_dir} failed: {_details(error)}"
    finally:
        pack.close()
    unread = unjudged_error(r for stack in run.stacks for r in stack.resources)
    if unread and run.error is None:  # a push config the pack cannot read: never a pass
        run.error = unread
    return run


def _code(error: grpc.RpcError) -> Any:
    return error.code() if hasattr(error, "code") else None


def _details(error: grpc.RpcError) -> str:
    return str(error.details()) if hasattr(error, "details") else str(error)


def _read_states(paths: list[Path], run: AnalysisRun) -> list[StackState]:
    """The stacks in ``paths``; what cannot be read goes to ``run.unreadable``, JSON found in a
    folder that is not state to ``run.skipped`` (named on the command line, it is unreadable)."""
    files, run.unreadable, run.skipped = find_state_files(paths)
    named = {path for path in paths if not path.is_dir()}
    states: list[StackState] = []
    for path in files:
        try:
            states.append(read_state(path))
        except NotStateError as error:
            (run.unreadable if path in named else run.skipped).append(error)
        except StateFileError as error:
            run.unreadable.append(error)
        except RecursionError:
            run.unreadable.append(
                StateFileError(path, "is nested too deeply to read (pushguard's limit)")
            )
        except MemoryError:
            run.unreadable.append(StateFileError(path, "does not fit in memory"))
    return states


def _analysed(session: PackSession, state: StackState) -> StackResult:
    """One stack's state through the session's pack, as a result.

    Raises:
        MessageTooLargeError: naming the state file.
    """
    result = _result(state)
    result.pack_name, result.pack_version = session.name, session.version
    result.policies = session.policies
    try:
        diagnostics = analyze_stack(session.pack, state)
    except MessageTooLargeError as error:
        raise MessageTooLargeError(error.method, error.size, str(state.path)) from None
    encrypted = bool(state.encrypted_secrets)
    found = [violation_for_state(v, encrypted=encrypted) for v in session.violations(diagnostics)]
    result.violations = sort_violations(found)
    result.unjudged = [v for v in result.violations if v.counts and unverified(v)]
    result.not_checked = [
        not_checked_for_state(n, encrypted=encrypted) for n in session.pack.not_applicable
    ]
    result.google_managed = list(session.pack.google_managed)
    return result


def analyze_stack(pack: PolicyPackProcess, state: StackState) -> list[Diagnostic]:
    """``Analyze`` per live resource (inputs), then ``AnalyzeStack`` over them all (outputs),
    as ``deploy.AnalyzeSnapshot`` sends them. Returns the diagnostics in that order; the pack's
    ``not_applicable`` answers are left in ``pack.not_applicable`` and ``pack.google_managed``."""
    live = [r for r in state.resources if not r.delete]
    providers = {r.urn: r for r in live if r.type.startswith(PROVIDER_TYPE_PREFIX)}
    diagnostics: list[Diagnostic] = []
    for resource in live:
        found = pack.analyze(_analyzer_resource(resource, providers, outputs=False))
        diagnostics += [replace(d, urn=d.urn or resource.urn) for d in found]
    stack = [_analyzer_resource(r, providers, outputs=True) for r in live]
    diagnostics += pack.analyze_stack(stack)
    return diagnostics


def _analyzer_resource(
    resource: StateResource, providers: dict[str, StateResource], *, outputs: bool
) -> AnalyzerResource:
    provider = providers.get(provider_urn(resource.provider))
    options: dict[str, Any] = {
        "protect": resource.protect,
        "ignoreChanges": list(resource.ignore_changes),
        "additionalSecretOutputs": list(resource.additional_secret_outputs),
        "aliases": list(resource.aliases),
    }
    return AnalyzerResource(
        urn=resource.urn,
        type=resource.type,
        name=resource.name,
        properties=resource.outputs if outputs else resource.inputs,
        provider=provider.inputs if provider else None,
        provider_type=provider.type if provider else "",
        provider_urn=provider.urn if provider else "",
        parent=resource.parent,
        dependencies=resource.dependencies,
        property_dependencies=resource.property_dependencies,
        options=options,
    )


def _result(state: StackState) -> StackResult:
    """The report model of one stack's state: its resources (the stack resource is the report's
    root), located at their lines in the state file, and its outputs."""
    records = []
    stack_line, outputs = 1, {}
    for r in state.resources:
        if r.delete:
            continue
        if r.type == STACK_TYPE:
            stack_line, outputs = r.line or 1, r.outputs
            continue
        records.append(
            ResourceRecord(
                urn=r.urn,
                type=r.type,
                name=r.name,
                parent=r.parent,
                custom=r.custom,
                provider=r.provider,
                inputs=r.inputs,
                dependencies=r.dependencies,
                property_dependencies=r.property_dependencies,
                protect=r.protect,
                ignore_changes=r.ignore_changes,
                outputs=r.outputs,
                source=(str(state.path.resolve()), r.line) if r.line else None,
            )
        )
    return StackResult(
        origin=StateOrigin(
            path=state.path,
            stack_line=stack_line,
            version=state.version,
            pulumi_version=state.pulumi_version,
        ),
        project=state.project,
        stack=state.stack,
        resources=sorted(records, key=lambda r: r.urn),
        violations=[],
        notes=_state_notes(state),
        outputs=dict(sorted(outputs.items())),
        organization=state.organization,
    )


def _state_notes(state: StackState) -> list[str]:
    """What a reader of the report must know about the state itself (interrupted update,
    encrypted secrets, an old deployment version, no resources)."""
    notes = []
    if state.pending_operations:
        notes.append(
            f"{state.pending_operations} operation(s) were pending when this state was written (an "
            "update was interrupted); their resources are not analysed"
        )
    if state.encrypted_secrets:
        notes.append(
            f"{state.encrypted_secrets} secret value(s) in the state stay encrypted and count as "
            "unknown: a policy that needs one reports that it could not run"
        )
    if state.version < 3:
        notes.append(
            f"the state is deployment version {state.version}; it was read as Pulumi migrates it "
            "to version 3"
        )
    if not state.resources:
        notes.append("the stack has no resources; nothing to analyse")
    return notes
