"""`pushguard preview` as a gate: it fails closed whatever the program does, machine output always
parses, the report is always written, and the same input gives the same bytes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.mock_runtime.program import describe_failure
from tests.preview.conftest import ROOT
from tests.sdk import SDK_VERSION, WAITS_ON_EXIT

CONFIG = str(ROOT / "policy-config.json")

# A raw subscription that breaks a mandatory rule (plain http), registered first.
VIOLATING = (
    "import os, signal, sys\n"
    "import pulumi_gcp as gcp\n"
    "gcp.pubsub.Subscription('orders', topic='orders', push_config={\n"
    "    'push_endpoint': 'http://hooks.example.com/push',\n"
    "    'oidc_token': {'service_account_email': 'p@acme-orders.iam.gserviceaccount.com'}})\n"
)
ENDINGS = {
    "returns": "",
    "os._exit(0)": "os._exit(0)\n",
    "os._exit(1)": "os._exit(1)\n",
    "SIGKILL": "os.kill(os.getpid(), signal.SIGKILL)\n",
    "SIGTERM": "os.kill(os.getpid(), signal.SIGTERM)\n",
    "exception": "raise RuntimeError('boom')\n",
    "sys.exit(0)": "sys.exit(0)\n",
    "sys.exit(None)": "sys.exit()\n",
}
NOISE = {
    "print": "print('{\"resources\": []}')\n",
    "fd 1": "os.write(1, b'not json\\n')\n",
    "fd 2": "os.write(2, b'to stderr\\n')\n",
    "stdout closed": "sys.stdout.flush(); os.close(1)\n",
}


def _program(noise: list[str], ending: str) -> str:
    return VIOLATING + "".join(NOISE[n] for n in noise) + ENDINGS[ending]


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_no_ending_of_the_program_turns_a_violation_into_exit_0(
    preview, make_project, tmp_path: Path, ending: str
) -> None:
    report = tmp_path / "report.sarif"
    run = preview(
        str(make_project(_program(["print", "fd 2"], ending))),
        "--format",
        "json",
        "--output",
        str(report),
    )
    expected = 1 if ending == "returns" else 2
    assert run.exit_code == expected, run.stdout + run.stderr
    assert report.is_file(), "the requested report is written on every exit code"
    written = json.loads(report.read_text())
    assert written["summary"]["exitCode"] == expected
    if expected == 2:
        assert written["error"]["message"]
        if ending == "exception" or (
            ending.startswith("sys.exit") and SDK_VERSION >= WAITS_ON_EXIT
        ):
            # The program raised or exited after registering: what it registered is judged too.
            assert {v["policy"] for v in written["violations"]} >= {"push-endpoint-https"}
    else:
        assert {v["policy"] for v in written["violations"]} >= {"push-endpoint-https"}


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    noise=st.lists(st.sampled_from(sorted(NOISE)), max_size=3, unique=True),
    ending=st.sampled_from(sorted(ENDINGS)),
    output_format=st.sampled_from(["json", "sarif"]),
)
def test_machine_output_always_parses_and_never_passes(
    preview, make_project, tmp_path_factory: pytest.TempPathFactory, noise, ending, output_format
) -> None:
    folder = tmp_path_factory.mktemp("gate")
    run = preview(str(make_project(_program(noise, ending), folder=folder)), "-f", output_format)
    assert run.exit_code in (1, 2), run.stderr
    document = json.loads(run.stdout)  # the program's own prints never reach it
    if output_format == "sarif":
        (invocation,) = document["runs"][0]["invocations"]
        assert invocation["executionSuccessful"] is (run.exit_code != 2)
    else:
        assert document["summary"]["exitCode"] == run.exit_code


def test_program_output_is_kept_in_the_report_not_on_stdout(preview, make_project) -> None:
    run = preview(str(make_project(_program(["print", "fd 2"], "returns"))), "-f", "json")
    report = json.loads(run.stdout)
    assert report["programOutput"]["stdout"] == '{"resources": []}\n'
    assert report["programOutput"]["stderr"] == "to stderr\n"
    text = preview(str(make_project(_program(["print"], "returns"), folder="text")))
    assert "program stdout:" in text.stdout and '{"resources": []}' in text.stdout


def test_hard_exit_is_named_in_the_error(preview, make_project) -> None:
    run = preview(str(make_project(_program([], "os._exit(0)"))))
    assert run.exit_code == 2
    assert "exited with status 0 before the program finished" in run.stderr
    killed = preview(str(make_project(_program([], "SIGKILL"), folder="killed")))
    assert killed.exit_code == 2 and "SIGKILL" in killed.stderr


def test_a_program_that_hangs_is_stopped(preview, make_project) -> None:
    run = preview(str(make_project("import time\ntime.sleep(60)\n")), "--timeout", "2")
    assert run.exit_code == 2 and "did not finish within 2 s" in run.stderr


@pytest.mark.parametrize("output_format", ["json", "sarif", "text"])
def test_three_runs_give_byte_identical_reports(
    preview, tmp_path: Path, output_format: str
) -> None:
    outputs = []
    for attempt in range(3):
        path = tmp_path / f"{attempt}.out"
        run = preview(
            "--stack", "legacy", "--policy-config", CONFIG, "-f", output_format, "-o", str(path)
        )
        assert run.exit_code == 1
        outputs.append(path.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]


def test_component_refusal_reaches_sarif_at_the_users_line(
    preview, make_project, tmp_path: Path
) -> None:
    program = (
        "from pushguard.components import PushSubscription\n"
        "\n"
        "PushSubscription('orders', {'topic': 'orders', 'target': {'kind': 'external'},\n"
        "    'push_endpoint': 'http://hooks.example.com/push'})\n"
    )
    sarif = tmp_path / "out.sarif"
    run = preview(str(make_project(program)), "-f", "sarif", "-o", str(sarif))
    assert run.exit_code == 1
    (result,) = json.loads(sarif.read_text())["runs"][0]["results"]
    assert result["ruleId"] == "push-endpoint-https" and result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]
    assert region["region"]["startLine"] == 3
    assert region["artifactLocation"]["uri"].endswith("__main__.py")


def test_failure_text_keeps_the_components_message(tmp_path: Path) -> None:
    """`raise ... from None` ends the chain: the leftover error it replaced is not reported."""

    def failing() -> None:
        try:
            {}["topic"]  # a leftover internal error, handled
        except KeyError:
            raise ValueError("push_endpoint: check the spelling") from None

    try:
        failing()
    except ValueError as error:
        failure = describe_failure(error, tmp_path)
    assert failure.kind == "ValueError"
    assert failure.message == "push_endpoint: check the spelling"


def test_sarif_of_a_failed_run_marks_the_invocation_unsuccessful(
    preview, make_project, tmp_path: Path
) -> None:
    sarif = tmp_path / "out.sarif"
    run = preview(
        str(make_project("raise RuntimeError('boom')\n")), "-f", "sarif", "-o", str(sarif)
    )
    assert run.exit_code == 2
    (invocation,) = json.loads(sarif.read_text())["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "boom" in note["message"]["text"]


def test_debug_shows_the_programs_traceback(preview, make_project) -> None:
    folder = make_project("def helper():\n    raise RuntimeError('boom')\nhelper()\n")
    quiet = preview(str(folder))
    assert "Traceback" not in quiet.stderr
    loud = preview(str(folder), "--debug")
    assert "Traceback" in loud.stderr and "helper()" in loud.stderr


def test_short_help_flag(preview) -> None:
    run = preview("-h")
    assert run.exit_code == 0 and "--policy-pack" in run.stdout


def test_a_resource_made_in_a_helper_keeps_the_users_call_stack(
    preview, make_project, tmp_path: Path
) -> None:
    program = (
        "import pulumi_gcp as gcp\n"
        "\n"
        "def subscribe(name):\n"
        "    return gcp.pubsub.Subscription(name, topic='t', push_config={\n"
        "        'push_endpoint': 'http://hooks.example.com/' + name})\n"
        "\n"
        "for name in ['a', 'b']:\n"
        "    subscribe(name)\n"
    )
    sarif = tmp_path / "out.sarif"
    run = preview(str(make_project(program)), "-f", "sarif", "-o", str(sarif))
    assert run.exit_code == 1
    results = [
        r
        for r in json.loads(sarif.read_text())["runs"][0]["results"]
        if r["ruleId"] == "push-endpoint-https"
    ]
    assert len(results) == 2
    for result in results:
        assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
        lines = [
            rel["physicalLocation"]["region"]["startLine"] for rel in result["relatedLocations"]
        ]
        assert lines == [8, 4]  # the loop's call, then the helper's constructor call


def test_what_was_not_checked_is_listed_with_the_setting_that_enables_it(
    preview, tmp_path: Path
) -> None:
    # The dev stack's components are given the project number: their checks run without config.
    dev = preview("--stack", "dev", "-f", "json").json()
    assert not any(n["policy"] == "push-agent-token-creator" for n in dev["notChecked"])
    bare = preview("--stack", "legacy", "-f", "json").json()
    listed = {(n["policy"], n["urn"].rsplit("::", 1)[1]) for n in bare["notChecked"]}
    assert ("push-agent-token-creator", "payments-settled") in listed
    numbers = [n for n in bare["notChecked"] if n["policy"] == "push-agent-token-creator"]
    assert all("top-level projectNumbers" in n["reason"] for n in numbers)
    configured = preview("--stack", "legacy", "--policy-config", CONFIG, "-f", "json").json()
    still = {(n["policy"], n["urn"].rsplit("::", 1)[1]) for n in configured["notChecked"]}
    assert ("push-agent-token-creator", "payments-settled") not in still  # acme-payments' number
    sarif = tmp_path / "out.sarif"
    preview("--stack", "legacy", "-f", "sarif", "-o", str(sarif))
    (invocation,) = json.loads(sarif.read_text())["runs"][0]["invocations"]
    notes = invocation["toolConfigurationNotifications"]
    assert len(notes) == len(bare["notChecked"])
    assert notes[0]["associatedRule"]["id"] == "push-agent-token-creator"
    text = preview("--stack", "legacy")
    assert "Not checked (" in text.stdout


def test_a_settings_mistake_is_one_usage_error_not_a_violation_per_subscription(
    preview, tmp_path: Path
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"push-endpoint-https": {"exemptEndpointPrefixes": ["https://"]}}))
    run = preview("--stack", "dev", "--policy-config", str(config), "-f", "json")
    assert run.exit_code == 2
    report = run.json()
    assert report["violations"] == []
    assert "exemptEndpointPrefixes" in report["error"]["message"]
    assert str(config) in report["error"]["message"]


def test_a_program_hiding_behind_a_background_process_is_stopped(preview, make_project) -> None:
    """A forked process that keeps the child's pipe open cannot hold the preview past its
    time-out, and it is stopped with the child."""
    program = VIOLATING + "if os.fork() == 0:\n    import time\n    time.sleep(60)\n"
    started = time.monotonic()
    run = preview(str(make_project(program)), "--timeout", "30")
    assert run.exit_code == 1, run.stderr
    assert time.monotonic() - started < 25  # it did not wait for the background process


def test_cant_run_at_preview_points_at_the_subscriptions_line(preview, make_project) -> None:
    program = (
        "import pulumi_gcp as gcp\n"
        "service = gcp.cloudrunv2.get_service_output(name='orders', location='europe-west1')\n"
        "gcp.pubsub.Subscription('orders', topic='orders', push_config={\n"
        "    'push_endpoint': service.uri,\n"
        "    'oidc_token': {'service_account_email': 'p@acme-orders.iam.gserviceaccount.com'}})\n"
    )
    report = preview(str(make_project(program)), "-f", "json").json()
    cant_run = [v for v in report["violations"] if "during preview" in v["message"]]
    assert cant_run, report["violations"]
    for violation in cant_run:
        assert violation["urn"].endswith("::orders")
        assert violation["location"]["line"] == 3
        assert violation["location"]["path"].endswith("__main__.py")


FORGE = (
    "import pulumi\n"
    "from pulumi.runtime import settings\n"
    "from pulumi.runtime.proto import resource_pb2\n"
    "# the stack's outputs, registered by hand before anything else: 'the program has finished'\n"
    "settings.get_monitor().RegisterResourceOutputs(resource_pb2.RegisterResourceOutputsRequest(\n"
    "    urn=f'urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::pulumi:pulumi:Stack::'\n"
    "        f'{pulumi.get_project()}-{pulumi.get_stack()}'))\n"
)


def test_a_forged_end_of_program_does_not_hide_what_follows(preview, make_project) -> None:
    """The program can tell the engine it has finished (the stack's outputs registered by hand,
    over the monitor); what it registers afterwards is still judged."""
    run = preview(str(make_project(FORGE + VIOLATING)), "-f", "json")
    assert run.exit_code == 1, run.stdout + run.stderr
    assert "push-endpoint-https" in {v["policy"] for v in run.json()["violations"]}


def test_sigterm_stops_the_program_and_the_pack_and_still_writes_the_report(
    make_project, tmp_path: Path
) -> None:
    """A cancelled CI job: exit 2, the report written, no process of the preview left behind."""
    import os
    import signal
    import subprocess
    import sys

    folder = make_project("import time\nwhile True:\n    time.sleep(0.1)\n")
    report = tmp_path / "report.json"
    marker = str(folder)
    preview = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "pushguard"),
            "preview",
            marker,
            "-f",
            "json",
            "-o",
            str(report),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _children_of(preview.pid):
        time.sleep(0.2)
    time.sleep(1)
    children = _children_of(preview.pid)
    assert children, "the preview started no child process"
    preview.send_signal(signal.SIGTERM)
    _, stderr = preview.communicate(timeout=60)
    assert preview.returncode == 2, stderr
    assert "stopped by SIGTERM" in json.loads(report.read_text())["error"]["message"]
    time.sleep(0.5)
    alive = [pid for pid in children if os.path.exists(f"/proc/{pid}")]
    assert not alive, f"left behind: {alive}"


def _children_of(pid: int) -> list[int]:
    from pathlib import Path as P

    found = []
    for status in P("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line
            )
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


PENDING_HTTP = (
    "import asyncio, os, threading, time\n"
    "import pulumi\n"
    "import pulumi_gcp as gcp\n"
    "gcp.pubsub.Topic('orders')\n"
    "threading.Thread(target=lambda: (time.sleep(3), os._exit(EXIT)), daemon=True).start()\n"
    "endpoint = pulumi.Output.from_input(asyncio.sleep(30, result='http://hooks.example.com/p'))\n"
    "gcp.pubsub.Subscription('late', topic='orders', push_config={'push_endpoint': endpoint})\n"
)


@pytest.mark.parametrize("status", [0, 1])
def test_an_exit_while_a_registration_waits_is_exit_2(preview, make_project, status: int) -> None:
    """The program's function has returned (the SDK has registered the stack's outputs) but a
    registration still waits on an Output when a thread calls ``os._exit``: the ``http://``
    subscription never reached the engine, so the run is not a pass (found by a README trial:
    exit 0, "Preview passed")."""
    program = PENDING_HTTP.replace("EXIT", str(status))
    run = preview(str(make_project(program)), "-f", "json")
    assert run.exit_code == 2, run.stdout
    message = run.json()["error"]["message"]
    assert f"exited with status {status} before the program finished" in message, message
