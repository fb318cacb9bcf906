"""Finding and reading Pulumi state files as plain JSON, for every reader of state (``pushguard
analyze`` on the driver, the audit's ``--stacks`` on Spark executors): the files ``pulumi stack
export`` writes and the checkpoints of a self-managed backend (``.pulumi/stacks/PROJECT/
STACK.json[.gz]``, https://www.pulumi.com/docs/iac/concepts/state-and-backends/#local-filesystem),
bounded in size (:data:`MAX_STATE_BYTES`) and depth (:data:`MAX_VALUE_DEPTH`), gzipped or not.

Plain Python (no Pulumi, no Spark): what a state *means* is :mod:`pushguard.state.document`.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

MAX_VALUE_DEPTH = 256
"""The deepest a property value may be nested (objects and lists, counted from the property):
a value nested deeper makes its file unreadable (named in the report, exit 2). Pulumi itself
never needs more than a few levels; the limit keeps reading and the pack's decoding bounded."""
MAX_STATE_BYTES = 1 << 30
"""The largest state file, after decompression: 1 GiB. A file larger, or a gzip that inflates
past it, is unreadable (named in the report) and never held in memory whole."""

RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
"""``resource.ResourceReferenceSig``: a resource reference ``{SIG, "urn", "id",
"packageVersion"}`` in a state."""
OUTPUT_VALUE_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
"""``resource.OutputValueSig``: an output value ``{SIG, "value"?, "secret"?, "dependencies"?}``
(version 4's ``outputDependencies``)."""

SKIPPED_FOLDERS = frozenset({"history", "backups", "locks"})
"""Folders of a self-managed backend's ``.pulumi`` that hold old copies or locks, not stacks:
skipped only right under a folder named ``.pulumi`` (the backend's root,
https://www.pulumi.com/docs/iac/concepts/state-and-backends/#local-filesystem); elsewhere (an
organisation or project named ``backups``) they are searched like any folder."""


class StateFileError(ValueError):
    """A state file cannot be read: ``path`` and why (the field, and what is allowed)."""

    def __init__(self, path: Path | str, message: str) -> None:
        self.path = str(path)
        self.message = message
        super().__init__(f"{path}: {message}")


class NotStateError(StateFileError):
    """A JSON file that is not Pulumi state at all: not an object, or an object with neither
    ``deployment`` (``pulumi stack export``) nor ``checkpoint`` (a backend's file), such as a
    ``package.json`` beside the exports. Found while walking a folder it is skipped and listed;
    named on the command line it is an error like any unreadable file."""


def short(where: str) -> str:
    """A property path cut to its first and last parts when long (a path 257 levels deep)."""
    return where if len(where) <= 120 else f"{where[:60]}...{where[-40:]}"


def load_json(path: Path) -> tuple[Any, str]:
    """The parsed document and its text; ``.gz`` files are decompressed (a self-managed
    backend with ``PULUMI_SELF_MANAGED_STATE_GZIP``). At the peak, the file's (inflated) bytes
    and its text are held once each (about twice the inflated size for ASCII JSON), then the
    parsed document."""
    try:
        data = read_bounded(path)
        text = data.decode("utf-8")
        del data  # the bytes are not needed once decoded: never held with the parsed document
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as error:
        raise StateFileError(path, f"cannot be read: {error}") from None
    except UnicodeDecodeError:
        raise StateFileError(path, "is not UTF-8 text (a state file is JSON)") from None
    try:
        return json.loads(text, parse_constant=no_constant, parse_float=finite), text
    except json.JSONDecodeError as error:
        raise StateFileError(
            path, f"is not JSON ({error.msg} at line {error.lineno}, column {error.colno})"
        ) from None
    except RecursionError:
        raise StateFileError(
            path, f"has a value nested deeper than {MAX_VALUE_DEPTH} levels (pushguard's limit)"
        ) from None
    except ValueError as error:  # NaN, 1e999, a 5,000-digit integer
        raise StateFileError(path, f"is not a state Pulumi writes: {error}") from None


_CHUNK = 1 << 20
"""Bytes read, and at most bytes inflated, per step: what reading holds beyond the result."""
_GZIP_MAGIC = b"\x1f\x8b"


def read_bounded(path: Path) -> bytearray:
    """The file's bytes, decompressed when gzipped (a ``.gz`` name or gzip's magic bytes),
    never more than :data:`MAX_STATE_BYTES`.

    The file's size is checked with ``stat`` before anything is read (a sparse 1.1 GB file is
    refused without being read), and only regular files are opened (a FIFO would block, a
    device never end). A gzip is inflated twice: first only counting, in steps of at most
    :data:`_CHUNK` bytes, so one that inflates past the limit is refused holding no more than
    one step; then, under the limit, into one buffer. Like Python's :mod:`gzip`, several
    members are read in turn and zero padding after the last is allowed; any other byte after
    the gzip stream is refused (https://www.rfc-editor.org/rfc/rfc1952 s. 2.2: a file is a
    series of members).

    Raises:
        StateFileError: not a regular file, larger than the limit, inflating past it,
            truncated, or with data after its gzip stream.
        OSError, zlib.error: the file cannot be read or is not a valid gzip."""
    limit = MAX_STATE_BYTES
    with open(path, "rb", opener=_open_regular) as stream:
        status = os.fstat(stream.fileno())
        if not stat.S_ISREG(status.st_mode):  # replaced since it was looked at
            raise StateFileError(path, "is not a regular file (a FIFO, socket or device)")
        size = status.st_size
        head = stream.read(2)
        stream.seek(0)
        if path.suffix != ".gz" and head != _GZIP_MAGIC:
            if size > limit:
                raise StateFileError(path, f"is larger than {limit >> 20} MiB (pushguard's limit)")
            data = bytearray(stream.read(limit + 1))
            if len(data) > limit:  # it grew while being read
                raise StateFileError(path, f"is larger than {limit >> 20} MiB (pushguard's limit)")
            return data
        total = 0

        def count(piece: bytes) -> None:
            nonlocal total
            total += len(piece)
            if total > limit:
                raise StateFileError(
                    path, f"inflates past {limit >> 20} MiB (pushguard's limit for a state)"
                )

        _inflate(path, stream, count)
        stream.seek(0)
        data = bytearray()
        _inflate(path, stream, data.extend, budget=total)
        return data


