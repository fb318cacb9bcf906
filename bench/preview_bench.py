"""Benchmark of `pushguard preview` on stacks of 10, 100 and 500 PushSubscription components.

Each component is a push subscription with a created push-auth account, a dead-letter topic and
two deployers: 9 resources, so 100 components are 901 resources with the stack. Each run is a
fresh Python process (`python bench/preview_bench.py --one N`), timed from its start to its
exit, so interpreter start-up and imports are included (end to end, as in CI). Reported: wall
time, the share of the preview spent in the policy pack (start, configure, Analyze per resource,
AnalyzeStack), peak RSS of the preview process and of the pack process.

    python bench/preview_bench.py                 # 10, 100, 500 components, 3 runs each
    python bench/preview_bench.py --sizes 100 --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROGRAM = """
import pulumi
from pushguard.components import PushSubscription

for i in range(int(pulumi.Config().require("components"))):
    PushSubscription(f"sub-{i}", {
        "topic": f"topic-{i}",
        "push_endpoint": f"https://svc-{i}-3kq2x7ab9c-ew.a.run.app/push",
        "audience": f"svc-{i}",
        "target": {"kind": "cloud-run", "name": f"svc-{i}", "location": "europe-west1",
                   "custom_audiences": [f"svc-{i}"]},
        "project_number": "123456789012",
        "dead_letter": {"max_delivery_attempts": 10},
        "deployers": ["group:platform@example.com", "group:oncall@example.com"],
    })
"""


def make_project(folder: Path, components: int) -> None:
    """A Pulumi project whose `bench` stack declares ``components`` components."""
    (folder / "Pulumi.yaml").write_text("name: bench\nruntime: python\n")
    (folder / "__main__.py").write_text(PROGRAM)
    (folder / "Pulumi.bench.yaml").write_text(
        "config:\n  gcp:project: acme-orders\n  gcp:region: europe-west1\n"
        f"  bench:components: {components}\n"
    )
    (folder / "policy-config.json").write_text(
        json.dumps(
            {
                "all": "mandatory",
                "push-agent-token-creator": {"projectNumbers": {"acme-orders": "123456789012"}},
            }
        )
    )


def one(components: int) -> None:
    """Run one preview in this process and print its measurements as JSON."""
    from pushguard.preview.runner import PreviewOptions, run_preview

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_project(folder, components)
        result = run_preview(
            PreviewOptions(folder, "bench", policy_config=folder / "policy-config.json")
        )
    print(
        json.dumps(
            {
                "resources": len(result.resources) + 1,
                "violations": len(result.violations),
                "timings": result.timings,
                "pack_seconds": result.pack_seconds,
                "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "pack_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            }
        )
    )


def measure(components: int) -> dict:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--one", str(components)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    wall = time.perf_counter() - started
    data = json.loads(out.strip().splitlines()[-1])
    data["wall"] = wall
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        one(args.one)
        return
    print(
        f"# {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; median of {args.runs} runs"
    )
    print(
        "| components | resources | wall s (end to end) | in preview s | program s | "
        "pack s | pack share | analyze s | analyze stack s | peak RSS MiB | child peak RSS MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        runs = [measure(size) for _ in range(args.runs)]
        med = lambda f, runs=runs: statistics.median(f(r) for r in runs)  # noqa: E731
        total = med(lambda r: r["timings"]["total"])
        pack = med(lambda r: r["pack_seconds"])
        print(
            f"| {size} | {runs[0]['resources']} | {med(lambda r: r['wall']):.2f} | {total:.2f} | "
            f"{med(lambda r: r['timings']['program']):.2f} | {pack:.2f} | {pack / total:.0%} | "
            f"{med(lambda r: r['timings']['analyze']):.2f} | "
            f"{med(lambda r: r['timings']['analyze_stack']):.2f} | "
            f"{med(lambda r: r['rss_mib']):.0f} | {med(lambda r: r['pack_rss_mib']):.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
