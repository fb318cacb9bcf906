"""The audit's outputs, made visible in one step: checked before Spark starts, written into a
staging folder, published at the end.

- **Before Spark starts** (:func:`check_out`, :func:`check_local_inputs`): every local export
  path exists; a local ``--out`` is not a file, not under a file, can be created and written
  (its nearest existing folder is writable), is not inside an input, and, when it exists, is an
  audit's output folder (it holds :data:`MARKER` or ``summary.json``) or empty: an audit never
  replaces a folder of other files.
- **During the run** every output goes to a staging folder beside ``--out``
  (``.NAME.pushguard-staging-RUN``, :func:`staging_path`), never into ``--out``.
- **At the end** (:func:`publish`) the completion marker :data:`MARKER` is written last into the
  staging folder, then the previous ``--out`` (if any) is renamed aside, the staging folder renamed
  to ``--out`` and the previous outputs deleted. On a local disk and HDFS a folder rename is one
  atomic step, so ``--out`` holds either the previous run or this one, never a mix (between the
  two renames it is briefly absent). On object stores (``gs://``) a "rename" is a copy and a
  delete: there, readers must trust only a folder whose :data:`MARKER` exists.
- **A failed or interrupted run** deletes its staging folder (:func:`discard`) and leaves
  ``--out`` as it was, also when its JVM was killed (a local staging folder is then deleted from
  Python). A run killed outright (SIGKILL of the command) may leave its staging folder; it is
  never read and can be deleted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

MARKER = "_COMPLETE"
"""The completion marker: written last, after every other output (JSON: ``runTime``,
``runId``)."""

_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


class OutputUsageError(ValueError):
    """``--out`` or an export path is unusable; the message names it and why (exit 2)."""


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


def _is_audit_output(folder: Path) -> bool:
    return (folder / MARKER).exists() or (folder / "summary.json").is_file()


def check_out(out: str, inputs: list[str]) -> None:
    """Check a local ``--out`` (see the module docstring); a URI is checked by the run.

    Raises:
        OutputUsageError: naming ``--out`` and what is wrong.
    """
    path = local_path(out)
    if path is None:
        return
    target = path.absolute()
    if target.exists() and not target.is_dir():
        raise OutputUsageError(f"--out {out}: is a file, not a folder")
    if target.is_dir() and any(target.iterdir()) and not _is_audit_output(target):
        raise OutputUsageError(
            f"--out {out}: exists and is not an audit's output folder (no {MARKER} nor "
            "summary.json in it); the audit replaces its --out as a whole, so give a new or an "
            "empty folder, or a previous audit's"
        )
    existing = target
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise OutputUsageError(f"--out {out}: {existing} is a file, so the folder cannot be made")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputUsageError(f"--out {out}: {existing} is not writable")
    resolved = target.resolve()
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


def staging_path(out: str, run_id: str) -> str:
    """The staging folder of a run: ``.NAME.pushguard-staging-RUN`` beside ``out`` (the same
    file system, so the publishing rename is a rename)."""
    stripped = out.rstrip("/")
    parent, _, name = stripped.rpartition("/")
    staged = f".{name}.pushguard-staging-{run_id}"
    return f"{parent}/{staged}" if parent or stripped.startswith("/") else staged


def _fs(spark: Any, path: str) -> tuple[Any, Any]:
    jvm: Any = spark.sparkContext._jvm
    hadoop = jvm.org.apache.hadoop.fs.Path(path)
    fs = hadoop.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    return fs, fs.makeQualified(hadoop)  # absolute, so a relative --out has a parent


def publish(spark: Any, staging: str, out: str, run_id: str, run_time: datetime) -> None:
    """Write :data:`MARKER` into ``staging``, then make ``staging`` the ``out`` folder (see the
    module docstring).

    Raises:
        OSError: a rename failed (the previous outputs are put back first when they were moved).
    """
    fs, staged = _fs(spark, staging)
    stream = fs.create(staged.suffix("/" + MARKER), True)
    try:
        marker = {"runId": run_id, "runTime": run_time.isoformat().replace("+00:00", "Z")}
        stream.write(bytearray((json.dumps(marker) + "\n").encode()))
    finally:
        stream.close()
    _, target = _fs(spark, out.rstrip("/"))
    previous = None
    if fs.exists(target):
        previous = target.getParent().suffix(f"/.{target.getName()}.pushguard-previous-{run_id}")
        if not fs.rename(target, previous):
            raise OSError(f"cannot move the previous outputs in {out} aside")
    if not fs.rename(staged, target):
        if previous is not None:
            fs.rename(previous, target)
        raise OSError(f"cannot publish the outputs into {out}")
    if previous is not None:
        fs.delete(previous, True)


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
