"""Google-managed push subscriptions: the ones Google creates and configures in a customer's
project for its own products, recognised here and nowhere else.

Google creates push subscriptions of its own for some products, and configures them itself: the
team cannot give them an OIDC token or point them elsewhere without breaking the product. The
rules would report them as mandatory violations nobody can fix, in every organisation that uses
the product. Such a subscription is **google-managed**: no rule judges it, and every enforcement
point reports it with that status instead of running the rules on it, naming the product and,
where the subscription's name says it, the trigger or function (:func:`google_managed`). Each
point asks :func:`google_managed` once per subscription, on the facts it would judge, and either
reports the status or runs the rules: nothing is skipped without being reported.

Recognition is strict, because a subscription that merely looks like Google's would pass every
rule unjudged. The subscription's name **and** its whole push configuration must have the exact
documented or observed form, compared as text (case-sensitive, no percent-decoding, no
normalisation): anything else, a look-alike host (``x-dot-y-tp.appspot.com.evil.example``),
``rpc://`` with another target, a ``gcb-`` name pushing to an ``https://`` endpoint, userinfo,
a port, upper case, a trailing dot, is judged by the rules as usual.

**Cloud Build Pub/Sub triggers** (product ``Cloud Build``). A build trigger with a Pub/Sub event
"creates a build whenever a Pub/Sub message is published"; its ``pubsubConfig.subscription`` is
"Output only. Name of the subscription", created by Cloud Build, and its
``pubsubConfig.serviceAccountEmail`` is the "Service account that will make the push request"
(https://cloud.google.com/build/docs/api/reference/rest/v1/projects.locations.triggers#BuildTrigger.PubsubConfig;
https://cloud.google.com/build/docs/automating-builds/create-pubsub-triggers). Public
Terraform code that declares such subscriptions after the fact shows their form: the name
``gcb-TRIGGER`` and the endpoint
``rpc://name:CloudBuildPushEndpoint:gslb:google.pubsub.v1.cloudbuildpushendpoint-prod-REGION``
with no OIDC token (GitHub ``abhisri936/data_quality``, ``terraform.tfvars``:
``gcb-terraform-project-resources-creator-apply``, region ``global``; a Google LLC-licensed
Terraform example declares ``gcb-pubsub-trigger`` for its trigger ``pubsub-trigger``, pushing to
``...cloudbuildpushendpoint-prod-${region}``). Recognised: a name ``gcb-`` followed by a trigger
name as Cloud Build allows it ("only alphanumeric characters and dashes", "1-64 characters
long", beginning and ending "with an alphanumeric character": ``BuildTrigger.name``, e.g.
https://pub.dev/documentation/googleapis/13.1.0/cloudbuild_v1/BuildTrigger/name.html), and
exactly that endpoint, ``REGION`` ``global`` or a region name (``us-central1``). An OIDC token
may be set: Cloud Build documents the trigger's own service account for the push. The ``rpc://``
target is Google's Cloud Build front end, which no customer can serve: whatever the token, the
messages reach Cloud Build.

**Cloud Functions (1st gen) Pub/Sub triggers** (product ``Cloud Functions (1st gen)``). "Cloud
Functions will generate a new push subscription for the specified topic in the form of
gcf-<FUNCTION_NAME>-<TOPIC_NAME>", deleted with the function (Building Google Cloud Platform
Solutions, O'Reilly, "Cloud Pub/Sub functions":
https://www.oreilly.com/library/view/building-google-cloud/9781838647438/b7c097f8-2d19-4da1-85cc-d589688b9841.xhtml;
the trigger: https://cloud.google.com/functions/1stgendocs/calling/pubsub). Newer subscriptions
add the function's region: ``gcf-FUNCTION-REGION-TOPIC``. Terraform exports of real projects,
each with its ``terraform import`` line (GitHub ``airqo-platform/AirQo-api``,
``infra/terraform/gcp/modules/PubSubSubscription/``; ``AbdullahKeteldijk/trading_bot``,
``terraform/projects/trading-bot-336516/PubSubSubscription/``), show both forms and the
endpoint, on App Engine's tenant host of the function
(``https://HASH-dot-TENANT-tp.appspot.com/_ah/push-handlers/pubsub/projects/P/topics/T?pubsub_trigger=true``,
``HASH`` 32 hex digits, ``TENANT`` a letter, 16 hex digits and sometimes ``p``), with the
subscription's own topic in the path and no OIDC token (for example
``gcf-pg-traffic-function-us-central1-cron-topic`` on ``o46fbf1c487424862-tp``,
``gcf-hype-bot-v1-europe-west1-hype-bot-v1`` on ``wd98ee21ff09809b5p-tp``,
``gcf-update_preprocessed_hourly_data-update_processed_data``; a published Cloud Logging
entry of ``CloudPubSub-Google`` pushing to ``k743d1e1feb222eb6p-tp``). Recognised: the name
``gcf-``, a function name (letters, digits, ``_``, ``-``), optionally ``-REGION``, then
``-TOPIC`` where ``TOPIC`` is the subscription's topic's ID; exactly that endpoint, its path
naming the subscription's own topic (``projects/P/topics/T`` equal to the subscription's
topic), the query exactly ``pubsub_trigger=true``; and no OIDC token. A topic ID with ``%``
(which Pub/Sub allows: https://cloud.google.com/pubsub/docs/pubsub-basics#resource_names) is
not recognised: percent-encodings in the path are not guessed at.

What stays possible, said plainly: the host names an App Engine app (``*.appspot.com``) of a
project whose ID has the form ``TENANT-tp``. No page found says that a customer cannot hold a
project ID of that form; someone who did could serve a look-alike, and a subscription pushing
there would be set aside. The binding to the subscription's own topic, the fixed path and
query and the absence of a token limit what such a look-alike receives (that topic's messages,
never an identity token). A stricter check would join the export's 1st-gen functions
(``cloudfunctions.googleapis.com/CloudFunction``) and their event triggers; it is not made.

**Eventarc** (``eventarc-LOCATION-TRIGGER-sub-N``) is checked against what Eventarc documents,
and not recognised: the subscription is "created and managed by Eventarc"
(``Pubsub.subscription``,
https://cloud.google.com/eventarc/docs/reference/rest/v1/projects.locations.triggers), but for a
Cloud Run destination it pushes to the trigger's destination with identity tokens of the
trigger's service account ("For Cloud Run destinations, this service account is used to generate
identity tokens when invoking the service", ``Trigger.serviceAccount``, same reference); GKE
destinations pull through Eventarc's event forwarder
(https://cloud.google.com/eventarc/docs/overview). Its endpoint and account are what the team
set on the trigger, and its endpoint form (a
``run.app`` URL with ``?__GCP_CloudEventsMode=...``, the trigger's account in ``oidcToken``, as
a public Terraform export of project ``cloud-city-cal`` shows for
``eventarc-us-west1-replayer-708717-sub-242``) is one any project can make, so it cannot tell
Eventarc's subscription from a look-alike: the rules judge it as usual. On that documented
form they find nothing mandatory; the pack, the preview and analyze judge the trigger itself
(:data:`~pushguard.rules.facts.EVENTARC_TRIGGER`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pushguard.rules.facts import SubscriptionFacts

GOOGLE_MANAGED = "google-managed"
"""The status every enforcement point reports a recognised subscription with."""

CLOUD_BUILD = "Cloud Build"
CLOUD_FUNCTIONS_V1 = "Cloud Functions (1st gen)"
PRODUCTS = (CLOUD_BUILD, CLOUD_FUNCTIONS_V1)
"""The products whose subscriptions are recognised, as reports name them."""

_REGION = r"[a-z]+-[a-z]+[0-9]+"
_GCB_NAME = re.compile(r"gcb-(?P<trigger>[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)")
_GCB_ENDPOINT = re.compile(
    r"rpc://name:CloudBuildPushEndpoint:gslb:google\.pubsub\.v1\.cloudbuildpushendpoint-prod-"
    rf"(?P<region>global|{_REGION})"
)
_PROJECT = r"(?:[a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]"
_TOPIC_ID = r"[A-Za-z][A-Za-z0-9._~+-]{2,254}"
_GCF_ENDPOINT = re.compile(
    r"https://[0-9a-f]{32}-dot-[a-z][0-9a-f]{16}p?-tp\.appspot\.com"
    rf"/_ah/push-handlers/pubsub/projects/(?P<project>{_PROJECT})/topics/(?P<topic>{_TOPIC_ID})"
    r"\?pubsub_trigger=true"
)
_GCF_FUNCTION = re.compile(rf"(?P<function>[A-Za-z][A-Za-z0-9_-]*?)(?:-(?P<region>{_REGION}))?")
_TOPIC_PATH = re.compile(rf"projects/(?P<project>{_PROJECT})/topics/(?P<topic>{_TOPIC_ID})")


@dataclass(frozen=True)
class GoogleManaged:
    """A recognised subscription: the ``product`` that made it (one of :data:`PRODUCTS`), what
    of the product it serves (``kind``: ``trigger`` or ``function``) and its ``name`` and
    ``region`` as the subscription's name and endpoint say them (``""`` where they do not)."""

    product: str
    kind: str
    name: str
    region: str = ""

    def describe(self) -> str:
        """One sentence for reports: who made it, for what, and that no rule judges it."""
        where = f" in {self.region}" if self.region else ""
        what = f"the Pub/Sub {self.kind} {self.name!r}{where}" if self.name else "a Pub/Sub trigger"
        return (
            f"created and configured by {self.product} for {what}; Google's to configure, so "
            "pushguard's rules do not judge it"
        )

    def evidence(self) -> dict[str, str]:
        """The recognition as string pairs (the audit's ``evidence`` column): ``product``, and
        ``trigger`` or ``function`` and ``region`` where known."""
        pairs = {"product": self.product}
        if self.name:
            pairs[self.kind] = self.name
        if self.region:
            pairs["region"] = self.region
        return pairs


