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
import re
import typing
from collections.abc import Iterator, Mapping, Sequence
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
    "| input | other languages | type | required | may be an Output | default | description |",
    "|---|---|---|---|---|---|---|",
)


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
        return f'`"{default.value}"`'
    return f"`{default!r}`"


def _rows(cls: type, prefix: str) -> Iterator[str]:
    # The raw annotations: ``typing.get_type_hints`` cannot evaluate pulumi.Input's forward
    # reference to ``Output[T]``, and args.py does not postpone annotations.
    hints: dict[str, Any] = dict(inspect.get_annotations(cls))
    docs = field_docstrings(cls)
    required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    for name, hint in hints.items():
        value, may_be_output = _unwrap_input(_unwrap_required(hint))
        path = f"{prefix}{name}"
        other = ".".join(camel_case(part) for part in path.split("."))
        cells = (
            f"`{path}`",
            f"`{other}`",
            type_text(hint),
            "yes" if name in required_keys else "",
            "yes" if may_be_output else "no (plain)",
            _default_text(SPECS[cls], name),
            _markdown(docs.get(name, "")),
        )
        yield "| " + " | ".join(cells) + " |"
        if is_typeddict(value):
            yield from _rows(value, f"{path}.")


def inputs_markdown(args: type = PushSubscriptionArgs) -> str:
    """The inputs table of ``PushSubscription``, as Markdown.

    One row per input, nested objects (``target``, ``dead_letter``, ``retry_policy``) followed by
    one row per field (``target.kind``). Columns: the Python name; the camelCase name other
    languages use through ``components/``; the type (enums as their values); whether it is
    required; whether it may be a Pulumi Output or must be a plain value (it decides which
    resources exist); the default the component applies (empty: unset, Pulumi's or Pub/Sub's
    default as described); the field's docstring. This is the generated section of
    ``docs/component.md`` (kept in sync by a test).
    """
    return "\n".join([*HEADER, *_rows(args, "")]) + "\n"


if __name__ == "__main__":
    print(inputs_markdown(), end="")
