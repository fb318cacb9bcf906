"""``pushguard rules`` as text, at any width: a rule ID is never cut.

The IDs are what people copy into ``policy-config.json`` and exceptions, so the text view keeps
each one whole whatever the console's width (a terminal's, or ``COLUMNS``, or rich's 80 columns
when stdout is a pipe, as in a CI log). Where the table fits with a readable title column, it is a
table whose ID column neither wraps nor shrinks below the longest ID (rich's ``no_wrap`` and
``min_width``) and whose other columns wrap at spaces; narrower, each rule is a block: its ID on a
line of its own (printed as it is, never wrapped, cropped or ellipsised: a terminal narrower than
an ID folds the line itself), then its level, severity and where it applies, then its title, both
wrapped at spaces.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pushguard.rules.base import Rule

TITLE_MIN_WIDTH = 20
"""The narrowest title column worth a table (below it, titles of five words take five lines)."""

APPLIES_MIN_WIDTH = 14
"""The narrowest "applies" column of the table (``audit --stacks`` on one line)."""

APPLIES_MAX_WIDTH = 20
"""The widest "applies" column: the rare long places wrap, the titles get the room."""

_LEVEL_WIDTH = len("mandatory")
_SEVERITY_WIDTH = len("severity")


def _table(rules: Sequence[Rule]) -> Table:
    table = Table(
        title="pushguard rules",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
        show_edge=False,
    )
    ids = max(len(rule.id) for rule in rules)
    table.add_column("ID", no_wrap=True, min_width=ids, overflow="ignore")
    table.add_column("level", no_wrap=True, min_width=_LEVEL_WIDTH)
    table.add_column("severity", no_wrap=True, min_width=_SEVERITY_WIDTH)
    table.add_column("applies", min_width=APPLIES_MIN_WIDTH, max_width=APPLIES_MAX_WIDTH)
    table.add_column("title", min_width=TITLE_MIN_WIDTH)
    for rule in rules:
        table.add_row(rule.id, rule.default_level.value, rule.severity, rule.where, rule.title)
    return table


def _indented(text: str, width: int) -> str:
    """``text`` wrapped at spaces only (an option or a URL is never split), indented by two."""
    return textwrap.fill(
        text,
        width=max(width, 8),
        initial_indent="  ",
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def _blocks(console: Console, rules: Sequence[Rule]) -> None:
    # soft_wrap: each line is printed as it is, never wrapped, cropped or ellipsised by rich.
    console.print("pushguard rules", soft_wrap=True)
    for rule in rules:
        console.print()
        console.print(Text(rule.id, style="bold"), soft_wrap=True)
        facts = f"{rule.default_level.value}, {rule.severity}, applies {rule.where}"
        console.print(Text(_indented(facts, console.width)), soft_wrap=True)
        console.print(Text(_indented(rule.title, console.width)), soft_wrap=True)


def _words(rule: Rule) -> list[str]:
    return [
        rule.id,
        rule.default_level.value,
        rule.severity,
        *rule.where.split(),
        *rule.title.split(),
    ]


def table_fits(rules: Sequence[Rule], width: int) -> bool:
    """Whether the table, laid out ``width`` columns wide, shows every word of every row whole
    (rich crops or folds cells when the columns' minimum widths exceed the console's), with a
    title column of at least :data:`TITLE_MIN_WIDTH`. Decided by laying the table out, not by
    arithmetic on rich's column widths."""
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(_table(rules))
    lines = console.export_text().splitlines()
    header = next((line for line in lines if line.lstrip().startswith("ID ")), "")
    title = header.find(" title")
    if title < 0 or len(header) - title - 1 < TITLE_MIN_WIDTH:
        return False
    shown = set(" ".join(lines).split())
    return all(word in shown for rule in rules for word in _words(rule))


def print_rules(console: Console, rules: Sequence[Rule]) -> None:
    """Print ``rules`` on ``console`` as a table when it fits (:func:`table_fits`), else one
    block per rule; every ID whole in either."""
    if table_fits(rules, console.width):
        console.print(_table(rules))
    else:
        _blocks(console, rules)
