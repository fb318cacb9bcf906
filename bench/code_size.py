"""The longest functions of the package, at the work tree or at a git revision.

    python bench/code_size.py            # the work tree
    python bench/code_size.py 08daf37    # the same measure at a commit, for before/after notes

Prints the ``--top`` longest functions and methods (lines from ``def`` to the last line of the
body, docstring included) and the longest module of each layer.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _sources(revision: str | None) -> dict[str, str]:
    if revision is None:
        return {
            str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
            for path in sorted((ROOT / "pushguard").rglob("*.py"))
        }
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", revision, "pushguard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {
        name: subprocess.run(
            ["git", "show", f"{revision}:{name}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for name in names
        if name.endswith(".py")
    }


def functions(sources: dict[str, str]) -> list[tuple[int, str]]:
    """``(lines, "path:qualified.name")`` for every function and method."""
    found: list[tuple[int, str]] = []
    for path, text in sources.items():
        tree = ast.parse(text)

        def visit(node: ast.AST, prefix: str, path: str = path) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = f"{prefix}{child.name}"
                    found.append((child.end_lineno - child.lineno + 1, f"{path}:{name}"))  # type: ignore[operator]
                    visit(child, f"{name}.")
                elif isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.")

        visit(tree, "")
    return sorted(found, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("revision", nargs="?", help="a git revision (default: the work tree)")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--match", default="", help="only functions whose name contains this")
    args = parser.parse_args()
    sources = _sources(args.revision)
    for lines, name in [f for f in functions(sources) if args.match in f[1]][: args.top]:
        print(f"{lines:5d}  {name}")
    print()
    for path, text in sorted(sources.items(), key=lambda item: -item[1].count("\n"))[:5]:
        print(f"{text.count(chr(10)):5d}  {path} (module)")


if __name__ == "__main__":
    main()
