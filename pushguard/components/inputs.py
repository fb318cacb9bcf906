"""Separating known input values from Pulumi Outputs, and putting resolved values back.

``split_inputs`` walks the component's args (nested dicts for ``target``, ``dead_letter`` and
``retry_policy``) and replaces every Output or awaitable by
:data:`~pushguard.components.spec.DEFERRED`, remembering where it stood; ``merge_resolved`` puts
the resolved values back for the second validation. Inputs that decide which resources exist must
be plain, and say so when they are not.

A value that holds Pulumi's unknown sentinel (:data:`~pushguard.components.spec.UNKNOWN_SENTINEL`:
an offline preview's ``secure:`` stack config value, read with ``Config.get`` or
``Config.get_secret``, alone or inside a string built from it) is not known yet either: it is
deferred like an Output and passed on as a *secret unknown* Output, so the resources and the
policy pack see "known after apply", never the sentinel as if it were the value. What is known
of such a string, the text before the sentinel (:func:`known_prefix`: ``http://`` of
``"http://" + host``), is still judged by the rules that can (the push endpoint's scheme).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from pushguard.components.spec import (
    DEFERRED,
    PLAIN_FIELDS,
    UNKNOWN_PARTS,
    holds_unknown,
    is_deferred,
)

Path = tuple[str, ...]
_NESTED = frozenset({"target", "dead_letter", "retry_policy"})
_OMIT = object()


def _contains_deferred(value: object) -> bool:
    if is_deferred(value):
        return True
    if isinstance(value, Mapping):
        return any(_contains_deferred(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_contains_deferred(v) for v in value)
    return False


def _known_or_unknown(value: Any) -> Any:
    """``value``, or a secret unknown when it holds the unknown sentinel (returning Pulumi's
    ``UNKNOWN`` from an apply makes the Output unknown; the apply keeps its dependencies)."""
    if holds_unknown(value):
        return pulumi.Output.secret(pulumi.output.UNKNOWN)
    return value


def deferred_output(value: Any) -> pulumi.Output[Any]:
    """``value`` (an Output, an awaitable or a plain value holding the unknown sentinel, possibly
    nested) as one Output that is unknown, and secret, whenever it holds the sentinel."""
    return pulumi.Output.from_input(value).apply(_known_or_unknown)


def _plain_problem(value: Any) -> str:
    what = (
        "a Pulumi Output here"
        if not holds_unknown(value)
        else "a secure: stack config value here, which an offline preview cannot decrypt"
    )
    return (
        "must be a plain value, known when the component is constructed, because it decides "
        f"which resources are created; it is {what}"
    )


def split_inputs(
    args: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[Path, Any], list[tuple[str, str]]]:
    """Split args into (values with ``DEFERRED`` placeholders, deferred inputs by path, problems).

    A mapping input (``labels``, ``attributes``) that holds any Output is deferred as a whole.
    ``problems`` lists plain-only inputs that were given as Outputs, as ``(field, message)``.
    """
    substituted: dict[str, Any] = {}
    deferred: dict[Path, Any] = {}
    problems: list[tuple[str, str]] = []

    def walk(prefix: Path, key: str, value: Any) -> Any:
        path = (*prefix, key)
        dotted = ".".join(path)
        nested = key in _NESTED and not prefix
        if dotted in PLAIN_FIELDS and (is_deferred(value) if nested else _contains_deferred(value)):
            problems.append((dotted, _plain_problem(value)))
            return _OMIT
        if nested and isinstance(value, Mapping):
            inner = {k: walk(path, k, v) for k, v in value.items()}
            return {k: v for k, v in inner.items() if v is not _OMIT}
        if _contains_deferred(value):
            deferred[path] = deferred_output(value)
            return DEFERRED
        return value

    for key, value in args.items():
        walked = walk((), key, value)
        if walked is not _OMIT:
            substituted[key] = walked
    return substituted, deferred, problems


def merge_resolved(substituted: Mapping[str, Any], resolved: Mapping[Path, Any]) -> dict[str, Any]:
    """``substituted`` with each deferred path replaced by its resolved value (by
    :data:`~pushguard.components.spec.DEFERRED` again when it still holds the unknown
    sentinel)."""
    merged: dict[str, Any] = {
        k: dict(v) if isinstance(v, Mapping) else v for k, v in substituted.items()
    }
    for path, value in resolved.items():
        target = merged
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = DEFERRED if holds_unknown(value) else value
    return merged


def known_prefix(value: object) -> str:
    """The text of a string ``value`` before its first unknown part
    (:data:`~pushguard.components.spec.UNKNOWN_PARTS`): ``"http://"`` of ``"http://" +
    UNKNOWN_SENTINEL + "/push"``; ``""`` for anything else (a string that holds nothing unknown,
    an Output, a mapping). What the rules may still judge of a push endpoint that is not known
    yet (:attr:`~pushguard.rules.facts.SubscriptionFacts.push_endpoint_prefix`)."""
    if not isinstance(value, str):
        return ""
    return UNKNOWN_PARTS.known_prefix(value) or ""


def value_at(values: Mapping[str, Any], path: Path) -> Any:
    """The input at ``path`` of ``values`` (the args as given, nested for ``target``,
    ``dead_letter`` and ``retry_policy``), as :func:`split_inputs` found it there."""
    found: Any = values
    for part in path:
        found = found[part]
    return found
