"""Issue 36: what ``pushguard`` prints is never cut, at any width, run as people run it.

The console script is started as a CI step starts it (the virtualenv's ``bin/pushguard``, not an
activated virtualenv) with stdout a pipe and ``COLUMNS`` set as a CI log or a narrow terminal
has it: rule IDs are what people copy, and option names and defaults what they type.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from pushguard.cli import app
from pushguard.rules import RULES
from pushguard.rules.docs import rules_markdown

PUSHGUARD = Path(sys.executable).with_name("pushguard")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
WIDTHS = (80, 40)
HELP_COMMANDS = ([], ["rules"], ["preview"], ["analyze"], ["audit"], ["pack"], ["pack", "build"])


def pushguard(columns: int, *args: str) -> str:
    """stdout of ``pushguard ARGS`` through a pipe, ``COLUMNS`` as given (exit 0 required)."""
    env = {k: v for k, v in os.environ.items() if k not in {"TERMINAL_WIDTH", "LINES"}}
    env["COLUMNS"] = str(columns)
    done = subprocess.run(
        [str(PUSHGUARD), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return ANSI.sub("", done.stdout)


def flat(text: str) -> str:
    """``text`` on one line, each run of whitespace (line breaks, indentation) one space."""
    return " ".join(text.split())


@pytest.mark.parametrize("columns", [*WIDTHS, 20])
def test_rules_never_cut_an_id_or_a_title(columns: int) -> None:
    out = pushguard(columns, "rules")
    assert "…" not in out
    words = set(out.split())
    for rule in RULES:
        assert rule.id in words, f"{rule.id} is not printed whole at {columns} columns"
        missing = [w for w in rule.title.split() if w not in words]
        assert not missing, f"{rule.id}: {missing} cut at {columns} columns"
    for line in out.splitlines():  # only a line that is an ID alone may be longer
        assert len(line.rstrip()) <= columns or line.strip() in {r.id for r in RULES}, line
    # -f json and -f markdown stay as they are, whatever the width.
    assert pushguard(columns, "rules", "-f", "markdown") == rules_markdown()
    listed = json.loads(pushguard(columns, "rules", "-f", "json"))
    assert [(r["id"], r["title"]) for r in listed] == [(r.id, r.title) for r in RULES]


def test_rules_is_a_table_where_it_fits() -> None:
    out = pushguard(200, "rules")
    for rule in RULES:
        assert re.search(rf"^\s*{re.escape(rule.id)}\s+{rule.default_level.value}\s", out, re.M)
        assert rule.title in out


def _command(path: list[str]) -> tuple[Any, Any]:
    """The click command at ``path`` and a context for it (as ``--help`` makes one)."""
    command: Any = typer.main.get_command(app)
    context = command.context_class(command, info_name="pushguard")
    for name in path:
        command = command.get_command(context, name)
        context = command.context_class(command, info_name=name, parent=context)
    return command, context


def _first_sentence(text: str) -> str:
    return flat(re.split(r"(?<=\.)\s", text.split("\n\n", 1)[0], maxsplit=1)[0])


NAME_LINE = re.compile(r"^\s*-[\w-]+(,? -[\w-]+)*( <[^>]+>)?( / -[\w-]+)*$")
"""A line that is only option names (and their value's form): it cannot be wrapped."""


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("path", HELP_COMMANDS, ids=lambda p: " ".join(p) or "pushguard")
def test_help_never_cuts_an_option_its_help_or_its_default(columns: int, path: list[str]) -> None:
    out = pushguard(columns, *path, "--help")
    assert "…" not in out
    text = flat(out)
    command, context = _command(path)
    for param in command.params:
        for name in [*param.opts, *param.secondary_opts]:
            if name.startswith("-"):
                assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", out), name
        record = param.get_help_record(context)
        if record and record[1]:  # its whole help, with `[default: ...]` and `[required]`
            assert flat(record[1]) in text, f"{name}: {record[1]!r} is cut"
    for name in getattr(command, "commands", {}):  # a group lists each command's first sentence
        sub = command.commands[name]
        assert _first_sentence(sub.help or "") in text, f"{name}'s summary is cut"
    for line in out.splitlines():
        assert len(line) <= columns or NAME_LINE.match(line), f"{line!r} is wider than {columns}"
