"""``pushguard preview``: a team's program under the mock runtime, then a policy pack over the
Analyzer protocol, as ``pulumi preview --policy-pack`` runs them.

The steps, each a failure that ends the run with :class:`PreviewError` (exit code 2):
find the project and the stack's config; read the policy config; run the program in preview mode
with provider-faithful mocks, recording every registration; start the pack as the CLI does;
configure it (schema defaults, the pack's initial config, the file); ``Analyze`` every resource
with its checked inputs and ``AnalyzeStack`` once with every resource's planned outputs.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc
import yaml

from pushguard.crossguard import PACK_DIR
from pushguard.policy.config_file import PolicyConfig, PolicyConfigError, load_policy_config
from pushguard.preview.analyzer import (
    AnalyzerResource,
    Diagnostic,
    PackStartError,
    PolicyPackProcess,
)
from pushguard.preview.engine import ResourceRecord
from pushguard.preview.mocks import PLACEHOLDER_PROJECT_NUMBER, GcpMocks
from pushguard.preview.program import ProgramFailure, run_project_program
from pushguard.preview.project import (
    ProjectError,
    PulumiProject,
    find_project,
    load_project,
    load_stack_config,
)

STACK_TYPE = "pulumi:pulumi:Stack"
PROJECT_NUMBERS_KEY = "pushguard:projectNumbers"
"""Stack config key (a map of project ID to number) that ``getProject`` answers from."""


def stack_urn(project: str, stack: str) -> str:
    """The URN of the stack resource (``pulumi:pulumi:Stack`` named ``PROJECT-STACK``), the
    parent of the program's top-level resources."""
    return f"urn:pulumi:{stack}::{project}::{STACK_TYPE}::{project}-{stack}"


class PreviewError(RuntimeError):
    """The preview could not run (bad usage, missing config, the program raised, the pack
    failed); the message says which and why. The CLI exits 2."""


@dataclass(frozen=True)
class PolicyMeta:
    """What the pack says about one policy (``GetAnalyzerInfo``)."""

    name: str
    display_name: str
    description: str
    level: str
    severity: str
    remediation: str
    url: str


@dataclass(frozen=True)
class Violation:
    """One diagnostic from the pack. ``level`` is ``mandatory`` or ``advisory`` (a stack
    policy's ``remediate`` counts as mandatory, as in the CLI); ``urn`` is ``""`` for a
    diagnostic about the whole stack."""

    policy: str
    level: str
    urn: str
    message: str
    remediation: str = ""


