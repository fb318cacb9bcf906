"""Benchmark of ``pushguard audit`` at 10^5, 10^6 and 10^7 export lines against a bare Spark scan.

A generator writes a realistic synthetic Cloud Asset Inventory export (newline-delimited JSON,
snake_case GCS shape, 8 shards): per project a Project asset, its IAM policy, service accounts,
compute instances and disks, subnetworks, buckets, BigQuery datasets and topics, and a small share
of subscriptions (about 2% of the lines, 60% of them push, with a mix of compliant and
non-compliant endpoints and accounts), plus IAM policies on service accounts and topics and one
service perimeter per 50 projects. Lines are 400-1,500 bytes, like real exports.

Each size runs in a fresh process (``--one N``): a warm-up read of the files (so both measures
see the same page cache), then ``spark.read.text(...).count()`` (the bare scan), then the full
audit, both in the same Spark session (``local[*]``). Reported: wall time of each, throughput,
the ratio, and the peak RSS of the driver's Python process and of the JVM (in local mode the JVM
also runs the executors' work).

    python bench/audit_bench.py                        # 1e5, 1e6, 1e7 lines
    python bench/audit_bench.py --sizes 100000 1000000 --keep /tmp/exports
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHARDS = 8
CRM = "//cloudresourcemanager.googleapis.com/"


def _project_lines(n: int, rng: random.Random) -> list[str]:
    pid, num = f"team-{n:06d}", f"{400000000000 + n}"
    folder = f"folders/{700000 + n % 97}"
    anc = json.dumps([f"projects/{num}", folder, "organizations/111222333"])
    agent = f"service-{num}@gcp-sa-pubsub.iam.gserviceaccount.com"
    lines = [
        f'{{"name":"{CRM}projects/{num}","asset_type":"cloudresourcemanager.googleapis.com/Project",'
        f'"resource":{{"version":"v1","discovery_name":"Project","parent":"{CRM}{folder}","data":'
        f'{{"projectId":"{pid}","projectNumber":"{num}","lifecycleState":"ACTIVE","name":"{pid}",'
        f'"parent":{{"type":"folder","id":"{folder[8:]}"}},"createTime":"2021-03-04T10:11:12Z",'
        f'"labels":{{"team":"t{n % 40}","env":"prod"}}}}}},"ancestors":{anc},'
        f'"update_time":"2026-11-01T00:00:00Z"}}',
        f'{{"name":"{CRM}projects/{num}","asset_type":"cloudresourcemanager.googleapis.com/Project",'
        f'"iam_policy":{{"etag":"BwXLiBc_lI4=","bindings":[{{"role":"roles/owner","members":'
        f'["group:owners-{n}@example.com"]}},{{"role":"roles/editor","members":'
        f'["serviceAccount:{num}@cloudservices.gserviceaccount.com"]}},{{"role":'
        f'"roles/pubsub.serviceAgent","members":["serviceAccount:{agent}"]}}]}},"ancestors":{anc}}}',
    ]
    accounts = []
    for a in range(3):
        email = f"svc-{a}@{pid}.iam.gserviceaccount.com"
        accounts.append(email)
        lines.append(
            f'{{"name":"//iam.googleapis.com/projects/{pid}/serviceAccounts/{num}{a}",'
            f'"asset_type":"iam.googleapis.com/ServiceAccount","resource":{{"version":"v1",'
            f'"discovery_name":"ServiceAccount","parent":"{CRM}projects/{num}","data":{{"email":'
            f'"{email}","name":"projects/{pid}/serviceAccounts/{email}","projectId":"{pid}",'
            f'"uniqueId":"{num}{a}","displayName":"service {a}"}}}},"ancestors":{anc}}}'
        )
        if a == 0 and n % 3:
            lines.append(
                f'{{"name":"//iam.googleapis.com/projects/{pid}/serviceAccounts/{num}{a}",'
                f'"asset_type":"iam.googleapis.com/ServiceAccount","iam_policy":{{"bindings":'
                f'[{{"role":"roles/iam.serviceAccountTokenCreator","members":'
                f'["serviceAccount:{agent}"]}}]}},"ancestors":{anc}}}'
            )
    return lines, pid, num, anc, accounts  # type: ignore[return-value]


def _other_line(kind: int, pid: str, num: str, anc: str, k: int) -> str:
    zone = "europe-west1-b"
    if kind == 0:
        return (
            f'{{"name":"//compute.googleapis.com/projects/{pid}/zones/{zone}/instances/vm-{k}",'
            f'"asset_type":"compute.googleapis.com/Instance","resource":{{"version":"v1",'
            f'"discovery_name":"Instance","parent":"{CRM}projects/{num}","data":{{"id":"{k}",'
            f'"name":"vm-{k}","machineType":"https://www.googleapis.com/compute/v1/projects/{pid}/'
            f'zones/{zone}/machineTypes/e2-standard-4","status":"RUNNING","zone":"{zone}",'
            f'"networkInterfaces":[{{"network":"projects/{pid}/global/networks/default",'
            f'"networkIP":"10.0.{k % 250}.{k % 200}","accessConfigs":[]}}],"disks":[{{"boot":true,'
            f'"source":"projects/{pid}/zones/{zone}/disks/vm-{k}"}}],"labels":{{"app":"a{k % 9}"}},'
            f'"serviceAccounts":[{{"email":"svc-0@{pid}.iam.gserviceaccount.com","scopes":'
            f'["https://www.googleapis.com/auth/cloud-platform"]}}]}}}},"ancestors":{anc}}}'
        )
    if kind == 1:
        return (
            f'{{"name":"//compute.googleapis.com/projects/{pid}/zones/{zone}/disks/vm-{k}",'
            f'"asset_type":"compute.googleapis.com/Disk","resource":{{"version":"v1","parent":'
            f'"{CRM}projects/{num}","data":{{"name":"vm-{k}","sizeGb":"50","status":"READY",'
            f'"type":"projects/{pid}/zones/{zone}/diskTypes/pd-balanced"}}}},"ancestors":{anc}}}'
        )
    if kind == 2:
        return (
            f'{{"name":"//storage.googleapis.com/{pid}-bucket-{k}","asset_type":'
            f'"storage.googleapis.com/Bucket","resource":{{"version":"v1","parent":'
            f'"{CRM}projects/{num}","data":{{"name":"{pid}-bucket-{k}","location":"EU",'
            f'"storageClass":"STANDARD","iamConfiguration":{{"uniformBucketLevelAccess":'
            f'{{"enabled":true}}}}}}}},"ancestors":{anc}}}'
        )
    if kind == 3:
        return (
            f'{{"name":"//compute.googleapis.com/projects/{pid}/regions/europe-west1/subnetworks/'
            f's-{k}","asset_type":"compute.googleapis.com/Subnetwork","resource":{{"version":"v1",'
            f'"parent":"{CRM}projects/{num}","data":{{"name":"s-{k}","ipCidrRange":'
            f'"10.{k % 250}.0.0/20","privateIpGoogleAccess":true}}}},"ancestors":{anc}}}'
        )
    return (
        f'{{"name":"//bigquery.googleapis.com/projects/{pid}/datasets/d{k}","asset_type":'
        f'"bigquery.googleapis.com/Dataset","resource":{{"version":"v2","parent":'
        f'"{CRM}projects/{num}","data":{{"datasetReference":{{"datasetId":"d{k}","projectId":'
        f'"{pid}"}},"location":"EU","access":[{{"role":"OWNER","groupByEmail":'
        f'"owners@example.com"}}]}}}},"ancestors":{anc}}}'
    )


_ENDPOINTS = [
    "https://svc-{k}-3kq2x7ab9c-ew.a.run.app/push",
    "https://hooks.example.com/{k}",
    "http://legacy.example.com/{k}",
    "https://svc-{num}.europe-west1.run.app/push",
]


def _subscription(pid: str, num: str, anc: str, k: int, push: bool, accounts: list[str]) -> str:
    push_config = "{}"
    if push:
        endpoint = _ENDPOINTS[k % len(_ENDPOINTS)].format(k=k, num=num)
        account = accounts[0] if k % 5 else f"push@other-{k % 7}.iam.gserviceaccount.com"
        oidc = (
            f',"oidcToken":{{"serviceAccountEmail":"{account}","audience":"a{k}"}}' if k % 4 else ""
        )
        push_config = f'{{"pushEndpoint":"{endpoint}"{oidc}}}'
    return (
        f'{{"name":"//pubsub.googleapis.com/projects/{pid}/subscriptions/s-{k}","asset_type":'
        f'"pubsub.googleapis.com/Subscription","resource":{{"version":"v1","discovery_name":'
        f'"Subscription","parent":"{CRM}projects/{num}","data":{{"name":"projects/{pid}/'
        f'subscriptions/s-{k}","topic":"projects/{pid}/topics/t-{k % 10}","ackDeadlineSeconds":10,'
        f'"pushConfig":{push_config},"messageRetentionDuration":"604800s"}}}},"ancestors":{anc}}}'
    )


def generate(folder: Path, lines: int, seed: int = 7) -> None:
    """Write about ``lines`` lines in :data:`SHARDS` shards under ``folder``."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    shards = [
        open(folder / f"resource-{i:03d}.json", "w", buffering=1 << 22) for i in range(SHARDS)
    ]  # noqa: SIM115
    written, n, k = 0, 0, 0
    try:
        while written < lines:
            block, pid, num, anc, accounts = _project_lines(n, rng)
            if n % 50 == 0:
                members = json.dumps([f"projects/{400000000000 + m}" for m in range(n, n + 5)])
                block.append(
                    f'{{"name":"{CRM}organizations/111222333","asset_type":'
                    f'"cloudresourcemanager.googleapis.com/Organization","service_perimeter":'
                    f'{{"name":"accessPolicies/1/servicePerimeters/p{n}","title":"p{n}","status":'
                    f'{{"resources":{members},"restricted_services":["pubsub.googleapis.com"]}}}},'
                    f'"ancestors":["organizations/111222333"]}}'
                )
            for _ in range(95):
                k += 1
                if k % 50 == 0:
                    block.append(_subscription(pid, num, anc, k, push=k % 5 < 3, accounts=accounts))
                else:
                    block.append(_other_line(k % 5, pid, num, anc, k))
            shard = shards[n % SHARDS]
            shard.write("\n".join(block[: lines - written]) + "\n")
            written += min(len(block), lines - written)
            n += 1
    finally:
        for shard in shards:
            shard.close()


