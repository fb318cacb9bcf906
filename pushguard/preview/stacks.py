"""Stack choice and stack config reading: find the project, choose the stack, load its config,
and read from it what the preview needs (project numbers for ``getProject``, the default
providers' inputs)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pushguard.policy.config_file import PolicyConfig
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


def load_stack(
    program_dir: Path | None, stack: str | None
) -> tuple[PulumiProject, str, dict[str, str], set[str]]:
    """The project at or above ``program_dir`` (default: the current folder), the stack
    :func:`choose_stack` picks, and that stack's config: ``(project, stack, config, secret
    keys)``.

    Raises:
        PreviewError: no project, an unreadable project or stack config, or no stack chosen.
    """
    try:
        project = load_project(find_project(program_dir or Path.cwd()))
        chosen = choose_stack(project, stack)
        config, secrets = load_stack_config(project, chosen)
    except ProjectError as error:
        raise PreviewError(str(error)) from None
    return project, chosen, config, secrets


def project_numbers(
    config: Mapping[str, str], policy: Mapping[str, PolicyConfig]
) -> dict[str, str]:
    """Project numbers (project ID to number) from every policy's ``projectNumbers`` and the
    stack's :data:`PROJECT_NUMBERS_KEY` (which wins).

    Raises:
        PreviewError: the stack's :data:`PROJECT_NUMBERS_KEY` is not a JSON object.
    """
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
