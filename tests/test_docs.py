"""The documentation stays true: every fenced example in README.md and docs/*.md is tested or
explicitly classified, the generated pages are current, and the MkDocs site builds strictly.

How each fenced block is checked, by its language tag (an untagged or unknown tag fails):

- ``python``: runs; component examples under Pulumi's mock runtime, the receiver example as a Flask
  app that must reject an unauthenticated push; the server settings of docs/receiver-servers.md
  compile, and tests/receiver/test_header_limits.py runs them with the servers;
- ``bash``/``sh``: ``bash -n`` parses it, every command is a known program, every ``pushguard``
  command parses with the real CLI (subcommand, options, choices) and every ``python -c`` snippet's
  ``pushguard`` modules exist; the server commands of docs/receiver-servers.md are run by
  tests/receiver/test_header_limits.py;
- ``yaml``/``json``: parse; the component's YAML program, the TypeScript program and the sample
  policy config equal the repository's files; a ``--values`` file passes the preview's check
  (and tests/engine/test_values_preview.py previews with docs/preview.md's); ``pushguard``
  commands in a workflow's ``run:`` steps parse with the CLI; a workflow step that uses
  pushguard's GitHub Action pins the package's version (``pushguard/pushguard@vVERSION``) and
  gives only inputs ``action.yml`` declares (tests/ci/test_action.py runs the action);
- ``text``: a ``pushguard`` usage line, the component's error message, or the repository layout.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from pulumi.provider.experimental.analyzer import Analyzer

from pushguard.audit.coverage import INPUTS as AUDIT_INPUTS
from pushguard.audit.coverage import needs_markdown
from pushguard.cli import app
from pushguard.components import TYPE_TOKEN, PushSubscription, PushSubscriptionInputError
from pushguard.components.docs import camel_case, input_rows, inputs_markdown
from pushguard.components.spec import PLAIN_FIELDS
from pushguard.crossguard import PACK_DIR
from pushguard.preview.values import parse_values
from pushguard.rules import RULES
from pushguard.rules.docs import rules_markdown
from tests.helpers import run, run_failing

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = {
    path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
}
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M
)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    lang: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}:{self.lang or 'untagged'}"


def _blocks() -> Iterator[Block]:
    for page, text in PAGES.items():
        for match in FENCE.finditer(text):
            indent = match["indent"]
            body = match["body"]
            if indent:  # a block inside a list item: its lines carry the item's indentation
                body = textwrap.dedent(body)
            line = text.count("\n", 0, match.start()) + 1
            yield Block(page, line, match["lang"].strip(), body)


BLOCKS = list(_blocks())
KINDS = {"python", "bash", "sh", "yaml", "json", "typescript", "text"}


def _of(*langs: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang in langs]


SERVERS_PAGE = "docs/receiver-servers.md"
"""Server commands and settings: tests/receiver/test_header_limits.py runs each of them."""
KIT_PAGE = "docs/receiver-local.md"
"""The test kit's files (``# NAME.py`` first lines): run as a test suite, below, and as a
development server by tests/receiver/test_push_command.py."""
PYTHON = _of("python")
SERVER_SETTINGS = [b for b in PYTHON if b.page == SERVERS_PAGE]
KIT_FILES = [b for b in PYTHON if b.page == KIT_PAGE]
COMPONENT_EXAMPLES = [
    b
    for b in PYTHON
    if "pushguard.receiver" not in b.code and b.page not in (SERVERS_PAGE, KIT_PAGE)
]
RECEIVER_EXAMPLES = [
    b for b in PYTHON if "pushguard.receiver" in b.code and b.page not in (SERVERS_PAGE, KIT_PAGE)
]


def by_id(blocks: list[Block]) -> dict[str, Any]:
    return {"argvalues": blocks, "ids": [b.id for b in blocks]}


# ---------------------------------------------------------------------------------------------
# Every block is classified; the pages are what the site and the README promise.


def test_every_fenced_block_has_a_checked_language() -> None:
    unclassified = [b.id for b in BLOCKS if b.lang not in KINDS]
    assert not unclassified, f"tag these blocks with one of {sorted(KINDS)}: {unclassified}"
    # A fence left open would swallow the rest of a page.
    for page, text in PAGES.items():
        fences = re.findall(r"^[ \t]*```", text, flags=re.M)
        assert len(fences) % 2 == 0, f"{page} has an unclosed code fence"


def test_readme_is_short() -> None:
    assert len(README.splitlines()) <= 300


def test_readme_and_docs_have_examples() -> None:
    assert len([b for b in COMPONENT_EXAMPLES if b.page == "README.md"]) >= 2
    assert [b for b in RECEIVER_EXAMPLES if b.page == "README.md"]


def test_readme_lists_every_rule_with_its_level() -> None:
    for rule in RULES:
        assert f"| `{rule.id}` | {rule.default_level.value} |" in README


def test_ci_runs_the_readmes_two_commands() -> None:
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    setup, tests = re.findall(r"```bash\n(.*?)\n```", README, flags=re.S)[:2]
    main_job = setup.split('pip install -e ".[dev]" && ', 1)[1]
    assert main_job in ci, "the README's main job is what CI runs"
    assert tests.split("&& ", 1)[1] in ci


def test_packaged_pack_is_the_policies_folder() -> None:
    assert (PACK_DIR / "PulumiPolicy.yaml").read_text() == (
        ROOT / "policies/PulumiPolicy.yaml"
    ).read_text()
    for folder in (PACK_DIR, ROOT / "policies"):
        assert (
            "from pushguard.crossguard import serve\n\nserve()"
            in (folder / "__main__.py").read_text()
        )


# ---------------------------------------------------------------------------------------------
# Generated pages.


def test_docs_rules_md_is_generated_from_the_rules() -> None:
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == rules_markdown(), (
        "docs/rules.md is stale: run `pushguard rules --format markdown > docs/rules.md`"
    )


INPUTS_BEGIN = "<!-- BEGIN generated by pushguard.components.docs.inputs_markdown -->\n"
INPUTS_END = "<!-- END generated -->\n"


def test_component_inputs_table_is_generated_from_the_args() -> None:
    page = PAGES["docs/component.md"]
    assert page.count(INPUTS_BEGIN) == 1 and page.count(INPUTS_END) == 1
    committed = page.split(INPUTS_BEGIN, 1)[1].split(INPUTS_END, 1)[0]
    assert committed == inputs_markdown(), (
        "the inputs table in docs/component.md is stale: paste the output of "
        "`python -m pushguard.components.docs` between its markers"
    )


AUDIT_NEEDS_BEGIN = "<!-- BEGIN generated by pushguard.audit.coverage.needs_markdown -->\n"


def test_audit_needs_table_is_generated_from_the_rules() -> None:
    page = PAGES["docs/audit.md"]
    assert page.count(AUDIT_NEEDS_BEGIN) == 1
    committed = page.split(AUDIT_NEEDS_BEGIN, 1)[1].split(INPUTS_END, 1)[0]
    assert committed == needs_markdown(), (
        "the table in docs/audit.md is stale: paste the output of "
        "`python -m pushguard.audit.coverage` between its markers"
    )


@pytest.mark.parametrize("page", ["README.md", "docs/audit.md"])
def test_export_examples_export_every_part_the_audit_reads(page: str) -> None:
    """The first shell block of the page that runs ``gcloud asset export`` to Cloud Storage
    exports every content type the audit reads (:data:`pushguard.audit.coverage.INPUTS`), the
    access policies at organisation scope (an access policy's parent is the organisation)."""
    block = next(b for b in SHELL if b.page == page and "gcloud asset export" in b.code)
    exports = [
        words
        for words in shell_commands(block.code)
        if words[:3] == ["gcloud", "asset", "export"] and any("--output-path" in w for w in words)
    ]
    content_types = {
        w.split("=", 1)[1]: words
        for words in exports
        for w in words
        if w.startswith("--content-type=")
    }
    needed = {
        w.split("=", 1)[1]
        for item in AUDIT_INPUTS
        for w in item.export.split()
        if w.startswith("--content-type=")
    }
    assert needed == {"resource", "iam-policy", "access-policy"}
    assert needed <= set(content_types), f"{page} does not export {needed - set(content_types)}"
    assert any(w.startswith("--organization=") for w in content_types["access-policy"])


def test_inputs_table_agrees_with_the_spec_and_the_package_schema() -> None:
    rows = list(input_rows())
    assert inputs_markdown().count("\n") == len(rows) + 2, "one table row per input"
    plain = {row.path for row in rows if row.plain}
    assert plain == PLAIN_FIELDS, "plain inputs: the args' annotations and the spec disagree"
    schema = Analyzer("pushguard").analyze([PushSubscription])
    inputs = schema["component_definitions"]["PushSubscription"].inputs
    top_level = {row.other for row in rows if "." not in row.path}
    assert top_level == set(inputs), "the table's camelCase names are the package schema's"
    for row in rows:
        assert row.other == ".".join(camel_case(p) for p in row.path.split("."))
        assert row.description, f"{row.path} has no docstring in pushguard/components/args.py"
        assert f"`{row.path}`<br>`{row.other}`<br>{row.type}" in inputs_markdown()


# ---------------------------------------------------------------------------------------------
# Python examples run.


@pytest.mark.parametrize("block", **by_id(COMPONENT_EXAMPLES))
def test_component_example_runs_under_the_mock_runtime(block: Block) -> None:
    code = block.code
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        graph = run(lambda: exec(compile(code, block.page, "exec"), {}))
    expected = re.findall(r"^    # (  - .*|PushSubscription .*)$", code, flags=re.M)
    if expected:  # an example that documents its output must print exactly that
        assert printed.getvalue().splitlines() == expected
        assert graph.records == []
    else:  # a PushSubscription, or the OrgGuardrails of docs/guardrails.md
        assert graph.by_type(TYPE_TOKEN) or graph.by_type("pushguard:index:OrgGuardrails")


@pytest.mark.parametrize("block", **by_id(RECEIVER_EXAMPLES))
def test_receiver_example_serves_and_rejects_unauthenticated_pushes(
    block: Block, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pushguard.receiver.testing import cloud_run_environ

    if "behind_cloud_run_iam=True" in block.code:  # runs only in a Cloud Run service's container
        for name, value in cloud_run_environ().items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    namespace: dict[str, object] = {"__name__": "docs_receiver"}
    exec(compile(block.code, block.page, "exec"), namespace)
    client = namespace["app"].test_client()  # type: ignore[attr-defined]
    response = client.post("/push", data=b'{"message": {}}')
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'


def test_the_kit_page_files_pass_as_a_test_suite(tmp_path: Path) -> None:
    """conftest.py (the plugin), app.py and test_app.py of the page, run by pytest in a folder of
    their own; without the plugin, its fixtures are missing."""
    names = []
    for block in KIT_FILES:
        name = block.code.splitlines()[0].removeprefix("# ").split(":")[0]
        assert re.fullmatch(r"\w+\.py", name), f"{block.id}: start with '# NAME.py'"
        (tmp_path / name).write_text(block.code, encoding="utf-8")
        names.append(name)
    assert {"conftest.py", "app.py", "test_app.py", "dev_app.py"} <= set(names)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_app.py"]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout + done.stderr
    (tmp_path / "conftest.py").unlink()
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert "fixture 'make_push' not found" in done.stdout


@pytest.mark.parametrize("block", **by_id(SERVER_SETTINGS))
def test_server_setting_compiles_and_is_run_with_its_server(block: Block) -> None:
    compile(block.code, block.page, "exec")
    runner = (ROOT / "tests/receiver/test_header_limits.py").read_text(encoding="utf-8")
    name = block.code.splitlines()[0].removeprefix("# ").split(",")[0]
    assert f'documented_file("{name}")' in runner, f"no server test runs {name} of {block.page}"


# ---------------------------------------------------------------------------------------------
# Shell examples: bash parses them, the programs are known, pushguard commands parse.

PROGRAMS = {
    "pushguard": "checked against the CLI",
    "python": "`-c` snippets: their pushguard modules must exist",
    "python3": "`-c` snippets: their pushguard modules must exist",
    "pip": "package installs",
    "pulumi": "the Pulumi CLI (not available on build machines)",
    "esc": "the Pulumi ESC CLI (not available on build machines)",
    "gcloud": "Google Cloud CLI (no cloud access on build machines)",
    "git": "clones and refs of the repository (docs/install.md)",
    "spark-submit": "Spark",
    "venv-pack": "packs a virtualenv for spark.archives",
    "jq": "JSON filter",
    "cp": "coreutils",
    "cd": "the shell",
    "echo": "coreutils",
    "test": "coreutils",
    ".": "sources a virtualenv",
    "mkdocs": "this site",
    "pre-commit": "runs the hook (tests/ci/test_precommit_hook.py runs it with try-repo)",
    "gunicorn": "run by tests/receiver/test_header_limits.py",
    "uvicorn": "run by tests/receiver/test_header_limits.py",
    "flask": "run by tests/receiver/test_header_limits.py",
}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "{", "}", "\n"}
REDIRECTIONS = {"<", ">", ">>", "<<", ">&", "<&"}


def _substitutions(line: str) -> tuple[str, list[str]]:
    """``line`` with each ``$(...)`` replaced by a placeholder word, and the commands inside."""
    inner: list[str] = []
    out: list[str] = []
    i = 0
    while i < len(line):
        if line.startswith("$(", i):
            depth, j, quote = 1, i + 2, ""
            while depth:
                char = line[j]
                if quote:
                    quote = "" if char == quote else quote
                elif char in "'\"":
                    quote = char
                elif char == "(":
                    depth += 1
                elif char == ")":
                    depth -= 1
                j += 1
            inner.append(line[i + 2 : j - 1])
            out.append("SUBSTITUTION")
            i = j
        else:
            out.append(line[i])
            i += 1
    return "".join(out), inner


def shell_commands(script: str) -> Iterator[list[str]]:
    """Each simple command of ``script`` as its words (comments, redirections and leading
    ``NAME=value`` assignments left out), including the commands inside ``$(...)``."""
    script = script.replace("\\\n", " ")
    for raw in script.splitlines():
        line, inner = _substitutions(raw)
        for command in inner:
            yield from shell_commands(command)
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|(){}<>")
        lexer.commenters = "#"
        lexer.whitespace_split = True
        words: list[str] = []
        skip = False
        for token in [*lexer, ";"]:
            if skip:
                skip = False
            elif token in REDIRECTIONS:
                skip = True
            elif token in SEPARATORS:
                if words:
                    yield words
                words = []
            elif not words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", token, flags=re.S):
                continue
            else:
                words.append(token)


def _cli() -> Any:
    return typer.main.get_command(app)


def check_pushguard(words: list[str], *, name_only: bool = False) -> None:
    """Parse ``pushguard ARGS`` with the real CLI (subcommand, options, choices), without running
    it; fails the test naming the problem. ``name_only``: only the (sub)command must exist."""
    assert words[0] == "pushguard"
    command, parent, args = _cli(), None, words[1:]
    while hasattr(command, "get_command"):  # a group (pushguard, pushguard pack)
        parent = command.context_class(command, info_name=command.name, parent=parent)
        assert args, f"{' '.join(words)}: a subcommand is missing"
        name, *args = args
        sub = command.get_command(parent, name)
        assert sub is not None, f"{' '.join(words)}: no command {name!r}"
        command = sub
    if name_only:
        return
    try:
        command.make_context(command.name, list(args), parent=parent)
    except Exception as error:  # typer's vendored click raises its own UsageError classes
        format_message = getattr(error, "format_message", None)
        message = format_message() if callable(format_message) else str(error)
        pytest.fail(f"`{' '.join(words)}` does not parse: {message}")


def check_python_c(words: list[str]) -> None:
    if "-c" not in words:
        return
    snippet = words[words.index("-c") + 1]
    for module in re.findall(r"\bimport (pushguard[\w.]*)", snippet):
        assert importlib.util.find_spec(module), f"python -c imports a missing module {module}"


SHELL = _of("bash", "sh")


@pytest.mark.parametrize("block", **by_id(SHELL))
def test_shell_example_parses_and_its_pushguard_commands_exist(block: Block) -> None:
    bash = shutil.which("bash")
    assert bash
    parsed = subprocess.run(
        [bash, "-n"], check=False, input=block.code, text=True, capture_output=True
    )
    assert parsed.returncode == 0, parsed.stderr
    commands = list(shell_commands(block.code))
    assert commands
    for words in commands:
        assert words[0] in PROGRAMS, f"unknown program {words[0]!r}: add it to PROGRAMS, or fix"
        if words[0] == "pushguard":
            check_pushguard(words)
        elif words[0] in ("python", "python3"):
            check_python_c(words)


def test_shell_command_splitting() -> None:
    script = (
        "PYSPARK_PYTHON=./env/bin/python spark-submit --master yarn \\\n"
        "  \"$(python -c 'import pushguard.audit.__main__ as m; print(m.__file__)')\" gs://B/ # x\n"
        "{ pushguard preview --stack legacy; test $? -eq 1; } && echo done > out.txt\n"
    )
    assert list(shell_commands(script)) == [
        ["python", "-c", "import pushguard.audit.__main__ as m; print(m.__file__)"],
        ["spark-submit", "--master", "yarn", "SUBSTITUTION", "gs://B/"],
        ["pushguard", "preview", "--stack", "legacy"],
        ["test", "$?", "-eq", "1"],
        ["echo", "done"],
    ]


def test_pushguard_command_check_catches_unknown_options_and_values() -> None:
    check_pushguard(["pushguard", "audit", "cai/", "--out", "o/", "--fail-on", "advisory"])
    for bad in (
        ["pushguard", "preview", "--no-such-option"],
        ["pushguard", "preview", "--format", "xml"],
        ["pushguard", "audit", "cai/", "--out", "o/", "--fail-on", "sometimes"],
    ):
        with pytest.raises(pytest.fail.Exception):
            check_pushguard(bad)
    with pytest.raises(AssertionError):
        check_pushguard(["pushguard", "pack", "publish"])


INLINE_COMMAND = re.compile(
    r"`(pushguard (?:rules|preview|analyze|audit|pack|guardrails|push)\b(?!:)[^`]*)`"
)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_inline_pushguard_commands_parse(page: str) -> None:
    """Commands quoted in running text (``pushguard preview -f sarif ...``) parse too."""
    for command in INLINE_COMMAND.findall(PAGES[page]):
        words = shlex.split(command.replace("\n", " "))
        if any(re.fullmatch(r"[A-Z_]+|\.\.\.", w) for w in words):
            continue  # a schematic form with placeholders (`pushguard audit EXPORT_PATH ...`)
        check_pushguard(words, name_only=len(words) == 2 or words[1:] == ["pack", "build"])


# ---------------------------------------------------------------------------------------------
# YAML, JSON and TypeScript examples.

YAML_PROGRAM = ROOT / "components/examples/yaml/Pulumi.yaml"
TS_PROGRAM = ROOT / "components/examples/typescript/index.ts"
POLICY_CONFIG = ROOT / "policy-config.json"


def _run_steps(document: Any) -> Iterator[str]:
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "run" and isinstance(value, str):
                yield value
            else:
                yield from _run_steps(value)
    elif isinstance(document, list):
        for item in document:
            yield from _run_steps(item)


@pytest.mark.parametrize("block", **by_id(_of("yaml")))
def test_yaml_example_parses(block: Block) -> None:
    document = yaml.safe_load(block.code)
    assert isinstance(document, dict)
    if document.get("runtime") == "yaml":  # the component from a Pulumi YAML program
        program = yaml.safe_load(YAML_PROGRAM.read_text(encoding="utf-8"))
        for key in ("name", "runtime", "resources", "outputs"):
            assert document[key] == program[key], f"{key} differs from {YAML_PROGRAM.name}"
    steps = list(_run_steps(document))
    for step in steps:
        for words in shell_commands(step):
            if words[0] == "pushguard":
                check_pushguard(words)
    if "jobs" in document:  # a GitHub workflow: its pushguard step must be checked
        uses_action = list(_action_steps(document))
        assert uses_action or any("pushguard" in step for step in steps)
        for step in uses_action:
            assert step["uses"] == f"{ACTION}@v{VERSION}", "pin the action to the package version"
            assert set(step.get("with") or {}) <= set(ACTION_INPUTS), step["with"]


ACTION = "pushguard/pushguard"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
ACTION_INPUTS = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]


