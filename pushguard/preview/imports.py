"""A resource declared with ``import`` (``ResourceOptions(import_=ID)``): what the plan shows and
what the pack judges, as the Pulumi engine would have it after the import.

What the engine does (pulumi/pulumi, ``pkg/resource/deploy/step_generator.go``, ``GenerateSteps``
and ``continueStepsFromImport``; ``pkg/resource/deploy/step.go``, ``ImportStep.Apply``;
https://github.com/pulumi/pulumi/blob/master/pkg/resource/deploy/step_generator.go):

- a custom resource whose ``RegisterResourceRequest.importId`` is set
  (``proto/pulumi/resource.proto``: "if set, this resource's state should be imported from the
  given ID") and that the stack does not hold yet is an **import**: the step is ``import``
  (``import-replacement`` when it replaces a resource the stack holds; shown ``=`` and ``=>``,
  ``RawPrefix`` in ``step.go``). The import step reads the resource from the provider by that
  ID, during a preview too, and its state becomes the resource's old state;
- the engine then plans as for any update: for each ``ignoreChanges`` path it sets the declared
  input back to the imported value (``processIgnoreChanges``, ``PropertyPath.Reset``: the
  cloud's value where it has one, removed where it has none), and the analyzers' ``Analyze``
  gets those inputs; every other input is updated to the declared value (Pulumi 3.174 and
  later, "New eventual state import system", pulumi/pulumi#19339; before it, an import whose
  inputs differed from the cloud's failed).

So after ``pulumi up`` an imported resource holds what the program declares, except under its
``ignoreChanges`` paths, where it keeps what the cloud holds. An offline preview cannot read the
cloud: :func:`as_imported` marks each ignored path unknown (Pulumi's unknown sentinel), in the
inputs the pack's ``Analyze`` gets and in the planned outputs ``AnalyzeStack`` gets, and the plan
shows the same. An unknown is never a pass: the pack reports it as it reports any value not known
at preview (``unknownAtPreview``). A path the engine would not reset (no such intermediate
object in the program's value) keeps the declared value; a leaf the program does not set is
unknown all the same (the cloud may hold it: a subscription declared without ``pushConfig`` but
imported from a push subscription, with ``ignoreChanges: ["pushConfig"]``, stays a push
subscription). ``*`` ignores everything under it; ignoring ``*`` at the top leaves nothing of
the program's (:func:`wholly_imported`).

Property paths are read with Pulumi's grammar (``sdk/go/common/resource/properties_path.go``,
``ParsePropertyPath``): ``a.b``, ``a[0]``, ``a["b.c"]``, ``a[*]``, ``*``; a path it refuses is
skipped by the engine (``processIgnoreChanges``), so it is here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY
from pushguard.gate.result import ResourceRecord

UNKNOWN: Final = UNKNOWN_STRING_VALUE
"""What the engine sends for a value not known at preview."""

Path = tuple[str | int, ...]
"""A parsed property path: keys, indexes and ``"*"``."""


def parse_path(path: str) -> Path | None:
    """``path`` as Pulumi parses it (``ParsePropertyPath``), ``None`` where Pulumi refuses it."""
    elements: list[str | int] = []
    if path.startswith("."):
        return None
    rest = path
    while rest:
        if rest[0] == ".":
            rest = rest[1:]
            if not rest:
                return None
        elif rest[0] == "[":
            parsed = _index(rest)
            if parsed is None:
                return None
            element, rest = parsed
            elements.append(element)
        else:
            end = min((i for i in (rest.find("."), rest.find("[")) if i >= 0), default=len(rest))
            elements.append(rest[:end])
            rest = rest[end:]
    return tuple(elements)


def _index(rest: str) -> tuple[str | int, str] | None:
    """The ``[...]`` element at the start of ``rest`` and what follows it, or ``None``."""
    if len(rest) > 1 and rest[1] == '"':
        key, i = [], 2
        while True:
            if i >= len(rest):
                return None
            if rest[i] == '"':
                i += 1
                break
            if rest[i] == "\\" and i + 1 < len(rest) and rest[i + 1] == '"':
                key.append('"')
                i += 2
            else:
                key.append(rest[i])
                i += 1
        if i >= len(rest) or rest[i] != "]":
            return None
        return "".join(key), rest[i + 1 :]
    close = rest.find("]")
    if close == -1:
        return None
    segment = rest[1:close]
    if segment == "*":
        return "*", rest[close + 1 :]
    try:
        return int(segment), rest[close + 1 :]
    except ValueError:
        return None


def _unknown_at(value: Any, path: Path) -> Any:
    """``value`` with what ``path`` names replaced by :data:`UNKNOWN` (see the module
    documentation); secret envelopes on the way are kept around what they hold."""
    if not path:
        return UNKNOWN
    if isinstance(value, Mapping) and value.get(SIG_KEY) == SECRET_SIG:
        return {**value, "value": _unknown_at(value.get("value"), path)}
    key, rest = path[0], path[1:]
    if key == "*":
        if not rest:
            return UNKNOWN  # every key or element of it is the cloud's
        if isinstance(value, Mapping):
            return {k: _unknown_at(v, rest) for k, v in value.items()}
        if isinstance(value, list):
            return [_unknown_at(v, rest) for v in value]
        return value
    if isinstance(key, int):
        if isinstance(value, list) and 0 <= key < len(value):
            return [_unknown_at(v, rest) if i == key else v for i, v in enumerate(value)]
        return value
    if isinstance(value, Mapping):
        if key in value:
            return {**value, key: _unknown_at(value[key], rest)}
        if not rest:
            return {**value, key: UNKNOWN}  # the cloud may hold it
    return value


def ignored_paths(record: ResourceRecord) -> list[Path]:
    """The record's ``ignoreChanges`` paths that the engine reads (parsed)."""
    return [p for p in map(parse_path, record.ignore_changes) if p]


