"""``pushguard preview``: a team's program under the mock runtime, then a policy pack over the
Analyzer protocol, as ``pulumi preview --policy-pack`` runs them.

The steps, each a failure that ends the run with :class:`PreviewError` (exit code 2):
find the project and the stack's config; read the policy config; run the program in preview mode
with provider-faithful mocks, recording every registration; start the pack as the CLI does;
configure it (schema defaults, the pack's initial config, the file); ``Analyze`` every resource
with its checked inputs and ``AnalyzeStack`` once with every resource's planned outputs.

This module only orchestrates them: stack choice is in :mod:`pushguard.preview.stacks`, pack
discovery in :mod:`pushguard.preview.pack`, the streaming analysis in
:mod:`pushguard.preview.streaming` and the result model in :mod:`pushguard.preview.result`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from pushguard.policy.config_file import PolicyConfigError, load_policy_config
from pushguard.preview.analyzer import Diagnostic, PackStartError, PolicyPackProcess
from pushguard.preview.mocks import PLACEHOLDER_PROJECT_NUMBER, GcpMocks
from pushguard.preview.pack import pack_python, resolve_pack_dir
from pushguard.preview.program import ProgramFailure, run_project_program
from pushguard.preview.result import PreviewError, PreviewResult
from pushguard.preview.stacks import PROJECT_NUMBERS_KEY, load_stack, project_numbers
from pushguard.preview.streaming import (
    AnalyzerRequests,
    StreamingAnalysis,
    policy_meta,
    to_violation,
)


@dataclass(frozen=True)
class PreviewOptions:
    """``program_dir``: a folder at or under a Pulumi project (default: the current folder);
    ``stack``: default the only stack with a config file; ``policy_pack``: a pack folder
    (default pushguard's own); ``policy_config``: a policy config JSON file."""

    program_dir: Path | None = None
    stack: str | None = None
    policy_pack: Path | None = None
    policy_config: Path | None = None


def run_preview(options: PreviewOptions) -> PreviewResult:
    """Run the preview. Returns the result (whose :attr:`PreviewResult.exit_code` is 0 or 1).

    Raises:
        PreviewError: the project, stack config, policy config or pack cannot be used, or the
            program raised (the message names the innermost error and the program's line).
    """
    started = time.perf_counter()
    project, stack, config, secrets = load_stack(options.program_dir, options.stack)
    try:
        file_config = load_policy_config(options.policy_config) if options.policy_config else {}
    except PolicyConfigError as error:
        raise PreviewError(str(error)) from None
    pack_dir = resolve_pack_dir(options.policy_pack)
    python = pack_python(pack_dir)

    mocks = GcpMocks(
        project=config.get("gcp:project"),
        region=config.get("gcp:region"),
        project_numbers=project_numbers(config, file_config),
    )
    pack = PolicyPackProcess(pack_dir, python=python)
    pack.start()  # the pack imports while the program runs, as with the CLI
    try:
        source = str(options.policy_config or "")
        requests = AnalyzerRequests(project, stack, config)
        stream = StreamingAnalysis(pack, requests, file_config, source)
        clock = time.perf_counter()
        run, failure = run_project_program(
            project, stack, mocks, config, secrets, on_record=stream.submit
        )
        timings = {"program": time.perf_counter() - clock}
        result = PreviewResult(project=project, stack=stack, resources=run.records, violations=[])
        result.logs, result.notes = run.logs, _notes(mocks)
        diagnostics = _finish(stream, failure, result, timings)
    finally:
        pack.close()
    result.violations = [to_violation(d, result.policies) for d in diagnostics]
    timings["total"] = time.perf_counter() - started
    result.timings = timings
    return result


def _finish(
    stream: StreamingAnalysis,
    failure: ProgramFailure | None,
    result: PreviewResult,
    timings: dict[str, float],
) -> list[Diagnostic]:
    """Collect the streamed ``Analyze`` answers, then ``AnalyzeStack`` once; fills the pack's
    metadata into ``result`` and the times into ``timings`` (``analyze``: the wait for the pack
    after the program finished)."""
    where = stream.pack.pack_dir
    if failure is not None:  # the program's error matters more than any of the pack's
        stream.stop()
        raise PreviewError(str(failure))
    try:
        clock = time.perf_counter()
        diagnostics = stream.finish()
        timings["analyze"] = time.perf_counter() - clock
        timings.update(stream.timings)
        result.pack_name, result.pack_version = stream.info.name, stream.info.version
        result.policies = policy_meta(stream.info, stream.resolved)
        clock = time.perf_counter()
        diagnostics += stream.pack.analyze_stack(stream.per_stack)
        timings["analyze_stack"] = time.perf_counter() - clock
    except PackStartError as error:
        raise PreviewError(f"the policy pack {where} did not start: {error}") from None
    except PolicyConfigError as error:
        raise PreviewError(str(error)) from None
    except grpc.RpcError as error:
        detail = error.details() if hasattr(error, "details") else str(error)
        raise PreviewError(f"the policy pack {where} failed: {detail}") from None
    return diagnostics


def _notes(mocks: GcpMocks) -> list[str]:
    notes = [
        f"getProject answered project {project!r} with the placeholder number "
        f"{PLACEHOLDER_PROJECT_NUMBER}; set {PROJECT_NUMBERS_KEY} in the stack config"
        for project in sorted(mocks.placeholder_projects)
    ]
    notes += [
        f"provider function {token} answered with its own arguments (no cloud calls offline)"
        for token in sorted(mocks.echoed_calls)
    ]
    return notes
