"""Finding a Pulumi project and reading a stack's config the way the Pulumi CLI does.

``Pulumi.yaml`` names the program (``main``, default the project folder) and where stack config
files live (``stackConfigDir``); ``Pulumi.<stack>.yaml`` holds ``config:`` with keys namespaced
``namespace:key`` (bare keys belong to the project). Structured values are passed to the program
as JSON text, as the CLI does; ``secure:`` values are secrets, replaced here by
:data:`SECRET_PLACEHOLDER` because they cannot be decrypted without the stack's secrets provider.
Source: https://www.pulumi.com/docs/iac/concepts/projects/project-file/ and
https://www.pulumi.com/docs/iac/concepts/config/
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SECRET_PLACEHOLDER = "[secret]"


class ProjectError(ValueError):
    """The Pulumi project or stack config cannot be read; the message says which file and why."""


@dataclass(frozen=True)
class PulumiProject:
    """A Pulumi project: its name, folder, program folder and stack config folder."""

    name: str
    root: Path
    main: Path
    stack_config_dir: Path

    def stack_config_file(self, stack: str) -> Path:
        """``Pulumi.<stack>.yaml`` in the stack config folder."""
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"


def load_project(folder: Path) -> PulumiProject:
    """Read ``Pulumi.yaml`` (or ``Pulumi.yml``) in ``folder``.

    Raises:
        ProjectError: no project file, or one without a ``name``.
    """
    for candidate in ("Pulumi.yaml", "Pulumi.yml"):
        path = folder / candidate
        if path.is_file():
            break
    else:
        raise ProjectError(f"no Pulumi.yaml in {folder}")
    data = _read_yaml(path)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ProjectError(f"{path}: 'name' is required")
    main = folder / str(data.get("main") or ".")
    stack_dir = folder / str(data.get("stackConfigDir") or ".")
    return PulumiProject(name=name, root=folder, main=main, stack_config_dir=stack_dir)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ProjectError(f"{path}: cannot be read ({error})") from None
    if not isinstance(data, dict):
        raise ProjectError(f"{path}: expected a mapping at the top level")
    return data


def load_stack_config(project: PulumiProject, stack: str) -> tuple[dict[str, str], set[str]]:
    """The stack's config as the runtime takes it, and the keys whose values are secrets.

    Returns ``({"namespace:key": text}, {secret keys})``; text is the string value, or JSON for
    numbers, booleans, lists and mappings.

    Raises:
        ProjectError: the stack file is missing or malformed.
    """
    path = project.stack_config_file(stack)
    if not path.is_file():
        raise ProjectError(f"no stack config {path} for stack {stack!r}")
    raw = _read_yaml(path).get("config") or {}
    if not isinstance(raw, dict):
        raise ProjectError(f"{path}: 'config' must be a mapping")
    values: dict[str, str] = {}
    secrets: set[str] = set()
    for key, value in raw.items():
        full = key if ":" in key else f"{project.name}:{key}"
        if isinstance(value, dict) and set(value) == {"secure"}:
            values[full] = SECRET_PLACEHOLDER
            secrets.add(full)
        elif isinstance(value, str):
            values[full] = value
        else:
            values[full] = json.dumps(value)
    return values, secrets
