"""The one recognition of Google-managed subscriptions (pushguard/rules/google_managed.py): the
forms of the public evidence are recognised; everything that merely looks like them is not, so
the rules judge it. Every enforcement point's route tests (audit, pack, preview, analyze) rely
on this table."""

from __future__ import annotations

import pytest

from pushguard.rules.facts import EVENTARC_TRIGGER, SubscriptionFacts
from pushguard.rules.google_managed import GoogleManaged, google_managed, recognise

P = "trading-bot-336516"
GCB = "rpc://name:CloudBuildPushEndpoint:gslb:google.pubsub.v1.cloudbuildpushendpoint-prod-"
HOST = "218a028a94d362d4917be8e338e55333-dot-wd98ee21ff09809b5p-tp.appspot.com"
TOPIC = f"projects/{P}/topics/portfolio-logger-v1"


def gcf(host: str = HOST, path: str = TOPIC, query: str = "?pubsub_trigger=true") -> str:
    return f"https://{host}/_ah/push-handlers/pubsub/{path}{query}"


GCF_NAME = "gcf-portfolio-logger-europe-west1-portfolio-logger-v1"

RECOGNISED = [
    # (subscription ID, endpoint, topic, account, expected)
    (
        "gcb-terraform-project-resources-creator-apply",
        f"{GCB}global",
        f"projects/{P}/topics/tf-apply-approval",
        None,
        GoogleManaged(
            "Cloud Build", "trigger", "terraform-project-resources-creator-apply", "global"
        ),
    ),
    (
        "gcb-pubsub-trigger",
        f"{GCB}us-central1",
        f"projects/{P}/topics/mytopic",
        f"builder@{P}.iam.gserviceaccount.com",
        GoogleManaged("Cloud Build", "trigger", "pubsub-trigger", "us-central1"),
    ),
    (
        GCF_NAME,
        gcf(),
        TOPIC,
        None,
        GoogleManaged("Cloud Functions (1st gen)", "function", "portfolio-logger", "europe-west1"),
    ),
    (
        "gcf-update_preprocessed_hourly_data-update_processed_data",
        gcf(
            "34ca704fc39e938eaa11e44cfface4ea-dot-o46fbf1c487424862-tp.appspot.com",
            f"projects/{P}/topics/update_processed_data",
        ),
        "update_processed_data",  # a short topic name, in the subscription's project
        None,
        GoogleManaged("Cloud Functions (1st gen)", "function", "update_preprocessed_hourly_data"),
    ),
    (
        "gcf-saveEvents-sc.match.events",
        gcf(path=f"projects/{P}/topics/sc.match.events"),
        f"projects/{P}/topics/sc.match.events",
        None,
        GoogleManaged("Cloud Functions (1st gen)", "function", "saveEvents"),
    ),
]


@pytest.mark.parametrize(("name", "endpoint", "topic", "account", "expected"), RECOGNISED)
def test_the_public_forms_are_recognised(name, endpoint, topic, account, expected) -> None:
    assert recognise(name, endpoint, topic=topic, account=account, project=P) == expected


