"""The CEL each target is known to accept, and the check that every generated expression stays
inside it: parsed with cel-python (``celpy``), its syntax tree walked, any function or macro
outside the subset refused (:func:`check_expression`).

**Custom constraints.** The Organization Policy pages read this round
(:data:`~pushguard.guardrails.sources.CUSTOM_CONSTRAINTS_PAGE`,
:data:`~pushguard.guardrails.sources.CUSTOM_CONSTRAINT_REST`,
:data:`~pushguard.guardrails.sources.PUBSUB_CUSTOM_CONSTRAINTS_PAGE`) show conditions with
``matches()`` (``resource.instanceName.matches("(production|test)_(.+_)?[\\d]+")``), ``==``
(``resource.management.auto_upgrade == true``) and ``has()``
(``has(resource.messageRetentionDuration)``). The page's own list of supported functions could not
be read in full with the tools of this round, so the compiler writes only what those documented
examples use: field selection, string and boolean literals, ``has``, ``matches``, ``==``, ``!=``,
``!``, ``&&``, ``||`` and parentheses. Every rule is expressed in it (a pattern does what
``startsWith``/``endsWith`` would).

**SHA custom modules.** The SHA page (:data:`~pushguard.guardrails.sources.SHA_CODE_PAGE`)
writes predicates in CEL over the resource's API fields (its example:
``resource.rotationPeriod > duration("2592000s")``); the same subset is used, so one expression
serves both targets.

Google evaluates ``matches()`` with RE2; cel-python does too (``re2.search``), so the parity tests
read patterns as Google does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

import celpy
from celpy.celparser import CELParseError
from lark import Token, Tree

from pushguard.guardrails.model import GuardrailError, Target

SUBSET: Final[Mapping[Target, frozenset[str]]] = {
    "constraint": frozenset({"has", "matches"}),
    "sha": frozenset({"has", "matches"}),
}
"""The functions and macros each target's expressions may call (operators and literals aside)."""

_FORBIDDEN_NODES: Final = frozenset({"map_lit", "list_lit", "member_object", "member_item"})
"""Constructs no generated expression needs (list and map literals, message construction,
indexing): refused, so the subset stays what the documented examples show."""


def _calls(tree: Tree[Token]) -> Iterator[str]:
    """The name of every function or macro called in ``tree``: ``f(...)`` (``ident_arg``) and
    ``x.f(...)`` (``member_dot_arg``), as cel-python's grammar names them."""
    for node in tree.iter_subtrees():
        if node.data == "ident_arg":
            yield str(node.children[0])
        elif node.data == "member_dot_arg":
            yield next(str(c) for c in node.children if isinstance(c, Token))
        elif node.data in _FORBIDDEN_NODES:
            yield f"<{node.data}>"


def check_expression(expression: str, target: Target, field: str) -> None:
    """Parse ``expression`` with cel-python and refuse what is outside :data:`SUBSET`.

    Raises:
        GuardrailError: naming ``field``, when the expression does not parse or calls a function
            or macro (or uses a construct) the target's subset does not have.
    """
    try:
        tree = celpy.Environment().compile(expression)
    except CELParseError as error:
        raise GuardrailError(field, f"is not CEL: {error}") from None
    allowed = SUBSET[target]
    refused = sorted({name for name in _calls(tree) if name not in allowed})
    if refused:
        raise GuardrailError(
            field,
            f"uses {', '.join(refused)}, outside the documented subset for the {target} target "
            f"(allowed: {', '.join(sorted(allowed))}, ==, !=, !, &&, ||)",
        )
