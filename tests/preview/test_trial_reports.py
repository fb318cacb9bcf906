"""Issue 34, item 5, through `pushguard preview` as users run it: redaction hides secrets as whole
values and whole tokens, never a word inside another name, and never leaks one (text, JSON,
SARIF; pushguard's pack and a pack that quotes what it refuses); a resource declared with
``import_`` is shown as an import, and what it keeps from the cloud (``ignore_changes``) is judged
as unknown, never as the declared value."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.preview.conftest import ROOT
from tests.preview.test_report_redaction import leaky_pack

TOKEN = "s3cr3t-t0ken-5f1d2c"
HOST = "hooks.acme.example"

WORDS_PROGRAM = f"""\
import pulumi
import pulumi_gcp as gcp

topic = gcp.pubsub.Topic("orders-topic", labels={{
    "team": pulumi.Output.secret("relay"),
    "short": pulumi.Output.secret("1"),
    "plain": "1",
}})
gcp.pubsub.Subscription("relay-push", topic=topic.name, push_config={{
    "push_endpoint": pulumi.Output.secret("http://{HOST}/hooks/{TOKEN}/push"),
    "oidc_token": {{"service_account_email": "pusher@acme-orders.iam.gserviceaccount.com",
                   "audience": "orders-topic"}},
}})
"""

QUOTING_PACK = """\
from urllib.parse import urlparse

from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def validate(args, report_violation):
    props = args.props
    if args.resource_type == "gcp:pubsub/subscription:Subscription":
        endpoint = props["pushConfig"]["pushEndpoint"]
        report_violation(
            f"{args.name}: endpoint {endpoint} is refused; its token is {endpoint.split('/')[4]}."
        )
        report_violation(f"{args.name}: see https://docs.example/why{urlparse(endpoint).path}")
    if args.resource_type == "gcp:pubsub/topic:Topic":
        labels = props["labels"]
        report_violation(
            f"{args.name}: team {labels['team']} and short '{labels['short']}' are refused"
        )


PolicyPack(
    name="quoting",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[ResourceValidationPolicy(
        name="quoting", description="Quotes what it refuses.", validate=validate)],
)
"""

ALONE = re.compile(r"(?<![\w-])relay(?![\w-])", re.IGNORECASE)
"""The secret ``relay`` standing as a word of its own (not inside ``relay-push``)."""


def quoting_pack(tmp_path: Path) -> Path:
    pack = leaky_pack(tmp_path)
    (pack / "__main__.py").write_text(QUOTING_PACK)
    return pack


@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_a_secret_hides_whole_values_and_tokens_never_a_word_inside_a_name(
    preview, make_project, tmp_path: Path, output_format: str
) -> None:
    folder = make_project(WORDS_PROGRAM)
    for pack in (None, quoting_pack(tmp_path)):
        options = (
            ["--policy-pack", str(pack)]
            if pack
            else ["--policy-config", str(ROOT / "policy-config.json")]
        )
        run = preview(str(folder), "--format", output_format, *options)
        assert run.exit_code == 1, run.stdout + run.stderr
        shown = run.stdout + run.stderr
        # no over-redaction: a name that merely holds a secret, or equals a plain value inside
        # a secret output (the audience), is shown whole
        assert "relay-push" in shown and "[secret]-push" not in shown, shown[-3000:]
        assert "[secret]-topic" not in shown
        if output_format != "sarif" or pack is not None:  # SARIF shows findings only
            assert "orders-topic" in shown
        # no leak: the endpoint, its host, its token (alone, or in a path the message quotes)
        for planted in (TOKEN, HOST, "/hooks/"):
            assert planted not in shown, (planted, output_format, pack)
        assert not ALONE.search(shown), ALONE.search(shown)
        assert "'1'" not in shown, "a short secret the message quotes is hidden"
        if pack is not None:
            assert "refused; its token is [secret]." in shown
            assert "short [secret] are refused" in shown
        if output_format == "json":
            report = json.loads(run.stdout)
            by_name = {r["name"]: r for r in report["resources"]}
            labels = by_name["orders-topic"]["inputs"]["labels"]
            assert labels == {"team": "[secret]", "short": "[secret]", "plain": "[secret]"}, (
                "a plain value equal to a secret is hidden whole"
            )
            oidc = by_name["relay-push"]["inputs"]["pushConfig"]["oidcToken"]
            assert oidc["audience"] == "orders-topic"


# --- imports ------------------------------------------------------------------------------------

IMPORTS_PROGRAM = """\
import pulumi
import pulumi_gcp as gcp

