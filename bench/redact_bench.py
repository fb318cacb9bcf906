"""Benchmark of the redaction of reports (``pushguard.gate.redact``, over
``pushguard.rules.redaction``) on adversarial lengths: inputs built to make a backtracking
regular expression quadratic or worse (long runs of scheme separators, brackets, ``@?`` pairs,
one huge token). Each must take time linear in its length.

    python bench/redact_bench.py

Prints one row per input and size: characters, seconds for ``redact_text`` plus ``redact_url``,
and microseconds per 1,000 characters (flat when linear).
"""

from __future__ import annotations

import time

from pushguard.gate.redact import redact_text, redact_url

SHAPES = {
    "https://a/ repeated": "https://a/",
    "https:// repeated": "https://",
    "https://a/ then )": ")",
    "https:// then @?": "@?",
    "one token": "a",
}
"""Each adversarial shape: what is repeated (after a prefix for the bracket and ``@?`` shapes)."""

PREFIX = {"https://a/ then )": "https://a/", "https:// then @?": "https://"}


def measure(shape: str, repeat: int) -> tuple[int, float]:
    """(characters, seconds) of redacting one input of ``shape`` repeated ``repeat`` times."""
    text = PREFIX.get(shape, "") + SHAPES[shape] * repeat
    started = time.perf_counter()
    redact_text(text)
    redact_url(text)
    return len(text), time.perf_counter() - started


def main() -> None:
    """Print the table."""
    print("| input | characters | seconds | µs per 1,000 characters |")
    print("|---|---|---|---|")
    for shape in SHAPES:
        for repeat in (10_000, 100_000, 1_000_000):
            chars, seconds = measure(shape, repeat)
            print(f"| {shape} | {chars:,} | {seconds:.3f} | {seconds / chars * 1e9:.1f} |")


if __name__ == "__main__":
    main()
