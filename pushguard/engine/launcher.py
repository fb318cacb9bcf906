"""Running a program under pushguard's engine: the gRPC services on loopback, the program in its
own interpreter, and how it ended.

As the Python language host's ``Run`` does (``sdk/python/cmd/pulumi-language-python/main.go``
of pulumi/pulumi, commit 1b5949891b3c): the interpreter and environment of the project
(:mod:`pushguard.engine.runtime`), ``PULUMI_CONFIG`` and ``PULUMI_CONFIG_SECRET_KEYS`` in the
environment (:func:`pushguard.preview.isolation.program_environment`), and the executor script
(:mod:`pushguard.engine.bootstrap`) with ``--monitor``, ``--engine``, ``--project``,
``--root_directory``, ``--stack``, ``--pwd``, ``--dry_run true``, ``--parallel`` and the entry
point (``.`` for a program folder, run from that folder). The process runs in a session of its
own with its stdout and stderr in files (:class:`pushguard.preview.isolation._Child`), while
pushguard is not dumpable.

A run is judged from what reached the engine: it finished when the process exited 0 after the
stack's outputs were registered and the SDK signalled its shutdown, which it does once every
outstanding registration is done (:attr:`~pushguard.engine.recorder.Recorder.shut_down`);
a failure the bootstrap reported is the program's failure; any other ending (another exit
status, ``os._exit``, a signal, the time-out) is a :class:`~pushguard.preview.isolation.
ProgramEndedError` naming the interpreter the program ran in.

A Node.js program (``runtime: nodejs``) is started as the Node.js language host starts it
(:mod:`pushguard.engine.nodejs`: ``node`` and the project's ``@pulumi/pulumi`` run entry, the
same services) and judged from the same record; its failure is what the run entry reported or
the ``process.exit`` status (:mod:`pushguard.engine.node_failure`), never a report in the
bootstrap's form, which only the Python bootstrap sends.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
from pulumi.runtime.proto import engine_pb2_grpc, resource_pb2_grpc

from pushguard.engine.host import Host
from pushguard.engine.monitor import Monitor
from pushguard.engine.node_failure import node_failure
from pushguard.engine.nodejs import NodeRuntime, node_argv, node_environment, resolve_node
from pushguard.engine.planner import EngineMocks
from pushguard.engine.reads import Reads
from pushguard.engine.recorder import Recorder
from pushguard.engine.runtime import (
    ProgramRuntime,
    RuntimeChoiceError,
    parallel,
    resolve_runtime,
)
from pushguard.gate.result import ProgramOutput, ResourceRecord
from pushguard.preview.isolation import (
    IsolatedRun,
    ProgramEndedError,
    _Child,
    _how_it_ended,
    _read_output,
    not_dumpable,
    program_environment,
)
from pushguard.preview.limits import DEFAULT_TIMEOUT
from pushguard.preview.program import ProgramFailure
from pushguard.preview.project import PulumiProject

BOOTSTRAP = Path(__file__).with_name("bootstrap.py")
EXECUTOR_NAME = "pulumi-language-python-exec"


@contextlib.contextmanager
def _server(recorder: Recorder, monitor: Monitor) -> Iterator[str]:
    """The ``ResourceMonitor`` and ``Engine`` services on a loopback port; yields the address."""
    server = grpc.server(ThreadPoolExecutor(max_workers=32), options=[("grpc.so_reuseport", 0)])
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, server)
    engine_pb2_grpc.add_EngineServicer_to_server(Host(recorder), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=1).wait()


@contextlib.contextmanager
def serving(recorder: Recorder, monitor: Monitor) -> Iterator[str]:
    """The services for the program (yields their address) and, on a server of their own, for
    the constructs of pushguard's remote component (``monitor.construct_address``), so a
    registration waiting for its construct never holds a thread the construct needs."""
    with _server(recorder, monitor) as address, _server(recorder, monitor) as constructs:
        monitor.construct_address = constructs
        yield address


def _pwd_main(project: PulumiProject) -> tuple[Path, str]:
    """The program's working folder and entry point (``getPwdMain`` in
    ``pkg/engine/project.go``): ``main``'s folder and ``.``, or its parent and its name."""
    main = project.main.resolve()
    return (main, ".") if main.is_dir() else (main.parent, main.name)


def _arguments(project: PulumiProject, stack: str, address: str, script: Path) -> list[str]:
    """The executor's command line after the interpreter (``constructArguments``)."""
    pwd, entry = _pwd_main(project)
    return [
        str(script),
        *("--monitor", address, "--engine", address, "--project", project.name),
        *("--root_directory", str(project.root.resolve()), "--stack", stack),
        *("--pwd", str(pwd), "--dry_run", "true", "--parallel", str(parallel())),
        entry,
    ]