def _action_steps(document: Any) -> Iterator[dict[str, Any]]:
    """The steps of a workflow that use pushguard's GitHub Action."""
    for job in (document.get("jobs") or {}).values():
        for step in job.get("steps") or []:
            if str(step.get("uses", "")).startswith(f"{ACTION}@"):
                yield step


@pytest.mark.parametrize("block", **by_id(_of("json")))
def test_json_example_parses(block: Block) -> None:
    document = json.loads(block.code)
    if block.page == "docs/policy-pack.md":  # the sample policy config, as in the repository
        assert document == json.loads(POLICY_CONFIG.read_text(encoding="utf-8"))
    if "stackReferences" in document or "environments" in document:  # a --values file
        given = parse_values(document, block.id)  # tests/engine/test_values_preview.py runs it
        assert given.stack_references or given.environments


def _typescript_tokens(code: str) -> str:
    code = re.sub(r"//[^\n]*", "", code)
    code = re.sub(r"\s+", "", code)
    return re.sub(r",([}\])])", r"\1", code)


@pytest.mark.parametrize("block", **by_id(_of("typescript")))
def test_typescript_example_is_the_example_program(block: Block) -> None:
    assert _typescript_tokens(block.code) == _typescript_tokens(
        TS_PROGRAM.read_text(encoding="utf-8")
    ), f"the example differs from {TS_PROGRAM.relative_to(ROOT)} (beyond comments and layout)"


