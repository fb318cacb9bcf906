"""Where an audit's time goes, from Spark's event log (issue 39).

Run an audit with the event log on, e.g.::

    PYSPARK_SUBMIT_ARGS="--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=/tmp/ev \
        pyspark-shell" pushguard audit EXPORT --out OUT --fail-on never

then ``python bench/audit_events.py /tmp/ev/<application log>``: one line per Spark job (its
start after the application's, its wall time, stages and tasks, and the call site that ran it:
the pushguard function nearest to the action), the time between jobs (the driver's: planning,
Python, listing), and the totals: jobs, stages (skipped ones apart), time in jobs and outside
them. The audit runs one job at a time; jobs that overlapped would be counted twice.

Event log format: Spark's ``JsonProtocol`` (``SparkListenerApplicationStart``,
``SparkListenerJobStart`` with ``Stage Infos`` and ``Properties``, ``SparkListenerJobEnd``,
``SparkListenerStageCompleted``), https://spark.apache.org/docs/latest/monitoring.html
(``spark.eventLog.enabled``, ``spark.eventLog.dir``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_SITE = re.compile(r"(pushguard/[\w/]+\.py):(\d+)")


def _site(properties: dict[str, Any]) -> str:
    """The call site of a job: the pushguard frame of ``callSite.long`` nearest the action."""
    long = str(properties.get("callSite.long", ""))
    found = _SITE.findall(long)
    if found:
        return f"{found[0][0].removeprefix('pushguard/')}:{found[0][1]}"
    return str(properties.get("callSite.short", "?"))[:60]


def _lines(path: Path) -> Iterator[str]:
    """The events of ``path``, one JSON text a line (a ``.zstd`` log, Spark's default codec for
    event logs, through the ``zstd`` command; a log still in progress may end mid-frame)."""
    if path.suffix == ".zstd":
        done = subprocess.run(["zstd", "-dcq", str(path)], capture_output=True, check=False)
        yield from done.stdout.decode("utf-8", "replace").splitlines()
        return
    with path.open() as log:
        yield from log


def _short(description: str) -> str:
    """``collect at /x/pushguard/audit/scan.py:111`` -> ``collect at audit/scan.py:111``."""
    return re.sub(r"/\S*/pushguard/", "", description)[:70]


class _Log:
    """The queries of one event log, filled event by event (:func:`executions`)."""

    def __init__(self) -> None:
        self.start = self.end = 0.0
        self.queries: dict[str, dict[str, Any]] = {}
        self._stage_query: dict[int, str] = {}
        self._job_query: dict[int, str] = {}

    def add(self, event: dict[str, Any]) -> None:
        kind = event["Event"].rsplit(".", 1)[-1]
        if kind == "SparkListenerApplicationStart":
            self.start = event["Timestamp"]
        elif kind == "SparkListenerSQLExecutionStart":
            if event["rootExecutionId"] == event["executionId"]:
                key = f"sql {event['executionId']}"
                self.queries[key] = _query(event["time"], event["description"])
        elif kind == "SparkListenerSQLExecutionEnd":
            self._ended(f"sql {event['executionId']}", event["time"])
        elif kind == "SparkListenerJobStart":
            self._job(event)
        elif kind == "SparkListenerJobEnd":
            key = self._job_query.get(event["Job ID"], "")
            self._ended(key, event["Completion Time"], key.startswith("job"))
        elif kind == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            query = self.queries.get(self._stage_query.get(info["Stage ID"], ""))
            if query is not None:
                query["stages"] += 1
                query["skipped"] -= 1
                query["tasks"] += info["Number of Tasks"]

    def _ended(self, key: str, at: float, own: bool = True) -> None:
        self.end = max(self.end, at)
        if own and key in self.queries:
            self.queries[key]["end"] = at

    def _job(self, event: dict[str, Any]) -> None:
        properties = event.get("Properties") or {}
        root = properties.get("spark.sql.execution.root.id")
        key = f"sql {root}" if root is not None else f"job {event['Job ID']}"
        if key not in self.queries:
            site = properties.get("callSite.short", "?")
            self.queries[key] = _query(event["Submission Time"], f"(RDD) {site}")
        self._job_query[event["Job ID"]] = key
        self.queries[key]["jobs"] += 1
        for stage in event["Stage IDs"]:
            self._stage_query[stage] = key
            self.queries[key]["skipped"] += 1


def executions(path: Path) -> tuple[float, float, list[dict[str, Any]]]:
    """The application's start and end (ms) and its queries in order: each SQL execution (one
    DataFrame action; the jobs adaptive execution starts for it are counted under its root), and
    each job outside any (an RDD action), with start, end, jobs, stages run and skipped, tasks
    and description (the action and its pushguard call site, when PySpark gives one)."""
    log = _Log()
    for line in _lines(path):
        try:
            event = json.loads(line)
        except ValueError:  # the last line of a log still being written
            continue
        log.add(event)
    return log.start, log.end, sorted(log.queries.values(), key=lambda q: q["start"])


def _query(at: float, description: str) -> dict[str, Any]:
    return {
        "start": at,
        "end": at,
        "description": _short(description),
        "jobs": 0,
        "stages": 0,
        "skipped": 0,
        "tasks": 0,
    }


def main() -> None:
    """Print the query table and the totals of one event log."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("log", type=Path)
    options = parser.parse_args()
    start, end, found = executions(options.log)
    print("| at s | s | jobs | stages run (skipped) | tasks | action |")
    print("|---|---|---|---|---|---|")
    busy = 0.0
    for query in found:
        seconds = (query["end"] - query["start"]) / 1000
        busy += seconds
        print(
            f"| {(query['start'] - start) / 1000:.1f} | {seconds:.2f} | {query['jobs']} | "
            f"{query['stages']} ({query['skipped']}) | {query['tasks']} | "
            f"{query['description']} |"
        )
    total = (end - start) / 1000
    print(
        f"\nqueries {len(found)}, jobs {sum(q['jobs'] for q in found)}, stages run "
        f"{sum(q['stages'] for q in found)}, application {total:.1f} s (to the last event), "
        f"in queries {busy:.1f} s, outside them {total - busy:.1f} s"
    )


if __name__ == "__main__":
    main()
