"""Stack choice and stack config reading: find the project, choose the stack, load its config
(with the Pulumi ESC environments it imports, from the values the team gives), and read from it
what the preview needs (project numbers for ``getProject``, the default providers' inputs, the
environment the program and the providers see, what the report must say about config the
environment adds)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushguard.policy.config_file import PROJECT_NUMBERS, PolicyConfig
from pushguard.preview.environments import (
    ResolvedEnvironment,
    StackEnvironment,
    read_stack_environment,
    resolve,
)
from pushguard.preview.mocks import (
    GOOGLE_PACKAGES,
    PROJECT_VARIABLES,
    REGION_VARIABLES,
    from_environment,
)
from pushguard.preview.origin import PreviewError
from pushguard.preview.project import (
    ProjectError,
    PulumiProject,
    find_project,
    load_project,
    load_stack_config,
)

PROJECT_NUMBERS_KEY = "pushguard:projectNumbers"
"""Stack config key (a map of project ID to number) that ``getProject`` answers from."""


_NAME_PART = re.compile(r"[A-Za-z0-9_.-]+")
"""What a stack, project or organization name may contain, as for the Pulumi CLI."""


def short_stack_name(project: PulumiProject, name: str) -> str:
    """The stack ``name`` selects: ``STACK``, ``ORG/STACK`` or ``ORG/PROJECT/STACK`` (the fully
    qualified form ``pulumi/actions`` and the Pulumi Cloud use) all select ``STACK``, whose
    config is ``Pulumi.STACK.yaml`` and whose name is in the URNs, as Pulumi's.

    Raises:
        PreviewError: ``name`` is none of those forms, or names another project than ``project``.
    """
    parts = name.split("/")
    if len(parts) > 3 or not all(_NAME_PART.fullmatch(part) for part in parts):
        raise PreviewError(
            f"stack name {name!r} is not STACK, ORG/STACK or ORG/PROJECT/STACK (each part "
            "letters, digits, '-', '_' or '.')"
        )
    if len(parts) == 3 and parts[1] != project.name:
        raise PreviewError(
            f"stack {name!r} is of project {parts[1]!r}, but the project in {project.root} is "
            f"{project.name!r} (its Pulumi.yaml)"
        )
    return parts[-1]


def choose_stack(project: PulumiProject, stack: str | None) -> str:
    """``stack``, else ``$PULUMI_STACK``, else the project's only stack config file; a fully
    qualified name (``ORG/PROJECT/STACK``, ``ORG/STACK``) is shortened to the stack's own name
    (:func:`short_stack_name`).

    Raises:
        PreviewError: several stacks and none chosen, or none at all; a name that is not a stack
            name or is of another project.
    """
    chosen = stack or os.environ.get("PULUMI_STACK")
    if chosen:
        return short_stack_name(project, chosen)
    stacks = project.stacks()
    if len(stacks) == 1:
        return stacks[0]
    listed = ", ".join(stacks) if stacks else "none"
    raise PreviewError(
        f"choose a stack with --stack (stacks in {project.stack_config_dir}: {listed})"
    )


@dataclass(frozen=True)
class LoadedStack:
    """A stack ready to preview: its project, name, config (``{"namespace:key": text}``) and
    secret keys, the stack file's ``environment:`` and what the values given for its ESC
    environments resolve to."""

    project: PulumiProject
    stack: str
    config: dict[str, str]
    secrets: set[str]
    environment: StackEnvironment
    resolved: ResolvedEnvironment

    def environ(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment the program and the providers start from: ``base`` (default
        ``os.environ``) with the variables the given ESC environments set, as the CLI sets them
        before it runs the program. While an imported environment's values are not given, the
        Google providers' project and region variables (:data:`~pushguard.preview.mocks.
        PROJECT_VARIABLES`, :data:`~pushguard.preview.mocks.REGION_VARIABLES`) are removed:
        the environment may set them or ``gcp:project``, so a variable left in the CI job's
        environment (``google-github-actions/auth`` sets ``GOOGLE_CLOUD_PROJECT``) must not
        stand in for the stack's project."""
        environ = {**(os.environ if base is None else base), **self.resolved.variables}
        if not self.resolved.complete:
            for name in (*PROJECT_VARIABLES, *REGION_VARIABLES):
                environ.pop(name, None)
        return environ


def read_stack(
    program_dir: Path | None,
    stack: str | None,
    environments: Mapping[str, Mapping[str, Any]] | None = None,
) -> LoadedStack:
    """The project at or above ``program_dir`` (default: the current folder), the stack
    :func:`choose_stack` picks, and that stack's config, with the ``pulumiConfig`` of the ESC
    environments it imports whose values are given in ``environments`` (name to what ``esc
    open`` prints).

    Raises:
        PreviewError: no project, an unreadable project or stack config, or no stack chosen.
    """
    try:
        project = load_project(find_project(program_dir or Path.cwd()))
        chosen = choose_stack(project, stack)
        declared = read_stack_environment(project.stack_config_file(chosen))
        resolved = resolve(declared, environments or {})
        config, secrets = load_stack_config(project, chosen, resolved.config)
    except ProjectError as error:
        raise PreviewError(str(error)) from None
    return LoadedStack(project, chosen, config, secrets, declared, resolved)


