"""Issue 34, item 5, through ``pushguard analyze`` as users run it: analyze never speaks of a
preview, and under ``unknownAtPreview: enforce`` a value the state does not show (an encrypted
secret) ends the run with exit 2 naming each check that could not run, never "passed"; a shown
secret is hidden as a whole value and a whole token, never as a word inside another name."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.analyze.test_analyze import analyze, write
from tests.analyze.test_audit_of_record import ENFORCE, SUB, encrypted, shown, state

PREVIEW = re.compile(r"preview", re.IGNORECASE)


def _speaks_of_a_preview(text: str) -> list[str]:
    """The lines of ``text`` that say "preview", the setting's name ``unknownAtPreview`` apart."""
    return [
        line for line in text.splitlines() if PREVIEW.search(line.replace("unknownAtPreview", ""))
    ]


def _statements(output_format: str, out: str) -> str:
    """What the run says (SARIF: its results and notifications, not the pack's rule metadata,
    which lists every enforcement point of a rule)."""
    if output_format != "sarif":
        return out
    runs = json.loads(out)["runs"]
    return json.dumps([{k: v for k, v in run.items() if k != "tool"} for run in runs])


@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_an_encrypted_push_config_is_never_said_to_be_a_preview(
    tmp_path: Path, output_format: str
) -> None:
    path = write(tmp_path, "prod.json", state(encrypted()))
    code, out, err = analyze(path, "-f", output_format)
    assert code == 0, err
    said = _statements(output_format, out) + err
    assert not _speaks_of_a_preview(said), _speaks_of_a_preview(said)
    assert "from policy pack 'pushguard@v" in said and "' on this state: orders: " in said
    assert "pushConfig.pushEndpoint is encrypted in the state" in said
    assert "set unknownAtPreview to enforce to fail the analysis instead" in said


@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_under_enforce_an_encrypted_value_is_not_checked_exit_2_naming_each(
    tmp_path: Path, output_format: str
) -> None:
    path = write(tmp_path, "prod.json", state(encrypted()))
    config = write(tmp_path, "enforce.json", ENFORCE)
    code, out, err = analyze(path, "-f", output_format, "--policy-config", config)
    assert code == 2, (out, err)
    for policy in ("push-endpoint-https", "push-sa-same-project"):
        assert f"prod.json: {policy} on gcp:pubsub/subscription:Subscription orders" in err
    assert "unknownAtPreview is enforce" in err and "--show-secrets" in err
    said = _statements(output_format, out) + err
    assert not _speaks_of_a_preview(said), _speaks_of_a_preview(said)
    if output_format == "text":
        assert "Analysis INCOMPLETE" in out and "passed" not in out
    elif output_format == "json":
        report = json.loads(out)
        assert report["summary"]["exitCode"] == 2 and report["summary"]["unjudged"] >= 2
        assert report["stacks"][0]["summary"]["exitCode"] == 2
    else:
        [invocation] = json.loads(out)["runs"][0]["invocations"]
        assert invocation["exitCode"] == 2
        texts = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]]
        assert (
            "not checked: push-endpoint-https on gcp:pubsub/subscription:Subscription orders"
            in texts
        )


def test_under_enforce_an_advisory_policy_that_could_not_check_never_passes(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "prod.json", state(encrypted()))
    config = write(
        tmp_path, "enforce.json", {"push-agent-token-creator": {"unknownAtPreview": "enforce"}}
    )
    code, out, err = analyze(path, "--policy-config", config)
    assert code == 2, (out, err)
    assert "push-agent-token-creator on gcp:pubsub/subscription:Subscription orders" in err
    assert "Analysis passed" not in out and "Analysis INCOMPLETE" in out


TOKEN = "s3cr3t-t0ken-5f1d2c"


def _named(document: dict[str, Any], name: str) -> dict[str, Any]:
    """``document`` with its subscription named ``name`` and a secret label ``relay``, and a
    topic named like the push token's (plain) audience."""
    document = copy.deepcopy(document)
    resources = document["deployment"]["resources"]
    [sub] = [r for r in resources if r["urn"] == SUB]
    sub["urn"] = SUB.replace("::orders", f"::{name}")
    for values in (sub["inputs"], sub["outputs"]):
        values["name"] = name
        values["labels"] = {"team": shown("relay")}
    topic = {
        **{k: sub[k] for k in ("custom", "parent", "provider")},
        "urn": SUB.replace(
            "gcp:pubsub/subscription:Subscription::orders", "gcp:pubsub/topic:Topic::orders-topic"
        ),
        "id": "projects/acme-orders/topics/orders-topic",
        "type": "gcp:pubsub/topic:Topic",
        "inputs": {"name": "orders-topic"},
        "outputs": {"name": "orders-topic"},
    }
    resources.append(topic)
    return document


@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_a_shown_secret_is_hidden_whole_never_inside_another_name(
    tmp_path: Path, output_format: str
) -> None:
    endpoint = f"http://relay.acme.example/hooks/{TOKEN}/push"
    declared = {
        "pushEndpoint": shown(endpoint),
        "oidcToken": {
            "serviceAccountEmail": "push@acme-orders.iam.gserviceaccount.com",
            "audience": "orders-topic",
        },
    }
    # the engine keeps the whole pushConfig output secret, the plain audience inside it too
    plain = {**declared, "pushEndpoint": endpoint}
    document = _named(state(declared, outputs_push_config=shown(plain)), "relay-push")
    code, out, err = analyze(write(tmp_path, "prod.json", document), "-f", output_format)
    assert code == 1, err
    said = out + err
    assert "relay-push" in said and "[secret]-push" not in said, said[-2000:]
    assert TOKEN not in said and "relay.acme.example" not in said
    assert not re.search(r"(?<![\w-])relay(?![\w-])", said)
    if output_format != "sarif":  # SARIF shows findings only; the topic has none
        assert "orders-topic" in said
    if output_format == "json":
        resources = {r["name"]: r for r in json.loads(out)["stacks"][0]["resources"]}
        assert resources["relay-push"]["inputs"]["labels"] == {"team": "[secret]"}
        assert resources["orders-topic"]["inputs"] == {"name": "orders-topic"}


READING_PACK = """\
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def validate(args, report_violation):
    if args.resource_type == "gcp:pubsub/subscription:Subscription":
        if not args.props["pushConfig"]["pushEndpoint"].startswith("https://"):
            report_violation("not https")


PolicyPack(
    name="reading",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[ResourceValidationPolicy(
        name="reads-endpoint", description="Reads the endpoint.", validate=validate)],
)
"""


def test_another_packs_unknown_value_is_said_of_the_state(tmp_path: Path) -> None:
    """pulumi-policy's own words for a policy that met an unknown value ("can't run policy ...
    during preview: string value at .pushConfig can't be known during preview")."""
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (pack / "__main__.py").write_text(READING_PACK)
    path = write(tmp_path, "prod.json", state(encrypted()))
    code, out, err = analyze(path, "-f", "json", "--policy-pack", pack)
    assert code == 0, err
    [found] = json.loads(out)["stacks"][0]["violations"]
    assert found["message"] == (
        "can't run policy 'reads-endpoint' from policy pack 'reading@v0.0.1' on this state: "
        "string value at .pushConfig is encrypted in the state"
    )
