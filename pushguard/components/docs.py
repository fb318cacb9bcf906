"""The ``PushSubscription`` inputs table of the docs, generated from the args themselves.

The table in ``docs/component.md`` is :func:`inputs_markdown`'s output (a test keeps it current).
Every row comes from :class:`~pushguard.components.args.PushSubscriptionArgs` and the nested
``TypedDict`` classes it refers to: the field's annotation gives its type, whether it is required
and whether it may be a Pulumi Output (``pulumi.Input[...]``) or must be a plain value; the
field's docstring gives its description; the matching pydantic model in
:mod:`pushguard.components.spec` gives its default. Regenerate with
``python -m pushguard.components.docs``.
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, Required, is_typeddict

import pulumi
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from pushguard.components.args import (
    DeadLetterArgs,
    PushSubscriptionArgs,
    PushTargetArgs,
    RetryPolicyArgs,
    field_docstrings,
)
from pushguard.components.spec import (
    DeadLetterSpec,
    PushSubscriptionSpec,
    RetryPolicySpec,
    TargetSpec,
)

SPECS: typing.Final[Mapping[type, type[BaseModel]]] = {
    PushSubscriptionArgs: PushSubscriptionSpec,
    PushTargetArgs: TargetSpec,
    DeadLetterArgs: DeadLetterSpec,
    RetryPolicyArgs: RetryPolicySpec,
}
"""Each args ``TypedDict`` and the pydantic model that validates it (for the defaults)."""

HEADER: typing.Final = (
    "| input | description |",
    "|---|---|",
)


@dataclass(frozen=True)
class InputRow:
    """One input of the table: its names, its value's type and what the component does with it."""

    path: str
    """The Python name, dotted for a nested field (``dead_letter.max_delivery_attempts``)."""
    other: str
    """The name in the package schema, for other languages (``deadLetter.maxDeliveryAttempts``)."""
    type: str
    """The value's type, as Markdown."""
    required: bool
    plain: bool
    """Must be a plain value (it decides which resources exist), never a Pulumi Output."""
    default: str
    """The default the component applies, as Markdown (``""``: none of its own)."""
    description: str
    """The field's docstring, as Markdown."""

    def markdown(self) -> str:
        """The row: in the first cell the Python name, the other languages' name and the type
        with its qualifiers, one per line; then the description."""
        facts = [
            self.type,
            *(["required"] if self.required else []),
            *(["plain"] if self.plain else []),
            *([f"default {self.default}"] if self.default else []),
        ]
        first = f"`{self.path}`<br>`{self.other}`<br>{' · '.join(facts)}"
        return f"| {first} | {self.description} |"


def _markdown(text: str) -> str:
    """reStructuredText inline markup of a docstring as Markdown, safe inside a table cell."""
    text = re.sub(r":\w+:`~?(?:[\w.]+\.)?(\w+)`", r"`\1`", text)  # :class:`~a.b.C` -> `C`
    return text.replace("``", "`").replace("|", "\\|")


def camel_case(name: str) -> str:
    """``name`` as Pulumi's schema spells it for other languages (``push_endpoint`` ->
    ``pushEndpoint``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _unwrap_required(hint: Any) -> Any:
    while typing.get_origin(hint) in (NotRequired, Required):
        hint = typing.get_args(hint)[0]
    return hint


def _unwrap_input(hint: Any) -> tuple[Any, bool]:
    """``(T, True)`` for ``pulumi.Input[T]`` (``T | Awaitable[T] | Output[T]``), else
    ``(hint, False)``."""
    members = typing.get_args(hint) if typing.get_origin(hint) is typing.Union else ()
    if any(_is_output(member) for member in members):
        return members[0], True
    return hint, False


def _is_output(hint: Any) -> bool:
    """True for ``pulumi.Output[...]``, also as the forward reference ``pulumi.Input`` holds."""
    if isinstance(hint, typing.ForwardRef):
        return hint.__forward_arg__.startswith("Output[")
    return typing.get_origin(hint) is pulumi.Output or hint is pulumi.Output


def type_text(hint: Any) -> str:
    """A short Markdown rendering of a field's value type (``pulumi.Input`` left out)."""
    hint, _ = _unwrap_input(_unwrap_required(hint))
    origin = typing.get_origin(hint)
    if inspect.isclass(hint) and issubclass(hint, enum.Enum):
        return " \\| ".join(f'`"{member.value}"`' for member in hint)
    if is_typeddict(hint):
        return "object"
    if origin is not None and issubclass(origin, Mapping):
        key, value = typing.get_args(hint)
        return f"map of {type_text(key)} to {type_text(value)}"
    if origin is not None and issubclass(origin, Sequence):
        [item] = typing.get_args(hint)
        return f"list of {type_text(item)}"
    return f"`{getattr(hint, '__name__', str(hint))}`"


def _default_text(model: type[BaseModel], name: str) -> str:
    field = model.model_fields.get(name)
    default = None if field is None else field.default
    if default is None or default is PydanticUndefined or default == ():
        return ""
    if isinstance(default, enum.Enum):
        default = default.value
    return f"`{json.dumps(default)}`"


def input_rows(cls: type = PushSubscriptionArgs, prefix: str = "") -> Iterator[InputRow]:
    """One :class:`InputRow` per field of the args ``cls``, each nested object's fields after
    it (``target``, then ``target.kind``)."""
    # The raw annotations: ``typing.get_type_hints`` cannot evaluate pulumi.Input's forward
    # reference to ``Output[T]``, and args.py does not postpone annotations.
    hints: dict[str, Any] = dict(inspect.get_annotations(cls))
    docs = field_docstrings(cls)
    required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    for name, hint in hints.items():
        value, may_be_output = _unwrap_input(_unwrap_required(hint))
        path = f"{prefix}{name}"
        yield InputRow(
            path=path,
            other=".".join(camel_case(part) for part in path.split(".")),
            type=type_text(hint),
            required=name in required_keys,
            plain=not may_be_output,
            default=_default_text(SPECS[cls], name),
            description=_markdown(docs.get(name, "")),
        )
        if is_typeddict(value):
            yield from input_rows(value, f"{path}.")


def inputs_markdown(args: type = PushSubscriptionArgs) -> str:
    """The inputs table of ``PushSubscription``, as Markdown: the generated section of
    ``docs/component.md`` (kept in sync by a test).

    Two columns, so that it reads at a laptop's width: first the input, on three lines: its
    Python name; its camelCase name for other languages (through ``components/``); its type (enums
    as their values) with, where they apply, ``required``, ``plain`` (it decides which resources
    exist, so it cannot be a Pulumi Output) and the default the component applies. Then its
    docstring. Nested objects (``target``, ``dead_letter``, ``retry_policy``) are followed by one
    row per field (``target.kind``). The page wraps the table in ``<div class="pushguard-inputs"
    markdown>``, whose style (``docs/stylesheets/pushguard.css``) keeps every name and type of
    the first column on one line.
    """
    return "\n".join([*HEADER, *(row.markdown() for row in input_rows(args))]) + "\n"


if __name__ == "__main__":
    print(inputs_markdown(), end="")
