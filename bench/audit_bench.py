"""Benchmark of ``pushguard audit`` against a Spark parse baseline, single-process Python and
DuckDB (issues 15 and 21), at 10^4 to 10^7 export lines.

A generator writes a realistic synthetic Cloud Asset Inventory export (newline-delimited JSON,
snake_case GCS shape, 8 shards): per project a Project asset, its IAM policy, service accounts,
compute instances and disks, subnetworks, buckets, BigQuery datasets and topics, and a small share
of subscriptions (about 2% of the lines, 60% of them push, with a mix of compliant and
non-compliant endpoints and accounts), plus IAM policies on service accounts and topics and one
service perimeter per 50 projects. Lines are 400-1,500 bytes, like real exports.

Every measure is a **fresh process**, timed from start to exit (JVM start-up included), run
``--runs`` times (median reported), in this order per run, so that the audit and the baseline
it is compared with run side by side under the same load: the audit, the Spark baseline, Python
``json``, ``orjson``, DuckDB:

- **audit**: ``pushguard audit --snapshot READ_TIME=EXPORT --out DIR --fail-on never`` with
  default settings (the 8 shards are one export: its read time says so, as a user gives it for
  an export's files, docs/audit.md "Several exports");
- **Spark baseline**: a fresh ``local[*]`` session running
  ``spark.read.schema("name string, asset_type string, resource struct<data string>").json(path)``,
  keeping the ``pubsub.googleapis.com/Subscription`` rows, writing Parquet (Spark's defaults);
- **json / orjson**: one Python process, a loop that parses each line and keeps the
  subscription rows;
- **DuckDB** (the single-machine reference; a bench-only dependency: ``pip install duckdb``,
  skipped when it is not installed): one Python process, ``read_json`` of the export with three
  columns, the subscriptions kept and three of the rules counted in SQL (endpoint not HTTPS, no
  OIDC token, push-auth account of another project).

Peak RSS is the largest ``VmHWM`` seen per process (polled every 0.2 s) of the audit's Python
driver and of its JVM (in local mode the JVM also runs the executors' work).

    python bench/audit_bench.py --sizes 10000 100000 1000000 --runs 3 --keep /tmp/exports
    python bench/audit_bench.py --sizes 10000000 --runs 1 --keep /tmp/exports

The generated exports stay under ``--keep`` (reused by later runs); without it they go to a
temporary folder that is deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SHARDS = 8
CRM = "//cloudresourcemanager.googleapis.com/"
READ_TIME = "2026-11-02T00:00:00Z"
"""When the generated export was read (after every ``update_time`` in it)."""


def audit_command(script: str, export: Path) -> list[str]:
    """``pushguard audit`` of the generated ``export`` (its shards are one snapshot)."""
    return [script, "audit", "--snapshot", f"{READ_TIME}={export}", "--fail-on", "never"]


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


def _subscription(  # noqa: PLR0917
    pid: str, num: str, anc: str, k: int, push: bool, accounts: list[str]
) -> str:
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
        open(folder / f"resource-{i:03d}.json", "w", buffering=1 << 22)  # noqa: SIM115
        for i in range(SHARDS)
    ]
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
                    # 3 in 5 subscriptions push (k is a multiple of 50: k % 5 is always 0)
                    push = (k // 50) % 5 < 3
                    block.append(_subscription(pid, num, anc, k, push=push, accounts=accounts))
                else:
                    block.append(_other_line(k % 5, pid, num, anc, k))
            shard = shards[n % SHARDS]
            shard.write("\n".join(block[: lines - written]) + "\n")
            written += min(len(block), lines - written)
            n += 1
    finally:
        for shard in shards:
            shard.close()


BASELINE = """
import sys
from pyspark.sql import SparkSession
spark = (
    SparkSession.builder.master("local[*]")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .getOrCreate()
)
frame = spark.read.schema("name string, asset_type string, resource struct<data string>").json(
    sys.argv[1]
)
frame.filter(frame.asset_type == "pubsub.googleapis.com/Subscription").write.mode(
    "overwrite"
).parquet(sys.argv[2])
spark.stop()
"""

PYTHON_LOOP = """
import sys
import {module} as parser
kept = []
for name in sorted(__import__("os").listdir(sys.argv[1])):
    with open(__import__("os").path.join(sys.argv[1], name), "rb") as lines:
        for line in lines:
            asset = parser.loads(line)
            if asset.get("asset_type") == "pubsub.googleapis.com/Subscription":
                kept.append(asset)
