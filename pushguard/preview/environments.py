"""The Pulumi ESC environments a stack imports, and what they add to its config when the team
gives their values (``pushguard preview --values``).

A stack config file may import ESC environments (https://www.pulumi.com/docs/esc/guides/pulumi-iac/,
"The ``environment`` block"): ``environment:`` is a list of environment names, or an environment
definition of its own (``imports:``, ``values:``; ``ProjectStack.Environment`` and
``Environment.Definition`` in ``sdk/go/common/workspace/project.go`` of pulumi/pulumi, commit
1b5949891b3c). An import is a name (``[PROJECT/]ENV``) or a mapping of one name to options, of
which ``merge: false`` keeps it out of the merge
(https://www.pulumi.com/docs/esc/environments/syntax/top-level-keys/imports/). The CLI opens
the environment in Pulumi Cloud (``openStackEnv`` in ``pkg/cmd/pulumi/config/io.go``), which an
offline preview cannot.

What the CLI takes from the opened environment:

- ``pulumiConfig`` becomes stack config (``toConfigMap``, ``mergeConfig`` in
  ``pkg/workspace/config.go``): bare keys in the project's namespace, the stack file's own
  value winning (objects merged key by key), project defaults for keys neither sets
  (https://www.pulumi.com/docs/esc/environments/syntax/reserved-properties/pulumi-config/);
- ``environmentVariables`` are set in the CLI's environment (``os.Setenv`` in
  ``getStackConfigurationFromProjectStack``, ``io.go``), so the program and the providers see
  them; only string, number, boolean and null values become variables, others are skipped
  (``Environment.GetEnvironmentVariables`` in pulumi/esc's ``environment.go``, commit
  5e20cf80ad29).

Imports are merged in order, later values over earlier ones, by JSON Merge Patch (RFC 7396;
https://www.pulumi.com/docs/esc/environments/imports/). An environment's values are what
``esc open ENV --format json`` prints (``renderValue`` in pulumi/esc's
``cmd/esc/cli/env_open.go``: ``Value.ToJSON`` with secrets shown, an unknown value as
``"[unknown]"``); a ``"[secret]"`` (what ``esc env get`` prints for a hidden secret) or
``"[unknown]"`` in ``pulumiConfig`` is a value not known offline: it reaches the program as an
unknown secret, as a ``secure:`` value does (:mod:`pushguard.preview.project`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

PLACEHOLDERS = ("[secret]", "[unknown]")
"""What the ESC and Pulumi CLIs print in place of a value they do not show."""

HIDDEN: dict[str, str] = {"secure": "[not known offline]"}
"""A config value the preview cannot know, written as a ``secure:`` value so that the config
reader (:func:`pushguard.preview.project.load_stack_config`) passes it on as an unknown
secret."""


@dataclass(frozen=True)
class EnvironmentImport:
    """One environment the stack imports: its ``name`` as written, whether its values are
    merged (``merge: false`` keeps them out), and the ``line`` of the stack file naming it."""

    name: str
    merge: bool = True
    line: int = 1


@dataclass(frozen=True)
class StackEnvironment:
    """The stack file's ``environment:``: its imports in order, whether it defines ``values``
    of its own (an environment no name opens), and the ``line`` of the key (0: none)."""

    imports: tuple[EnvironmentImport, ...] = ()
    inline_values: bool = False
    line: int = 0


@dataclass(frozen=True)
class ResolvedEnvironment:
    """What the environments add, from the values given for them: ``config`` (the merged
    ``pulumiConfig``, keys as written), ``variables`` (``environmentVariables`` as strings),
    ``unresolved`` (imports no value was given for), ``hidden`` (``(environment, key)`` of
    config given as a placeholder) and ``inline`` (the stack file's own ``values``, which no
    ``--values`` entry can give)."""

    config: dict[str, Any] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    unresolved: tuple[EnvironmentImport, ...] = ()
    hidden: tuple[tuple[str, str], ...] = ()
    inline: bool = False

    @property
    def complete(self) -> bool:
        """Whether every environment's values were given."""
        return not self.unresolved and not self.inline


