"""Which ``node`` runs a Node.js program (TypeScript or JavaScript, ``runtime: nodejs``), with
which run entry, arguments and environment, as Pulumi's Node.js language host starts it.

From ``sdk/nodejs/cmd/pulumi-language-nodejs/main.go`` of pulumi/pulumi (commit
1b5949891b3cefcb9974752b24a5ecef0acc86c8):

- ``parseOptions``: ``Pulumi.yaml``'s ``runtime.options`` ``typescript`` (a boolean, default
  true), ``tsconfig`` (a string) and ``nodeargs`` (a string, split as a shell would); other
  options (``packagemanager``, ``production``) only concern installing, which pushguard does not
  do;
- ``Run``: ``node`` found on ``PATH`` ("could not find node on the $PATH"), and the run entry
  ``@pulumi/pulumi/cmd/run`` located with ``require.resolve`` by ``node`` in the program's folder
  (``locateModule``): the project's own SDK, in its ``node_modules``, as the team installs it
  for ``pulumi preview``;
- ``execRuntime``: ``node [nodeargs] RUN_ENTRY ARGS`` with this process's environment plus
  ``PULUMI_CONFIG`` (the stack's config as JSON, each key ``namespace:config:name``:
  ``constructConfig``), ``PULUMI_CONFIG_SECRET_KEYS`` (a JSON list), and
  ``PULUMI_NODEJS_TYPESCRIPT=true`` / ``PULUMI_NODEJS_TSCONFIG_PATH`` from the options (the run
  entry then compiles TypeScript with ts-node: the project's ``typescript`` and ``ts-node`` if
  installed, else the copies vendored in ``@pulumi/pulumi``: ``sdk/nodejs/cmd/run/run.ts`` and
  ``sdk/nodejs/tsutils.ts``);
- ``constructArguments``: ``--monitor``, ``--engine``, ``--project``, ``--root-directory``,
  ``--stack``, ``--pwd`` (the program's folder), ``--dry-run``, ``--parallel`` and the entry
  point (``.``, or ``main``'s file name: ``getPwdMain`` in ``pkg/engine/project.go``).
  ``--sync`` (a folder of pipes for the deprecated synchronous invokes) is not given: with no
  such folder the SDK uses the asynchronous ``Invoke`` RPC
  (``tryGetSyncInvokes`` in ``sdk/nodejs/runtime/settings.ts``).

The run entry registers the program's stack with the engine, compiles and runs the program, and
reports an unhandled error with the engine's ``Log`` at error severity before exiting with the
host's "error already shown" status 32 (``sdk/nodejs/cmd/run/index.ts`` and ``run.ts``):
:mod:`pushguard.engine.node_failure` reads that report.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushguard.engine.runtime import RuntimeChoiceError, parallel, runtime_options

RUN_MODULE = "@pulumi/pulumi/cmd/run"
"""The run entry of the Node.js SDK (``defaultRunPath``)."""

_LOCATE = (
    "try { console.log(require.resolve(process.argv[1])); } catch (error) { "
    "console.error(error.code === 'MODULE_NOT_FOUND' ? 'MODULE_NOT_FOUND' : error.message); "
    "process.exit(1); }"
)
"""``locateModule``'s script, the module name given as an argument instead of spliced in."""

LOCATE_TIMEOUT = 60.0
"""Seconds ``node`` may take to locate the run entry."""


@dataclass(frozen=True)
class NodeOptions:
    """``runtime.options`` of a ``nodejs`` project that decide how the program runs."""

    typescript: bool = True
    tsconfig: str = ""
    nodeargs: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeRuntime:
    """``node``: the executable; ``run_entry``: the project's ``@pulumi/pulumi/cmd/run``;
    ``sdk``: that package's folder and ``sdk_version`` its version; ``options``: the runtime
    options; ``environment``: the environment the program gets (config not yet added);
    ``described``: for messages (``"node 20.1.0 (/usr/bin/node) with @pulumi/pulumi 3.248.0
    from /p/node_modules/@pulumi/pulumi"``)."""

    node: Path
    run_entry: Path
    sdk: Path
    sdk_version: str
    options: NodeOptions
    environment: Mapping[str, str]
    described: str


def node_options(options: Mapping[str, Any]) -> NodeOptions:
    """The options that decide how the program runs (``parseOptions``).

    Raises:
        RuntimeChoiceError: an option of the wrong type, with the host's message.
    """
    typescript = options.get("typescript", True)
    if not isinstance(typescript, bool):
        raise RuntimeChoiceError("typescript option must be a boolean")
    tsconfig = options.get("tsconfig", "")
    if not isinstance(tsconfig, str):
        raise RuntimeChoiceError("tsconfigpath option must be a string")
    nodeargs = options.get("nodeargs", "")
    if not isinstance(nodeargs, str):
        raise RuntimeChoiceError("nodeargs option must be a string")
    try:
        split = tuple(shlex.split(nodeargs))
    except ValueError as error:
        raise RuntimeChoiceError(f"nodeargs option cannot be split: {error}") from None
    return NodeOptions(typescript, tsconfig, split)


def _package_root(run_entry: Path) -> Path:
    """The ``@pulumi/pulumi`` folder holding ``run_entry`` (``.../cmd/run/index.js``)."""
    for folder in run_entry.parents:
        if (folder / "package.json").is_file() and folder.name == "pulumi":
            return folder
    return run_entry.parent


