"""``pushguard[pulumi]`` accepts any Pulumi 3.x from its documented oldest (docs/install.md):
nothing pushguard runs drives the SDK's internals, only its public API and Pulumi's gRPC
protocols. The SDK's mock runtime is left to the tests' harness (``tests/mock_runtime``)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pushguard"
INTERNALS = ("pulumi.runtime.mocks", "pulumi.runtime.stack", "pulumi.runtime.sync_await")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_module_of_pushguard_imports_the_sdks_runtime_internals() -> None:
    used = {
        str(path.relative_to(PACKAGE)): sorted(n for n in _imports(path) if n.startswith(INTERNALS))
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    assert {path: names for path, names in used.items() if names} == {}