def _cloud_build(name: str, endpoint: str) -> GoogleManaged | None:
    named, pushed = _GCB_NAME.fullmatch(name), _GCB_ENDPOINT.fullmatch(endpoint)
    if named is None or pushed is None:
        return None
    return GoogleManaged(CLOUD_BUILD, "trigger", named["trigger"], pushed["region"])


def topic_path(topic: str | None, project: str | None) -> str | None:
    """The subscription's topic as ``projects/P/topics/T``: as given when it has that form, or
    ``T`` in the subscription's ``project`` (pulumi-gcp accepts a topic's short name); ``None``
    when it has neither form."""
    if not topic:
        return None
    if _TOPIC_PATH.fullmatch(topic):
        return topic
    if project and re.fullmatch(_TOPIC_ID, topic) and re.fullmatch(_PROJECT, project):
        return f"projects/{project}/topics/{topic}"
    return None


def _cloud_functions(
    name: str, endpoint: str, topic: str | None, account: str | None
) -> GoogleManaged | None:
    pushed = _GCF_ENDPOINT.fullmatch(endpoint)
    if (
        pushed is None
        or account
        or topic != f"projects/{pushed['project']}/topics/{pushed['topic']}"
    ):
        return None
    prefix, suffix = "gcf-", f"-{pushed['topic']}"
    if not (name.startswith(prefix) and name.endswith(suffix)):
        return None
    function = _GCF_FUNCTION.fullmatch(name[len(prefix) : -len(suffix)])
    if function is None:
        return None
    return GoogleManaged(
        CLOUD_FUNCTIONS_V1, "function", function["function"], function["region"] or ""
    )


