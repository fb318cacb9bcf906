"""``--stacks``: Pulumi stack states read on the Spark executors, one small row per subscription
resource a state manages (:data:`STACK_RECORDS_DDL`; a Deployment Manager deployment gives one
per subscription its configuration declares).

The state inputs are those ``pushguard analyze`` reads (:func:`pushguard.state.files.
find_state_files`: ``pulumi stack export`` files, folders of them, self-managed backend folders
``.pulumi/stacks/PROJECT/STACK.json[.gz]``, a backend's ``history``/``backups``/``locks`` left
out). Only the list of file names is made on the driver; the files are distributed to the
executors (a path per element, read there with the same bounded reader analyze uses, so the
paths must be readable where the executors run: local mode, or a file system every executor
mounts), parsed there and flat-mapped into rows. What comes back to the driver is one small row per
state file (its stack's location, name, ``manifest.time``, a digest and counts of its
subscription records) and the unreadable files (:func:`check_records`): the driver decides which
files are the stacks and which are older snapshots or copies
(:mod:`pushguard.audit.stack_snapshots`), and only the used files' records are matched
(:func:`used_records`).

A state that cannot be read (not JSON, a version above 4, a resource without
a URN...) is a row with its ``problem``; :func:`check_records` raises :class:`StacksInputError`
naming each such file and its cause, and the run exits 2 before it publishes anything, as for an
export path that cannot be read (:class:`~pushguard.audit.read.InputError`). A JSON file found
while walking a folder that is not Pulumi state at all (a ``package.json``) is skipped and
counted, as analyze skips it; named on the command line, it is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pushguard.audit.read import InputError
from pushguard.audit.stack_snapshots import (
    StateChoice,
    StateConflictError,
    StateFile,
    choose_states,
    manifest_time,
    records_digest,
    state_location,
)
from pushguard.state.document import deployment_of, organization
from pushguard.state.files import NotStateError, StateFileError, find_state_files, load_json
from pushguard.state.subscriptions import (
    PATH,
    STATE_SUBSCRIPTION_TYPES,
    RecordedSubscription,
    recorded_subscriptions,
)
from pushguard.state.urn import STACK_TYPE, parse_urn

STACK_RECORDS_DDL = (
    "path string, project_id string, stack string, urn string, file string, "
    "push_endpoint string, push_auth_account string, audience string, no_wrapper boolean, "
    "write_metadata boolean, attributes array<string>, not_checked array<string>, "
    "secret array<string>, problem string, problem_kind string, state boolean, "
    "location string, manifest_time string, digest string, records int, without_path int"
)
"""One row per subscription resource of a state (``problem`` null; per subscription of a
Deployment Manager deployment, its ``urn`` the deployment's followed by ``#RESOURCE``, and one
more without a path when part of its configuration cannot be read), or one row per state file
that could not be read (``problem``: the cause; ``problem_kind``: ``error``, or ``skipped`` for a
file found in a folder that is not Pulumi state). ``path`` is ``projects/P/subscriptions/S``
(null when the state does not say it: such a record is counted, never matched); ``stack`` is the
fully qualified name (``organization/project/stack``; ``project/stack`` for a ``pulumi stack
export`` file, which does not name its organisation); the push settings are those
:func:`pushguard.state.subscriptions.recorded_subscriptions` reads; ``not_checked`` the settings
held encrypted (or unknown) and ``secret`` those read from a ``--show-secrets`` plaintext.
Each readable state file also gives one row with ``state`` true (no path, no URN): its ``stack``
name, ``location``, ``manifest_time``, ``digest``, ``records`` and ``without_path``
(:class:`~pushguard.audit.stack_snapshots.StateFile`)."""

MAX_LISTED_PROBLEMS = 10
"""How many unreadable state files the error names (the count names them all)."""


class StacksInputError(InputError):
    """A ``--stacks`` path does not exist, holds no state file, or a state cannot be read: exit
    code 2, naming each file and its cause."""


@dataclass(frozen=True)
class StateFiles:
    """The state files a run reads (``files``, each with whether it was ``named`` on the
    command line) and the JSON files found in folders that are not Pulumi state."""

    files: list[tuple[str, bool]]
    skipped: int


def state_files(paths: Iterable[str]) -> StateFiles:
    """The state files under ``paths`` (local paths or ``file:`` URIs), listed on the driver.

    Raises:
        StacksInputError: a path is a remote URI (``gs://``), does not exist, or is a folder
            that holds no state file or cannot be listed (each named).
    """
    remote = [p for p in paths if "://" in p and not p.startswith("file://")]
    if remote:
        raise StacksInputError(
            f"--stacks: {', '.join(remote)}: only local paths (or file:) are read; copy the "
            "states to a local folder, or to a file system every executor mounts"
        )
    given = [Path(p.removeprefix("file://").removeprefix("file:")) for p in paths]
    found, errors, skipped = find_state_files(given)
    if errors:
        raise StacksInputError("--stacks: " + "; ".join(f"{e.path}: {e.message}" for e in errors))
    named = {str(p) for p in given if not p.is_dir()}
    return StateFiles([(str(f), str(f) in named) for f in found], len(skipped))


_STATE_COLUMNS = 6
"""The columns of :data:`STACK_RECORDS_DDL` after ``problem_kind``, set on a state row only."""


def _problem(file: str, message: str, kind: str = "error") -> tuple[Any, ...]:
    return (None,) * 4 + (file,) + (None,) * 8 + (message, kind) + (None,) * _STATE_COLUMNS


def _state_row(
    file: str, stack: str, deployment: Any, rows: list[tuple[Any, ...]]
) -> tuple[Any, ...]:
    """The state row of a readable file (:data:`STACK_RECORDS_DDL`)."""
    digest = records_digest(row[:4] + row[5:13] for row in rows)  # the file left out
    without_path = sum(1 for row in rows if row[0] is None)
    return (
        (None, None, stack, None, file)
        + (None,) * 10
        + (True, state_location(file), manifest_time(file, deployment), digest)
        + (len(rows), without_path)
    )


def _qualified(document: dict[str, Any], resources: list[Any], file: str) -> str:
    """``organization/project/stack`` (``project/stack`` without an organisation): the stack
    resource's URN, else any resource's, else the checkpoint's ``stack``, else the file name."""
    org = organization(document)
    urns = [r.get("urn") for r in resources if isinstance(r, dict)]
    ordered = sorted(
        (u for u in urns if isinstance(u, str)), key=lambda u: f"::{STACK_TYPE}::" not in u
    )
    for urn in ordered:
        try:
            parts = parse_urn(urn)
        except ValueError:
            continue
        return "/".join(x for x in (org, parts.project, parts.stack) if x)
    checkpoint = document.get("checkpoint")
    name = checkpoint.get("stack") if isinstance(checkpoint, dict) else None
    if isinstance(name, str) and name:
        return name
    return Path(file).name.split(".", 1)[0]


def _resources(file: str, deployment: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The deployment's resources, each an object with a string ``urn`` and ``type``.

    Raises:
        StateFileError: naming the resource index and the field."""
    resources = (deployment or {}).get("resources") or []
    if not isinstance(resources, list):
        raise StateFileError(file, "deployment.resources must be a list")
    for index, resource in enumerate(resources):
        if not isinstance(resource, dict):
            raise StateFileError(file, f"resources.{index} must be an object")
        for key in ("urn", "type"):
            if not isinstance(resource.get(key), str) or not resource[key]:
                raise StateFileError(file, f"resources.{index}.{key} must be a non-empty string")
        try:
            parse_urn(resource["urn"])
        except ValueError as error:
            raise StateFileError(file, f"resources.{index}.urn: {error}") from None
        for key in ("id", "outputs"):
            expected = str if key == "id" else dict
            if resource.get(key) is not None and not isinstance(resource[key], expected):
                what = "a string" if key == "id" else "an object"
                raise StateFileError(file, f"{resource['urn']} {key} must be {what}")
    return resources


def _manages(resource: dict[str, Any]) -> bool:
    """Whether the stack manages this resource as a subscription: one of
    :data:`STATE_SUBSCRIPTION_TYPES`, neither pending deletion (``delete``: replaced, the old
    copy not yet deleted) nor read only (``external``: ``Subscription.get()`` or a ``read``,
    which Pulumi records but never creates, updates or deletes;
    https://www.pulumi.com/docs/iac/concepts/resources/get/). A read resource's outputs are a
    snapshot, not what the stack declares."""
    return (
        resource["type"] in STATE_SUBSCRIPTION_TYPES
        and not resource.get("delete")
        and not resource.get("external")
    )


def records_of_file(file: str, named: bool) -> Iterator[tuple[Any, ...]]:
    """The rows (:data:`STACK_RECORDS_DDL`) of one state file; runs on an executor. Never
    raises: a file that cannot be read is one ``problem`` row."""
    try:
        document, _ = load_json(Path(file))
        _, deployment = deployment_of(file, document)
        resources = _resources(file, deployment)
        stack = _qualified(document, resources, file)
        rows = []
        for resource in resources:
            if not _manages(resource):
                continue
            for recorded in recorded_subscriptions(
                resource["type"], resource.get("id") or "", resource.get("outputs")
            ):
                rows.append(_row(recorded, stack, resource["urn"], file))
        rows.append(_state_row(file, stack, deployment, rows))
    except NotStateError as error:
        yield _problem(file, error.message, "error" if named else "skipped")
        return
    except StateFileError as error:
        yield _problem(file, error.message)
        return
    except Exception as error:  # fail closed: any other failure names the file
        yield _problem(file, f"cannot be read: {type(error).__name__}: {error}")
        return
    yield from rows


def _row(recorded: RecordedSubscription, stack: str, urn: str, file: str) -> tuple[Any, ...]:
    """One record as a row of :data:`STACK_RECORDS_DDL`; a subscription of a Deployment
    Manager deployment under the deployment's URN followed by ``#`` and its resource name."""
    settings = recorded.settings
    match = PATH.match(recorded.path or "")
    return (
        recorded.path,
        match.group(1) if match else None,
        stack,
        f"{urn}#{recorded.part}" if recorded.part else urn,
        file,
        settings.get("push_endpoint"),
        settings.get("push_auth_account"),
        settings.get("audience"),
        bool(settings.get("no_wrapper")),
        settings.get("write_metadata"),
        list(settings.get("attributes") or ()),
        list(recorded.not_checked),
        list(recorded.secret),
        None,
        None,
        *(None,) * _STATE_COLUMNS,
    )


def read_records(
    spark: SparkSession,
    files: StateFiles,
    keep: Callable[[DataFrame], DataFrame] = lambda frame: frame,
) -> DataFrame:
    """The rows of every state file (:data:`STACK_RECORDS_DDL`), read on the executors, passed
    through ``keep`` (the run persists them). Lazy."""
    context = spark.sparkContext
    slices = max(1, min(len(files.files), context.defaultParallelism * 4))
    rdd = context.parallelize(files.files, slices).flatMap(lambda item: records_of_file(*item))
    return keep(spark.createDataFrame(rdd, STACK_RECORDS_DDL))


def used_records(records: DataFrame, used: dict[str, str]) -> DataFrame:
    """The subscription records of the ``used`` files only (older snapshots and copies left
    out: :func:`~pushguard.audit.stack_snapshots.choose_states`), each ``stack`` the name its
    stack is reported under (``used``: file -> name). Lazy."""
    spark = records.sparkSession
    names = spark.createDataFrame(sorted(used.items()), "file string, reported string")
    return (
        records.filter(F.col("problem").isNull() & ~F.coalesce(F.col("state"), F.lit(False)))
        .join(F.broadcast(names), on="file")
        .withColumn("stack", F.col("reported"))
        .drop("reported")
    )


@dataclass(frozen=True)
class RecordCounts:
    """What reading the states gave: state files read, subscription records of the stacks
    used (and of them those without a path), files skipped (not state), and which files are
    the stacks (:class:`~pushguard.audit.stack_snapshots.StateChoice`)."""

    states: int
    records: int
    without_path: int
    skipped: int
    choice: StateChoice = field(default_factory=lambda: StateChoice({}, []))


def check_records(records: DataFrame, files: StateFiles) -> RecordCounts:
    """Count the records, fail closed on unreadable states, and choose the state files that
    are the stacks (one Spark job; what comes back is one small row per state file and the
    problems).

    Raises:
        StacksInputError: some state files cannot be read (the count, and the first
            :data:`MAX_LISTED_PROBLEMS` by file name, each with its cause); two snapshots of
            one stack cannot be ordered; or no file is Pulumi state.
    """
    rows = (
        records.filter(F.col("state") | F.col("problem").isNotNull())
        .select(
            "file",
            "stack",
            "problem",
            "problem_kind",
            "state",
            "location",
            "manifest_time",
            "digest",
            "records",
            "without_path",
        )
        .collect()
    )
    errors = sorted((r["file"], r["problem"]) for r in rows if r["problem_kind"] == "error")
    if errors:
        listed = "; ".join(f"{file}: {problem}" for file, problem in errors[:MAX_LISTED_PROBLEMS])
        more = len(errors) - MAX_LISTED_PROBLEMS
        raise StacksInputError(
            f"--stacks: {len(errors)} state file(s) cannot be read, so no stack's "
            f"management is presumed: {listed}" + (f"; and {more} more" if more > 0 else "")
        )
    walked_skips = sum(1 for r in rows if r["problem_kind"] == "skipped")
    if len(files.files) == walked_skips:
        raise StacksInputError(
            f"--stacks: no Pulumi state among the {walked_skips + files.skipped} JSON file(s) "
            "found (none is a `pulumi stack export` file or a backend checkpoint), so no "
            "stack's management can be checked"
        )
    states = [
        StateFile(
            r["file"],
            r["location"],
            r["stack"],
            r["manifest_time"],
            r["digest"],
            r["records"],
            r["without_path"],
        )
        for r in rows
        if r["state"]
    ]
    try:
        choice = choose_states(states)
    except StateConflictError as error:
        raise StacksInputError(f"--stacks: {error}") from None
    used = [s for s in states if s.file in choice.used]
    return RecordCounts(
        states=len(files.files) - walked_skips,
        records=sum(s.records for s in used),
        without_path=sum(s.without_path for s in used),
        skipped=files.skipped + walked_skips,
        choice=choice,
    )
