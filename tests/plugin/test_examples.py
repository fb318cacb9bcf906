"""The example programs in ``components/examples`` use only inputs the plugin's schema has, with
every required one and valid enum values; the YAML program's resource constructs."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from tests.plugin.harness import COMPONENTS, construct_request
from tests.plugin.test_protocol import CONFIG, TOKEN, Monitor, Provider

EXAMPLES = COMPONENTS / "examples"


class Shape:
    """What the schema allows in one object: its properties, the required ones, and for each
    property the object shape or the enum values it refers to (maps are opaque)."""

    def __init__(self, schema: dict[str, Any], properties: dict[str, Any], required: list[str]):
        self.schema, self.properties, self.required = schema, properties, set(required)

    def nested(self, key: str) -> Shape | None:
        ref = self.properties[key].get("$ref", "")
        kind = self.schema["types"].get(ref.removeprefix("#/types/"), {})
        if kind.get("type") != "object":
            return None
        return Shape(self.schema, kind["properties"], kind.get("required", []))

    def enum(self, key: str) -> list[str] | None:
        ref = self.properties[key].get("$ref", "")
        kind = self.schema["types"].get(ref.removeprefix("#/types/"), {})
        return [e["value"] for e in kind["enum"]] if "enum" in kind else None


def component_shape(schema: dict[str, Any]) -> Shape:
    resource = schema["resources"][TOKEN]
    return Shape(schema, resource["inputProperties"], resource["requiredInputs"])


def problems(shape: Shape, values: dict[str, Any], path: str = "") -> list[str]:
    """Input names the schema does not have, missing required ones and enum values it does not
    allow, in ``values`` (a parsed object; a value of ``None`` is an expression, not checked)."""
    found = [f"{path}{key}: not an input" for key in values if key not in shape.properties]
    found += [f"{path}{key}: required, missing" for key in shape.required - set(values)]
    for key, value in values.items():
        if key not in shape.properties:
            continue
        inner, allowed = shape.nested(key), shape.enum(key)
        if inner is not None and isinstance(value, dict):
            found += problems(inner, value, f"{path}{key}.")
        if allowed is not None and value is not None and value not in allowed:
            found.append(f"{path}{key}: {value!r} is not one of {allowed}")
    return found


# -- YAML --------------------------------------------------------------------------------------


def yaml_program() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((EXAMPLES / "yaml" / "Pulumi.yaml").read_text())
    return loaded


def test_the_yaml_program_uses_the_schema(schema: dict[str, Any]) -> None:
    program = yaml_program()
    assert program["runtime"] == "yaml"
    assert (EXAMPLES / "yaml" / program["packages"]["pushguard"]).resolve() == COMPONENTS
    uses = [r for r in program["resources"].values() if r["type"] == TOKEN]
    assert len(uses) == 1
    assert problems(component_shape(schema), uses[0]["properties"]) == []
    outputs = set(schema["resources"][TOKEN]["properties"])
    referenced = re.findall(r"\$\{orders\.(\w+)\}", yaml.safe_dump(program["outputs"]))
    assert referenced and set(referenced) <= outputs


def test_the_yaml_programs_resource_constructs(provider: Provider, monitor: Monitor) -> None:
    [resource] = [r for r in yaml_program()["resources"].values() if r["type"] == TOKEN]
    request = construct_request(
        monitor[0], monitor[1], "orders", resource["properties"], config=CONFIG
    )
    response = provider.Construct(request, timeout=30)
    endpoint = resource["properties"]["pushEndpoint"]
    assert response.state["audience"] == endpoint.removesuffix("/push"), "the service URL"
    assert "gcp:pubsub/subscription:Subscription" in {r.type for r in monitor[0].registrations}


# -- TypeScript --------------------------------------------------------------------------------

_SKIP = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`""", re.S
)
_KEY = re.compile(r"""\s*(?:([A-Za-z_$][\w$]*)|"([^"]*)"|'([^']*)')\s*:(.*)""", re.S)
_STRING = re.compile(r"""\s*(?:"((?:\\.|[^"\\])*)"|'((?:\\.|[^'\\])*)')\s*""", re.S)
_OPEN, _CLOSE = "({[", ")}]"


def _blank(text: str, *, strings: bool = True) -> str:
    """``text`` with comments (and, with ``strings``, the contents of string literals) replaced
    by spaces, keeping every index: brackets and commas are then found only where they are code."""

    def blank(match: re.Match[str]) -> str:
        found = match.group(0)
        if found[0] not in "\"'`":
            return " " * len(found)
        return found[0] + " " * (len(found) - 2) + found[-1] if strings else found

    return _SKIP.sub(blank, text)


