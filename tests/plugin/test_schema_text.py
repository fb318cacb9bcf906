"""Issue 36: the schema the plugin serves (``GetSchema``, what ``pulumi package add`` turns into a
TypeScript, Go or C# SDK and every editor's hover text) is written for those languages: plain
Markdown descriptions with the schema's camelCase names, and the package's real version."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pushguard

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "pushguard:index:PushSubscription"

URL = re.compile(r"https?://[^\s)]+")
SNAKE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")
PYTHON_ONLY = {
    "reST role": re.compile(r":\w+:`"),
    "reST literal": re.compile(r"``"),
    "pushguard module path": re.compile(r"\bpushguard\.\w"),
    "Python constant": re.compile(r"\b(?:None|True|False)\b"),
    "docstring section": re.compile(r"^(?:Raises|Returns|Args):", re.M),
    "docstring indentation": re.compile(r"\n {2,}\S"),
}


def descriptions(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every ``description`` in the schema, with where it is."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield path, value
            else:
                yield from descriptions(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from descriptions(value, f"{path}[{index}]")


def test_the_schema_version_is_the_package_version(schema: dict[str, Any]) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert schema["version"] == declared["project"]["version"] == pushguard.__version__


def test_descriptions_are_markdown_with_the_schemas_names(schema: dict[str, Any]) -> None:
    found = list(descriptions(schema))
    assert len(found) > 40  # every input, output, type and enum value is described
    problems = []
    for where, text in found:
        problems += [f"{where}: {what}" for what, rx in PYTHON_ONLY.items() if rx.search(text)]
        snake = SNAKE.findall(URL.sub("", text))
        if snake:
            problems.append(f"{where}: snake_case {snake}")
    assert not problems, "\n".join(problems)


def test_names_in_descriptions_are_the_schemas(schema: dict[str, Any]) -> None:
    """An input named in another input's description is named as the schema names it."""
    inputs = schema["resources"][TOKEN]["inputProperties"]
    target = schema["types"]["pushguard:index:PushTargetArgs"]["properties"]
    assert "`noWrapper`" in inputs["writeMetadata"]["description"]
    assert "`target.customAudiences`" in inputs["audience"]["description"]
    assert "`acceptBacklogLoss`" in inputs["paused"]["description"]
    assert "`customAudiences`" in target["url"]["description"]
    resource = schema["resources"][TOKEN]["description"]
    assert resource.startswith("A Pub/Sub push subscription") and "\n\n" not in resource
