from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app

ROOT = Path(__file__).resolve().parents[2]


class Invocation:
    """One `pushguard preview` run through the real CLI entry point."""

    def __init__(self, exit_code: int, stdout: str, stderr: str) -> None:
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr

    def json(self) -> Any:
        return json.loads(self.stdout)


@pytest.fixture
def preview(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Invocation]:
    """Run `pushguard preview ARGS` from the repository root (or ``cwd``)."""

    def invoke(*args: str, cwd: Path = ROOT) -> Invocation:
        monkeypatch.chdir(cwd)
        monkeypatch.delenv("PULUMI_STACK", raising=False)
        result = CliRunner().invoke(app, ["preview", *args])
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Invocation(result.exit_code, result.stdout, result.stderr)

    return invoke


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Path]:
    """A Pulumi project in a temporary folder: ``program`` is ``__main__.py``'s text,
    ``stacks`` maps a stack name to its config mapping."""

    def make(
        program: str,
        stacks: dict[str, dict[str, Any]] | None = None,
        folder: Path | str = "project",
        **extra: Any,
    ) -> Path:
        folder = tmp_path / folder if isinstance(folder, str) else folder
        folder.mkdir(exist_ok=True)
        spec = {"name": "team", "runtime": "python", **extra}
        (folder / "Pulumi.yaml").write_text(json.dumps(spec))
        (folder / "__main__.py").write_text(program)
        for stack, config in (stacks or {"dev": {"gcp:project": "acme-orders"}}).items():
            (folder / f"Pulumi.{stack}.yaml").write_text(json.dumps({"config": config}))
        return folder

    return make