def _open_regular(name: str, flags: int) -> int:
    """``os.open`` that refuses anything but a regular file before opening it (opening a FIFO
    for reading blocks until a writer comes)."""
    if not stat.S_ISREG(os.stat(name).st_mode):
        raise StateFileError(name, "is not a regular file (a FIFO, socket or device)")
    return os.open(name, flags | getattr(os, "O_NONBLOCK", 0))


def _inflate(
    path: Path, stream: Any, sink: Callable[[bytes], None], budget: int | None = None
) -> None:
    """Inflate the gzip members of ``stream`` into ``sink``, at most :data:`_CHUNK` bytes at a
    time (``budget``: the size the first pass counted; a file changed in between is refused)."""
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip framing
    produced, pending = 0, b""
    while True:
        if inflate.eof:
            pending = pending.lstrip(b"\0")  # zero padding after a member, as gzip allows
            if len(pending) < 2:
                more = stream.read(_CHUNK)
                if not more and not pending:
                    return
                if more:
                    pending += more
                    continue
            if not pending.startswith(_GZIP_MAGIC):
                raise StateFileError(
                    path, "cannot be read: it has data after the end of its gzip stream"
                )
            inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # the next member
        if not pending:
            pending = stream.read(_CHUNK)
        piece = inflate.decompress(pending, _CHUNK)
        if not pending and not piece:
            break  # the file ended inside a member
        pending = inflate.unused_data if inflate.eof else inflate.unconsumed_tail
        produced += len(piece)
        if budget is not None and produced > budget:
            raise StateFileError(path, "changed while it was being read")
        sink(piece)
    raise StateFileError(path, "cannot be read: the gzip stream is truncated")


def no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:40]} does not fit a double")
    return value


def find_state_files(
    paths: Iterable[Path],
) -> tuple[list[Path], list[StateFileError], list[NotStateError]]:
    """The state files named by ``paths``: files as given, folders searched for ``*.json`` and
    ``*.json.gz``, sorted per folder; the files of a backend's ``.pulumi/history``,
    ``.pulumi/backups`` and ``.pulumi/locks`` folders are skipped, each listed with why. A path
    that does not exist, or a folder with no state file, is an error for that path only.
    Returns ``(files, errors, skipped)``."""
    found: list[Path] = []
    errors: list[StateFileError] = []
    skipped: list[NotStateError] = []
    for path in paths:
        if path.is_dir():
            files, problems, passed = _walk(path)
            errors += problems
            skipped += passed
            if not files and not problems and not passed:
                errors.append(StateFileError(path, "no state files (*.json, *.json.gz) in it"))
            found += files
        elif path.exists():
            found.append(path)  # a file, or something reading will name
        else:
            errors.append(StateFileError(path, "does not exist"))
    return found, errors, skipped


def _is_state_name(name: str) -> bool:
    return name.endswith(".json") or name.endswith(".json.gz")


def _walk(folder: Path) -> tuple[list[Path], list[StateFileError], list[NotStateError]]:
    """The state files under ``folder`` (sorted), the entries that could not be looked at (a
    folder that cannot be listed, a state-named link to nothing) and the files of a backend's
    history, backups and locks folders (skipped). Links to folders are not followed (a backend
    folder has none, and a loop would never end)."""
    files: list[Path] = []
    problems: list[StateFileError] = []
    skipped: list[NotStateError] = []

    def unlistable(error: OSError) -> None:
        problems.append(StateFileError(error.filename, f"cannot be listed: {error.strerror}"))

    for root, folders, names in os.walk(folder, onerror=unlistable):
        here = Path(root)
        kept = _backend_folder(here, folder)
        if kept is not None:
            skipped += (
                NotStateError(
                    here / name,
                    f"is in the backend's .pulumi/{kept} folder (old copies and locks, not stacks)",
                )
                for name in sorted(names)
                if _is_state_name(name)
            )
            folders.sort()
            continue
        folders.sort()
        for name in sorted(names):
            if not _is_state_name(name):
                continue
            entry = here / name
            if entry.is_file():
                files.append(entry)
            elif entry.is_symlink() and not entry.exists():
                problems.append(StateFileError(entry, "is a link to nothing"))
            else:
                problems.append(
                    StateFileError(entry, "is not a regular file (a FIFO, socket or device)")
                )
    return sorted(files), problems, sorted(skipped, key=lambda e: e.path)


def _backend_folder(here: Path, top: Path) -> str | None:
    """The backend folder (``history``, ``backups``, ``locks``) ``here`` is in, when it is
    right under a ``.pulumi`` folder at or below ``top``; else ``None``."""
    parts = here.relative_to(top).parts
    full = (top.name, *parts)
    for i in range(1, len(full)):
        if full[i] in SKIPPED_FOLDERS and full[i - 1] == ".pulumi" and i >= 1:
            return full[i]
    return None
