"""Issue 36: the component's inputs table reads in a real browser at 1,280 px.

The MkDocs site is built as CI builds it, served on 127.0.0.1, and the component page opened in
headless Chromium (Debian's package; ``.ci/run`` installs it, so in CI this test runs, never
skips) with a viewport 1,280 CSS pixels wide. A screenshot of the table is written to the test's
output folder (pytest's ``tmp_path``, named in the assertion messages). The layout is measured in
the page: an inline ``code`` element that the browser broke over two lines has two client
rectangles (``Element.getClientRects``), so a name or a type value in the first column with more
than one is a name broken mid-word; a table wider than its scrolling wrapper has descriptions cut
off at the right edge.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium, headless_page

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1280, 900
DESCRIPTION_MIN_WIDTH = 300
"""The narrowest description column that still reads as prose (about 45 characters a line)."""

MEASURE = """
(() => {
  const table = [...document.querySelectorAll("article table")].find(
    (t) => t.querySelector("th")?.textContent.trim() === "input");
  if (!table) return null;
  const wrapper = table.closest(".md-typeset__scrollwrap") || table.parentElement;
  const box = table.getBoundingClientRect();
  const broken = [];
  for (const row of table.querySelectorAll("tbody tr")) {
    for (const code of row.cells[0].querySelectorAll("code")) {
      if (code.getClientRects().length > 1) broken.push(code.textContent);
    }
  }
  return {
    rows: table.querySelectorAll("tbody tr").length,
    broken,
    columns: [...table.querySelectorAll("thead th")].map((th) => th.getBoundingClientRect().width),
    tableWidth: box.width,
    scrollWidth: wrapper.scrollWidth,
    clientWidth: wrapper.clientWidth,
    clip: {x: box.x + window.scrollX, y: box.y + window.scrollY, width: box.width,
           height: box.height},
  };
})()
"""
"""The inputs table's layout, measured in the page (``null`` when there is no such table)."""


def _browser() -> str:
    found = chromium()
    if found is None:
        message = "chromium is not installed (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)  # never a silent skip in CI
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The MkDocs site, built strictly as CI builds it."""
    folder = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return folder


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The site's address, served on 127.0.0.1 only."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_inputs_table_reads_at_1280_px(served: str, tmp_path: Path) -> None:
    executable = _browser()
    shot = tmp_path / "component-inputs-1280px.png"
    with headless_page(executable, tmp_path / "profile", WIDTH, HEIGHT) as page:
        page.open(f"{served}/component/", WIDTH, HEIGHT)
        layout = page.evaluate(MEASURE)
        assert layout is not None, "no inputs table (first header 'input') on the component page"
        page.screenshot(shot, layout["clip"])
    assert shot.stat().st_size > 10_000, f"the screenshot {shot} is empty"
    seen = f"(screenshot: {shot})"
    assert layout["rows"] >= 30
    assert layout["broken"] == [], f"names or types broken over two lines {seen}"
    assert layout["scrollWidth"] <= layout["clientWidth"], (
        f"the table is {layout['scrollWidth']} px wide in {layout['clientWidth']} px: the "
        f"descriptions are cut off at the right {seen}"
    )
    assert layout["columns"][-1] >= DESCRIPTION_MIN_WIDTH, (
        f"the description column is {layout['columns'][-1]:.0f} px wide {seen}"
    )
