"""The audit's progress on stderr: which phase it is in and, while Spark reads, how many lines.

On a terminal, one live status line (rich) that replaces itself: the phase, the lines read so far
and the tasks done in the running Spark stages, polled from Spark's status store twice a second.
Elsewhere (a CI log, a file), one plain line per phase. Either way only stderr is written: the
outputs and the summary line on stdout are unaffected.
"""

from __future__ import annotations

import threading
import time
from typing import Any, TextIO

from rich.console import Console
from rich.status import Status


class Progress:
    """Silent progress (the default for :func:`pushguard.audit.job.run_audit`)."""

    def phase(self, name: str) -> None:
        """The audit entered phase ``name`` (``reading``, ``parsing``, ``joining``...)."""

    def close(self) -> None:
        """The audit is over (or failed): stop displaying."""


class ConsoleProgress(Progress):
    """Phases on ``stream`` (stderr): live with counts on a terminal, plain lines otherwise.

    ``spark_context`` (a :class:`pyspark.SparkContext`) is polled for the running stages'
    input records and tasks; without it only the phases are shown.
    """

    def __init__(self, stream: TextIO, spark_context: Any = None) -> None:
        self._console = Console(file=stream, highlight=False)
        self._context = spark_context
        self._name = ""
        self._started = time.perf_counter()
        self._phase_started = self._started
        self._status: Status | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self._console.is_terminal:
            self._status = self._console.status("pushguard audit: starting")
            self._status.start()
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()

    def phase(self, name: str) -> None:
        """Show phase ``name``: update the live line, or print ``pushguard audit: NAME``."""
        self._name = name
        self._phase_started = time.perf_counter()
        if self._status is None:
            self._console.print(f"pushguard audit: {name}", soft_wrap=True)
        else:
            self._status.update(self._text(""))

    @property
    def current(self) -> str:
        """The phase the audit is in (``""`` before the first)."""
        return self._name

    def attach(self, spark_context: Any) -> None:
        """Poll ``spark_context`` (a :class:`pyspark.SparkContext`) from now on."""
        self._context = spark_context

    def close(self) -> None:
        """Stop the live line (it leaves nothing behind); idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _text(self, detail: str) -> str:
        elapsed = time.perf_counter() - self._started
        return f"pushguard audit: {self._name} {detail}[dim]({elapsed:.0f} s)[/dim]"

    def _poll(self) -> None:
        while not self._stop.wait(0.5):
            status = self._status
            if status is None:
                return
            try:
                detail = stage_detail(self._context)
            except Exception:  # the JVM may be going away; the display is best effort
                detail = ""
            status.update(self._text(detail))


def stage_detail(spark_context: Any) -> str:
    """``"1,234,567 lines read, 3/8 tasks "`` for the running Spark stages, from the status store
    (input records are updated as tasks end and on executor heartbeats); empty when none runs or
    ``spark_context`` is None."""
    if spark_context is None:
        return ""
    store = spark_context._jsc.sc().statusStore()
    stages = store.activeStages()
    records = done = total = 0
    for index in range(stages.size()):
        stage = stages.apply(index)
        records += int(stage.inputRecords())
        done += int(stage.numCompleteTasks())
        total += int(stage.numTasks())
    if not total:
        return ""
    lines = f"{records:,} lines read, " if records else ""
    return f"{lines}{done}/{total} tasks "
