"""Benchmark of ``pushguard audit --stacks`` (issue 23): the audit of a 10^6-line export joined with
10,000 Pulumi stack states of 50 resources each, against the same audit without ``--stacks``.

The export is :mod:`audit_bench`'s generator (the same synthetic Cloud Asset Inventory export,
reused from ``--keep``). The states are ``pulumi stack export`` files (version 3, the shape of
tests/audit/states.py) written from the export's own subscriptions: each state has its stack
resource, the default provider, the pulumi-gcp subscriptions of the export dealt to it in turn
(nine in ten of the export's subscriptions are managed, about two a stack at 10^6 lines; one in
twenty has its endpoint edited; one stack in twenty also holds a subscription the export lacks)
and topics, service accounts and IAM members up to 50 resources, about 35 KB a state.

Each measure is a fresh ``pushguard audit`` process (JVM start-up included), timed from start to
exit, the two runs side by side per round (``--runs`` rounds, median reported):

    python bench/stacks_bench.py --keep /tmp/stacks-bench --runs 1
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audit_bench import audit_command, generate

SUBSCRIPTION = re.compile(
    r'"name":"//pubsub\.googleapis\.com/projects/([^/]+)/subscriptions/([^"]+)".*?"pushConfig":'
    r"(\{(?:[^{}]|\{[^{}]*\})*\})"
)
TIME = "2026-11-02T09:14:07.123456789Z"


def export_subscriptions(export: Path) -> list[tuple[str, str, dict[str, object]]]:
    """``(project, name, pushConfig)`` of every subscription line of the export, in file order."""
    found = []
    for shard in sorted(export.glob("*.json")):
        with shard.open() as lines:
            for line in lines:
                if '"pubsub.googleapis.com/Subscription"' in line:
                    match = SUBSCRIPTION.search(line)
                    if match:
                        found.append((match[1], match[2], json.loads(match[3])))
    return found


def _resource(stack: str, project: str, rtype: str, name: str, *, rid: str, outputs: dict) -> dict:
    return {
        "urn": f"urn:pulumi:{stack}::{project}::{rtype}::{name}",
        "custom": True,
        "id": rid,
        "type": rtype,
        "inputs": outputs,
        "outputs": outputs,
        "parent": f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}",
        "provider": f"urn:pulumi:{stack}::{project}::pulumi:providers:gcp::default::abc",
        "propertyDependencies": {},
        "created": TIME,
        "modified": TIME,
    }


def state(index: int, managed: list[tuple[str, str, dict[str, object]]], extra: bool) -> dict:
    """One stack's export: the stack, its provider, ``managed`` subscriptions and fillers."""
    project, stack = f"team-{index:05d}", "prod"
    root = f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"
    resources: list[dict] = [
        {"urn": root, "custom": False, "type": "pulumi:pulumi:Stack", "outputs": {}},
        {
            "urn": f"urn:pulumi:{stack}::{project}::pulumi:providers:gcp::default",
            "custom": True,
            "id": "abc",
            "type": "pulumi:providers:gcp",
            "inputs": {"version": "8.10.0"},
            "outputs": {"version": "8.10.0"},
            "parent": root,
        },
    ]
    subs = list(managed)
    if extra:
        subs.append((managed[0][0] if managed else "team-000000", f"gone-{index}", {}))
    for n, (pid, name, config) in enumerate(subs):
        recorded = dict(config)
        if (index + n) % 20 == 0 and recorded.get("pushEndpoint"):
            recorded["pushEndpoint"] = f"https://old-{index}.example.com/push"
        path = f"projects/{pid}/subscriptions/{name}"
        outputs = {
            "id": path,
            "name": name,
            "project": pid,
            "topic": f"projects/{pid}/topics/t",
            "ackDeadlineSeconds": 10,
            "pushConfig": recorded,
            "labels": {"team": project},
        }
        resources.append(
            _resource(
                stack,
                project,
                "gcp:pubsub/subscription:Subscription",
                name,
                rid=path,
                outputs=outputs,
            )
        )
    filler = 0
    while len(resources) < 50:
        filler += 1
        kind = filler % 3
        if kind == 0:
            outputs = {"name": f"t-{filler}", "project": project, "labels": {"team": project}}
            rtype, rid = "gcp:pubsub/topic:Topic", f"projects/{project}/topics/t-{filler}"
        elif kind == 1:
            email = f"sa-{filler}@{project}.iam.gserviceaccount.com"
            outputs = {"accountId": f"sa-{filler}", "email": email, "project": project}
            rtype, rid = "gcp:serviceaccount/account:Account", f"projects/{project}/sa/{email}"
        else:
            outputs = {
                "project": project,
                "role": "roles/pubsub.publisher",
                "member": f"serviceAccount:sa-{filler}@{project}.iam.gserviceaccount.com",
                "etag": "BwXLiBc_lI4=",
            }
            rtype, rid = "gcp:projects/iAMMember:IAMMember", f"{project}/roles/pubsub.publisher"
        resources.append(_resource(stack, project, rtype, f"r-{filler}", rid=rid, outputs=outputs))
    return {
        "version": 3,
        "deployment": {
            "manifest": {"time": TIME, "magic": "", "version": "v3.205.0"},
            "secrets_providers": {"type": "passphrase", "state": {"salt": "v1:abc"}},
            "resources": resources,
        },
    }


def write_states(export: Path, folder: Path, stacks: int) -> int:
    """Write ``stacks`` state files under ``folder``; returns the bytes written."""
    subscriptions = export_subscriptions(export)
    managed = [s for n, s in enumerate(subscriptions) if n % 10]  # nine in ten
    folder.mkdir(parents=True, exist_ok=True)
    size = 0
    for index in range(stacks):
        mine = managed[index::stacks]  # every managed subscription in one stack
        text = json.dumps(state(index, mine, extra=index % 20 == 0), separators=(",", ":"))
        (folder / f"stack-{index:05d}.json").write_text(text)
        size += len(text)
    return size


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{command[:4]} exited {done.returncode}: {done.stderr[-3000:]}")
    print(done.stdout.strip(), flush=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--stacks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the export and states here")
    options = parser.parse_args()
    root = options.keep or Path(tempfile.mkdtemp(prefix="stacks-bench-"))
    export, states = root / f"export-{options.lines}", root / f"states-{options.stacks}"
    if not export.exists():
        start = time.perf_counter()
        generate(export, options.lines)
        print(f"export generated in {time.perf_counter() - start:.1f} s", flush=True)
    if not states.exists():
        start = time.perf_counter()
        size = write_states(export, states, options.stacks)
        print(
            f"{options.stacks:,} states ({size / 2**20:.0f} MiB) generated in "
            f"{time.perf_counter() - start:.1f} s",
            flush=True,
        )
    script = str(Path(sys.executable).with_name("pushguard"))
    base = audit_command(script, export)
    plain, joined = [], []
    for run in range(options.runs):
        plain.append(timed([*base, "--out", str(root / f"out-plain-{run}")]))
        joined.append(
            timed([*base, "--out", str(root / f"out-stacks-{run}"), "--stacks", str(states)])
        )
    a, b = statistics.median(plain), statistics.median(joined)
    print(
        json.dumps(
            {
                "lines": options.lines,
                "stacks": options.stacks,
                "audit_s": round(a, 1),
                "audit_with_stacks_s": round(b, 1),
                "ratio": round(b / a, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