print(len(kept))
"""


DUCKDB = """
import sys
import duckdb
rows = duckdb.sql(
    \"\"\"
    SELECT
      count(*) FILTER (WHERE endpoint IS NOT NULL AND NOT starts_with(endpoint, 'https://')),
      count(*) FILTER (WHERE endpoint IS NOT NULL AND account IS NULL),
      count(*) FILTER (
        WHERE account IS NOT NULL
        AND split_part(split_part(account, '@', 2), '.', 1) <> split_part(name, '/', 5)
      )
    FROM (
      SELECT name,
        json_extract_string(resource.data, '$.pushConfig.pushEndpoint') AS endpoint,
        json_extract_string(resource.data, '$.pushConfig.oidcToken.serviceAccountEmail')
          AS account
      FROM read_json(
        ?, format = 'newline_delimited',
        columns = {name: 'VARCHAR', asset_type: 'VARCHAR', resource: 'STRUCT(data JSON)'}
      )
      WHERE asset_type = 'pubsub.googleapis.com/Subscription'
    )
    \"\"\",
    params=[sys.argv[1] + "/*.json"],
).fetchall()
print(rows)
"""


def _has_duckdb() -> bool:
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return False
    return True


class _PeakRss:
    """Polls the peak RSS (``VmHWM``) of a process tree: the largest Python and JVM process."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.python_kib = 0
        self.jvm_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _tree(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            todo += [int(c) for c in children]
        return pids

    def _poll(self) -> None:
        while not self._stop.wait(0.2):
            for pid in self._tree():
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
                peak = int(fields.get("VmHWM", "0 kB").split()[0])
                if fields.get("Name", "").strip() == "java":
                    self.jvm_kib = max(self.jvm_kib, peak)
                else:  # the driver's Python (named after the script: pushguard, python3)
                    self.python_kib = max(self.python_kib, peak)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _timed(command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command`` to its end: wall seconds and peak RSS (MiB) of its Python and JVM."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    peak = _PeakRss(process.pid)
    out, err = process.communicate()
    wall = time.perf_counter() - start
    peak.stop()
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{command[:3]} exited {process.returncode}: {err[-3000:]}")
    return {
        "s": wall,
        "python_mib": peak.python_kib / 1024,
        "jvm_mib": peak.jvm_kib / 1024,
        "stdout": out,  # type: ignore[dict-item]
    }


def measure(export: Path, work: Path, runs: int) -> dict[str, object]:
    """``runs`` rounds of the four measures on ``export``; medians and peaks."""
    python = sys.executable
    script = str(Path(python).with_name("pushguard"))
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    env["PATH"] = f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}"
    times: dict[str, list[float]] = {
        "audit": [],
        "baseline": [],
        "json": [],
        "orjson": [],
        "duckdb": [],
    }
    peaks: dict[str, float] = {"audit_python": 0, "audit_jvm": 0, "baseline_jvm": 0}
    summary: dict[str, object] = {}
    for _ in range(runs):
        out = work / "audit-out"
        audit = _timed([*audit_command(script, export), "--out", str(out)], env)
        times["audit"].append(audit["s"])
        peaks["audit_python"] = max(peaks["audit_python"], audit["python_mib"])
        peaks["audit_jvm"] = max(peaks["audit_jvm"], audit["jvm_mib"])
        summary = json.loads((out / "summary.json").read_text())
        shutil.rmtree(out, ignore_errors=True)
        target = work / "baseline.parquet"
        base = _timed([python, "-c", BASELINE, str(export), str(target)], env)
        times["baseline"].append(base["s"])
        peaks["baseline_jvm"] = max(peaks["baseline_jvm"], base["jvm_mib"])
        shutil.rmtree(target, ignore_errors=True)
        for module in ("json", "orjson"):
            loop = _timed([python, "-c", PYTHON_LOOP.format(module=module), str(export)], env)
            times[module].append(loop["s"])
        if _has_duckdb():
            times["duckdb"].append(_timed([python, "-c", DUCKDB, str(export)], env)["s"])
    lines = summary["lines"]["read"]  # type: ignore[index]
    return {
        "lines": lines,
        "bytes": sum(p.stat().st_size for p in export.iterdir()),
        "runs": runs,
        "times": times,
        "median": {k: statistics.median(v) if v else float("nan") for k, v in times.items()},
        "peaks_mib": peaks,
        "subscriptions": summary["subscriptions"]["evaluated"],  # type: ignore[index]
        "violations": summary["findings"]["violations"],  # type: ignore[index]
        "timings_s": summary["timings_s"],  # type: ignore[index]
    }


def main() -> None:
    """Generate the exports (or reuse them under ``--keep``), measure, print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    parser.add_argument("--runs", type=int, default=3, help="runs per measure (median)")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the generated exports here")
    parser.add_argument("--json", type=Path, help="also write the raw results here (JSON lines)")
    options = parser.parse_args()
    base = options.keep or Path(tempfile.mkdtemp(prefix="pushguard-bench-"))
    work = Path(tempfile.mkdtemp(prefix="pushguard-bench-work-"))
    print(
        "| lines | GB | audit s | Spark baseline s | audit / baseline | Python json s | "
        "orjson s | DuckDB s | audit peak RSS Python / JVM MiB | baseline JVM MiB | "
        "subscriptions | violations |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    try:
        for size in options.sizes:
            export = base / f"export-{size}"
            if not export.exists():
                generate(export, size)
            r = measure(export, work, options.runs)
            if options.json:
                with options.json.open("a") as raw:
                    raw.write(json.dumps(r) + "\n")
            m, p = r["median"], r["peaks_mib"]
            print(
                f"| {r['lines']:,} | {r['bytes'] / 1e9:.2f} | {m['audit']:.1f} | "  # type: ignore[index]
                f"{m['baseline']:.1f} | {m['audit'] / m['baseline']:.2f}x | "  # type: ignore[index]
                f"{m['json']:.1f} | {m['orjson']:.1f} | {m['duckdb']:.1f} | "  # type: ignore[index]
                f"{p['audit_python']:.0f} / "  # type: ignore[index]
                f"{p['audit_jvm']:.0f} | {p['baseline_jvm']:.0f} | {r['subscriptions']:,} | "  # type: ignore[index]
                f"{r['violations']:,} |",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not options.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
