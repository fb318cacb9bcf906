"""Issue 35, item 10: an exception's resource is checked against what it can match.

The CAI full name (the audit's `asset_name`) is accepted and normalised to the subscription path;
a typo, an upper-case project ID (which cannot exist), a wildcard are refused naming the field
and what is allowed; two exceptions for one resource under one policy are refused (the later no
longer wins silently), also when one names the project by its number. Through the loader every
enforcement point shares (`rule_config`, `parse_settings`).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from pushguard.policy import PolicyConfigError, parse_settings, reconcile, rule_config
from pushguard.policy.config_file import PolicyConfig, pushguard_policies
from pushguard.policy.exceptions import utc_today
from pushguard.policy.resources import project_variants, resource_kind
from pushguard.policy.settings import PackConfigError

POLICY = "push-endpoint-https"
PATH = "projects/acme-orders/subscriptions/orders"
CAI = f"//pubsub.googleapis.com/{PATH}"
URN = "urn:pulumi:prod::orders::gcp:pubsub/subscription:Subscription::orders"


def _until(days: int = 30) -> str:
    return (utc_today() + timedelta(days=days)).isoformat()


def _exception(resource: str, reason: str = "accepted") -> dict[str, str]:
    return {"resource": resource, "reason": reason, "expires": _until()}


def _load(properties: dict[str, Any]) -> None:
    """Load a config the way `pushguard preview`, `analyze` and `audit` do."""
    config = {POLICY: PolicyConfig(None, properties)}
    rule_config(reconcile(pushguard_policies(), config, source="config.json"), "config.json")


@pytest.mark.parametrize(
    ("given", "kept", "kind"),
    [
        (CAI, PATH, "subscription"),
        (f"  {CAI}  ", PATH, "subscription"),
        (PATH, PATH, "subscription"),
        ("projects/123456789012/subscriptions/orders", None, "subscription"),
        ("projects/example.com:acme-orders/subscriptions/orders", None, "subscription"),
        ("projects/acme-web/locations/europe-west1/triggers/orders", None, "trigger"),
        (URN, None, "urn"),
        (f"{URN.replace('Subscription::orders', 'Deployment::dm')}#orders", None, "urn"),
    ],
)
def test_every_documented_form_is_accepted_in_one_spelling(
    given: str, kept: str | None, kind: str
) -> None:
    [item] = parse_settings(POLICY, {"exceptions": [_exception(given)]}).exceptions
    assert item.resource == (kept or given.strip())
    assert resource_kind(item.resource) == kind


def test_the_cai_full_name_matches_the_subscription_it_names() -> None:
    settings = parse_settings(POLICY, {"exceptions": [_exception(CAI, "vendor")]})
    for name in (CAI, PATH):
        excepted = settings.exception_for(name)
        assert excepted is not None and excepted.active and excepted.reason == "vendor"
    assert (
        settings.exception_for("//pubsub.googleapis.com/projects/acme-orders/subscriptions/o2")
        is None
    )


@pytest.mark.parametrize(
    ("resource", "says"),
    [
        ("projects/acme-orders/subscription/orders", "is not a resource an exception can name"),
        ("projects/Acme-Orders/subscriptions/orders", "the project ID 'Acme-Orders' cannot exist"),
        ("*", "wildcards are not supported"),
        ("projects/acme-orders/subscriptions/*", "wildcards are not supported"),
        ("urn:pulumi:*::*::*::*", "wildcards are not supported"),
        ("projects/ab/subscriptions/orders", "is neither a project ID nor a project number"),
        ("projects/acme-orders/subscriptions/goog-orders", "is not a subscription ID"),
        ("projects/acme-orders/topics/orders", "is not a resource an exception can name"),
        ("urn:pulumi:prod::orders::Subscription", "is not a Pulumi URN"),
        ("orders", "is not a resource an exception can name"),
    ],
)
def test_a_resource_that_cannot_match_is_refused_naming_the_field(resource: str, says: str) -> None:
    with pytest.raises(PolicyConfigError) as caught:
        _load(
            {
                "exceptions": [
                    _exception("projects/acme-orders/subscriptions/a1b"),
                    _exception(resource),
                ]
            }
        )
    message = str(caught.value)
    assert f"{POLICY}: exceptions.1.resource:" in message, message
    assert says in message, message
    assert "exceptions.0" not in message
    if "is not a resource" in says:
        assert "projects/PROJECT/subscriptions/SUBSCRIPTION" in message
        assert "urn:pulumi:STACK::PROJECT::TYPE::NAME" in message


def test_an_upper_case_project_cites_googles_rules() -> None:
    with pytest.raises(PackConfigError) as caught:
        parse_settings(POLICY, {"exceptions": [_exception("projects/ACME/subscriptions/orders")]})
    assert "https://cloud.google.com/resource-manager/docs/creating-managing-projects" in str(
        caught.value
    )


@pytest.mark.parametrize(
    ("first", "second", "numbers"),
    [
        (PATH, PATH, {}),
        (PATH, CAI, {}),
        (URN, URN, {}),
        (PATH, "projects/123456789012/subscriptions/orders", {"acme-orders": "123456789012"}),
    ],
)
def test_two_exceptions_for_one_resource_are_refused(
    first: str, second: str, numbers: dict[str, str]
) -> None:
    properties: dict[str, Any] = {
        "exceptions": [
            _exception(first, "first"),
            _exception("projects/acme-orders/subscriptions/other"),
            _exception(second, "second"),
        ]
    }
    if numbers:
        properties["projectNumbers"] = numbers
    with pytest.raises(PolicyConfigError) as caught:
        _load(properties)
    message = str(caught.value)
    assert f"{POLICY}: exceptions: item 2: names" in message, message
    assert "as item 0 does: one exception per resource and policy" in message


def test_the_same_resource_under_two_policies_is_two_exceptions() -> None:
    config = {
        POLICY: PolicyConfig(None, {"exceptions": [_exception(PATH)]}),
        "push-auth-oidc": PolicyConfig(None, {"exceptions": [_exception(CAI)]}),
    }
    rules = rule_config(reconcile(pushguard_policies(), config))
    assert rules.settings["push-auth-oidc"].exceptions[0].resource == PATH


def test_a_path_matches_its_subscription_by_either_name_of_the_project() -> None:
    settings = parse_settings(
        POLICY,
        {
            "projectNumbers": {"acme-orders": "123456789012"},
            "exceptions": [_exception("projects/123456789012/subscriptions/orders", "by number")],
        },
    )
    excepted = settings.exception_for(CAI)
    assert excepted is not None and excepted.reason == "by number"
    # without the map, the export's project number names it (the audit passes it)
    plain = parse_settings(
        POLICY, {"exceptions": [_exception("projects/123456789012/subscriptions/orders")]}
    )
    assert plain.exception_for(CAI) is None
    assert plain.exception_for(*project_variants(CAI, ["acme-orders", "123456789012"])) is not None
    # another subscription of the project is not named
    assert settings.exception_for("projects/acme-orders/subscriptions/billing") is None
