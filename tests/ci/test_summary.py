"""The action's parts on their own: the job summary from JSON reports
(:mod:`pushguard.cli.summary`), the exit code of several runs (:mod:`pushguard.cli.runs`), and
the gate step's inputs, SARIF merge and outputs (:mod:`pushguard.cli.action`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pushguard.cli.action import (
    InputError,
    gate_commands,
    merge_sarif,
    read_inputs,
    write_outputs,
)
from pushguard.cli.runs import combined_exit_code
from pushguard.cli.summary import MAX_FINDINGS, GateRun, escape, job_summary, load_run
from tests.ci.runner import read_environment_file

URN = "urn:pulumi:prod::shop::gcp:pubsub/subscription:Subscription::"


def violation(name: str, level: str = "mandatory", **extra: Any) -> dict[str, Any]:
    return {
        "policy": "push-endpoint-https",
        "level": level,
        "urn": URN + name,
        "message": f"Title line.\n{name}: The push endpoint uses http://.",
        "location": {"path": "index.py", "line": 7},
        "exception": None,
        **extra,
    }


def preview_report(*violations: dict[str, Any], not_checked: int = 0) -> dict[str, Any]:
    counted = [v for v in violations if (v["exception"] or {}).get("state") != "active"]
    return {
        "project": "shop",
        "stack": "prod",
        "violations": list(violations),
        "notChecked": [{}] * not_checked,
        "summary": {
            "mandatory": sum(v["level"] == "mandatory" for v in counted),
            "advisory": sum(v["level"] == "advisory" for v in counted),
            "excepted": len(violations) - len(counted),
            "exitCode": 1 if any(v["level"] == "mandatory" for v in counted) else 0,
        },
    }


def test_combined_exit_code_is_the_worst_and_counts_anything_else_as_a_failure() -> None:
    assert combined_exit_code([]) == 0
    assert combined_exit_code([0, 0]) == 0
    assert combined_exit_code([0, 1, 0]) == 1
    assert combined_exit_code([1, 2, 0]) == 2
    assert combined_exit_code([0, -9]) == 2  # killed by a signal
    assert combined_exit_code([137, 0]) == 2


def test_escape_renders_names_and_messages_as_text() -> None:
    hostile = "<img src=x onerror=alert(1)> **bold** [link](http://evil) `code` | cell\n# head"
    shown = escape(hostile)
    assert "<" not in shown.replace("\\<", "") and "\n" not in shown
    assert shown.startswith("\\<img src\\=x onerror\\=alert\\(1\\)\\> \\*\\*bold\\*\\*")
    assert "\\| cell \\# head" in shown
    assert len(escape("x" * 1000)) == 300


def test_the_summary_lists_findings_that_count_and_counts_excepted_and_not_checked() -> None:
    excepted = violation("kept", exception={"state": "active", "reason": "r", "expires": "x"})
    expired = violation("late", exception={"state": "expired", "reason": "r", "expires": "x"})
    report = preview_report(
        violation("b", "advisory"), violation("a"), excepted, expired, not_checked=2
    )
    summary = job_summary("preview", [GateRun("prod", 1, report)], 1)
    assert summary.startswith("## pushguard preview: FAILED\n")
    assert "| shop\\/prod | mandatory violation | 2 | 1 | 1 | 2 |" in summary
    lines = summary.split("### Findings (3)\n\n", 1)[1].splitlines()
    assert [line.split("** ")[0] for line in lines] == ["- **mandatory"] * 2 + ["- **advisory"]
    assert "Subscription kept" not in summary  # under an active exception: counted, not listed
    assert lines[0].endswith("at index\\.py\\:7: a\\: The push endpoint uses http\\:\\/\\/\\.")


def test_with_a_baseline_new_findings_come_first() -> None:
    stacks = [
        preview_report(violation("old", change="existing")),
        preview_report(violation("fresh", "advisory", change="new")),
    ]
    report = {"stacks": stacks, "summary": {"exitCode": 1}}
    summary = job_summary("analyze", [GateRun("state/", 1, report)], 1)
    assert summary.index("### New findings (1)") < summary.index("### Existing findings (1)")
    assert "(new, shop\\/prod)" in summary


def test_only_so_many_findings_are_listed() -> None:
    report = preview_report(*(violation(f"s{i:03}") for i in range(MAX_FINDINGS + 5)))
    summary = job_summary("preview", [GateRun("prod", 1, report)], 1)
    assert summary.count("\n- **mandatory**") == MAX_FINDINGS
    assert "… and 5 more in the SARIF and JSON reports." in summary


def test_a_run_without_a_report_is_an_error_in_the_summary(tmp_path: Path) -> None:
    missing = load_run("dev", 2, tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{not json")
    failed = {"project": "shop", "stack": "qa", "error": {"message": "the program raised"}}
    summary = job_summary(
        "preview", [missing, load_run("x", 2, tmp_path / "bad.json"), GateRun("qa", 2, failed)], 2
    )
    assert summary.startswith("## pushguard preview: FAILED (the run failed or could not judge)")
    errors = summary.split("### Errors (3)\n\n", 1)[1].splitlines()
    assert errors == [
        "- dev\\: no JSON report was written \\(exit code 2\\)",
        "- x\\: no JSON report was written \\(exit code 2\\)",
        "- qa\\: the program raised",
    ]


def test_inputs_are_split_and_checked(tmp_path: Path) -> None:
    base = {"GITHUB_WORKSPACE": str(tmp_path)}
    inputs = read_inputs(
        {
            **base,
            "PUSHGUARD_ACTION_STACKS": " dev\n prod ",
            "PUSHGUARD_ACTION_WORKING_DIRECTORY": "infra",
            "PUSHGUARD_ACTION_POLICY_CONFIG": "policy config.json",
        }
    )
    assert inputs.stacks == ("dev", "prod") and inputs.command == "preview"
    assert inputs.working_directory == tmp_path / "infra"
    commands = gate_commands(inputs, tmp_path / "r")
    assert [c.args[:3] for c in commands] == [
        ["preview", "--policy-config=policy config.json", "--stack=dev"],
        ["preview", "--policy-config=policy config.json", "--stack=prod"],
    ]
    assert commands[0].args[-1] == "--" and commands[0].report == tmp_path / "r" / "1-dev.json"
    [default] = gate_commands(read_inputs(base), tmp_path / "r")
    assert default.args[0] == "preview" and not any(a.startswith("--stack") for a in default.args)
    state = read_inputs(
        {**base, "PUSHGUARD_ACTION_STATE": "-x.json b/", "PUSHGUARD_ACTION_BASELINE": "old.json"}
    )
    [analyze] = gate_commands(state, tmp_path / "r")
    assert analyze.args[0] == "analyze" and "--baseline=old.json" in analyze.args
    assert analyze.args[-3:] == ["--", "-x.json", "b/"]  # a path is never an option
    for bad in (
        {"PUSHGUARD_ACTION_STACKS": "dev", "PUSHGUARD_ACTION_STATE": "s/"},
        {"PUSHGUARD_ACTION_BASELINE": "old.json"},
    ):
        with pytest.raises(InputError):
            read_inputs({**base, **bad})


def test_sarif_logs_merge_into_one_with_a_run_each(tmp_path: Path) -> None:
    logs = []
    for name in ("dev", "prod"):
        run = {"automationDetails": {"id": f"pushguard-preview/p/{name}/"}}
        log = {"version": "2.1.0", "$schema": "s", "runs": [run]}
        logs.append((name, tmp_path / f"{name}.sarif"))
        logs[-1][1].write_text(json.dumps(log))
    missing = ("gone", tmp_path / "missing.sarif")
    merged = json.loads(merge_sarif([logs[0], missing, logs[1]]))
    assert merged == {
        "version": "2.1.0",
        "$schema": "s",
        "runs": [
            {"automationDetails": {"id": "pushguard-preview/p/dev/"}},
            {"automationDetails": {"id": "pushguard-preview/p/prod/"}},
        ],
    }
    assert json.loads(merge_sarif([]))["runs"] == []


def test_every_merged_run_has_a_category_of_its_own(tmp_path: Path) -> None:
    """The same stack by two names is one run; two failed runs (a bare ``pushguard-preview/``:
    no stack named) each get their label's category: code scanning needs them distinct."""
    logs = []
    for index, (label, category) in enumerate(
        [
            ("dev", "pushguard-preview/p/dev/"),
            ("p/dev", "pushguard-preview/p/dev/"),
            ("nope", "pushguard-preview/"),
            ("nope 2", "pushguard-preview/"),
        ]
    ):
        path = tmp_path / f"{index}.sarif"
        path.write_text(
            json.dumps({"version": "2.1.0", "runs": [{"automationDetails": {"id": category}}]})
        )
        logs.append((label, path))
    runs = json.loads(merge_sarif(logs))["runs"]
    assert [r["automationDetails"]["id"] for r in runs] == [
        "pushguard-preview/p/dev/",
        "pushguard-preview/nope/",
        "pushguard-preview/nope_2/",
    ]


