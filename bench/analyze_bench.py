"""Benchmark of ``pushguard analyze`` over many stacks' state.

The example ``dev`` stack (3 ``PushSubscription`` components, 22 resources with the provider) is
previewed once and written as a ``pulumi stack export`` file per stack (tests/analyze/exports.py),
each under its own stack name; then the installed ``pushguard analyze FOLDER -f json`` runs in a
fresh process (wall time, imports and the pack's start included) and its peak RSS is read.

    python bench/analyze_bench.py                 # 10, 100 and 500 stacks
    python bench/analyze_bench.py --stacks 50
    python bench/analyze_bench.py --subscriptions 20000   # one stack of 20,000 subscriptions

``--subscriptions N`` writes one stack of N push subscriptions made directly with pulumi-gcp
(``big_state`` in tests/analyze/test_large_and_mixed.py; every fifth pushes to ``http://``) and
times the same command on it.

    python bench/analyze_bench.py --subscriptions 20000 --secrets 2000
    python bench/analyze_bench.py --stack-call 20000 --secrets 18000

``--secrets K`` makes the push endpoints of K of those subscriptions (evenly spread) secrets with
their plaintext (a ``--show-secrets`` export), so every report and policy message is scrubbed of
K secret values. ``--stack-call N`` times one ``AnalyzeStack`` call of the N-subscription stack
(outputs as analyze sends them) against the pack served over gRPC, as the CLI calls it.

    python bench/analyze_bench.py --scrubber 2000 20000

``--scrubber K M`` times the secrets scrubber alone: K URL secrets, M messages each naming one.
``--scrubber-from FILE`` takes ``scrubber`` from another copy of ``secrets.py`` (``git show
b139280:pushguard/crossguard/secrets.py > old.py``: the quadratic one) to compare.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import importlib.util  # noqa: E402

from pushguard.analyze.deployment import read_state  # noqa: E402
from pushguard.analyze.runner import _analyzer_resource  # noqa: E402
from pushguard.gate.analyzer import PolicyPackProcess  # noqa: E402
from pushguard.preview.runner import PreviewOptions, run_preview  # noqa: E402
from tests.analyze.exports import SECRET, SIG, dumps, export_from_preview  # noqa: E402
from tests.analyze.test_large_and_mixed import big_state  # noqa: E402


def write_states(folder: Path, count: int) -> int:
    """``count`` state files of the dev stack, renamed per stack; returns the resources per
    stack."""
    result = run_preview(PreviewOptions(ROOT / "stacks", "dev", None, ROOT / "policy-config.json"))
    text = dumps(export_from_preview(result))
    for n in range(count):
        name = f"dev{n:04d}"
        (folder / f"{name}.json").write_text(
            text.replace("urn:pulumi:dev::", f"urn:pulumi:{name}::").replace(
                "pushguard-example-dev", f"pushguard-example-{name}"
            )
        )
    return len(json.loads(text)["deployment"]["resources"])


def secret_state(subscriptions: int, secrets: int) -> dict[str, object]:
    """``big_state(subscriptions)`` with ``secrets`` push endpoints shown secrets."""
    document = big_state(subscriptions)
    resources = document["deployment"]["resources"]  # type: ignore[index]
    step = max(1, subscriptions // secrets) if secrets else 0
    made = 0
    for n, entry in enumerate(resources[2:]):
        if not secrets or n % step or made >= secrets:
            continue
        made += 1
        for side in ("inputs", "outputs"):
            push = entry[side]["pushConfig"]
            push["pushEndpoint"] = {SIG: SECRET, "plaintext": json.dumps(push["pushEndpoint"])}
    return document


def stack_call(subscriptions: int, secrets: int) -> dict[str, float]:
    """One ``AnalyzeStack`` of the stack, timed on the client."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        path.write_text(dumps(secret_state(subscriptions, secrets)))
        state = read_state(path)
    providers = {r.urn: r for r in state.resources if r.type.startswith("pulumi:providers:")}
    request = [_analyzer_resource(r, providers, outputs=True) for r in state.resources]
    with PolicyPackProcess(ROOT / "policies") as pack:
        pack.configure({})
        clock = time.perf_counter()
        pack.analyze_stack(request)
        wall = time.perf_counter() - clock
    return {"stacks": 1, "resources": len(request), "wall": wall, "rss": 0.0}


def scrubber_time(secrets: int, messages: int, source: str = "") -> float:
    """Seconds to build a scrubber of ``secrets`` URL secrets and scrub ``messages`` messages."""
    from pushguard.crossguard.secrets import scrubber

    if source:
        spec = importlib.util.spec_from_file_location("other_secrets", source)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        scrubber = module.scrubber
    values = [f"https://hooks{n}.acme.example/push?token=t{n:06d}" for n in range(secrets)]
    texts = [f"sub-{n}: endpoint {values[n % secrets]} uses http://" for n in range(messages)]
    clock = time.perf_counter()
    scrub = scrubber(values)
    assert all("[secret]" in scrub(text) for text in texts)
    return time.perf_counter() - clock


def run(stacks: int, subscriptions: int = 0, secrets: int = 0) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if subscriptions:
            (folder / "big.json").write_text(dumps(secret_state(subscriptions, secrets)))
            per_stack = subscriptions + 2  # the stack and its provider
        else:
            per_stack = write_states(folder, stacks)
        clock = time.perf_counter()
        done = subprocess.run(
            [
                str(Path(sys.executable).parent / "pushguard"),
                "analyze",
                str(folder),
                "--policy-config",
                str(ROOT / "policy-config.json"),
                "-f",
                "json",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - clock
        report = json.loads(done.stdout)
        assert report["summary"]["stacks"] == stacks, done.stderr
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"stacks": stacks, "resources": stacks * per_stack, "wall": wall, "rss": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument("--subscriptions", type=int, nargs="+", default=[])
    parser.add_argument("--secrets", type=int, default=0)
    parser.add_argument("--stack-call", type=int, nargs="+", default=[])
    parser.add_argument("--scrubber", type=int, nargs=2, metavar=("SECRETS", "MESSAGES"))
    parser.add_argument("--scrubber-from", default="")
    args = parser.parse_args()
    if args.scrubber:
        seconds = scrubber_time(*args.scrubber, source=args.scrubber_from)
        print(f"{args.scrubber[0]} secrets, {args.scrubber[1]} messages: {seconds:.2f} s")
        return
    if args.stack_call:
        print("| resources | secrets | AnalyzeStack s |")
        print("|---|---|---|")
        for count in args.stack_call:
            row = stack_call(count, args.secrets)
            print(f"| {row['resources']} | {args.secrets} | {row['wall']:.2f} |")
        return
    print("| stacks | resources | wall s | resources/s | peak RSS MiB (largest child) |")
    print("|---|---|---|---|---|")
    cases = [(1, n) for n in args.subscriptions] or [(n, 0) for n in args.stacks]
    for count, subscriptions in cases:
        row = run(count, subscriptions, args.secrets)
        print(
            f"| {row['stacks']} | {row['resources']} | {row['wall']:.2f} | "
            f"{row['resources'] / row['wall']:.0f} | {row['rss']:.0f} |"
        )


if __name__ == "__main__":
    main()
