"""Follow-ups on issue 27 from a new user's trial: normalised forms of secret hosts, oversized
inputs refused before they are read, trailing gzip garbage, FIFOs, one unreadable file per line.
All through ``pushguard analyze`` as users run it."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.analyze.test_analyze import analyze, write
from tests.analyze.test_audit_of_record import GOOD_PUSH, P, shown, state

PERIMETER = {"push-vpcsc-default-url": {"perimeterProjects": [P]}}

# Secret endpoints whose host a message shows normalised (IDNA, NFKC, no trailing dot, case) or
# quotes as a parsed part (an IDNA error names the offending label).
SECRET_HOSTS = {
    "https://sécrethöst.example/push": ("sécrethöst", "xn--screthst-b1a9k", "screthst"),
    "https://trailsecret.example./push": ("trailsecret",),
    "https://ｆｕｌｌｗｉｄｔｈ.example/push": ("fullwidth", "ｆｕｌｌｗｉｄｔｈ"),
    'https://quote"secret.example/push': ('quote"secret', "quote"),
    "https://UPPERSECRET.example/push": ("uppersecret",),
}


@pytest.mark.parametrize("endpoint", list(SECRET_HOSTS))
def test_no_normalised_form_of_a_secret_host_is_printed(tmp_path: Path, endpoint: str) -> None:
    push = {**GOOD_PUSH, "pushEndpoint": shown(endpoint)}
    path = write(tmp_path, "prod.json", state(push))
    config = write(tmp_path, "c.json", PERIMETER)
    for fmt in ("text", "json", "sarif"):
        code, out, err = analyze(path, "-f", fmt, "--policy-config", config)
        assert code == 1, (fmt, out, err)
        assert "push-vpcsc-default-url" in out
        for fragment in SECRET_HOSTS[endpoint]:
            assert fragment.casefold() not in out.casefold(), (fmt, fragment, out[-2000:])
            assert fragment.casefold() not in err.casefold(), (fmt, fragment)


def _max_rss_kib(*args: str) -> tuple[int, str, int]:
    """Run ``pushguard analyze ARGS`` in a child; its exit code, stderr and peak RSS (KiB)."""
    code = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run([sys.executable, '-c', 'from pushguard.cli import main; main()',"
        " 'analyze', *sys.argv[1:]],"
        " capture_output=True, text=True)\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(p.returncode, rss); sys.stderr.write(p.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    returncode, rss = done.stdout.split()
    return int(returncode), done.stderr, int(rss)


def test_a_gzip_bomb_is_refused_without_being_held(tmp_path: Path) -> None:
    # 1.1 GiB of spaces (past the 1 GiB limit) in about 1 MiB of gzip, written in pieces.
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as out:
        out.write(b'{"version": 3, "deployment": {"resources": [')
        block = b" " * (64 << 20)
        for _ in range(18):
            out.write(block)
    code, err, rss = _max_rss_kib(str(bomb), "-f", "json")
    assert code == 2, err
    assert "inflates past" in err
    assert rss < 400 << 10, f"peak RSS {rss >> 10} MiB"


def test_a_sparse_oversized_file_is_refused_by_its_size(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as out:
        out.truncate(1100 << 20)
    code, err, rss = _max_rss_kib(str(big), "-f", "json")
    assert code == 2, err
    assert "larger than" in err
    assert rss < 400 << 10, f"peak RSS {rss >> 10} MiB"


def test_trailing_garbage_after_a_gzip_stream_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "states/trail.json.gz"
    path.parent.mkdir()
    path.write_bytes(gzip.compress(json.dumps(state(GOOD_PUSH)).encode()) + b"garbage!")
    write(tmp_path, "states/good.json", state(GOOD_PUSH, stack="good"))
    code, _, err = analyze(tmp_path / "states", "-f", "json")
    assert code == 2, err
    assert "trail.json.gz" in err and "after the end of its gzip stream" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_not_a_regular_file_and_each_unreadable_file_has_its_line(
    tmp_path: Path,
) -> None:
    states = tmp_path / "states"
    os.mkfifo(write(tmp_path, "states/x", "").parent / "pipe.json")
    write(tmp_path, "states/bad.json", '{"version": 3, "deployment": {"resources": 5}}')
    write(tmp_path, "states/good.json", state(GOOD_PUSH, stack="good"))
    code, _, err = analyze(states, "-f", "json")
    assert code == 2, err
    assert "not a regular file" in err and "link to nothing" not in err
    lines = [line for line in err.splitlines() if "pipe.json" in line or "bad.json" in line]
    assert len(lines) == 2 and not any("pipe.json" in x and "bad.json" in x for x in lines), err