def _key_node(mapping: yaml.Node, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if not isinstance(mapping, yaml.MappingNode):
        return None
    for name, value in mapping.value:
        if isinstance(name, yaml.ScalarNode) and name.value == key:
            return name, value
    return None


def _imports(node: yaml.Node) -> list[EnvironmentImport]:
    """The imports a list node names (a name, or ``{NAME: {merge: false}}``)."""
    if isinstance(node, yaml.ScalarNode) and node.value:
        return [EnvironmentImport(node.value, True, node.start_mark.line + 1)]
    if not isinstance(node, yaml.SequenceNode):
        return []
    found = []
    for item in node.value:
        line = item.start_mark.line + 1
        if isinstance(item, yaml.ScalarNode) and item.value:
            found.append(EnvironmentImport(item.value, True, line))
        elif isinstance(item, yaml.MappingNode):
            for name, options in item.value:
                merge = _key_node(options, "merge")
                off = merge is not None and str(merge[1].value).lower() == "false"
                found.append(EnvironmentImport(str(name.value), not off, line))
    return found


def read_stack_environment(path: Path) -> StackEnvironment:
    """The ``environment:`` of the stack config file ``path`` (an empty one when the file or
    the key is missing or the file is not YAML: the config reader reports a malformed file)."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return StackEnvironment()
    found = _key_node(root, "environment") if root is not None else None
    if found is None:
        return StackEnvironment()
    key, node = found
    if isinstance(node, yaml.MappingNode):
        imports = _key_node(node, "imports")
        values = _key_node(node, "values")
        listed = _imports(imports[1]) if imports else []
        inline = values is not None and bool(getattr(values[1], "value", None))
        return StackEnvironment(tuple(listed), inline, key.start_mark.line + 1)
    return StackEnvironment(tuple(_imports(node)), False, key.start_mark.line + 1)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON Merge Patch: ``patch`` laid over ``target`` (a ``None`` member removes)."""
    if not isinstance(patch, Mapping):
        return patch
    merged = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def _variable(value: Any) -> str | None:
    """An environment variable's text as ESC makes it (``Value.ToString``), or ``None`` for a
    value ESC does not turn into a variable (a list or an object)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    return None


def resolve(stack: StackEnvironment, given: Mapping[str, Mapping[str, Any]]) -> ResolvedEnvironment:
    """Merge the values ``given`` (environment name to what ``esc open`` prints) of the
    environments ``stack`` imports, in order; list the imports without values."""
    merged: Any = {}
    unresolved = []
    for item in stack.imports:
        if item.name not in given:
            unresolved.append(item)
        elif item.merge:
            merged = merge_patch(merged, given[item.name])
    config, hidden = {}, []
    raw = merged.get("pulumiConfig") if isinstance(merged, Mapping) else None
    for key, value in (raw or {}).items():
        if isinstance(value, str) and value in PLACEHOLDERS:
            hidden.append((key, value))
            config[key] = HIDDEN
        else:
            config[key] = value
    variables = {}
    raw_variables = merged.get("environmentVariables") if isinstance(merged, Mapping) else None
    for name, value in (raw_variables or {}).items():
        text = _variable(value)
        if text is not None:
            variables[str(name)] = text
    owners = {key: _owner(stack, given, key) for key, _ in hidden}
    return ResolvedEnvironment(
        config=config,
        variables=variables,
        unresolved=tuple(unresolved),
        hidden=tuple(sorted((owners[key], key) for key, _ in hidden)),
        inline=stack.inline_values,
    )


def _owner(stack: StackEnvironment, given: Mapping[str, Mapping[str, Any]], key: str) -> str:
    """The last merged environment whose ``pulumiConfig`` sets ``key``."""
    owner = ""
    for item in stack.imports:
        config = given.get(item.name, {}).get("pulumiConfig")
        if item.merge and isinstance(config, Mapping) and key in config:
            owner = item.name
    return owner
