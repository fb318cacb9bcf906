"""``--help`` that a terminal, a pipe or a CI log never cuts.

Typer's rich help draws options in a boxed table whose columns shrink to fit: at 80 columns an
option's name and its default end in ``…`` (``--include-dry-…``, ``[default: no-include-dry-…``).
The ``pushguard`` command uses click's plain help instead (``rich_markup_mode=None``), with this
formatter in place of click's :class:`click.HelpFormatter`:

- the width is the terminal's (``shutil.get_terminal_size``: ``COLUMNS``, then the terminal, else
  80 columns, as for a pipe), capped at 80 for reading; click's own formatter never goes below 50,
  so a 40-column terminal folded every line;
- text wraps at spaces only: an option name, a default, a URL or a path is never split at a hyphen
  or in the middle (click breaks ``[default: no-include-dry-run-perimeters]`` at its hyphens);
  a word longer than the line stays whole and the line is longer;
- when the description column would be narrower than :data:`MIN_TEXT_WIDTH`, each option's
  description goes under its name instead of beside it;
- the commands list shows each command's first sentence whole (click cuts it with ``...`` to
  fit one line).

Sources: click 8 ``click/formatting.py`` (``HelpFormatter``, ``wrap_text``) and ``click/core.py``
(``Context.formatter_class``); typer 0.29 ``typer/core.py`` (``rich_markup_mode=None`` uses
click's ``format_help``; ``TyperGroup.format_commands`` shortens with ``get_short_help_str``),
which runs on its own copy of click (``typer._click``): the classes here derive from the ones
typer uses, ``typer.Context`` and its ``formatter_class``.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from typer._click import Context as _ClickContext
    from typer._click.formatting import HelpFormatter as _HelpFormatter
else:  # the click typer runs on: its own vendored copy since typer 0.20-something, else click
    _HelpFormatter = typer.Context.formatter_class

MAX_WIDTH = 80
"""The widest help text, as click's default ``max_content_width``."""

MIN_TEXT_WIDTH = 28
"""The narrowest description column beside the option names; narrower, it goes under them."""

NAME_COLUMN_MAX = 30
"""The widest option-name column (click's ``col_max``); longer names put their text below."""

_GAP = 2
_BELOW_INDENT = 4


def _fill(text: str, width: int, indent: str) -> str:
    """``text`` filled to ``width`` columns at spaces only, each line starting with ``indent``."""
    return textwrap.fill(
        " ".join(text.split()),
        width=max(width, len(indent) + 1),
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


class UncutHelpFormatter(_HelpFormatter):
    """Click's help formatter, wrapping at spaces only and at the terminal's real width."""

    def __init__(
        self, indent_increment: int = 2, width: int | None = None, max_width: int | None = None
    ) -> None:
        if width is None:
            columns = shutil.get_terminal_size().columns
            width = max(min(columns, max_width or MAX_WIDTH) - 2, 20)
        super().__init__(indent_increment, width, max_width)

    def write_text(self, text: str) -> None:
        """Paragraphs (separated by blank lines) wrapped at spaces, at the current indent."""
        indent = " " * self.current_indent
        paragraphs = [p for p in text.split("\n\n") if p.strip()]
        self.write("\n\n".join(_fill(p, self.width, indent) for p in paragraphs))
        self.write("\n")

    def write_dl(
        self,
        rows: Iterable[tuple[str, str]],
        col_max: int = NAME_COLUMN_MAX,
        col_spacing: int = _GAP,
    ) -> None:
        """Terms and their texts: side by side while the text column is at least
        :data:`MIN_TEXT_WIDTH` wide, else each text under its term."""
        rows = list(rows)
        if not rows:
            return
        indent = " " * self.current_indent
        first = min(max(len(term) for term, _ in rows), col_max) + col_spacing
        beside = self.width - self.current_indent - first >= MIN_TEXT_WIDTH
        for term, text in rows:
            if beside and len(term) <= first - col_spacing and text:
                lines = _fill(text, self.width, indent + " " * first).splitlines()
                self.write(f"{indent}{term:<{first}}{lines[0].lstrip()}\n")
                self.write("".join(f"{line}\n" for line in lines[1:]))
                continue
            self.write(f"{indent}{term}\n")
            if text:
                below = indent + " " * (first if beside else _BELOW_INDENT)
                self.write(_fill(text, self.width, below) + "\n")


class UncutContext(typer.Context):
    """A click context whose help uses :class:`UncutHelpFormatter`."""

    formatter_class = UncutHelpFormatter


class UncutCommand(TyperCommand):
    """A typer command with uncut help, its required arguments in the usage line as plain
    names (``URL``, not typer's ``{URL}``: braces read as a choice)."""

    context_class = UncutContext

    def collect_usage_pieces(self, ctx: _ClickContext) -> list[str]:
        """The usage line's pieces, a required argument's ``{NAME}`` written ``NAME``."""
        return [_REQUIRED.sub(r"\1\2", piece) for piece in super().collect_usage_pieces(ctx)]


_REQUIRED = re.compile(r"^\{([^{}]+)\}((?:\.\.\.)?)$")


class UncutGroup(TyperGroup):
    """A typer group with uncut help: its commands' first sentences are listed whole."""

    context_class = UncutContext

    def format_commands(self, ctx: _ClickContext, formatter: _HelpFormatter) -> None:
        """The commands and their first sentence, never shortened with ``...``."""
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            rows.append((name, _first_sentence(command.short_help, command.help)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _first_sentence(short_help: str | None, help_text: str | None) -> str:
    """A command's ``short_help``, else the first sentence of its help's first paragraph."""
    if short_help:
        return short_help
    paragraph = (help_text or "").split("\n\n", 1)[0]
    words: Sequence[str] = paragraph.split()
    for index, word in enumerate(words):
        if word.endswith(".") and not word.endswith("e.g."):
            return " ".join(words[: index + 1])
    return " ".join(words)