def _jvm_peak_kib() -> int:
    peak = 0
    for child in subprocess.run(
        ["pgrep", "-P", str(os.getpid())], capture_output=True, text=True
    ).stdout.split():
        try:
            status = Path(f"/proc/{child}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peak = max(peak, int(line.split()[1]))
    return peak


def one(lines: int, keep: Path | None) -> dict[str, float]:
    """Generate, then time the bare scan and the audit in one session (this process)."""
    from pyspark.sql import SparkSession  # noqa: PLC0415

    from pushguard.audit.job import AuditOptions, run_audit  # noqa: PLC0415

    base = keep or Path(tempfile.mkdtemp(prefix="pushguard-bench-"))
    export = base / f"export-{lines}"
    if not export.exists():
        generate(export, lines)
    size = sum(p.stat().st_size for p in export.iterdir())
    spark = (
        SparkSession.builder.master("local[*]")
        .config("spark.driver.memory", "8g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    files = str(export)
    spark.read.text(files).count()  # warm-up: page cache and JIT for both measures
    start = time.perf_counter()
    counted = spark.read.text(files).count()
    bare = time.perf_counter() - start
    start = time.perf_counter()
    result = run_audit(spark, AuditOptions([files], str(base / f"out-{lines}")))
    full = time.perf_counter() - start
    summary = result.summary
    assert summary["lines"]["read"] == counted == lines, (summary["lines"], counted)
    return {
        "lines": lines,
        "bytes": size,
        "bare_s": bare,
        "audit_s": full,
        "subscriptions": summary["subscriptions"]["evaluated"],
        "violations": summary["findings"]["violations"],
        "python_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "jvm_peak_mib": _jvm_peak_kib() / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    parser.add_argument("--keep", type=Path, help="keep the generated exports here")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        print(json.dumps(one(options.one, options.keep)))
        return
    print(
        "| lines | GB | bare scan s | audit s | ratio | lines/s (audit) | subscriptions | violations | peak RSS Python / JVM MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for size in options.sizes:
        command = [sys.executable, __file__, "--one", str(size)]
        if options.keep:
            command += ["--keep", str(options.keep)]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"| {r['lines']:,} | {r['bytes'] / 1e9:.2f} | {r['bare_s']:.1f} | {r['audit_s']:.1f} | "
            f"{r['audit_s'] / r['bare_s']:.1f}x | {r['lines'] / r['audit_s']:,.0f} | "
            f"{r['subscriptions']:,} | {r['violations']:,} | {r['python_peak_mib']:.0f} / "
            f"{r['jvm_peak_mib']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
