"""The package schema the ``components/`` plugin serves, in the words other languages read.

Pulumi's component provider host infers the schema from ``PushSubscription``'s annotations and
takes each description verbatim from a Python docstring
(``pulumi/provider/experimental/analyzer.py``, ``Analyzer.get_docstring``), so every TypeScript,
Go and C# editor showed reStructuredText roles, Python module paths and snake_case input names
(``:data:`pushguard.rules.iam.INVOKER```, ``target.custom_audiences``), and the package version
defaulted to ``0.0.0`` (``component_provider_host``: "Default the version to "0.0.0" for now").
The schema's property names are camelCase (its SDK generators give each language its own form,
https://www.pulumi.com/docs/iac/guides/building-extending/packages/schema/), and its descriptions
are Markdown (same page: "description ... Markdown"). :func:`plain_schema` rewrites every
description of the inferred schema:

- reST inline markup becomes Markdown: ````x```` is `` `x` ``; a role that only points Python
  readers at an object, ``(:data:`a.b.C`)``, is dropped, any other role keeps its last name;
- names in snake_case (``no_wrapper``, ``target.custom_audiences``) become camelCase, the schema's
  form, except inside URLs;
- a page of this repository's docs (``docs/component.md``) becomes a link to it on the project's
  Documentation URL (``[project.urls]``);
- the resource's description is the first paragraph of the class docstring (the rest is about the
  Python implementation), each object type's and enum's is its first sentence; lines are joined
  into paragraphs.

:func:`serve` runs the provider with that schema and the installed package version.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from typing import Any, Final

from pulumi.provider import main
from pulumi.provider.experimental.component import ComponentProvider

from pushguard._about import project_url, version
from pushguard.components.docs import camel_case
from pushguard.components.hosting import component_provider

PACKAGE: Final = "pushguard"
"""The package name in the schema: the first part of every type token."""

_CODE = re.compile(r"``(.+?)``|`([^`]+)`", re.S)
_ROLE_ASIDE = re.compile(r"\s*\(:\w+:`[^`]+`\)")
_ROLE = re.compile(r":\w+:`~?(?:[\w.]+\.)?([\w]+)`")
_SNAKE = re.compile(r"(?<![\w/#-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w/-])")
_SNAKE_IN_CODE = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")
_URL = re.compile(r"https?://[^\s)>\]]+")
_DOCS_PAGE = re.compile(r"(?<![\w/])docs/([\w-]+)\.md\b")


def _outside_urls(text: str, change: Callable[[str], str]) -> str:
    """``change`` applied to the parts of ``text`` that are not URLs."""
    parts, last = [], 0
    for url in _URL.finditer(text):
        parts += [change(text[last : url.start()]), url.group()]
        last = url.end()
    return "".join([*parts, change(text[last:])])


def _prose(text: str) -> str:
    """Text outside code spans with snake_case names and docs pages rewritten (URLs left as
    they are)."""

    def rewrite(part: str) -> str:
        part = _SNAKE.sub(lambda m: camel_case(m[1]), part)
        docs = project_url("Documentation").replace("/tree/", "/blob/")
        return _DOCS_PAGE.sub(lambda m: f"[docs/{m[1]}.md]({docs}/{m[1]}.md)", part)

    return _outside_urls(text, rewrite)


def schema_markdown(text: str) -> str:
    """A docstring as a schema description: Markdown paragraphs, the schema's camelCase names,
    no reST and no Python module paths (see the module docstring)."""
    paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n") if p.strip()]
    out = []
    for raw in paragraphs:
        paragraph = _ROLE.sub(lambda m: f"``{m[1]}``", _ROLE_ASIDE.sub("", raw))
        pieces, last = [], 0
        for code in _CODE.finditer(paragraph):
            inner = code[1] if code[1] is not None else code[2]
            pieces += [_prose(paragraph[last : code.start()]), f"`{_code(inner)}`"]
            last = code.end()
        out.append("".join([*pieces, _prose(paragraph[last:])]))
    return "\n\n".join(out)


def _code(inner: str) -> str:
    if _URL.fullmatch(inner):
        return inner
    return _SNAKE_IN_CODE.sub(lambda m: camel_case(m[1]), inner)


def _first_paragraph(text: str) -> str:
    return inspect.cleandoc(text).split("\n\n", 1)[0]


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=\.)\s", " ".join(_first_paragraph(text).split()), maxsplit=1)[0]


def _rewrite(node: Any, shorten: Callable[[str], str] | None = None) -> Any:
    """``node`` with every ``description`` rewritten (``shorten`` first at this level)."""
    if isinstance(node, list):
        return [_rewrite(item) for item in node]
    if not isinstance(node, dict):
        return node
    rewritten = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            rewritten[key] = schema_markdown(shorten(value) if shorten else value)
        else:
            rewritten[key] = _rewrite(value)
    return rewritten


def plain_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The inferred package ``schema`` with every description rewritten for other languages:
    a resource's is its docstring's first paragraph, a type's its first sentence."""
    result = dict(schema)
    result["resources"] = {
        token: _rewrite(resource, _first_paragraph)
        for token, resource in schema.get("resources", {}).items()
    }
    result["types"] = {
        token: _rewrite(kind, _first_sentence) for token, kind in schema.get("types", {}).items()
    }
    return result


def provider() -> ComponentProvider:
    """The component provider of ``PushSubscription`` at the installed pushguard version, serving
    :func:`plain_schema` (made by :func:`~pushguard.components.hosting.component_provider`)."""
    hosted = component_provider(PACKAGE, version=version())
    hosted.schema = json.dumps(plain_schema(json.loads(hosted.schema or "{}")))
    return hosted


def serve(args: list[str]) -> None:
    """Serve the provider gRPC protocol as ``component_provider_host`` does (``args``: the
    command line after the plugin's folder: the engine's flags and address); prints the port."""
    main(provider(), args)
