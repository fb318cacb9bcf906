"""The audit's outputs, made visible in one step: checked before Spark starts, written into a
staging folder, published at the end.

- **Before Spark starts** (:func:`check_out`, :func:`check_local_inputs`): every local export
  path exists; a local ``--out`` is not a file, not under a file, can be created and written,
  is not inside an input, and, when it exists, is an audit's output folder (it holds
  :data:`MARKER` or ``summary.json``) or empty (a file system's ``lost+found`` and the audit's
  own ``.pushguard-*`` leftovers aside): an audit never replaces a folder of other files. A
  ``--out`` that is a symbolic link stands for the folder it points to, which must exist; the
  link itself is never replaced. How the run will publish is decided here (:class:`Target`).
- **During the run** every output goes to a staging folder, never into ``--out``'s files:
  beside the folder (``.NAME.pushguard-staging-RUN``) or, when the folder cannot be replaced,
  inside it (``.pushguard-staging-RUN``: :func:`staging_path`).
- **At the end** (:func:`publish`) the completion marker :data:`MARKER` is written last into the
  staging folder, then:

  - **the folder is replaced** (the usual case): the previous ``--out`` (if any) is renamed
    aside, the staging folder renamed to ``--out`` and the previous outputs deleted. On a local
    disk and HDFS a folder rename is one atomic step, so ``--out`` holds either the previous
    run or this one, never a mix (between the two renames it is briefly absent). On object
    stores (``gs://``) a "rename" is a copy and a delete: there, readers must trust only a
    folder whose :data:`MARKER` exists.
  - **inside the folder**, when it is a mount point (a Docker or Kubernetes volume:
    :mod:`pushguard.audit.mounts`) or its parent cannot be written, so the folder itself can
    neither be renamed nor replaced: the previous outputs are moved into
    ``.pushguard-previous-RUN`` inside it, :data:`MARKER` first, then the new ones moved in,
    :data:`MARKER` last, each a rename within the folder; the previous ones are then deleted.
    While the entries move, the folder has no :data:`MARKER`. A rename that fails puts every
    entry back; the message says where the files are if even that fails.
- **A failed or interrupted run** deletes its staging folder (:func:`discard`) and leaves
  ``--out`` as it was, also when its JVM was killed (a local staging folder is then deleted from
  Python). A run killed outright (SIGKILL of the command) may leave its staging folder; it is
  never read and can be deleted.

Local folders are renamed with ``os.rename`` (one step, or an error that changed nothing), other
URIs through Hadoop's ``FileSystem``. Hadoop's local file system falls back to copying and
deleting when a rename fails ("The fallback behavior accomplishes the rename by a full copy",
``RawLocalFileSystem.rename`` in apache/hadoop ``hadoop-common-project/hadoop-common/src/main/java/
org/apache/hadoop/fs/RawLocalFileSystem.java``): renaming a mounted ``--out`` aside that way
emptied it into a hidden sibling folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pushguard.audit.mounts import is_mount_point

MARKER = "_COMPLETE"
"""The completion marker: written last, after every other output (JSON: ``runTime``,
``runId``)."""

_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_OURS = ".pushguard-"
_FOREIGN_OK = ("lost+found",)
"""Entries a file system puts at the root of a volume (ext2/3/4), left alone."""


class OutputUsageError(ValueError):
    """``--out`` or an export path is unusable; the message names it and why (exit 2)."""


class PublishError(OSError):
    """Publishing failed; the message says where the previous and the new outputs are, and
    ``keeps_staging`` whether the staging folder holds outputs the message points to (then it
    is not deleted)."""

    def __init__(self, message: str, *, keeps_staging: bool = False) -> None:
        super().__init__(message)
        self.keeps_staging = keeps_staging


@dataclass(frozen=True)
class Target:
    """Where and how a run publishes: ``out`` as given, ``folder`` the folder that receives
    the outputs (a symbolic link resolved; a URI as given), ``inside`` true when the run
    publishes inside it (it cannot be replaced: ``why`` says why)."""

    out: str
    folder: str
    inside: bool = False
    why: str = ""


def local_path(value: str) -> Path | None:
    """The local path of ``value`` (a path or a ``file://`` URI), ``None`` for another URI
    (``gs://``, ``hdfs://``, ``bigquery:``)."""
    if value.startswith("file://"):
        return Path(value.removeprefix("file://"))
    if _URI.match(value) or value.startswith("bigquery:"):
        return None
    return Path(value)


def check_local_inputs(paths: list[str]) -> None:
    """Raise :class:`OutputUsageError` naming the first local export path that does not
    exist."""
    for raw in paths:
        path = local_path(raw)
        if path is not None and not path.exists():
            raise OutputUsageError(f"EXPORT_PATH {raw}: does not exist")


def _entries(folder: Path) -> list[Path]:
    """The entries of ``folder`` but ``lost+found`` and the audit's ``.pushguard-*``."""
    return [
        e for e in folder.iterdir() if e.name not in _FOREIGN_OK and not e.name.startswith(_OURS)
    ]


def _is_audit_output(folder: Path) -> bool:
    return (folder / MARKER).exists() or (folder / "summary.json").is_file()


def _writable(path: Path) -> bool:
    """Whether a folder can be made in ``path``, tried rather than asked: a permission check
    (``os.access``) passes for root on a file system that refuses every write (``/proc``, a
    read-only mount), which would surface only when the run publishes, after the whole Spark
    job. The probe folder is removed at once."""
    try:
        probe = tempfile.mkdtemp(prefix=f"{_OURS}probe-", dir=path)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        os.rmdir(probe)
    return True


def out_target(out: str) -> Target:
    """How the run publishes into ``out`` (see the module docstring); a URI is checked by the
    run.

    Raises:
        OutputUsageError: a local ``out`` is a file, a link to nothing or to a file, under a
            file, or a folder that cannot be written where the run needs to write.
    """
    path = local_path(out)
    if path is None:
        return Target(out, out)
    target = path.absolute()
    if target.is_symlink():
        resolved = target.resolve()
        if not resolved.exists():
            raise OutputUsageError(f"--out {out}: is a link to {resolved}, which does not exist")
        target = resolved
    if target.exists() and not target.is_dir():
        raise OutputUsageError(f"--out {out}: is a file, not a folder")
    if target.is_dir():
        folder = target.resolve()
        why = ""
        if is_mount_point(folder):
            why = "it is a mount point"
        elif not _writable(folder.parent):
            why = f"its parent {folder.parent} cannot be written"
        if why and not _writable(folder):
            raise OutputUsageError(f"--out {out}: {folder} is not writable")
        return Target(out, str(folder), inside=bool(why), why=why)
    existing = target.parent
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise OutputUsageError(f"--out {out}: {existing} is a file, so the folder cannot be made")
    if not _writable(existing):
        raise OutputUsageError(f"--out {out}: {existing} is not writable")
    return Target(out, str(target))


def check_out(out: str, inputs: list[str]) -> Target:
    """Check a local ``--out`` (see the module docstring) and tell how the run will publish
    into it (:func:`out_target`); a URI is checked by the run.

    Raises:
        OutputUsageError: naming ``--out`` and what is wrong.
    """
    target = out_target(out)
    path = local_path(target.folder)
    if path is None:
        return target
    if path.is_dir() and _entries(path) and not _is_audit_output(path):
        raise OutputUsageError(
            f"--out {out}: exists and is not an audit's output folder (no {MARKER} nor "
            "summary.json in it); the audit replaces its --out as a whole, so give a new or an "
            "empty folder, or a previous audit's"
        )
    resolved = path.resolve()
    for raw in inputs:
        source = local_path(raw)
        if source is None or not source.exists():
            continue
        source = source.resolve()
        if resolved == source or resolved.is_relative_to(source):
            raise OutputUsageError(
                f"--out {out}: is inside the export path {raw}; the outputs would be read as "
                "input by the next run"
            )
    return target


def staging_path(target: Target, run_id: str) -> str:
    """The staging folder of a run: ``.NAME.pushguard-staging-RUN`` beside the folder (the
    same file system, so the publishing rename is a rename), or ``.pushguard-staging-RUN``
    inside it when the run publishes inside it."""
    if target.inside:
        return f"{target.folder.rstrip('/')}/{_OURS}staging-{run_id}"
    stripped = target.folder.rstrip("/")
    parent, _, name = stripped.rpartition("/")
    staged = f".{name}.pushguard-staging-{run_id}"
    return f"{parent}/{staged}" if parent or stripped.startswith("/") else staged


def _fs(spark: Any, path: str) -> tuple[Any, Any]:
    jvm: Any = spark.sparkContext._jvm
    hadoop = jvm.org.apache.hadoop.fs.Path(path)
    fs = hadoop.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    return fs, fs.makeQualified(hadoop)  # absolute, so a relative --out has a parent


def publish(spark: Any, staging: str, target: Target, run_id: str, run_time: datetime) -> None:
    """Write :data:`MARKER` into ``staging``, then make its content ``target``'s outputs (see
    the module docstring).

    Raises:
        PublishError: the outputs could not be moved into place; its message says whether the
            previous outputs are as they were, or where they are.
    """
    fs, staged = _fs(spark, staging)
    stream = fs.create(staged.suffix("/" + MARKER), True)
    try:
        marker = {"runId": run_id, "runTime": run_time.isoformat().replace("+00:00", "Z")}
        stream.write(bytearray((json.dumps(marker) + "\n").encode()))
    finally:
        stream.close()
    folder, staged_path = local_path(target.folder), local_path(staging)
    if folder is None or staged_path is None:
        _publish_uri(spark, staged, target, run_id)
    elif target.inside:
        _publish_inside(staged_path, folder, target.out, run_id)
    else:
        _publish_folder(staged_path, folder, target.out, run_id)


def _publish_uri(spark: Any, staged: Any, target: Target, run_id: str) -> None:
    """Replace a ``gs://`` or HDFS folder through Hadoop (renames; copies on object stores)."""
    fs, destination = _fs(spark, target.folder.rstrip("/"))
    previous = None
    if fs.exists(destination):
        previous = destination.getParent().suffix(
            f"/.{destination.getName()}.pushguard-previous-{run_id}"
        )
        if not fs.rename(destination, previous):
            raise PublishError(
                f"cannot move the previous outputs in {target.out} aside to {previous} (on an "
                "object store a failed rename may have copied part of them there); nothing was "
                "published"
            )
    if not fs.rename(staged, destination):
        restored = previous is None or fs.rename(previous, destination)
        where = _kept(target.out) if restored else f"the previous outputs are in {previous}"
        raise PublishError(f"cannot publish the outputs into {target.out}; {where}")
    if previous is not None:
        fs.delete(previous, True)


def _kept(out: str) -> str:
    return f"the previous outputs in {out} are as they were; nothing was published"


def _publish_folder(staged: Path, folder: Path, out: str, run_id: str) -> None:
    """Replace the local ``folder`` by ``staged``, each step one ``os.rename``."""
    previous = folder.parent / f".{folder.name}.pushguard-previous-{run_id}"
    moved = False
    try:
        if folder.exists():
            os.rename(folder, previous)
            moved = True
        os.rename(staged, folder)
    except OSError as error:
        cause = error.strerror or str(error)
        if moved:
            try:
                os.rename(previous, folder)
            except OSError:
                raise PublishError(
                    f"cannot publish into {out}: {cause}; the previous outputs are in "
                    f"{previous}, the new ones in {staged}",
                    keeps_staging=True,
                ) from error
        raise PublishError(f"cannot publish into {out}: {cause}; {_kept(out)}") from error
    if moved:
        shutil.rmtree(previous, ignore_errors=True)


def _publish_inside(staged: Path, folder: Path, out: str, run_id: str) -> None:
    """Move ``staged``'s entries into ``folder`` and the previous ones aside, each one
    ``os.rename`` within the folder: the previous :data:`MARKER` first, the new one last."""
    previous = folder / f"{_OURS}previous-{run_id}"
    old = sorted(_entries(folder), key=lambda e: e.name != MARKER)
    new = sorted(staged.iterdir(), key=lambda e: e.name == MARKER)
    moved_old: list[str] = []
    moved_new: list[str] = []
    try:
        if old:
            previous.mkdir()
        for entry in old:
            os.rename(entry, previous / entry.name)
            moved_old.append(entry.name)
        for entry in new:
            os.rename(entry, folder / entry.name)
            moved_new.append(entry.name)
    except OSError as error:
        cause = error.strerror or str(error)
        if _put_back(staged, folder, previous, moved_new, moved_old):
            raise PublishError(f"cannot publish into {out}: {cause}; {_kept(out)}") from error
        raise PublishError(
            f"cannot publish into {out}: {cause}; the previous outputs could not all be put "
            f"back: those moved are in {previous}, the new outputs in {staged} and {out}",
            keeps_staging=True,
        ) from error
    shutil.rmtree(previous, ignore_errors=True)
    shutil.rmtree(staged, ignore_errors=True)


def _put_back(
    staged: Path, folder: Path, previous: Path, moved_new: list[str], moved_old: list[str]
) -> bool:
    """Undo :func:`_publish_inside`'s moves (new entries back to ``staged``, old ones back
    from ``previous``, :data:`MARKER` last); whether every move succeeded."""
    try:
        for name in reversed(moved_new):
            os.rename(folder / name, staged / name)
        for name in sorted(moved_old, key=lambda n: n == MARKER):
            os.rename(previous / name, folder / name)
        if previous.exists():
            previous.rmdir()
    except OSError:
        return False
    return True


def discard(spark: Any, staging: str) -> None:
    """Delete a failed run's staging folder (best effort). Through Hadoop's file system while
    the JVM is there; a local staging folder is deleted from Python when it is not (the JVM was
    killed), so that too leaves nothing behind."""
    try:
        fs, staged = _fs(spark, staging)
        fs.delete(staged, True)
    except Exception:  # the JVM may be gone; a folder left is never read
        path = local_path(staging)
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)
