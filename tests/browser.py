"""Headless Chromium driven over the DevTools protocol, for tests that look at the docs site.

Chromium started with ``--remote-debugging-pipe`` reads DevTools protocol commands from file
descriptor 3 and writes responses and events to file descriptor 4, each message one JSON text
ended by a NUL byte (Chromium's ``components/devtools/devtools_pipe/devtools_pipe.h``, ``kReadFD``
and ``kWriteFD``; ``content/browser/devtools/devtools_pipe_handler.cc``). No port is opened and no
extra package is needed. The commands used (``Target.createTarget``, ``Target.attachToTarget``
with ``flatten``, ``Emulation.setDeviceMetricsOverride``, ``Page.navigate``,
``Page.loadEventFired``, ``Runtime.evaluate``, ``Page.captureScreenshot``, ``Browser.close``) are
those of the protocol's stable domains (https://chromedevtools.github.io/devtools-protocol/).

The browser is Debian's ``chromium`` package (``apt-get install chromium``; ``.ci/run`` installs
it), started headless, sandbox off (tests run as root), with no first-run, sync, component update,
background networking or QUIC, and a profile of its own: it loads only the ``http://127.0.0.1``
pages it is sent to.
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def chromium() -> str | None:
    """The Chromium executable on ``PATH`` (Debian names it ``chromium``), or ``None``."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One tab of a headless Chromium, spoken to over the DevTools pipe."""

    def __init__(self, process: subprocess.Popen[bytes], to_browser: int, from_browser: int):
        self._process, self._out, self._in = process, to_browser, from_browser
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self.session = ""

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            selector = selectors.DefaultSelector()
            selector.register(self._in, selectors.EVENT_READ)
            if not selector.select(max(deadline - time.monotonic(), 0)):
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise EOFError(f"Chromium exited ({self._process.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        loaded: dict[str, Any] = json.loads(message)
        return loaded

    def send(self, method: str, timeout: float = 30, **params: Any) -> dict[str, Any]:
        """Run one protocol command (in the tab once attached) and return its result.

        Raises:
            RuntimeError: the protocol answered with an error.
            TimeoutError: no answer within ``timeout`` seconds.
        """
        self._next_id += 1
        command: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if self.session:
            command["sessionId"] = self.session
        os.write(self._out, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            message = self._read(deadline)
            if message.get("id") != self._next_id:
                self._events.append(message)
                continue
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            result: dict[str, Any] = message.get("result", {})
            return result

    def wait_for(self, event: str, timeout: float = 60) -> dict[str, Any]:
        """The next protocol event named ``event`` (one already received counts)."""
        deadline = time.monotonic() + timeout
        while True:
            for index, message in enumerate(self._events):
                if message.get("method") == event:
                    return self._events.pop(index)
            self._events.append(self._read(deadline))

    def open(self, url: str, width: int, height: int) -> None:
        """Load ``url`` in a viewport of ``width`` x ``height`` CSS pixels; return once the page's
        load event has fired and its fonts are ready."""
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)  # fmt: skip
        self.send("Page.enable")
        self.send("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.evaluate("document.fonts.ready.then(() => true)")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited).

        Raises:
            RuntimeError: the expression threw.
        """
        answer = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(f"the page's script failed: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def screenshot(self, path: Path, clip: dict[str, float]) -> None:
        """A PNG of the page's region ``clip`` (``x``, ``y``, ``width``, ``height`` in CSS
        pixels of the document), written to ``path``."""
        shot = self.send(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={**clip, "scale": 1},
        )
        path.write_bytes(base64.b64decode(shot["data"]))


@contextmanager
def headless_page(executable: str, profile: Path, width: int, height: int) -> Iterator[Page]:
    """A tab of a new headless Chromium (profile in ``profile``), closed on exit."""
    to_read, to_write = os.pipe()  # we write commands, Chromium reads them on fd 3
    from_read, from_write = os.pipe()  # Chromium writes on fd 4, we read
    command = [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
               f"--window-size={width},{height}", "about:blank"]  # fmt: skip
    process = subprocess.Popen(
        # bash, not sh: dash redirects single-digit descriptors only
        ["bash", "-c", f'exec "$@" 3<&{to_read} 4>&{from_write}', "bash", *command],
        pass_fds=(to_read, from_write),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.close(to_read)
    os.close(from_write)
    page = Page(process, to_write, from_read)
    try:
        target = page.send("Target.createTarget", url="about:blank")["targetId"]
        page.session = page.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        yield page
    finally:
        page.session = ""
        with suppress(OSError, EOFError, TimeoutError, RuntimeError):
            page.send("Browser.close", timeout=10)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its own session: Chromium and its helpers
            process.wait()
        os.close(to_write)
        os.close(from_read)
