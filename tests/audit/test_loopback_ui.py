"""The audit's Spark driver in local mode (its default) listens on loopback only, its web UI
included: the UI binds to ``$SPARK_LOCAL_IP``, else to every interface (``WebUI.initServer``
in Spark's core/src/main/scala/org/apache/spark/ui/WebUI.scala). A README trial found the UI on
``*:4041``. Checked on the listening sockets the kernel reports for the UI's port
(``/proc/net/tcp``, ``/proc/net/tcp6``), in a fresh process as the console script starts it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = {
    "0100007F",  # 127.0.0.1
    "0000000000000000FFFF00000100007F",  # ::ffff:127.0.0.1 (a Java socket on tcp6)
    "00000000000000000000000001000000",  # ::1
}

PROBE = """
import os
from urllib.parse import urlsplit
from pushguard.audit.command import session
spark = session(None)
port = urlsplit(spark.sparkContext.uiWebUrl).port
listening = []
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    with open(table) as rows:
        next(rows)
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                listening.append(address)
print(port, ",".join(listening))
spark.stop()
"""


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux's /proc/net/tcp")
def test_the_local_driver_ui_listens_on_loopback_only(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_LOCAL_IP"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    port, addresses = done.stdout.split()[-2:]
    assert int(port) > 0
    # as /proc/net/tcp{,6} write them: never 00000000 or :: (every interface)
    assert addresses and set(addresses.split(",")) <= LOOPBACK, addresses
