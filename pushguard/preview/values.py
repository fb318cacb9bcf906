"""The ``--values`` file of ``pushguard preview``: values the real ``pulumi preview`` reads from
Pulumi Cloud and an offline preview cannot, given by the team.

The file is YAML or JSON (a ``.json`` file is read as strict JSON, anything else as YAML, of
which JSON is a subset), shaped::

    {"stackReferences": {"ORG/PROJECT/STACK": {OUTPUT: VALUE, ...}},
     "environments": {"PROJECT/ENV": {...}}}

- a stack's part is what ``pulumi stack output --json --stack ORG/PROJECT/STACK`` prints: every
  output by name (https://www.pulumi.com/docs/iac/cli/commands/pulumi_stack_output/). Without
  ``--show-secrets`` the CLI prints a secret output as ``"[secret]"`` (``massagePropertyValue``
  in ``pkg/backend/display/json.go`` of pulumi/pulumi, commit 1b5949891b3c), which the preview
  cannot read: such an output is unknown offline. A value in Pulumi's secret envelope
  (``{"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": V}``, the
  wire form of a secret) is the secret ``V``. The key is the stack's name as the program's
  ``StackReference`` names it;
- an environment's part is what ``esc open PROJECT/ENV --format json`` prints: its values,
  ``pulumiConfig`` and ``environmentVariables`` among them
  (https://www.pulumi.com/docs/esc/cli/commands/esc_env_open/; :mod:`pushguard.preview.
  environments`). The key is the environment's name as the stack file imports it.

Each part is checked (a pydantic model, as at every boundary): a mistake is a
:class:`ValuesError` naming the field and what is allowed, and the preview exits 2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
)

_NAME_PART = re.compile(r"[A-Za-z0-9_.-]+")
"""What a part of a stack or environment name may contain."""


class ValuesError(ValueError):
    """The ``--values`` file cannot be used. ``problems`` lists each as ``(field, what is
    wrong and what is allowed)``."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source, self.problems = source, problems
        listed = "\n".join(f"  - {where}: {what}" for where, what in problems)
        super().__init__(f"invalid --values file {source}:\n{listed}")


def _name(kind: str, most: int) -> Any:
    def check(value: str) -> str:
        parts = value.split("/")
        if len(parts) > most or not all(_NAME_PART.fullmatch(part) for part in parts):
            forms = "ORG/PROJECT/STACK" if kind == "stack" else "[PROJECT/]ENV"
            raise ValueError(
                f"must be a {kind} name, {forms} (each part letters, digits, '-', '_' or '.')"
            )
        return value

    return AfterValidator(check)


StackName = Annotated[str, _name("stack", 3)]
EnvironmentName = Annotated[str, _name("environment", 3)]


class EnvironmentValues(BaseModel):
    """One environment's values, as ``esc open --format json`` prints them: any top-level
    properties; ``pulumiConfig`` (config key to value) and ``environmentVariables`` (variable
    name to value), when present, must be objects."""

    model_config = ConfigDict(extra="allow", frozen=True)

    pulumi_config: dict[str, JsonValue] = Field(default_factory=dict, alias="pulumiConfig")
    environment_variables: dict[str, JsonValue] = Field(
        default_factory=dict, alias="environmentVariables"
    )


class ValuesFile(BaseModel):
    """The whole file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stack_references: dict[StackName, dict[str, JsonValue]] = Field(
        default_factory=dict, alias="stackReferences"
    )
    environments: dict[EnvironmentName, EnvironmentValues] = Field(default_factory=dict)


class GivenValues:
    """The values of a checked file: ``stack_references`` (stack name to its outputs) and
    ``environments`` (environment name to its values), plain JSON data."""

    def __init__(
        self,
        stack_references: Mapping[str, Mapping[str, Any]] | None = None,
        environments: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.stack_references = {k: dict(v) for k, v in (stack_references or {}).items()}
        self.environments = {k: dict(v) for k, v in (environments or {}).items()}


_ALLOWED = (
    "allowed: stackReferences (stack name to its outputs) and environments (environment name "
    "to its values)"
)


def _problems(error: ValidationError) -> list[tuple[str, str]]:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "(file)"
        if item["type"] == "extra_forbidden":
            problems.append((where, f"is not a field of the values file; {_ALLOWED}"))
        elif item["type"] in ("dict_type", "model_type"):
            problems.append((where, "must be an object (a mapping)"))
        else:
            problems.append((where, item["msg"].removeprefix("Value error, ")))
    return problems


def parse_values(raw: Any, source: str = "") -> GivenValues:
    """Check a values document (``source`` names it in errors).

    Raises:
        ValuesError: not an object, an unknown top-level field, a name that is not a stack or
            environment name, a stack's outputs or an environment's values (its
            ``pulumiConfig``, ``environmentVariables``) that are not objects.
    """
    if raw is None:
        return GivenValues()
    if not isinstance(raw, Mapping):
        raise ValuesError(source, [("(file)", f"must be an object; {_ALLOWED}")])
    try:
        model = ValuesFile.model_validate(raw)
    except ValidationError as error:
        raise ValuesError(source, _problems(error)) from None
    return GivenValues(
        model.stack_references,
        {
            name: env.model_dump(by_alias=True, exclude_unset=True)
            for name, env in model.environments.items()
        },
    )


def load_values(path: Path) -> GivenValues:
    """Read and check the file ``path`` (:func:`parse_values`).

    Raises:
        ValuesError: the file cannot be read, is not JSON (a ``.json`` file) or YAML, or is
            malformed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValuesError(str(path), [("(file)", f"cannot be read ({error.strerror})")]) from None
    except UnicodeDecodeError:
        raise ValuesError(str(path), [("(file)", "is not UTF-8 text")]) from None
    try:
        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as error:
        raise ValuesError(str(path), [("(file)", f"is not JSON: {error}")]) from None
    except yaml.YAMLError as error:
        raise ValuesError(str(path), [("(file)", f"is not YAML or JSON: {error}")]) from None
    return parse_values(raw, str(path))
