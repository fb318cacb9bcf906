"""Issue 37, item 3: what a data source returns reaches the gate as unknown offline, never as
absent, through ``pushguard preview`` under the engine, as a user runs it.

A push endpoint taken from ``gcp.kms.get_kms_secret(...).plaintext`` (a token name mangling
missed) was absent, so the subscription was judged a pull subscription: exit 0, no finding. A
boolean copied from ``gcp.pubsub.get_subscription(...)`` was absent too. An unknown endpoint or
setting is a "can't run during preview" advisory (``unknownAtPreview: warn``, the default); with
``unknownAtPreview: enforce`` the finding is mandatory and the run is exit 2 naming the data source
(tests/engine/test_values_preview.py), as for any value the real preview would know.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pushguard.rules import RULES
from tests.engine.conftest import preview
from tests.sdk import SDK_VERSION, WHOLLY_UNKNOWN

OIDC = "{'service_account_email': 'push@acme-orders.iam.gserviceaccount.com', 'audience': 'orders'}"
KEY = "projects/acme-orders/locations/global/keyRings/push/cryptoKeys/endpoint"
KMS = {
    "plain": f"gcp.kms.get_kms_secret(crypto_key='{KEY}', ciphertext='CiQAbc').plaintext",
    "output": f"gcp.kms.get_kms_secret_output(crypto_key='{KEY}', ciphertext='CiQAbc').plaintext",
}
COPIED = (
    "import pulumi_gcp as gcp\n"
    "PUSH = {'push_endpoint': 'https://orders-3kq2x7ab9c-ew.a.run.app/push', 'oidc_token': "
    + OIDC
    + "}\n"
    "src = gcp.pubsub.get_subscription(name='template')\n"
    "out = gcp.pubsub.get_subscription_output(name='template')\n"
    "gcp.pubsub.Subscription('plain', topic='orders', push_config=PUSH,\n"
    "    enable_exactly_once_delivery=src.enable_exactly_once_delivery)\n"
    "gcp.pubsub.Subscription('output', topic='orders', push_config=PUSH,\n"
    "    enable_exactly_once_delivery=out.enable_exactly_once_delivery)\n"
    "gcp.pubsub.Subscription('applied', topic='orders', push_config=PUSH,\n"
    "    enable_exactly_once_delivery=out.apply(lambda s: s.enable_exactly_once_delivery))\n"
    "gcp.pubsub.Subscription('literal', topic='orders', push_config=PUSH,\n"
    "    enable_exactly_once_delivery=False)\n"
)


def _subscription(endpoint: str) -> str:
    return (
        "import pulumi\nimport pulumi_gcp as gcp\n"
        f"gcp.pubsub.Subscription('orders', topic='orders', push_config={{\n"
        f"    'push_endpoint': {endpoint}, 'oidc_token': {OIDC}}})\n"
    )


def _enforce(folder: Path) -> str:
    path = folder / "enforce.json"
    path.write_text(json.dumps({rule.id: {"unknownAtPreview": "enforce"} for rule in RULES}))
    return str(path)


def _findings(report: dict[str, Any], policy: str) -> dict[str, tuple[str, str]]:
    """Subscription name -> (level, message) of ``policy``'s findings."""
    return {
        v["urn"].rsplit("::", 1)[1]: (v["level"], v["message"])
        for v in report["violations"]
        if v["policy"] == policy
    }


def _inputs(report: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [r for r in report["resources"] if r["name"] == name]
    return dict(found["inputs"])


@pytest.mark.parametrize("form", sorted(KMS))
def test_a_kms_secret_as_the_push_endpoint_is_unknown_not_a_pull_subscription(
    team_project: Callable[..., Path], form: str
) -> None:
    folder = team_project(_subscription(KMS[form]))
    run = preview(folder, "-f", "json")
    assert run.code == 0, run.stderr
    report = run.json()
    assert _inputs(report, "orders")["pushConfig"]["pushEndpoint"] == "[unknown]"
    level, message = _findings(report, "push-endpoint-https")["orders"]
    assert (level, "during preview" in message) == ("advisory", True), message
    assert any("getKMSSecret" in u["message"] for u in report["unknownOffline"]), report

    enforced = preview(folder, "-f", "json", "--policy-config", _enforce(folder))
    assert enforced.code == 2, enforced.stderr
    assert "dataSource gcp:kms/getKMSSecret:getKMSSecret" in enforced.stderr
    assert _findings(enforced.json(), "push-endpoint-https")["orders"][0] == "mandatory"


def test_a_boolean_copied_from_a_data_source_is_unknown_in_every_form(
    team_project: Callable[..., Path],
) -> None:
    """Plain ``get_subscription``, ``get_subscription_output`` and an ``apply`` on it: exactly-once
    delivery is not known offline; a literal ``False`` still is."""
    folder = team_project(COPIED)
    run = preview(folder, "-f", "json")
    assert run.code == 0, run.stderr
    report = run.json()
    copied = ["applied", "output", "plain"]
    for name in copied:
        assert _inputs(report, name)["enableExactlyOnceDelivery"] == "[unknown]", name
    assert _inputs(report, "literal")["enableExactlyOnceDelivery"] is False
    found = _findings(report, "push-no-exactly-once")
    assert sorted(found) == copied, found
    assert all(level == "advisory" and "not known" in m for level, m in found.values()), found
    listed = report["unknownOffline"]
    assert any("enableExactlyOnceDelivery" in u["message"] for u in listed), listed

    enforced = preview(folder, "-f", "json", "--policy-config", _enforce(folder))
    assert enforced.code == 2, enforced.stderr
    assert "dataSource gcp:pubsub/getSubscription:getSubscription" in enforced.stderr
    found = _findings(enforced.json(), "push-no-exactly-once")
    assert {name: level for name, (level, _) in found.items()} == dict.fromkeys(copied, "mandatory")


def test_a_function_no_installed_sdk_defines_is_wholly_unknown(
    team_project: Callable[..., Path],
) -> None:
    """An output-form invoke of a package pushguard does not have: its whole result is unknown,
    so an endpoint read from it is unknown, not absent.

    An SDK older than ``WHOLLY_UNKNOWN`` (tests/sdk.py) reads no ``unknown`` in the answer and
    gets the invoke's arguments back, so the endpoint it reads is absent: the report still lists
    the function as unknown offline, and ``unknownAtPreview: enforce`` fails the run naming it."""
    endpoint = (
        "pulumi.runtime.invoke_output('acme:index:getEndpoint', {'name': 'orders'})"
        ".apply(lambda result: result.get('url'))"
    )
    folder = team_project(_subscription(endpoint))
    run = preview(folder, "-f", "json")
    assert run.code == 0, run.stderr
    report = run.json()
    listed = report["unknownOffline"]
    assert any("acme:index:getEndpoint" in u["message"] for u in listed), listed
    if SDK_VERSION < WHOLLY_UNKNOWN:
        assert _inputs(report, "orders")["pushConfig"]["pushEndpoint"] is None
        enforced = preview(folder, "-f", "json", "--policy-config", _enforce(folder))
        assert enforced.code == 2, enforced.stderr
        assert "dataSource acme:index:getEndpoint" in enforced.stderr
        return
    assert _inputs(report, "orders")["pushConfig"]["pushEndpoint"] == "[unknown]"
    assert "orders" in _findings(report, "push-endpoint-https")