def load_stack(
    program_dir: Path | None, stack: str | None
) -> tuple[PulumiProject, str, dict[str, str], set[str]]:
    """:func:`read_stack` without environment values: ``(project, stack, config, secret
    keys)``.

    Raises:
        PreviewError: no project, an unreadable project or stack config, or no stack chosen.
    """
    loaded = read_stack(program_dir, stack)
    return loaded.project, loaded.stack, loaded.config, loaded.secrets


def project_numbers(
    config: Mapping[str, str], policy: Mapping[str, PolicyConfig]
) -> dict[str, str]:
    """Project numbers (project ID to number) from the policy config's top-level
    ``projectNumbers``, every policy's own ``projectNumbers`` and the stack's
    :data:`PROJECT_NUMBERS_KEY` (which wins).

    Raises:
        PreviewError: the stack's :data:`PROJECT_NUMBERS_KEY` is not a JSON object.
    """
    numbers: dict[str, str] = {}
    for name, entry in policy.items():
        given = (
            entry.properties if name == PROJECT_NUMBERS else entry.properties.get("projectNumbers")
        )
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


def provider_config(package: str, config: Mapping[str, str]) -> dict[str, Any]:
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


def default_provider_config(
    package: str, config: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The inputs of ``package``'s default provider as the provider ends up configured: the
    stack's ``package:*`` config (:func:`provider_config`) and, for ``gcp`` and the other
    Google providers (:data:`~pushguard.preview.mocks.GOOGLE_PACKAGES`), ``project`` and
    ``region`` from the provider's environment variables when the config has none
    (:data:`~pushguard.preview.mocks.PROJECT_VARIABLES`, in the provider's order; ``environ``
    defaults to ``os.environ``)."""
    props = provider_config(package, config)
    if package in GOOGLE_PACKAGES:
        for key, variables in (("project", PROJECT_VARIABLES), ("region", REGION_VARIABLES)):
            found = None if props.get(key) else from_environment(variables, environ)
            if found is not None:
                props[key] = found[1]
    return props


def stack_notes(config: Mapping[str, str], environ: Mapping[str, str] | None = None) -> list[str]:
    """What the report must say about the stack's config, in a stable order (the Pulumi ESC
    environments whose values are not given are listed as unknown offline instead,
    :mod:`pushguard.preview.offline`):

    - the default Google provider's project when it comes from an environment variable (where
      there is none, the pack lists the rules that need it as not checked, per subscription);
    - ``PULUMI_CONFIG`` in the environment (``environ``, default ``os.environ``) when it holds keys
      the stack config lacks: the program under the preview can read them (the SDK falls back to
      the variable, ``pulumi/runtime/config.py``), but the Python language host replaces
      ``PULUMI_CONFIG`` with the stack's config whenever the stack has any
      (``sdk/python/cmd/pulumi-language-python/main.go``), so under the CLI they are unset;
      ``PULUMI_CONFIG_<KEY>`` variables, which both read, are named too.
    """
    env = os.environ if environ is None else environ
    notes: list[str] = []
    if not config.get("gcp:project"):
        found = from_environment(PROJECT_VARIABLES, env)
        if found is not None:
            notes.append(
                f"the default Google provider's project {found[1]!r} comes from {found[0]} "
                "(no gcp:project in the stack config), as the provider reads it"
            )
    notes += _pulumi_config_notes(config, env)
    return notes


def _pulumi_config_notes(config: Mapping[str, str], env: Mapping[str, str]) -> list[str]:
    notes = []
    raw = env.get("PULUMI_CONFIG")
    if raw:
        try:
            extra = json.loads(raw)
        except json.JSONDecodeError:
            extra = None
        keys = sorted(str(k) for k in extra if k not in config) if isinstance(extra, dict) else []
        if not isinstance(extra, dict):
            notes.append("PULUMI_CONFIG in the environment is not a JSON object; it is ignored")
        elif keys and config:
            notes.append(
                f"PULUMI_CONFIG in the environment holds {', '.join(keys)}, which the stack "
                "config lacks: the Pulumi CLI's Python language host replaces PULUMI_CONFIG with "
                "the stack's config, so the program does not see them, here as under pulumi "
                "preview"
            )
        elif keys:
            notes.append(
                f"PULUMI_CONFIG in the environment supplies {', '.join(keys)} (the stack config "
                "is empty, so the Pulumi CLI passes the variable on to the program too)"
            )
    named = sorted(
        name
        for name in env
        if name.startswith("PULUMI_CONFIG_") and name != "PULUMI_CONFIG_SECRET_KEYS"
    )
    if named:
        notes.append(
            f"{', '.join(named)} set in the environment: a config key the stack config lacks is "
            "read from its variable, here as under the Pulumi CLI"
        )
    return notes