def _close(code: str, start: int) -> int:
    """Index of the bracket closing the one at ``start`` (in blanked code)."""
    depth = 0
    for index in range(start, len(code)):
        if code[index] in _OPEN:
            depth += 1
        elif code[index] in _CLOSE:
            depth -= 1
            if depth == 0:
                return index
    raise AssertionError(f"unbalanced bracket at {start}")


def _entries(code: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the comma-separated entries between ``start`` and ``end`` (exclusive), at
    bracket depth 0, in blanked code."""
    spans, at, depth = [], start, 0
    for index in range(start, end):
        if code[index] in _OPEN:
            depth += 1
        elif code[index] in _CLOSE:
            depth -= 1
        elif code[index] == "," and depth == 0:
            spans.append((at, index))
            at = index + 1
    return [*spans, (at, end)]


def parse_object(text: str, code: str, start: int) -> dict[str, Any]:
    """The object literal whose ``{`` is at ``start``: key -> nested dict for an object literal,
    the string for a string literal, else ``None`` (an expression). ``text`` is the source
    without comments, ``code`` the same with string contents blanked too. Spreads and shorthand
    properties are refused: their keys cannot be checked."""
    parsed: dict[str, Any] = {}
    for begin, finish in _entries(code, start + 1, _close(code, start)):
        if not code[begin:finish].strip():
            continue  # a trailing comma
        match = _KEY.fullmatch(text, begin, finish)
        assert match, f"not a `key: value` property: {text[begin:finish].strip()!r}"
        key = next(group for group in match.groups()[:3] if group is not None)
        value = code[match.start(4) : finish]
        first = match.start(4) + len(value) - len(value.lstrip())
        last = match.start(4) + len(value.rstrip()) - 1
        if code[first] == "{" and _close(code, first) == last:
            parsed[key] = parse_object(text, code, first)
        elif string := _STRING.fullmatch(text, match.start(4), finish):
            parsed[key] = next(group for group in string.groups() if group is not None)
        else:
            parsed[key] = None
    return parsed


def typescript_uses() -> list[dict[str, Any]]:
    """The second argument of every ``new pushguard.PushSubscription(...)`` in index.ts."""
    source = (EXAMPLES / "typescript" / "index.ts").read_text()
    text, code = _blank(source, strings=False), _blank(source)
    uses = []
    for call in re.finditer(r"new\s+pushguard\.PushSubscription\s*\(", code):
        brace = code.index("{", call.end())
        assert "," in code[call.end() : brace], "the args must be an object literal"
        uses.append(parse_object(text, code, brace))
    return uses


def test_the_typescript_program_uses_the_schema(schema: dict[str, Any]) -> None:
    uses = typescript_uses()
    assert len(uses) == 1
    assert problems(component_shape(schema), uses[0]) == []
    assert uses[0]["target"]["kind"] == "cloud-run"
    text = (EXAMPLES / "typescript" / "index.ts").read_text()
    assert 'from "@pulumi/pushguard"' in text
    outputs = set(schema["resources"][TOKEN]["properties"])
    referenced = set(re.findall(r"\borders\.(\w+)", _blank(text)))
    assert referenced and referenced <= outputs


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ('{topic: "t", pushEndpoint: "https://x", target: {kind: "external"}, ackDeadline: 9}',
         "ackDeadline: not an input"),
        ('{topic: "t", target: {kind: "external"}}', "pushEndpoint: required, missing"),
        ('{topic: "t", pushEndpoint: e, target: {kind: "cloud-run", region: "x"}}',
         "target.region: not an input"),
        ('{topic: "t", pushEndpoint: e, target: {kind: "cloudrun"}}',
         "target.kind: 'cloudrun' is not one of"),
        ('{topic: "t", pushEndpoint: e, target: {kind: "external"}, labels: {anything: "x"}, '
         '/* push_endpoint: "http://x", */ filter: "a, b: {c}"}', None),
    ],
    ids=["unknown-input", "missing-required", "unknown-nested", "bad-enum", "maps-strings-notes"],
)  # fmt: skip
def test_the_typescript_check_catches_mistakes(
    schema: dict[str, Any], source: str, problem: str | None
) -> None:
    """The parser behind the TypeScript check finds what it is meant to find (and no more)."""
    text, code = _blank(source, strings=False), _blank(source)
    found = problems(component_shape(schema), parse_object(text, code, 0))
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0].startswith(problem), found
