"""A custom constraint's CEL condition over one subscription, with cel-python (``celpy``).

The condition is "written against a representation of a supported service resource"
(https://cloud.google.com/pubsub/docs/custom-constraints): ``resource`` is the subscription's
REST resource (https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions),
which Cloud Asset Inventory exports as the asset's ``resource.data`` in the same field names
(https://cloud.google.com/asset-inventory/docs/reference/rest/v1/Asset). The audit reads only
some of its fields (:data:`READ_FIELDS`: what
:data:`pushguard.audit.schemas.RESOURCE_DATA` declares for subscriptions, and ``name``, taken
from the asset's name); a condition that reads another field is not evaluated
(:func:`unread_fields`), since the audit would see it absent where the export may hold it.

``resource`` is evaluated as JSON is: an absent field is absent, so selecting a field of an
absent message (``resource.pushConfig.pushEndpoint`` on a subscription without ``pushConfig``)
is an error, reported for that subscription (:func:`evaluate`), never a pass. Whether Google's
evaluator gives absent messages their default values instead is not documented on the pages
read; a condition that guards with ``has()`` evaluates the same either way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import celpy
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError
from lark import Token, Tree

from pushguard.guardrails.resource import NotBooleanError
from pushguard.guardrails.resource import evaluate as evaluate_cel

READ_FIELDS = frozenset(
    {
        ("name",),
        ("topic",),
        ("enableExactlyOnceDelivery",),
        ("pushConfig",),
        ("pushConfig", "pushEndpoint"),
        ("pushConfig", "oidcToken"),
        ("pushConfig", "oidcToken", "serviceAccountEmail"),
        ("pushConfig", "oidcToken", "audience"),
        ("pushConfig", "noWrapper"),
        ("pushConfig", "noWrapper", "writeMetadata"),
        ("pushConfig", "attributes"),
        ("deadLetterPolicy",),
        ("deadLetterPolicy", "deadLetterTopic"),
    }
)
"""The subscription fields the audit reads from the export (paths under ``resource``); a key
below ``pushConfig.attributes`` (a map) is any attribute."""

_MAPS = {("pushConfig", "attributes")}

TAG_FUNCTIONS = frozenset({"matchTag", "matchTagId", "hasTagKey", "hasTagKeyId"})
"""The only functions a policy rule's condition may use
(https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/organizations.policies,
``PolicyRule.condition``)."""


class ConditionError(ValueError):
    """A CEL expression that does not parse (the message is celpy's, first line)."""


@lru_cache(maxsize=256)
def _environment() -> celpy.Environment:
    return celpy.Environment()


@lru_cache(maxsize=256)
def parse(text: str) -> Tree[Token]:
    """The parse tree of ``text`` (cached per process: each executor parses each condition
    once).

    Raises:
        ConditionError: ``text`` is not CEL.
    """
    try:
        return _environment().compile(text)
    except CELParseError as error:
        message = " ".join(str(error).split())
        raise ConditionError(message[:300]) from None


def _chain(member: Tree[Token]) -> tuple[str, ...] | None:
    """The field path of a ``member`` node that selects fields of the variable ``resource``
    (``resource.a.b`` -> ``("a", "b")``; ``resource`` alone -> ``()``), else ``None``."""
    node = member.children[0]
    if not isinstance(node, Tree):
        return None
    if node.data == "primary":
        ident = node.children[0]
        if isinstance(ident, Tree) and ident.data == "ident":
            return () if str(ident.children[0]) == "resource" else None
        return None
    if node.data == "member_dot":
        inner, name = node.children[0], node.children[1]
        path = _chain(inner) if isinstance(inner, Tree) else None
        return None if path is None else (*path, str(name))
    return None


def _outer_members(tree: Tree[Token]) -> Iterator[Tree[Token]]:
    """The ``member`` nodes that are not the receiver of a field selection (``resource.a.b``
    is one, not three)."""
    inner = set()
    for node in tree.iter_subtrees():
        if node.data == "member_dot" and isinstance(node.children[0], Tree):
            inner.add(id(node.children[0]))
    for node in tree.iter_subtrees():
        if node.data == "member" and id(node) not in inner:
            yield node


def resource_paths(text: str) -> set[tuple[str, ...]]:
    """Every field path of ``resource`` the condition ``text`` selects, the longest of each
    selection (``()`` when it uses ``resource`` as a whole).

    Raises:
        ConditionError: ``text`` is not CEL.
    """
    paths: set[tuple[str, ...]] = set()
    for member in _outer_members(parse(text)):
        path = _chain(member)
        if path is not None:
            paths.add(path)
    return paths


def _read(path: tuple[str, ...]) -> bool:
    return path in READ_FIELDS or any(path[: len(m)] == m and len(path) > len(m) for m in _MAPS)


def unread_fields(text: str) -> list[str]:
    """The fields the condition ``text`` reads that the audit does not (``resource`` when it
    reads the whole resource), sorted; empty when it can be evaluated.

    Raises:
        ConditionError: ``text`` is not CEL.
    """
    unread = set()
    for path in resource_paths(text):
        if not path:
            unread.add("resource")
        elif not _read(path):
            unread.add("resource." + ".".join(path))
    return sorted(unread)


def functions(text: str) -> set[str]:
    """The names of the functions and methods ``text`` calls (``size``, ``startsWith``...).

    Raises:
        ConditionError: ``text`` is not CEL.
    """
    names = set()
    for node in parse(text).iter_subtrees():
        if node.data in {"member_dot_arg", "ident_arg"}:
            token = next(c for c in node.children if isinstance(c, Token))
            names.add(str(token))
    return names


def _clean(value: Any) -> Any:
    """A typed-struct value as JSON: nulls (absent fields) dropped."""
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items() if v is not None and k != "_corrupt_record"}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def cel_resource(asset_name: str, data: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``resource`` the condition sees: the subscription's typed ``resource.data`` (as
    Arrow's ``to_pylist`` gives it, ``pushConfig.attributes`` a list of pairs; ``None``: none)
    with absent fields left out, and ``name`` (``projects/P/subscriptions/S``) from its asset
    name (``//pubsub.googleapis.com/projects/P/subscriptions/S``,
    https://cloud.google.com/asset-inventory/docs/asset-names)."""
    resource = _clean(dict(data or {}))
    push = resource.get("pushConfig")
    if isinstance(push, dict) and isinstance(push.get("attributes"), list):
        push["attributes"] = {str(k): v for k, v in push["attributes"]}
    resource["name"] = asset_name.removeprefix("//pubsub.googleapis.com/")
    return dict(resource)


def evaluate(text: str, resource: Mapping[str, Any]) -> bool | str:
    """The condition ``text`` over ``resource``: its boolean value
    (:func:`pushguard.guardrails.resource.evaluate`, the compiler's parity tests' evaluation), or
    the error as text (an evaluation error, or a value that is not a boolean).

    ``text`` parses: :func:`parse` checked it when ``DIR`` was read.
    """
    try:
        return evaluate_cel(text, resource)
    except NotBooleanError as error:
        return f"evaluation error: the condition gave a {error.kind}, not a bool"
    except CELEvalError as error:
        detail = error.args[0] if error.args else str(error)
        return f"evaluation error: {' '.join(str(detail).split())[:300]}"
    except Exception as error:  # celpy raises Python errors of its own on odd values
        return f"evaluation error: {type(error).__name__}: {' '.join(str(error).split())[:300]}"
