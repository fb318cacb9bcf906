"""The pre-commit hook's choice of stacks (:mod:`pushguard.preview.changed`) and its command,
``pushguard pre-commit``, in repositories laid out as teams lay them out: the example project
(program in ``stacks/``, stack files beside it) at the root and a second project in ``infra/``
(program and stack files next to its ``Pulumi.yaml``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.preview.changed import StackSelection, select_stacks
from pushguard.preview.project import ProjectError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for name in ("Pulumi.yaml", "policy-config.json"):
        shutil.copy2(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks", ignore=shutil.ignore_patterns("__py*"))
    infra = tmp_path / "infra"
    infra.mkdir()
    (infra / "Pulumi.yaml").write_text("name: infra\nruntime: python\n")
    (infra / "__main__.py").write_text("import pulumi\n")
    for stack in ("prod", "staging"):
        (infra / f"Pulumi.{stack}.yaml").write_text("config: {}\n")
    (tmp_path / "README.md").write_text("# the team's repository\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "lint.py").write_text("print('lint')\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    return tmp_path.resolve()


def chosen(repo: Path, *files: str, config: str | None = "policy-config.json") -> set[str]:
    selections = select_stacks([Path(f) for f in files], repo, Path(config) if config else None)
    return {f"{s.project.relative_to(repo).as_posix()}:{s.stack}" for s in selections}


def test_a_stack_file_selects_its_stack(repo: Path) -> None:
    assert chosen(repo, "stacks/Pulumi.legacy.yaml") == {".:legacy"}
    assert chosen(repo, "infra/Pulumi.staging.yaml") == {"infra:staging"}


def test_a_change_to_the_program_selects_every_stack_of_its_project(repo: Path) -> None:
    assert chosen(repo, "stacks/legacy.py") == {".:dev", ".:legacy"}
    assert chosen(repo, "Pulumi.yaml") == {".:dev", ".:legacy"}
    assert chosen(repo, "infra/__main__.py") == {"infra:prod", "infra:staging"}


def test_files_outside_the_programs_select_nothing(repo: Path) -> None:
    # the root project's program is stacks/ (main), so its README and tools/ are not program
    assert chosen(repo, "README.md", "tools/lint.py") == set()
    assert chosen(repo, "stacks/Pulumi.gone.yaml") == set()  # deleted: nothing to preview
    assert chosen(repo) == set()


def test_the_policy_config_selects_every_stack_of_the_repository(repo: Path) -> None:
    everything = {".:dev", ".:legacy", "infra:prod", "infra:staging"}
    assert chosen(repo, "policy-config.json") == everything
    assert chosen(repo, "policy-config.json", config=None) == set()


def test_each_stack_once_with_its_first_reason(repo: Path) -> None:
    selections = select_stacks(
        [Path("stacks/Pulumi.dev.yaml"), Path("stacks/__main__.py")], repo, None
    )
    assert selections == [
        StackSelection(repo, "dev", "stacks/Pulumi.dev.yaml changed"),
        StackSelection(repo, "legacy", "the program changed: stacks/__main__.py"),
    ]


def test_a_touched_project_that_cannot_be_read_fails(repo: Path) -> None:
    (repo / "infra" / "Pulumi.yaml").write_text("runtime: python\n")
    with pytest.raises(ProjectError, match="'name' is required"):
        select_stacks([Path("infra/__main__.py")], repo)


def test_the_command_previews_the_touched_stacks_with_the_repositorys_config(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    ran: list[list[str]] = []
    codes = {"dev": 0, "legacy": 1}

    def fake_run(args: list[str], cwd: Path) -> int:
        ran.append(args)
        return codes[args[1].removeprefix("--stack=")]

    monkeypatch.setattr("pushguard.cli.precommit.run_gate", fake_run)
    result = CliRunner().invoke(app, ["pre-commit", "stacks/Pulumi.dev.yaml", "README.md"])
    assert result.exit_code == 0, result.output
    assert ran == [
        ["preview", "--stack=dev", "--policy-config=policy-config.json", "--", str(repo)]
    ]
    assert "preview of stack dev of . (stacks/Pulumi.dev.yaml changed)" in result.stdout
    ran.clear()
    result = CliRunner().invoke(app, ["pre-commit", "stacks/legacy.py"])
    assert result.exit_code == 1  # the worst of dev's 0 and legacy's 1
    assert [args[1] for args in ran] == ["--stack=dev", "--stack=legacy"]
    result = CliRunner().invoke(app, ["pre-commit", "README.md"])
    assert result.exit_code == 0 and "no stack touched" in result.stdout


def test_the_command_fails_closed_on_an_unreadable_project(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "infra" / "Pulumi.yaml").write_text("runtime: python\n")
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(app, ["pre-commit", "infra/Pulumi.prod.yaml"])
    assert result.exit_code == 2
    assert "pushguard pre-commit: error:" in result.stderr and "'name' is required" in result.stderr


def test_a_deleted_module_of_a_program_selects_its_project(repo: Path) -> None:
    # pre-commit never passes a deleted file; by hand, a deleted module still selects
    assert chosen(repo, "infra/util.py") == {"infra:prod", "infra:staging"}
    assert chosen(repo, "stacks/gone.py") == {".:dev", ".:legacy"}
    assert chosen(repo, "tools/gone.py") == set()  # not under a program
    (repo / "infra" / "__main__.py").unlink()  # the entry point itself: the project is broken
    with pytest.raises(ProjectError, match="does not exist"):
        select_stacks([Path("infra/__main__.py")], repo)


@pytest.mark.parametrize("absolute", [False, True])
def test_the_command_resolves_paths_from_a_subfolder_against_the_repository_root(
    repo: Path, monkeypatch: pytest.MonkeyPatch, absolute: bool
) -> None:
    monkeypatch.chdir(repo / "stacks")
    ran: list[list[str]] = []
    monkeypatch.setattr("pushguard.cli.precommit.run_gate", lambda args, cwd: ran.append(args) or 0)
    given = str(repo / "stacks" / "Pulumi.legacy.yaml") if absolute else "Pulumi.legacy.yaml"
    result = CliRunner().invoke(app, ["pre-commit", given])
    assert result.exit_code == 0, result.output
    assert ran == [
        ["preview", "--stack=legacy", "--policy-config=policy-config.json", "--", str(repo)]
    ]
    assert "(stacks/Pulumi.legacy.yaml changed)" in result.stdout


def test_the_command_fails_closed_outside_the_repository(
    repo: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "Pulumi.dev.yaml").write_text("config: {}\n")
    result = CliRunner().invoke(app, ["pre-commit", str(elsewhere / "Pulumi.dev.yaml")])
    assert result.exit_code == 2
    assert "Pulumi.dev.yaml: outside the repository" in result.stderr
    monkeypatch.chdir(elsewhere)  # not a git work tree
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(elsewhere.parent))
    result = CliRunner().invoke(app, ["pre-commit", "Pulumi.dev.yaml"])
    assert result.exit_code == 2
    assert "Pulumi.dev.yaml: cannot find the repository's top level" in result.stderr