@dataclass
class PreviewResult:
    """Everything a report needs: the plan, the violations, notes and where the time went."""

    project: PulumiProject
    stack: str
    resources: list[ResourceRecord]
    violations: list[Violation]
    pack_name: str = ""
    pack_version: str = ""
    policies: dict[str, PolicyMeta] = field(default_factory=dict)
    logs: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds: ``program``; ``pack_start`` and ``configure`` (in the pack's thread, alongside
    the program); ``analyze`` (the wait for ``Analyze`` answers after the program);
    ``analyze_stack``; ``total``."""

    @property
    def mandatory(self) -> list[Violation]:
        """The violations that fail the preview."""
        return [v for v in self.violations if v.level == "mandatory"]

    @property
    def exit_code(self) -> int:
        """0 when nothing mandatory is violated, else 1."""
        return 1 if self.mandatory else 0

    @property
    def pack_seconds(self) -> float:
        """Time the preview waited on the policy pack: after the program finished, for its
        start, configuration and the ``Analyze`` answers still out (they run alongside the
        program), then ``AnalyzeStack``."""
        return self.timings.get("analyze", 0.0) + self.timings.get("analyze_stack", 0.0)


@dataclass(frozen=True)
class PreviewOptions:
    """``program_dir``: a folder at or under a Pulumi project (default: the current folder);
    ``stack``: default the only stack with a config file; ``policy_pack``: a pack folder
    (default pushguard's own); ``policy_config``: a policy config JSON file."""

    program_dir: Path | None = None
    stack: str | None = None
    policy_pack: Path | None = None
    policy_config: Path | None = None


def choose_stack(project: PulumiProject, stack: str | None) -> str:
    """``stack``, else ``$PULUMI_STACK``, else the project's only stack config file.

    Raises:
        PreviewError: several stacks and none chosen, or none at all.
    """
    chosen = stack or os.environ.get("PULUMI_STACK")
    if chosen:
        return chosen
    stacks = project.stacks()
    if len(stacks) == 1:
        return stacks[0]
    listed = ", ".join(stacks) if stacks else "none"
    raise PreviewError(
        f"choose a stack with --stack (stacks in {project.stack_config_dir}: {listed})"
    )


def pack_python(pack_dir: Path) -> str | None:
    """The interpreter the CLI would run the pack with: ``runtime.options.virtualenv`` of its
    ``PulumiPolicy.yaml`` when set, else ``None`` (this interpreter).

    Raises:
        PreviewError: no ``PulumiPolicy.yaml``, or a runtime other than python.
    """
    manifest = pack_dir / "PulumiPolicy.yaml"
    try:
        spec = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise PreviewError(f"{manifest}: not a policy pack ({error})") from None
    runtime = spec.get("runtime") if isinstance(spec, dict) else None
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name != "python":
        raise PreviewError(f"{manifest}: runtime {name!r}; pushguard preview runs python packs")
    options = runtime.get("options", {}) if isinstance(runtime, dict) else {}
    venv = options.get("virtualenv") if isinstance(options, dict) else None
    if not venv:
        return None
    python = (pack_dir / venv / "bin" / "python").resolve()
    if not python.is_file():
        raise PreviewError(f"{manifest}: virtualenv {venv!r} has no bin/python; create it first")
    return str(python)


def _project_numbers(
    config: Mapping[str, str], policy: Mapping[str, PolicyConfig]
) -> dict[str, str]:
    """Project numbers from every policy's ``projectNumbers`` and the stack's
    :data:`PROJECT_NUMBERS_KEY` (which wins)."""
    numbers: dict[str, str] = {}
    for entry in policy.values():
        given = entry.properties.get("projectNumbers")
        if isinstance(given, Mapping):
            numbers.update({str(k): str(v) for k, v in given.items()})
    raw = config.get(PROJECT_NUMBERS_KEY)
    if raw:
        try:
            stack_numbers = json.loads(raw)
        except json.JSONDecodeError:
            stack_numbers = None
        if not isinstance(stack_numbers, dict):
            raise PreviewError(
                f"stack config {PROJECT_NUMBERS_KEY} must map project IDs to numbers"
            )
        numbers.update({str(k): str(v) for k, v in stack_numbers.items()})
    return numbers


def _provider_config(package: str, config: Mapping[str, str]) -> dict[str, Any]:
    """The default provider's inputs: the stack's ``package:*`` config (JSON values decoded)."""
    props: dict[str, Any] = {}
    for key, text in config.items():
        namespace, _, name = key.partition(":")
        if namespace != package or not name:
            continue
        try:
            props[name] = json.loads(text) if text.startswith(("[", "{")) else text
        except json.JSONDecodeError:
            props[name] = text
    return props


class AnalyzerRequests:
    """Turns registrations into what the engine sends the pack: ``Analyze`` gets a resource's
    checked inputs, ``AnalyzeStack`` its planned outputs; a custom resource carries its
    provider's configuration (an explicit provider's inputs, else the stack's config of its
    package, as for a default provider). Feed registrations in order (providers first)."""

    def __init__(self, project: PulumiProject, stack: str, config: Mapping[str, str]) -> None:
        self.config = config
        self.explicit: dict[str, Mapping[str, Any]] = {}
        self.root = AnalyzerResource(
            urn=stack_urn(project.name, stack),
            type=STACK_TYPE,
            name=f"{project.name}-{stack}",
            properties={},
        )

    def convert(self, record: ResourceRecord) -> tuple[AnalyzerResource, AnalyzerResource]:
        """``(for Analyze, for AnalyzeStack)`` of one registration."""
        package = record.type.split(":", 1)[0]
        if record.type.startswith("pulumi:providers:"):
            self.explicit[record.urn] = record.inputs
        provider = None
        if record.custom and package != "pulumi":
            reference = record.provider.rsplit("::", 1)[0] if record.provider else ""
            provider = dict(self.explicit.get(reference) or _provider_config(package, self.config))
        provider_type = f"pulumi:providers:{package}"
        return (
            AnalyzerResource.from_record(record, provider, provider_type=provider_type),
            AnalyzerResource.from_record(
                record, provider, provider_type=provider_type, outputs=True
            ),
        )


class _StreamingAnalysis:
    """``Analyze`` calls made while the program still registers resources, as the engine makes
    them: a thread waits for the pack, configures it, then sends each registration as it
    arrives, so the pack works on the other core while the program runs."""

    def __init__(
        self,
        pack: PolicyPackProcess,
        requests: AnalyzerRequests,
        config: Mapping[str, PolicyConfig],
        source: str = "",
    ) -> None:
        self.pack, self.requests, self.config, self.source = pack, requests, config, source
        self.info: Any = None
        self.resolved: dict[str, PolicyConfig] = {}
        self.per_stack: list[AnalyzerResource] = [requests.root]
        self.diagnostics: list[Diagnostic] = []
        self.error: BaseException | None = None
        self.timings: dict[str, float] = {}
        self._queue: queue.SimpleQueue[ResourceRecord | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def submit(self, record: ResourceRecord) -> None:
        """Queue one registration (called by the recording monitor)."""
        self._queue.put(record)

    def _run(self) -> None:
        ready = False
        try:
            clock = time.perf_counter()
            self.pack.connect()
            self.timings["pack_start"] = time.perf_counter() - clock
            clock = time.perf_counter()
            self.info = self.pack.info()
            self.resolved = self.pack.configure(self.config, source=self.source)
            self.timings["configure"] = time.perf_counter() - clock
            ready = True
            self._send(self.requests.root)
        except BaseException as error:  # re-raised by finish() in the caller's thread
            self.error = error
        while (record := self._queue.get()) is not None:
            per_resource, per_stack = self.requests.convert(record)
            self.per_stack.append(per_stack)
            if ready and self.error is None:
                try:
                    self._send(per_resource)
                except BaseException as error:
                    self.error = error

    def _send(self, resource: AnalyzerResource) -> None:
        # The engine attributes an Analyze diagnostic without a URN to the analysed resource.
        # A blocking call releases the GIL while the pack works, so the program runs meanwhile.
        self.diagnostics += [
            replace(d, urn=d.urn or resource.urn) for d in self.pack.analyze(resource)
        ]

    def stop(self) -> None:
        """End the stream and wait for the thread (every ``Analyze`` answered)."""
        self._queue.put(None)
        self._thread.join()

    def finish(self) -> list[Diagnostic]:
        """:meth:`stop`, then the diagnostics in registration order. Raises what the thread
        met (pack start, config or call errors)."""
        self.stop()
        if self.error is not None:
            raise self.error
        return self.diagnostics


def _violation(diagnostic: Diagnostic, policies: Mapping[str, PolicyMeta]) -> Violation:
    level = "mandatory" if diagnostic.level in ("mandatory", "remediate") else "advisory"
    meta = policies.get(diagnostic.policy)
    return Violation(
        policy=diagnostic.policy,
        level=level,
        urn=diagnostic.urn,
        message=diagnostic.message,
        remediation=meta.remediation if meta else "",
    )


def _policy_meta(info: Any, levels: Mapping[str, PolicyConfig]) -> dict[str, PolicyMeta]:
    severities = {0: "", 1: "low", 2: "medium", 3: "high", 4: "critical"}
    return {
        p.name: PolicyMeta(
            name=p.name,
            display_name=p.displayName,
            description=p.description,
            level=(levels[p.name].level or "advisory") if p.name in levels else "advisory",
            severity=severities.get(p.severity, ""),
            remediation=p.remediation_steps,
            url=p.url,
        )
        for p in info.policies
    }


def _load(options: PreviewOptions) -> tuple[PulumiProject, str, dict[str, str], set[str]]:
    try:
        project = load_project(find_project(options.program_dir or Path.cwd()))
        stack = choose_stack(project, options.stack)
        config, secrets = load_stack_config(project, stack)
    except ProjectError as error:
        raise PreviewError(str(error)) from None
    return project, stack, config, secrets


def run_preview(options: PreviewOptions) -> PreviewResult:
    """Run the preview. Returns the result (whose :attr:`PreviewResult.exit_code` is 0 or 1).

    Raises:
        PreviewError: the project, stack config, policy config or pack cannot be used, or the
            program raised (the message names the innermost error and the program's line).
    """
    started = time.perf_counter()
    project, stack, config, secrets = _load(options)
    try:
        file_config = load_policy_config(options.policy_config) if options.policy_config else {}
    except PolicyConfigError as error:
        raise PreviewError(str(error)) from None
    pack_dir = (options.policy_pack or PACK_DIR).resolve()
    python = pack_python(pack_dir)

    mocks = GcpMocks(
        project=config.get("gcp:project"),
        region=config.get("gcp:region"),
        project_numbers=_project_numbers(config, file_config),
    )
    pack = PolicyPackProcess(pack_dir, python=python)
    pack.start()  # the pack imports while the program runs, as with the CLI
    try:
        source = str(options.policy_config or "")
        requests = AnalyzerRequests(project, stack, config)
        stream = _StreamingAnalysis(pack, requests, file_config, source)
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
    result.violations = [_violation(d, result.policies) for d in diagnostics]
    timings["total"] = time.perf_counter() - started
    result.timings = timings
    return result


def _finish(
    stream: _StreamingAnalysis,
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
        result.policies = _policy_meta(stream.info, stream.resolved)
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
