"""Benchmark of the policy pack's ``AnalyzeStack`` on a recorded preview, in process.

A preview of ``bench/preview_bench.py``'s project (``--components`` PushSubscription components,
100 by default: 1,101 resources with the stack) is run once through ``pushguard preview``'s
engine, and every Analyzer request its pack client sends is recorded (``Configure``, each
``Analyze``, ``AnalyzeStack``; ``--save FILE`` keeps them, ``--requests FILE`` reuses them). Each
run then builds a fresh servicer of the pack (:class:`pushguard.crossguard.server._GuardedServicer`
with :func:`~pushguard.crossguard.policies.build_policies`), replays ``Configure`` and the
``Analyze`` calls untimed, and times ``AnalyzeStack`` alone: no gRPC, no process start. Printed:
the median, min and max wall time of ``--runs`` runs, the median CPU time of this process
(steadier on a shared machine), and a digest of the ``AnalyzeStack`` answer (its diagnostics and
not-applicable entries in order; the bench's stack is compliant, so it is the digest of an answer
without diagnostics: tests/crossguard/test_stack_call.py compares answers with findings).

    python bench/pack_stack_bench.py                       # record 100 components, 5 runs
    python bench/pack_stack_bench.py --save /tmp/req.json  # keep the recording
    python bench/pack_stack_bench.py --requests /tmp/req.json --runs 7
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import platform
import statistics
import sys
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from preview_bench import make_project  # this folder is on sys.path when run as a script


class _Recorder:
    """Wraps an Analyzer stub: each call's method and serialized request are appended."""

    def __init__(self, stub: Any, calls: list[dict[str, str]]) -> None:
        self._stub, self._calls, self._lock = stub, calls, threading.Lock()

    def __getattr__(self, method: str) -> Any:
        call = getattr(self._stub, method)

        def recorded(request: Any, *args: Any, **kw: Any) -> Any:
            with self._lock:
                self._calls.append(
                    {
                        "method": method,
                        "request": base64.b64encode(request.SerializeToString()).decode(),
                    }
                )
            return call(request, *args, **kw)

        return recorded


def record(components: int) -> list[dict[str, str]]:
    """Run one preview of ``components`` components; the Analyzer calls its pack client made."""
    from pushguard.gate import analyzer
    from pushguard.preview.runner import PreviewOptions, run_preview

    calls: list[dict[str, str]] = []
    connect = analyzer.PolicyPackProcess.connect

    def recording(self: Any) -> None:
        connect(self)
        if not isinstance(self.stub, _Recorder):
            self.stub = _Recorder(self.stub, calls)

    analyzer.PolicyPackProcess.connect = recording  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            make_project(folder, components)
            run_preview(
                PreviewOptions(folder, "bench", policy_config=folder / "policy-config.json")
            )
    finally:
        analyzer.PolicyPackProcess.connect = connect  # type: ignore[method-assign]
    return calls


class _Context:
    """The part of a gRPC servicer context the pack uses: ``abort`` raises."""

    def abort(self, code: Any, details: str) -> None:
        raise RuntimeError(f"aborted: {code}: {details}")


def _requests(calls: list[dict[str, str]]) -> list[tuple[str, Any]]:
    from pulumi.runtime import proto

    types = {
        "Configure": proto.ConfigureAnalyzerRequest,
        "ConfigureStack": proto.AnalyzerStackConfigureRequest,
        "Analyze": proto.AnalyzeRequest,
        "AnalyzeStack": proto.AnalyzeStackRequest,
    }
    return [
        (c["method"], types[c["method"]].FromString(base64.b64decode(c["request"])))
        for c in calls
        if c["method"] in types
    ]


def replay(requests: list[tuple[str, Any]]) -> tuple[float, float, Any]:
    """A fresh servicer: every call before ``AnalyzeStack`` untimed, then ``AnalyzeStack``
    timed. Returns its wall seconds, its CPU seconds (this process's: steadier than wall time
    on a shared machine) and its answer."""
    from pushguard.crossguard.policies import build_policies
    from pushguard.crossguard.server import _GuardedServicer

    servicer = _GuardedServicer(build_policies())
    context = _Context()
    for method, request in requests:
        if method != "AnalyzeStack":
            getattr(servicer, method)(request, context)
            continue
        started, cpu = time.perf_counter(), time.process_time()
        response = servicer.AnalyzeStack(request, context)
        return time.perf_counter() - started, time.process_time() - cpu, response
    raise SystemExit("the recording has no AnalyzeStack request")


def digest(response: Any) -> str:
    """A short hash of the answer's diagnostics and not-applicable entries, in order."""
    parts = [d.SerializeToString(deterministic=True) for d in response.diagnostics]
    parts += [n.SerializeToString(deterministic=True) for n in response.not_applicable]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--components", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=Path, help="a recording saved with --save")
    parser.add_argument("--save", type=Path, help="keep the recording in this file")
    args = parser.parse_args()
    calls = json.loads(args.requests.read_text()) if args.requests else record(args.components)
    if args.save:
        args.save.write_text(json.dumps(calls))
    requests = _requests(calls)
    stack = next(r for m, r in requests if m == "AnalyzeStack")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))  # as the pack's server does
    times, cpu, answers = [], [], set()
    for _ in range(args.runs):
        seconds, used, response = replay(requests)
        times.append(seconds)
        cpu.append(used)
        answers.add(digest(response))
    versions = ", ".join(
        f"{name} {metadata.version(name)}" for name in ("pulumi", "pulumi-policy", "protobuf")
    )
    print(f"# {platform.platform()}, Python {platform.python_version()}, {versions}")
    print(
        f"AnalyzeStack of {len(stack.resources)} resources, {args.runs} runs: "
        f"median {statistics.median(times):.3f} s, min {min(times):.3f} s, "
        f"max {max(times):.3f} s; CPU median {statistics.median(cpu):.3f} s; "
        f"diagnostics {len(response.diagnostics)}, "
        f"not applicable {len(response.not_applicable)}; answer digest {', '.join(sorted(answers))}"
    )


if __name__ == "__main__":
    main()