LOOK_ALIKES = {
    "gcb name, https endpoint": ("gcb-exfil", "https://collector.evil.example/", None, None),
    "rpc to another target": (
        "gcb-x",
        GCB.replace("CloudBuildPushEndpoint", "Evil") + "global",
        None,
        None,
    ),
    "rpc, another service": ("gcb-x", f"{GCB.replace('.v1.', '.v2.')}global", None, None),
    "rpc, suffix": ("gcb-x", f"{GCB}global.evil.example", None, None),
    "rpc, trailing newline": ("gcb-x", f"{GCB}global\n", None, None),
    "rpc, upper-case scheme": ("gcb-x", f"RPC{GCB[3:]}global", None, None),
    "rpc, not a region": ("gcb-x", f"{GCB}evil", None, None),
    "rpc, another name": ("build-x", f"{GCB}global", None, None),
    "gcb, trigger name too long": ("gcb-" + "a" * 65, f"{GCB}global", None, None),
    "gcb, trigger name with _": ("gcb-my_trigger", f"{GCB}global", None, None),
    "look-alike host": (GCF_NAME, gcf(f"{HOST}.evil.example"), TOPIC, None),
    "userinfo": (GCF_NAME, gcf(f"{HOST}@evil.example"), TOPIC, None),
    "userinfo before": (GCF_NAME, gcf(f"evil.example@{HOST}"), TOPIC, None),
    "port": (GCF_NAME, gcf(f"{HOST}:8443"), TOPIC, None),
    "trailing dot": (GCF_NAME, gcf(f"{HOST}."), TOPIC, None),
    "upper case": (GCF_NAME, gcf(HOST.upper()), TOPIC, None),
    "percent-encoded dot": (GCF_NAME, gcf(HOST.replace(".appspot", "%2eappspot")), TOPIC, None),
    "not a hash": (GCF_NAME, gcf(HOST.replace("218a028a", "evil0000")), TOPIC, None),
    "another tenant form": (GCF_NAME, gcf(HOST.replace("-tp.", "-xp.")), TOPIC, None),
    "plain http": (GCF_NAME, gcf().replace("https://", "http://"), TOPIC, None),
    "another topic in the path": (
        GCF_NAME,
        gcf(path=f"projects/{P}/topics/payments"),
        TOPIC,
        None,
    ),
    "another project in the path": (
        GCF_NAME,
        gcf(path="projects/evil-project-1/topics/portfolio-logger-v1"),
        TOPIC,
        None,
    ),
    "another query": (GCF_NAME, gcf(query="?pubsub_trigger=true&to=evil"), TOPIC, None),
    "a fragment": (GCF_NAME, gcf(query="?pubsub_trigger=true#x"), TOPIC, None),
    "a dot segment": (
        GCF_NAME,
        gcf(path=f"projects/{P}/topics/../topics/portfolio-logger-v1"),
        TOPIC,
        None,
    ),
    "an OIDC token": (GCF_NAME, gcf(), TOPIC, f"x@{P}.iam.gserviceaccount.com"),
    "name without the topic": ("gcf-portfolio-logger-europe-west1", gcf(), TOPIC, None),
    "name without the function": ("gcf--portfolio-logger-v1", gcf(), TOPIC, None),
    "name of another topic": ("gcf-f-europe-west1-payments", gcf(), TOPIC, None),
    "topic not known": (GCF_NAME, gcf(), None, None),
    "a percent in the topic": (
        "gcf-f-a%2Fb",
        gcf(path=f"projects/{P}/topics/a%2Fb"),
        f"projects/{P}/topics/a%2Fb",
        None,
    ),
    "Eventarc's own form": (
        "eventarc-us-west1-replayer-708717-sub-242",
        "https://replayer-et73rt2k6a-uw.a.run.app?__GCP_CloudEventsMode=CUSTOM_PUBSUB_projects"
        "%2Fcloud-city-cal%2Ftopics%2Freplayer.TriggeredEvent",
        "projects/cloud-city-cal/topics/replayer.TriggeredEvent",
        "163650808003-compute@developer.gserviceaccount.com",
    ),
}


@pytest.mark.parametrize("case", sorted(LOOK_ALIKES))
def test_look_alikes_are_not_recognised(case: str) -> None:
    name, endpoint, topic, account = LOOK_ALIKES[case]
    assert recognise(name, endpoint, topic=topic, account=account, project=P) is None


def test_facts_not_known_yet_or_of_a_trigger_are_never_googles() -> None:
    facts = SubscriptionFacts(
        resource="r", project_id=P, subscription_id=GCF_NAME, push_endpoint=gcf(), topic=TOPIC
    )
    assert google_managed(facts) is not None
    for unknown in ("push_endpoint", "push_auth_account", "topic"):
        undecided = facts.model_copy(update={"unknown": frozenset({unknown})})
        assert google_managed(undecided) is None, unknown
    assert google_managed(facts.model_copy(update={"kind": EVENTARC_TRIGGER})) is None
    assert google_managed(facts.model_copy(update={"push_auth_account_project": P})) is None