def _launch(
    runtime: ProgramRuntime | NodeRuntime,
    project: PulumiProject,
    stack: str,
    address: str,
    private: Path,
) -> list[str]:
    """The program's command line: the Python executor (the bootstrap, written to
    ``private``) or the Node.js SDK's run entry."""
    if isinstance(runtime, NodeRuntime):
        pwd, entry = _pwd_main(project)
        return node_argv(
            runtime,
            project=project.name,
            root=project.root.resolve(),
            stack=stack,
            pwd=pwd,
            entry=entry,
            address=address,
        )
    script = private / EXECUTOR_NAME
    script.write_text(BOOTSTRAP.read_text(encoding="utf-8"), encoding="utf-8")
    return [str(runtime.python), *_arguments(project, stack, address, script)]


def run_engine(
    project: PulumiProject,
    stack: str,
    *,
    config: Mapping[str, str],
    secret_keys: Iterable[str],
    mocks: Mapping[str, Any],
    on_record: Callable[[ResourceRecord], None] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    stack_references: Mapping[str, Mapping[str, Any]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> IsolatedRun:
    """Run ``project``'s program for ``stack`` under the engine; ``on_record`` sees each
    registration as the engine records it. ``mocks``: :class:`~pushguard.engine.planner.
    EngineMocks` options (``project``, ``region``, ``project_numbers``, ``providers``);
    ``stack_references``: the outputs of referenced stacks the team gave
    (:mod:`pushguard.engine.reads`); ``environ``: the environment the program starts from
    (default ``os.environ``; the preview's with what the stack's ESC environments set).

    Returns the run (``failure`` set when the program raised or called ``sys.exit``, or, in
    Node.js, threw or called ``process.exit``).

    Raises:
        ProgramEndedError: the runtime cannot be used, or the program ended any other way
            before it finished.
    """
    runtime = _runtime(project, environ)
    recorder = Recorder(on_record)
    planner = EngineMocks(recorder.state_of, recorder.states, **dict(mocks))
    monitor = Monitor(recorder, planner, project.name, stack, project.root.resolve())
    monitor.reads = Reads(stack_references, project.root.resolve())
    monitor.construct_settings.update(config=dict(config), secret_keys=sorted(secret_keys))
    environment = _environment(runtime, config, secret_keys)
    with (
        not_dumpable(),
        tempfile.TemporaryDirectory(prefix="pushguard-engine-") as private,
        tempfile.TemporaryFile() as stdout,
        tempfile.TemporaryFile() as stderr,
        serving(recorder, monitor) as address,
    ):
        argv = _launch(runtime, project, stack, address, Path(private))
        cwd = argv[argv.index("--pwd") + 1]
        with _Child(stdout, stderr, timeout, environment=environment, argv=argv, cwd=cwd) as child:
            returncode = child.wait()
            child.stop_group()
        output = ProgramOutput(*_outputs(stdout, stderr))
    run = _judge(
        recorder,
        planner,
        runtime,
        project,
        output=output,
        timeout=timeout,
        returncode=returncode,
        expired=child.expired,
    )
    run.unknown_reads = list(monitor.reads.unknown)
    return run


def _runtime(
    project: PulumiProject, environ: Mapping[str, str] | None
) -> ProgramRuntime | NodeRuntime:
    """The program's runtime, as its language host would choose it: the interpreter
    (:func:`~pushguard.engine.runtime.resolve_runtime`), or for ``runtime: nodejs`` ``node``
    and the project's run entry (:func:`~pushguard.engine.nodejs.resolve_node`).

    Raises:
        ProgramEndedError: it cannot be found or used (the message says why).
    """
    root = project.root.resolve()
    try:
        if project.runtime == "nodejs":
            return resolve_node(root, _pwd_main(project)[0], environ)
        return resolve_runtime(root, project.entry_point.resolve().parent, environ)
    except RuntimeChoiceError as error:
        raise ProgramEndedError(
            f"the program cannot be started: {error}", ProgramOutput()
        ) from None


def _environment(
    runtime: ProgramRuntime | NodeRuntime, config: Mapping[str, str], secret_keys: Iterable[str]
) -> dict[str, str]:
    """The program's environment with the stack's config, as its language host builds it."""
    if isinstance(runtime, NodeRuntime):
        return node_environment(runtime, config, secret_keys)
    return program_environment(config, secret_keys, runtime.environment)


def _outputs(stdout: Any, stderr: Any) -> tuple[str, str, bool]:
    out, cut_out = _read_output(stdout)
    err, cut_err = _read_output(stderr)
    return out, err, cut_out or cut_err


def _judge(
    recorder: Recorder,
    planner: EngineMocks,
    runtime: ProgramRuntime | NodeRuntime,
    project: PulumiProject,
    *,
    returncode: int,
    expired: bool,
    timeout: float,
    output: ProgramOutput,
) -> IsolatedRun:
    """The run as the engine saw it (see the module's docstring)."""
    run = IsolatedRun(
        records=list(recorder.records),
        call_stacks=dict(recorder.call_stacks),
        logs=list(recorder.logs),
        outputs=dict(recorder.outputs),
        placeholder_projects=sorted(planner.placeholder_projects),
        echoed_calls=sorted(planner.echoed_calls),
        unknown_calls=sorted(planner.unknown_calls),
        uncarried_outputs={t: sorted(names) for t, names in sorted(planner.uncarried.items())},
        absent_outputs={t: sorted(names) for t, names in sorted(planner.left_absent.items())},
        wholly_unknown_calls=sorted(planner.wholly_unknown),
        output=output,
        runtime=runtime.described,
    )
    ran_in = f"(the program ran in {runtime.described})"
    if expired:
        raise ProgramEndedError(f"{_how_it_ended(returncode, True, timeout)} {ran_in}", output)
    if isinstance(runtime, NodeRuntime):
        _judge_node(run, recorder, project, returncode, ran_in)
    elif (reported := recorder.engine_failure or recorder.failure) is not None:
        run.failure = _failure(reported, project.root.resolve(), ran_in)
    elif returncode > 0 and not recorder.root and not recorder.records:  # never reached us
        raise ProgramEndedError(_not_started(runtime.described, returncode, output), output)
    elif returncode != 0 or not recorder.finished:
        raise ProgramEndedError(f"{_how_it_ended(returncode, False, timeout)} {ran_in}", output)
    if run.failure is not None:
        run.outputs = {}
    return run


def _judge_node(
    run: IsolatedRun, recorder: Recorder, project: PulumiProject, returncode: int, ran_in: str
) -> None:
    """How a Node.js program's run ended, into ``run.failure``: the engine's own failure
    first, else what the SDK's run entry reported or the ``process.exit`` status
    (:func:`~pushguard.engine.node_failure.node_failure`); the error report the run entry
    logged leaves the logs (also after the engine's own failure), as the Python bootstrap's
    does. There is no bootstrap in a Node.js program: a
    message in the bootstrap's form that it logs is not a failure report and is ignored.

    Raises:
        ProgramEndedError: node exited before the SDK reached the engine, or was killed.
    """
    output, engine_failure = run.output, recorder.engine_failure
    if engine_failure is None and returncode > 0 and not recorder.root and not recorder.records:
        raise ProgramEndedError(_not_started(run.runtime, returncode, output, "node"), output)
    if engine_failure is None and returncode < 0:
        raise ProgramEndedError(f"{_how_it_ended(returncode, False, 0)} {ran_in}", output)
    run.failure, used = node_failure(
        run.logs,
        returncode=max(returncode, 0),
        finished=recorder.finished,
        stderr=output.stderr,
        root=project.root.resolve(),
        pwd=_pwd_main(project)[0],
        ran_in=ran_in,
    )
    if engine_failure is not None:
        run.failure = _failure(engine_failure, project.root.resolve(), ran_in)
    if used is not None:
        run.logs = [log for log in run.logs if log != ("error", used)]


def _not_started(
    described: str, returncode: int, output: ProgramOutput, what: str = "the interpreter"
) -> str:
    """The message for a runtime (``what``) that exited before the SDK registered the stack
    (no Pulumi SDK in the environment, a bad interpreter): its status and last line of
    stderr."""
    lines = [line for line in output.stderr.splitlines() if line.strip()]
    said = f"; it said: {lines[-1].strip()}" if lines else ""
    return (
        f"the program did not start in {described}: {what} exited with status "
        f"{returncode} before the Pulumi SDK reached the engine{said}"
    )


def _failure(body: Mapping[str, Any], root: Path, ran_in: str) -> ProgramFailure:
    """The bootstrap's report as a :class:`ProgramFailure`: ``where`` the innermost frame under
    the project root; a missing module names the interpreter it was looked for in."""
    where = None
    for frame in reversed(body.get("frames") or []):
        path = Path(str(frame[0]))
        if path.is_relative_to(root):
            where = f"{path.relative_to(root)}:{int(frame[1])}"
            break
    kind, message = str(body.get("kind") or "Error"), str(body.get("message") or "")
    if kind in {"ModuleNotFoundError", "ImportError"}:
        message = f"{message} {ran_in}"
    problems = tuple((str(f), str(m)) for f, m in body.get("problems") or ())
    component = body.get("component")
    return ProgramFailure(
        kind,
        message,
        where,
        component=component if isinstance(component, str) else None,
        problems=problems,
        traceback=str(body.get("traceback") or ""),
    )
