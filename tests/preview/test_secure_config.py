"""Issue 13, secrets: a `secure:` stack config value is an unknown secret offline.

Without the stack's secrets provider a `secure:` value cannot be decrypted, so the preview gives it
to the program as Pulumi's unknown sentinel with the key marked secret. `PushSubscription` defers
it like an Output (never validates it as a bad value) and passes it on as a secret unknown, so the
pack sees "known after apply" and reports that it could not verify, never a violation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest

from pushguard.components import PushSubscription, PushSubscriptionInputError
from pushguard.components.inputs import merge_resolved, split_inputs
from pushguard.components.spec import DEFERRED, UNKNOWN_SENTINEL
from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY
from pushguard.preview.project import load_project, load_stack_config
from tests.helpers import PROJECT, UNKNOWN, mocks, secret_unknown_as_sent
from tests.mock_runtime.engine import run_program, run_program_capturing

SUB = "gcp:pubsub/subscription:Subscription"
CIPHERTEXT = "v1:AAAAENpYWhlcnRleHQtb2YtdGhlLWVuZHBvaW50"
TARGET = {"kind": "external"}
SECRET_UNKNOWN = {SIG_KEY: SECRET_SIG, "value": UNKNOWN}


def sent_secret_unknown() -> Any:
    """A secret unknown as this SDK sends it: :data:`SECRET_UNKNOWN`, or the bare sentinel from an
    SDK that drops the secret marker of an unknown value (``secret_unknown_as_sent`` in
    tests/helpers.py names the versions); what the component passes on must be sent as that."""
    sent = secret_unknown_as_sent()
    assert sent in (SECRET_UNKNOWN, UNKNOWN), sent
    return sent


def secure(ciphertext: str = CIPHERTEXT) -> dict[str, str]:
    return {"secure": ciphertext}


def strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


# --- the stack config ---------------------------------------------------------------------------


def test_secure_values_are_the_unknown_sentinel_and_secret_keys(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text(
        json.dumps(
            {
                "name": "team",
                "runtime": "python",
                "config": {"apiKey": {"value": secure("v1:ZGVmYXVsdC1jaXBoZXI=")}},
            }
        )
    )
    (tmp_path / "__main__.py").write_text("")
    (tmp_path / "Pulumi.dev.yaml").write_text(
        json.dumps(
            {
                "config": {
                    "team:endpoint": secure(),
                    "team:hooks": [{"url": "https://x.example", "key": secure()}],
                    "team:plain": "https://orders.example.com/push",
                }
            }
        )
    )
    config, secret_keys = load_stack_config(load_project(tmp_path), "dev")
    assert config["team:endpoint"] == UNKNOWN == UNKNOWN_SENTINEL
    assert config["team:apiKey"] == UNKNOWN, "a project-level secure default too"
    assert json.loads(config["team:hooks"]) == [{"url": "https://x.example", "key": UNKNOWN}]
    assert config["team:plain"] == "https://orders.example.com/push"
    assert secret_keys == {"team:endpoint", "team:hooks", "team:apiKey"}
    text = json.dumps(config)
    assert "[secret]" not in text, "no placeholder that could pass for the value"
    assert "cipher" not in text and "v1:" not in text


# --- the component --------------------------------------------------------------------------------


def component(endpoint: Any, **extra: Any):
    return lambda: PushSubscription(
        "orders", {"topic": "orders", "push_endpoint": endpoint, "target": TARGET, **extra}
    )


def with_secure_endpoint(read: str):
    """A program that reads the secure `team:endpoint` the way `read` says."""

    def program() -> None:
        config = pulumi.Config("team")
        endpoint = {
            "require_secret": lambda: config.require_secret("endpoint"),
            "require": lambda: config.require("endpoint"),
            "get": lambda: config.get("endpoint"),
            "built": lambda: f"https://{config.require('endpoint')}.example.com/push",
            "applied": lambda: config.require_secret("endpoint").apply(lambda e: f"{e}/push"),
        }[read]()
        component(endpoint)()

    return program


@pytest.mark.parametrize("read", ["require_secret", "require", "get", "built", "applied"])
def test_a_secure_endpoint_is_deferred_and_reaches_the_subscription_as_a_secret_unknown(
    read: str,
) -> None:
    run = run_program(
        with_secure_endpoint(read),
        mocks(),
        config={"gcp:project": PROJECT, "team:endpoint": UNKNOWN},
        secret_keys=["team:endpoint"],
    )
    push = run.one(SUB).inputs["pushConfig"]
    assert push["pushEndpoint"] == sent_secret_unknown()
    assert push["oidcToken"]["audience"] == sent_secret_unknown(), "the audience is the endpoint"
    assert "[secret]" not in strings(dict(run.one(SUB).inputs))


def test_other_inputs_from_secure_config_are_deferred_too() -> None:
    def program() -> None:
        config = pulumi.Config("team")
        component(
            "https://orders.example.com/push",
            audience=config.require("audience"),
            labels={"team": "orders", "cost": config.require("cost")},
        )()

    run = run_program(
        program,
        mocks(),
        config={"gcp:project": PROJECT, "team:audience": UNKNOWN, "team:cost": UNKNOWN},
    )
    inputs = run.one(SUB).inputs
    assert inputs["pushConfig"]["oidcToken"]["audience"] == sent_secret_unknown()
    assert inputs["labels"] == sent_secret_unknown()


def test_a_secure_value_where_a_plain_one_is_needed_says_why() -> None:
    graph, error = run_program_capturing(
        component("https://orders.example.com/push", deployers=[UNKNOWN]),
        mocks(),
        config={"gcp:project": PROJECT},
    )
    assert isinstance(error, PushSubscriptionInputError)
    assert "secure: stack config value" in dict(error.problems)["deployers"]
    assert graph.records == []


def test_split_and_merge_treat_the_sentinel_as_deferred() -> None:
    substituted, deferred, problems = split_inputs(
        {
            "topic": "orders",
            "push_endpoint": f"https://{UNKNOWN}/push",
            "target": {"kind": "cloud-run", "name": UNKNOWN, "location": "europe-west1"},
        }
    )
    assert problems == []
    assert substituted["push_endpoint"] is DEFERRED
    assert substituted["target"] == {
        "kind": "cloud-run",
        "name": DEFERRED,
        "location": "europe-west1",
    }
    assert set(deferred) == {("push_endpoint",), ("target", "name")}
    merged = merge_resolved(
        substituted, {("push_endpoint",): UNKNOWN, ("target", "name"): "orders"}
    )
    assert merged["push_endpoint"] is DEFERRED and merged["target"]["name"] == "orders"


# --- end to end through the CLI -----------------------------------------------------------------

PROGRAM = """\
import pulumi
import pulumi_gcp as gcp
from pushguard.components import PushSubscription

