"""``spark-submit`` entry point: the same options and exit codes as ``pushguard audit``.

    spark-submit --master yarn --py-files pushguard.zip \\
        "$(python -c 'import pushguard.audit.__main__ as m; print(m.__file__)')" \\
        gs://bucket/cai/ --out gs://bucket/pushguard-audit/ --policy-config policy-config.json

or locally ``python -m pushguard.audit EXPORT_PATH --out DIR``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pushguard.audit.command import run
from pushguard.audit.coverage import BLIND_MODES
from pushguard.audit.options import FAIL_ON
from pushguard.audit.parse import DEFAULT_MAX_LINE_BYTES


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run the audit; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="pushguard.audit",
        description="Audit every Pub/Sub push subscription in Cloud Asset Inventory exports.",
    )
    parser.add_argument("export_paths", nargs="*", metavar="EXPORT_PATH")
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="bigquery:PROJECT.DATASET.TABLE",
        help="a CAI export in BigQuery (repeatable; PREFIX* for --per-asset-type tables); "
        "needs the spark-bigquery-connector",
    )
    parser.add_argument("--out", required=True, help="output folder (local or a URI)")
    parser.add_argument("--master", help="Spark master (default: local[*], or spark-submit's)")
    parser.add_argument("--policy-config", type=Path, help="policy-config.json (levels, settings)")
    parser.add_argument("--fail-on", choices=FAIL_ON, default="mandatory")
    parser.add_argument("--include-dry-run-perimeters", action="store_true")
    parser.add_argument("--max-line-bytes", type=int, default=DEFAULT_MAX_LINE_BYTES)
    parser.add_argument(
        "--baseline", help="a previous audit's --out: mark findings new or existing, list resolved"
    )
    parser.add_argument(
        "--accept-baseline-mismatch",
        action="store_true",
        help="compare with a --baseline of other organisations or policy settings (recorded)",
    )
    parser.add_argument(
        "--fail-on-blind",
        choices=BLIND_MODES,
        default="nothing-read",
        help="exit 2 when nothing could be read (default), also when a gated rule's inputs "
        "are missing (missing-inputs), or never",
    )
    parser.add_argument(
        "--stacks",
        action="append",
        default=[],
        metavar="STATE",
        help="Pulumi state files or folders (repeatable): push-unmanaged, push-state-drift",
    )
    parser.add_argument(
        "--snapshot",
        action="append",
        default=[],
        metavar="TIME=PATH",
        help="an export and its read time (RFC 3339; repeatable): the newest export that covers "
        "an asset decides whether and how it is evaluated",
    )
    parser.add_argument(
        "--guardrails",
        metavar="DIR",
        help="custom constraints and policies (DIR/constraints, DIR/policies): list what each "
        "would deny in guardrails.jsonl",
    )
    parser.add_argument(
        "--debug", action="store_true", help="on a failed run, also print the traceback"
    )
    options = parser.parse_args(argv)
    return run(
        options.export_paths,
        options.out,
        master=options.master,
        policy_config=options.policy_config,
        fail_on=options.fail_on,
        include_dry_run=options.include_dry_run_perimeters,
        max_line_bytes=options.max_line_bytes,
        debug=options.debug,
        inputs=options.input,
        baseline=options.baseline,
        stacks=options.stacks,
        snapshots=options.snapshot,
        accept_baseline_mismatch=options.accept_baseline_mismatch,
        fail_on_blind=options.fail_on_blind,
        guardrails=options.guardrails,
    )


if __name__ == "__main__":
    sys.exit(main())