TOPIC = "projects/acme-orders/topics/orders"
OIDC = {"service_account_email": "pusher@acme-orders.iam.gserviceaccount.com",
        "audience": "orders"}

def imported(name, **options):
    return pulumi.ResourceOptions(import_=f"projects/acme-orders/subscriptions/{name}", **options)

# keeps the cloud's push config: the declared (http) one is not what will exist
gcp.pubsub.Subscription("legacy", topic=TOPIC,
    push_config={"push_endpoint": "http://legacy.acme.example/push", "oidc_token": OIDC},
    opts=imported("legacy", ignore_changes=["pushConfig"]))
# declared as a pull subscription, imported from whatever the cloud holds
gcp.pubsub.Subscription("kept", topic=TOPIC, opts=imported("kept", ignore_changes=["pushConfig"]))
# imported, then updated to the declared config: that one is judged
gcp.pubsub.Subscription("adopted", topic=TOPIC,
    push_config={"push_endpoint": "http://adopted.acme.example/push", "oidc_token": OIDC},
    opts=imported("adopted"))
"""


def _https(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [
        v
        for v in report["violations"]
        if v["policy"] == "push-endpoint-https" and v["urn"].endswith(f"::{name}")
    ]


def test_an_import_is_shown_as_an_import_and_judged_as_it_will_be(
    preview, make_project, tmp_path: Path
) -> None:
    folder = make_project(IMPORTS_PROGRAM)
    config = ["--policy-config", str(ROOT / "policy-config.json")]
    text = preview(str(folder), *config)
    assert text.exit_code == 1, text.stdout + text.stderr
    assert (
        "= gcp:pubsub/subscription:Subscription legacy import "
        "projects/acme-orders/subscriptions/legacy" in text.stdout
    )
    assert "Resources: 1 to create, 3 to import." in text.stdout
    assert "ignoreChanges pushConfig" in text.stdout, "the note says what is kept"

    report = preview(str(folder), "-f", "json", *config).json()
    by_name = {r["name"]: r for r in report["resources"]}
    for name in ("legacy", "kept", "adopted"):
        assert by_name[name]["operation"] == "import"
        assert by_name[name]["options"]["import"] == f"projects/acme-orders/subscriptions/{name}"
    assert report["summary"]["import"] == 3 and report["summary"]["create"] == 1
    # what the cloud keeps is unknown to an offline preview, never the declared value
    assert by_name["legacy"]["inputs"]["pushConfig"] == "[unknown]"
    assert by_name["kept"]["inputs"]["pushConfig"] == "[unknown]"
    for name in ("legacy", "kept"):
        [found] = _https(report, name)
        assert found["level"] == "advisory" and "can't run policy" in found["message"], found
        assert "uses http://" not in found["message"]
    [adopted] = _https(report, "adopted")
    assert adopted["level"] == "mandatory" and "uses http://" in adopted["message"]

    sarif = preview(str(folder), "-f", "sarif", *config).json()
    results = [
        r
        for r in sarif["runs"][0]["results"]
        if r["ruleId"] == "push-endpoint-https"
        and r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].endswith("::adopted")
    ]
    assert results and all(r["properties"] == {"operation": "import"} for r in results)
    assert all("adopted (import): " in r["message"]["text"] for r in results)


def test_under_enforce_what_an_import_keeps_from_the_cloud_fails(
    preview, make_project, tmp_path: Path
) -> None:
    folder = make_project(IMPORTS_PROGRAM)
    config = tmp_path / "enforce.json"
    config.write_text(json.dumps({"push-endpoint-https": {"unknownAtPreview": "enforce"}}))
    report = preview(str(folder), "-f", "json", "--policy-config", str(config)).json()
    for name in ("legacy", "kept"):
        [found] = _https(report, name)
        assert found["level"] == "mandatory" and "could not be verified" in found["message"]


def test_a_subscription_imported_whole_cannot_be_checked_offline(preview, make_project) -> None:
    program = IMPORTS_PROGRAM.replace('ignore_changes=["pushConfig"]', 'ignore_changes=["*"]')
    run = preview(str(make_project(program)), "-f", "json")
    assert run.exit_code == 2, run.stdout + run.stderr
    error = run.json()["error"]["message"]
    assert "legacy (import ID projects/acme-orders/subscriptions/legacy)" in error
    assert "kept (import ID" in error and "pulumi preview --policy-pack" in error
