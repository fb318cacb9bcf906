"""What the audit keeps off stderr on its way to its one paragraph: the traces Spark, py4j and
PySpark print for events the run either recovers from or reports itself.

- Spark's scheduler logs ``Failed to update accumulator ID (...) for task N`` with a Java trace
  (``org.apache.spark.SparkException: [_LEGACY_ERROR_TEMP_3024] Attempted to access
  non-existent accumulator ID``) at ERROR when a finished or cancelled task reports metrics
  whose accumulator was already garbage-collected on the driver (``DAGScheduler.
  updateAccumulators`` in apache/spark ``core/src/main/scala/org/apache/spark/scheduler/
  DAGScheduler.scala``; SPARK-22371, SPARK-25910: the metrics of a stage attempt or plan that is
  gone). Nothing is lost (the scheduler catches it, the job goes on), but successful runs printed
  dozens of them: :func:`quiet_accumulators` filters exactly those records out of that logger
  (a log4j ``RegexFilter``, https://logging.apache.org/log4j/2.x/manual/filters.html), and
  every other record of Spark's log still shows.
- PySpark's accumulator server and py4j print Python tracebacks when the JVM goes away
  (:func:`quiet_accumulators`, :func:`py4j_quiet`).

``--debug`` keeps all of them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from pyspark.sql import SparkSession

SCHEDULER_LOGGER = "org.apache.spark.scheduler.DAGScheduler"
"""The logger that writes the accumulator noise (its other records keep Spark's level)."""
ACCUMULATOR_NOISE = "Failed to update accumulator .*"
"""The scheduler's message for an update to an accumulator that is gone (its whole text)."""


def quiet_accumulators(spark: SparkSession) -> None:
    """Keep the accumulator noise of a run off stderr: the scheduler's records matching
    :data:`ACCUMULATOR_NOISE` (a log4j filter of the logging configuration;
    nothing happens when the JVM's logging is not log4j 2), and the Python tracebacks of
    PySpark's accumulator server (a ``socketserver`` thread in the driver that the JVM sends
    accumulator updates to; it prints one on stderr when a request fails, as when the JVM dies
    mid-update: ``socketserver.BaseServer.handle_error``)."""
    server = getattr(spark.sparkContext, "_accumulatorServer", None)
    if server is not None:
        server.handle_error = lambda *_: None
    with suppress(Exception):  # another logging backend: its records stay as they are
        _filter_scheduler_log(spark)


def _filter_scheduler_log(spark: SparkSession) -> None:
    jvm: Any = spark.sparkContext._jvm
    core = jvm.org.apache.logging.log4j.core
    context = jvm.org.apache.logging.log4j.LogManager.getContext(False)
    config = context.getConfiguration()
    result = getattr(core, "Filter$Result")
    noise = core.filter.RegexFilter.createFilter(
        ACCUMULATOR_NOISE, None, True, result.DENY, result.NEUTRAL
    )
    # A filter of the configuration, not a LoggerConfig of the scheduler's own: one made for
    # it carries a level of its own, and the scheduler logged its INFO records through it.
    config.addFilter(noise)
    context.updateLoggers()


class _FromPy4J(logging.Filter):
    """Drops the records py4j logs (with their tracebacks) when the JVM goes away."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name.startswith("py4j") or f"{os.sep}py4j{os.sep}" in record.pathname)


@contextmanager
def py4j_quiet(quiet: bool) -> Iterator[None]:
    """While the block runs (and ``quiet``), py4j's log records are dropped: py4j logs
    ``Exception while sending command.`` with a Python traceback through the root logger
    (``logging.exception`` in ``py4j/java_gateway.py``) when a signal interrupts a call or the
    JVM dies; the run's one paragraph says what happened instead."""
    if not quiet:
        yield
        return
    dropped = _FromPy4J()
    root, py4j = logging.getLogger(), logging.getLogger("py4j")
    level = py4j.level
    root.addFilter(dropped)
    py4j.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        root.removeFilter(dropped)
        py4j.setLevel(level)