def wholly_imported(record: ResourceRecord) -> bool:
    """Whether nothing of the program's values is left after the import: ``ignoreChanges``
    holds ``*`` (every property is the cloud's, including any the program does not set)."""
    return record.imported and ("*",) in ignored_paths(record)


def as_imported(record: ResourceRecord) -> ResourceRecord:
    """``record`` as the engine has it after the import: each ``ignoreChanges`` path unknown in
    its inputs and outputs (a record that is not imported, or ignores nothing, is returned as it
    is). :func:`wholly_imported` tells when this cannot be expressed in the values alone."""
    paths = ignored_paths(record)
    if not record.imported or not paths:
        return record
    inputs: Any = dict(record.inputs)
    outputs: Any = dict(record.outputs)
    for path in paths:
        if path == ("*",):  # every value the program sets is the cloud's
            inputs = dict.fromkeys(inputs, UNKNOWN)
            outputs = dict.fromkeys(outputs, UNKNOWN)
            continue
        inputs, outputs = _unknown_at(inputs, path), _unknown_at(outputs, path)
    return dataclasses.replace(record, inputs=inputs, outputs=outputs)


def import_note(record: ResourceRecord) -> str | None:
    """The report's note on an imported resource, or ``None`` when ``record`` is not one."""
    if not record.imported:
        return None
    ignored = ", ".join(record.ignore_changes)
    if not ignored:
        return (
            f"{record.type} {record.name} is imported (import ID {record.import_id}): the engine "
            "reads it from the cloud, then updates it to the inputs the program declares, which "
            "are the ones checked"
        )
    return (
        f"{record.type} {record.name} is imported (import ID {record.import_id}) with "
        f"ignoreChanges {ignored}: after the import it keeps what the cloud holds there, which "
        "an offline preview cannot read, so those values are unknown ([unknown]) and are not "
        "checked; `pulumi preview --policy-pack`, which reads the resource, checks them"
    )
