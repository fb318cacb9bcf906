"""Lines longer than ``--max-line-bytes`` never reach memory whole; a file that holds one is
listed and left out.

Spark's text source reads lines with Hadoop's ``LineRecordReader`` (Spark inlines it as
``HadoopLineRecordReader``, apache/spark
``sql/core/src/main/java/org/apache/spark/sql/execution/datasources/HadoopLineRecordReader.java``),
which reads ``mapreduce.input.linerecordreader.line.maxlength`` (``MAX_LINE_LENGTH``) from the
read's Hadoop configuration, where the reader's options go. It never keeps more than that many
bytes of a line: a longer line is consumed and skipped ("Skipped line of size N", logged at INFO,
nothing else), except at the end of a split, where its first bytes are returned. Without the
limit a 1 GiB line is buffered whole and the JVM runs out of memory.

A skipped line leaves no row, so line numbers and counts would silently be off. The audit
therefore checks every newline-delimited file after the scan: the bytes of its lines (plus one
separator each) must add up to its size after decompression (a missing final separator and a
UTF-8 byte order mark, which the reader drops, allowed). A file that falls short, or that has a
line longer than the limit among those read, is taken out of the audit and listed in
``summary.json`` (``inputs.files_unreadable``) with the reason (:func:`left_out`); the other
files are audited as usual.

Lines are split at ``\\n`` alone (the reader's ``lineSep``), the separator of JSON Lines
(https://jsonlines.org/), so that the sum is exact: a ``\\r`` before it stays in the line, where
JSON reads it as white space (Spark's default also splits at a lone ``\\r``:
https://spark.apache.org/docs/latest/sql-data-sources-text.html).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

MAX_LINE_LENGTH = "mapreduce.input.linerecordreader.line.maxlength"
"""The Hadoop setting the line reader takes its limit from (in bytes, separator included)."""

_BOM = 3
"""Bytes of a UTF-8 byte order mark, which the reader strips from a file's first line."""


def line_options(max_line_bytes: int) -> dict[str, str]:
    """The text source's options for newline-delimited files: lines end at ``\\n``, and the
    reader keeps at most ``max_line_bytes`` bytes of a line and its separator (a line of
    exactly ``max_line_bytes`` bytes is read whole; ``HadoopLineRecordReader`` skips a line
    when what it consumed, separator included, is not below the limit)."""
    return {"lineSep": "\n", MAX_LINE_LENGTH: str(max_line_bytes + 2)}


class ListedFile(Protocol):
    """A newline-delimited file as listed (:class:`pushguard.audit.read.LineFile`)."""

    @property
    def name(self) -> str: ...

    @property
    def size(self) -> int: ...


def too_long_reason(max_line_bytes: int) -> str:
    """Why a file with an over-long line is left out."""
    return (
        f"holds a line longer than --max-line-bytes ({max_line_bytes} bytes), which is not read "
        "(so the file's lines cannot all be counted); the file is not audited: raise "
        "--max-line-bytes to read it"
    )


def left_out(
    files: Mapping[str, ListedFile],
    read_bytes: Mapping[str, int],
    too_long: set[str],
    max_line_bytes: int,
) -> dict[str, str]:
    """The files to leave out of the audit, by key, with the reason.

    ``files`` are the newline-delimited files by key (:func:`pushguard.audit.read.file_key`),
    ``read_bytes`` the bytes their read lines hold, one separator each included, and
    ``too_long`` the keys of files where a line read is longer than ``max_line_bytes``."""
    reasons: dict[str, str] = {}
    for key, listed in files.items():
        missing = listed.size - read_bytes.get(key, 0)
        if key in too_long or missing > _BOM:
            reasons[key] = too_long_reason(max_line_bytes)
        elif missing < -1:
            reasons[key] = "changed while it was read (more bytes read than it had when listed)"
    return reasons
