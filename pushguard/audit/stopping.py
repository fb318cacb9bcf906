"""How a signal stops an audit: one paragraph, the staging folder removed, no trace after it.

While :func:`stopped_by_signals` is active, the first SIGINT raises ``KeyboardInterrupt`` and
the first SIGTERM or SIGHUP raises :class:`Stopped`, after the JVM's logging is turned off and
the running Spark jobs are cancelled (:func:`register` names the session); later signals are
ignored while the run unwinds. While Spark starts (:func:`starting`) a signal is held back until
the JVM is up.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from pyspark.sql import SparkSession


class Stopped(BaseException):
    """The run was stopped by a signal (``name``: ``SIGTERM``, ``SIGHUP``).

    A ``BaseException``, like ``KeyboardInterrupt``: the handler raises it wherever the main
    thread is, often inside a py4j call, and py4j turns any ``Exception`` raised while it waits
    for the JVM's answer into a ``Py4JNetworkError`` (``ClientServerConnection.send_command`` in
    ``py4j/clientserver.py``). As an ``Exception`` the stop was lost that way: a run sent SIGTERM
    while writing its findings went on and published (exit 1; ``tests/audit/test_killed.py``)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"stopped by {name}")
        self.name = name


_STOPPING: dict[str, SparkSession] = {}
"""The session to quiet and cancel when a signal stops the run."""

_HANDLER: dict[str, object] = {}
"""The audit's own signal handler while a run is under :func:`stopped_by_signals`."""

_RECEIVED: list[str] = []
"""The name of the signal that stopped the current run (empty until one arrives); cleared when
the next :func:`stopped_by_signals` block begins."""

_STARTING: list[int] = []
"""While Spark starts (:func:`starting`): holds 0, and the signal that stops the run, which is
held back until Spark is up."""


def reclaim_sigint() -> None:
    """Put the audit's SIGINT handler back after a new ``SparkContext`` replaced it with its own
    (PySpark's ``signal_handler`` in ``pyspark/core/context.py`` cancels the jobs and raises
    ``KeyboardInterrupt`` without quieting the JVM's log, and ignores nothing while the run
    unwinds)."""
    handler = _HANDLER.get("handler")
    if handler is not None and _main_thread():
        signal.signal(signal.SIGINT, handler)  # type: ignore[arg-type]


def _quiet_and_cancel() -> None:
    """Silence the JVM's logging (no Java traces for the cancelled tasks) and cancel every job."""
    spark = _STOPPING.get("spark")
    if spark is None:
        return
    try:
        spark.sparkContext.setLogLevel("OFF")
        spark.sparkContext.cancelAllJobs()
    except Exception:  # the JVM may be going away
        pass


def _stop(number: int) -> None:
    """Quiet and cancel Spark, then raise what stops the run for signal ``number``."""
    _quiet_and_cancel()
    if number == signal.SIGINT:
        raise KeyboardInterrupt
    raise Stopped(signal.Signals(number).name)


@contextmanager
def starting() -> Iterator[None]:
    """While the block starts Spark, a stopping signal is held back, and acted on when the
    block ends: stopped while PySpark waited for its JVM to start, the run used to delete the
    folder the JVM writes its port to (``launch_gateway`` in ``pyspark/java_gateway.py``), and
    the JVM, left running without a parent, printed ``Exception in thread "main"
    java.nio.file.NoSuchFileException`` and its trace after the run's error paragraph."""
    _STARTING[:] = [0]
    try:
        yield
    finally:
        held = _STARTING[1:]
        _STARTING.clear()
    if held:
        _stop(held[0])


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """While the block runs, the first SIGINT raises ``KeyboardInterrupt`` and the first
    SIGTERM/SIGHUP raises :class:`Stopped`, after quieting and cancelling Spark; later ones are
    ignored so the staging folder is still removed. The previous handlers are restored after.
    Only in the main thread (where Python delivers signals)."""
    if not _main_thread():
        yield
        return

    stopped: list[int] = []
    _RECEIVED.clear()

    def handler(number: int, _: FrameType | None) -> None:
        if stopped:  # the run is unwinding already: let it finish cleaning up
            return
        stopped.append(number)
        _RECEIVED[:] = [signal.Signals(number).name]
        if _STARTING:  # the JVM is starting: stop when it is up (see starting)
            _STARTING.append(number)
            return
        _stop(number)

    numbers = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {n: signal.getsignal(n) for n in numbers}
    try:
        for number in numbers:
            signal.signal(number, handler)
        _HANDLER["handler"] = handler
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)
        _STOPPING.clear()
        _HANDLER.clear()


def stopped_by() -> str | None:
    """The name of the signal that stopped the last run under :func:`stopped_by_signals`
    (``SIGINT``, ``SIGTERM``, ``SIGHUP``), or ``None``.

    What the run raised afterwards may not say so: py4j, interrupted while it waits for the
    JVM, closes its sockets and may raise ``Py4JError("Gateway must be connected to send cancel
    cmd.")`` in place of the ``KeyboardInterrupt`` (``JavaGateway.send_command`` in
    ``py4j/java_gateway.py``, ``shutdown_socket`` in ``py4j/clientserver.py``): the signal, not
    that error, is why the run ended."""
    return _RECEIVED[0] if _RECEIVED else None


def _main_thread() -> bool:
    import threading  # noqa: PLC0415

    return threading.current_thread() is threading.main_thread()


def register(spark: SparkSession) -> None:
    """The session a signal quiets and cancels, until :func:`stopped_by_signals` ends."""
    _STOPPING["spark"] = spark
