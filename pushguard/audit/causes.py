"""The cause of a failure, named: the innermost Java exception behind a py4j or PySpark error.

A failed Spark job reaches Python as a ``Py4JJavaError`` (``java_exception``) or a PySpark
``CapturedException`` (the Java throwable in ``_origin``: ``pyspark/errors/exceptions/
captured.py``) whose message starts with Spark's own wrapping (``Job aborted due to stage
failure``, ``[TASK_WRITE_FAILED] Task failed while writing rows``); what actually went wrong (a
full disk: ``java.io.IOException: No space left on device``) is the last cause of the chain.
"""

from __future__ import annotations

import re
from typing import Any

_CAUSED_BY = re.compile(r"^\s*Caused by:\s*(\S.*)$", re.MULTILINE)


def _throwable(error: BaseException) -> Any:
    return getattr(error, "java_exception", None) or getattr(error, "_origin", None)


def java_cause(error: BaseException) -> str:
    """The innermost cause of ``error`` as ``class: message``
    (``java.io.EOFException: Unexpected end of input stream``): from the Java exception's cause
    chain while the JVM answers, else the last ``Caused by:`` line of the message, else the
    message's first line."""
    throwable = _throwable(error)
    if throwable is not None:
        try:
            seen = 0
            while seen < 50:
                cause = throwable.getCause()
                if cause is None or cause.equals(throwable):
                    break
                throwable, seen = cause, seen + 1
            return str(throwable.toString())
        except Exception:  # the JVM went away while we asked: read the message instead
            pass
    text = str(error)
    found = _CAUSED_BY.findall(text)
    if found:
        return str(found[-1]).strip()
    lines = [line.strip().removeprefix(": ") for line in text.strip().splitlines()]
    lines = [line for line in lines if line and not line.startswith("An error occurred")]
    return lines[0] if lines else type(error).__name__