config = pulumi.Config()
orders = PushSubscription("orders", {{
    "topic": "orders",
    "push_endpoint": config.{read}("endpoint"),
    "target": {{"kind": "cloud-run", "name": "orders", "location": "europe-west1"}},
}})
gcp.pubsub.Subscription("raw", topic="orders", push_config={{
    "push_endpoint": config.require("endpoint"),
    "oidc_token": {{"service_account_email": "raw-push@acme-orders.iam.gserviceaccount.com"}},
}})
pulumi.export("audience", orders.audience)
pulumi.export("endpoint", config.get_secret("endpoint"))
"""


@pytest.mark.parametrize("read", ["require_secret", "require"])
def test_a_program_with_a_secure_endpoint_previews(preview, make_project, read: str) -> None:
    folder = make_project(
        PROGRAM.format(read=read),
        {"dev": {"gcp:project": "acme-orders", "team:endpoint": secure()}},
    )
    run = preview(str(folder), "--format", "json")
    assert run.exit_code in (0, 1), run.stdout + run.stderr
    report = run.json()
    by_name = {r["name"]: r for r in report["resources"] if r["type"] == SUB}
    for name in ("orders", "raw"):
        assert by_name[name]["inputs"]["pushConfig"]["pushEndpoint"] in ("[secret]", "[unknown]")
    messages = [v["message"] for v in report["violations"]]
    assert not any("absolute URL" in m or "[secret]" in m for m in messages), messages
    endpoint_findings = [v for v in report["violations"] if v["policy"] == "push-endpoint-https"]
    assert all(v["level"] == "advisory" for v in endpoint_findings), "unverified, not violated"
    assert any("not known" in v["message"] for v in endpoint_findings)
    for output_format in ("json", "text", "sarif"):
        out = preview(str(folder), "--format", output_format)
        assert out.exit_code in (0, 1)
        assert "ENpYWhlcnRleHQ" not in out.stdout + out.stderr, (
            f"ciphertext in the {output_format} report"
        )


def test_labels_that_hold_an_output_are_deferred_not_a_crash() -> None:
    run = run_program(
        component(
            "https://orders.example.com/push", labels={"team": pulumi.Output.from_input("orders")}
        ),
        mocks(),
        config={"gcp:project": PROJECT},
    )
    assert run.one(SUB).inputs["labels"] == {"team": "orders"}
