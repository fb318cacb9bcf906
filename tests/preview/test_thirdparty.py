"""pulumi-gcp's own documentation examples, run through `pushguard preview` (tests/thirdparty)."""

from __future__ import annotations

import json
import textwrap
from importlib.metadata import version
from pathlib import Path

import pulumi_gcp
import pytest

from tests.preview.conftest import ROOT

EXAMPLES = ROOT / "tests/thirdparty/pulumi_gcp"
HEADER_LINES = 4
SOURCES = {
    "pubsub_subscription_push": ("pubsub/subscription.py", "Pubsub Subscription Push"),
    "pubsub_subscription_pull": ("pubsub/subscription.py", "Pubsub Subscription Pull"),
    "pubsub_subscription_dead_letter": (
        "pubsub/subscription.py",
        "Pubsub Subscription Dead Letter",
    ),
    "pubsub_subscription_push_bq": ("pubsub/subscription.py", "Pubsub Subscription Push Bq"),
    "cloud_run_service_pubsub": ("cloudrun/service.py", "Cloud Run Service Pubsub"),
}


def docstring_example(relative: str, title: str) -> str:
    """The example's code as the docstring renders it (the docstring is a non-raw string)."""
    source = (Path(pulumi_gcp.__file__).parent / relative).read_text()
    section = source[source.index(f"### {title}\n") :]
    block = textwrap.dedent(section.split("```python\n", 1)[1].split("```", 1)[0])
    return block.encode().decode("unicode_escape")


@pytest.mark.parametrize("folder", sorted(SOURCES))
def test_saved_programs_are_the_published_examples(folder: str) -> None:
    if version("pulumi-gcp") != "10.2.0":
        pytest.skip(f"saved from pulumi-gcp 10.2.0; {version('pulumi-gcp')} is installed")
    saved = (EXAMPLES / folder / "__main__.py").read_text().split("\n", HEADER_LINES)[HEADER_LINES]
    assert saved == docstring_example(*SOURCES[folder])


def findings(report: dict) -> set[tuple[str, str, str]]:
    return {(v["policy"], v["level"], v["urn"].rsplit("::", 1)[-1]) for v in report["violations"]}


@pytest.mark.parametrize(
    ("folder", "exit_code", "expected"),
    [
        ("pubsub_subscription_push", 1, {("push-auth-oidc", "mandatory", "example")}),
        ("pubsub_subscription_pull", 0, set()),
        ("pubsub_subscription_dead_letter", 0, set()),
        ("pubsub_subscription_push_bq", 0, set()),
        # The example's token-creator grant goes to the push-auth account itself, in an
        # authoritative project binding: flagged even without project numbers (issue 13). Its
        # endpoint, computed from the service's statuses[0].url, is undecided at preview, as any
        # value computed from a Cloud Run URL is (issue 20).
        (
            "cloud_run_service_pubsub_patched",
            0,
            {
                ("push-audience-explicit", "advisory", "subscription"),
                ("push-agent-token-creator", "advisory", "subscription"),
                ("push-endpoint-https", "advisory", "subscription"),
            },
        ),
    ],
)
def test_examples_preview_with_the_right_findings(
    preview, folder: str, exit_code: int, expected: set
) -> None:
    run = preview(str(EXAMPLES / folder), "--format", "json")
    assert run.exit_code == exit_code, run.stderr
    assert findings(run.json()) == expected


def test_push_example_without_auth_names_the_missing_field(preview) -> None:
    report = preview(str(EXAMPLES / "pubsub_subscription_push"), "-f", "json").json()
    [finding] = report["violations"]
    assert "pushConfig.oidcToken.serviceAccountEmail" in finding["message"]


def test_bigquery_example_notes_the_placeholder_project_number(preview) -> None:
    report = preview(str(EXAMPLES / "pubsub_subscription_push_bq"), "-f", "json").json()
    assert any("placeholder number 000000000000" in note for note in report["notes"])


def test_cloud_run_example_resolves_the_unknown_account_and_leaves_the_endpoint_undecided(
    preview,
) -> None:
    """At preview the endpoint (``statuses[0].url``) and the account's email are unknown; the
    pack resolves the account through the stack's service account, and says the endpoint, an
    apply on the service's URL, cannot be checked until it is known (issue 20)."""
    report = preview(str(EXAMPLES / "cloud_run_service_pubsub_patched"), "-f", "json").json()
    [sub] = [r for r in report["resources"] if r["type"] == "gcp:pubsub/subscription:Subscription"]
    assert sub["inputs"]["pushConfig"]["pushEndpoint"] == "[unknown]"
    assert sub["inputs"]["pushConfig"]["oidcToken"]["serviceAccountEmail"] == "[unknown]"
    undecided = [v for v in report["violations"] if "preview" in v["message"].lower()]
    assert [v["policy"] for v in undecided] == ["push-endpoint-https"]
    assert "gcp:cloudrun/service:Service 'default'" in undecided[0]["message"]


def test_cloud_run_example_grants_token_creator_to_the_wrong_principal(
    preview, tmp_path: Path
) -> None:
    config = tmp_path / "config.json"
    numbers = {"projectNumbers": {"example-project": "111111111111"}}
    config.write_text(json.dumps({"push-agent-token-creator": numbers}))
    report = preview(
        str(EXAMPLES / "cloud_run_service_pubsub_patched"),
        "--policy-config",
        str(config),
        "-f",
        "json",
    ).json()
    assert ("push-agent-token-creator", "advisory", "subscription") in findings(report)


def test_published_cloud_run_example_raises_as_it_would_under_pulumi(preview) -> None:
    run = preview(str(EXAMPLES / "cloud_run_service_pubsub"))
    assert run.exit_code == 2
    assert "TypeError (at __main__.py:30): Missing required property 'project'" in run.stderr