def recognise(
    subscription_id: str | None,
    endpoint: str | None,
    *,
    topic: str | None = None,
    account: str | None = None,
    project: str | None = None,
) -> GoogleManaged | None:
    """The product whose subscription this is, or ``None`` (the rules judge it as usual).

    ``subscription_id``: the subscription's ID (``S`` of ``projects/P/subscriptions/S``);
    ``endpoint``: ``pushConfig.pushEndpoint``; ``topic``: the subscription's topic
    (:func:`topic_path` forms); ``account``: the OIDC token's service account (``None`` or
    ``""``: no token); ``project``: the subscription's project ID (for a short topic name). Any
    value not known (``None``) leaves it unrecognised. Pure; never raises for strings.
    """
    if not subscription_id or not endpoint:
        return None
    return _cloud_build(subscription_id, endpoint) or _cloud_functions(
        subscription_id, endpoint, topic_path(topic, project), account
    )


def google_managed(facts: SubscriptionFacts) -> GoogleManaged | None:
    """:func:`recognise` of a subscription's facts; ``None`` for an Eventarc trigger's facts and
    for a subscription whose endpoint, OIDC account or topic is not known yet (undecided values
    are never presumed to be Google's)."""
    undecided = {"push_endpoint", "push_auth_account", "topic"} & facts.unknown
    if facts.is_trigger or undecided or facts.push_endpoint_source is not None:
        return None
    return recognise(
        facts.subscription_id,
        facts.push_endpoint,
        topic=facts.topic,
        account=facts.push_auth_account or facts.push_auth_account_project,
        project=facts.project_id,
    )