def test_outputs_cannot_end_their_own_value(tmp_path: Path) -> None:
    path = tmp_path / "out"
    write_outputs(path, {"sarif": "a\nexit-code=0", "exit-code": "1"})
    assert read_environment_file(path.read_text()) == {"sarif": "a\nexit-code=0", "exit-code": "1"}


def test_a_resource_name_holding_colons_is_named_whole() -> None:
    """A name may hold ``::`` (Pulumi's URN format): the summary names the subscription, not a
    topic whose type and name the name spells."""
    name = "real-bad::gcp:pubsub/topic:Topic::payments-ok"
    summary = job_summary("preview", [GateRun("prod", 1, preview_report(violation(name)))], 1)
    line = next(x for x in summary.splitlines() if x.startswith("- **mandatory**"))
    assert "gcp\\:pubsub\\/subscription\\:Subscription real\\-bad\\:\\:gcp" in line, line


def test_disabled_policies_are_named_in_the_summary() -> None:
    report = {**preview_report(), "disabledPolicies": ["push-endpoint-https", "push-auth-oidc"]}
    summary = job_summary("preview", [GateRun("prod", 0, report)], 0)
    disabled = summary.split("### Disabled policies\n\n", 1)[1].splitlines()[0]
    assert disabled == (
        "- shop\\/prod: disabled by the policy config: push\\-endpoint\\-https, push\\-auth\\-oidc"
    )