def _not_installed(program_dir: Path) -> RuntimeChoiceError:
    """The error for a program whose folder and those above it have no ``@pulumi/pulumi``."""
    near = next(
        (f for f in (program_dir, *program_dir.parents) if (f / "package.json").is_file()),
        program_dir,
    )
    return RuntimeChoiceError(
        f"the Pulumi SDK for Node.js is not installed for the program in {program_dir}: "
        f"no node_modules/@pulumi/pulumi there or in a folder above it (Node.js looked for "
        f"{RUN_MODULE}); install the program's dependencies as for `pulumi preview`: "
        f"npm ci (or npm install) in {near}"
    )


def locate_run_entry(node: Path, program_dir: Path, environ: Mapping[str, str]) -> Path:
    """``@pulumi/pulumi/cmd/run`` as ``node`` resolves it from ``program_dir``
    (``locateModule``).

    Raises:
        RuntimeChoiceError: it is not installed, or ``node`` failed otherwise (its message).
    """
    try:
        done = subprocess.run(
            [str(node), "-e", _LOCATE, RUN_MODULE],
            cwd=program_dir,
            env=dict(environ),
            capture_output=True,
            text=True,
            timeout=LOCATE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RuntimeChoiceError(f"{node} could not be run: {error}") from None
    if done.returncode != 0:
        said = done.stderr.strip()
        if said.endswith("MODULE_NOT_FOUND"):
            raise _not_installed(program_dir)
        raise RuntimeChoiceError(f"{node} could not locate {RUN_MODULE}: {said}")
    return Path(done.stdout.strip().splitlines()[-1])


def _version(command: list[str], environ: Mapping[str, str]) -> str:
    """What ``command`` prints (``node --version``), ``""`` when it cannot say."""
    try:
        done = subprocess.run(
            command, env=dict(environ), capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip().removeprefix("v") if done.returncode == 0 else ""


def resolve_node(
    root: Path, program_dir: Path, environ: Mapping[str, str] | None = None
) -> NodeRuntime:
    """``node`` and the project's run entry for the project in ``root`` whose program is in
    ``program_dir``; ``environ`` defaults to ``os.environ``.

    Raises:
        RuntimeChoiceError: a bad option, no ``node`` on ``PATH``, no ``@pulumi/pulumi``
            installed for the program.
    """
    environ = dict(os.environ if environ is None else environ)
    options = node_options(runtime_options(root))
    found = shutil.which("node", path=environ.get("PATH", os.defpath))
    if not found:
        raise RuntimeChoiceError(
            "could not find node on the $PATH; the program's runtime is nodejs (Pulumi.yaml): "
            "install Node.js, as for `pulumi preview`"
        )
    node = Path(found)
    run_entry = locate_run_entry(node, program_dir, environ)
    sdk = _package_root(run_entry)
    try:
        manifest = json.loads((sdk / "package.json").read_text(encoding="utf-8"))
        sdk_version = str(manifest.get("version") or "")
    except (OSError, ValueError, AttributeError):
        sdk_version = ""
    node_version = _version([str(node), "--version"], environ)
    described = (
        f"node {node_version or '(unknown version)'} ({node}) with @pulumi/pulumi "
        f"{sdk_version or '(unknown version)'} from {sdk}"
    )
    return NodeRuntime(node, run_entry, sdk, sdk_version, options, environ, described)


def node_config(config: Mapping[str, str]) -> str:
    """``PULUMI_CONFIG`` for the Node.js SDK: each ``namespace:name`` key as
    ``namespace:config:name`` (``constructConfig``; a bare key belongs to no namespace and is
    kept)."""
    transformed = {}
    for key, value in config.items():
        namespace, sep, name = key.partition(":")
        transformed[f"{namespace}:config:{name}" if sep else key] = value
    return json.dumps(transformed)


def node_environment(
    runtime: NodeRuntime, config: Mapping[str, str], secret_keys: Iterable[str]
) -> dict[str, str]:
    """The program's environment (``execRuntime``): the config always replaced, the
    TypeScript options added."""
    environment = dict(runtime.environment)
    environment["PULUMI_CONFIG"] = node_config(config)
    environment["PULUMI_CONFIG_SECRET_KEYS"] = json.dumps(sorted(secret_keys))
    if runtime.options.typescript:
        environment["PULUMI_NODEJS_TYPESCRIPT"] = "true"
    if runtime.options.tsconfig:
        environment["PULUMI_NODEJS_TSCONFIG_PATH"] = runtime.options.tsconfig
    return environment


def node_argv(
    runtime: NodeRuntime,
    *,
    project: str,
    root: Path,
    stack: str,
    pwd: Path,
    entry: str,
    address: str,
) -> list[str]:
    """``node``'s command line (``execRuntime`` and ``constructArguments``)."""
    return [
        str(runtime.node),
        *runtime.options.nodeargs,
        str(runtime.run_entry),
        *("--monitor", address, "--engine", address, "--project", project),
        *("--root-directory", str(root), "--stack", stack, "--pwd", str(pwd)),
        *("--dry-run", "--parallel", str(parallel())),
        entry,
    ]