# ---------------------------------------------------------------------------------------------
# Text blocks: a usage line, the component's error message, the layout.


def _check_usage(code: str) -> None:
    """``pushguard SUB [--option VALUE] ...``: each option with each value it shows parses."""
    subcommand = code.split()[1]
    options = re.findall(r"\[(--[\w-]+)(?: ([^\]]+))?\]", code)
    assert options
    for option, value in options:
        for choice in value.split("|") if value else [None]:
            given = "60" if choice == "SECONDS" else choice
            check_pushguard(["pushguard", subcommand, option, *([given] if given else [])])


def _check_component_error(code: str) -> None:
    name = re.match(r"PushSubscription '([\w-]+)'", code)
    assert name
    _, error = run_failing(
        lambda: PushSubscription(
            name[1],
            {
                "topic": "orders",
                "push_endpoint": "http://orders.example.com/push",
                "target": {"kind": "external"},
            },
        )
    )
    while error is not None and not isinstance(error, PushSubscriptionInputError):
        error = error.__cause__ or error.__context__
    assert isinstance(error, PushSubscriptionInputError)
    assert str(error) == code.rstrip("\n")


def _check_layout(code: str) -> None:
    paths = re.findall(r"^(\S+)", code, flags=re.M)
    assert len(paths) > 10
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"the layout names paths that do not exist: {missing}"


@pytest.mark.parametrize("block", **by_id(_of("text")))
def test_text_block_is_checked(block: Block) -> None:
    code = block.code
    if code.startswith("pushguard "):
        _check_usage(code)
    elif code.startswith("PushSubscription '"):
        _check_component_error(code)
    elif code.startswith("pyproject.toml"):
        _check_layout(code)
    else:
        pytest.fail(f"{block.id}: a text block this test does not know how to check")


# ---------------------------------------------------------------------------------------------
# The site builds.


def test_mkdocs_builds_strictly(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs and mkdocs-material are in the dev extra")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    for page in PAGES:
        if page.startswith("docs/"):
            name = Path(page).stem
            assert (tmp_path / "site" / ("" if name == "index" else name) / "index.html").exists()
