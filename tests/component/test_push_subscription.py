"""PushSubscription under Pulumi's mock runtime: the graph it registers, and what it refuses."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from pushguard.components import TYPE_TOKEN, PushSubscription, PushSubscriptionInputError
from pushguard.components.ids import account_id, pubsub_id
from pushguard.preview.mocks import GcpMocks
from pushguard.rules import RULES_BY_ID
from tests.helpers import NUMBER, PROJECT, UNKNOWN, cause, run, run_failing, short, unknown_output
from tests.mock_runtime.engine import run_program_capturing

RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
SERVICE_URL = "https://orders-3kq2x7ab9c-ew.a.run.app"
ORDERS_URN = "urn:pulumi:dev::pushguard::pushguard:index:PushSubscription::orders"
ACCOUNT_ID = account_id(PROJECT, ORDERS_URN)
EMAIL = f"{ACCOUNT_ID}@{PROJECT}.iam.gserviceaccount.com"
AGENT = f"serviceAccount:service-{NUMBER}@gcp-sa-pubsub.iam.gserviceaccount.com"
SUB = "gcp:pubsub/subscription:Subscription"
SA = "gcp:serviceaccount/account:Account"
SA_MEMBER = "gcp:serviceaccount/iAMMember:IAMMember"
RUN_MEMBER = "gcp:cloudrunv2/serviceIamMember:ServiceIamMember"
FN_MEMBER = "gcp:cloudfunctions/functionIamMember:FunctionIamMember"


def args(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "topic": "orders",
        "push_endpoint": RUN_URL,
        "target": {"kind": "cloud-run", "name": "orders", "location": "europe-west1"},
    }
    return {**base, **overrides}


def program(**overrides: Any):
    return lambda: PushSubscription("orders", args(**overrides))


def test_cloud_run_graph_is_wired_and_parented() -> None:
    graph = run(program(), preview=False)
    component = graph.one(TYPE_TOKEN)
    children = [r for r in graph.records if r is not component]
    assert {r.type for r in children} == {SA, SA_MEMBER, RUN_MEMBER, SUB}
    assert all(r.parent == component.urn for r in children)

    account = graph.one(SA)
    assert account.inputs["accountId"] == ACCOUNT_ID
    assert account.inputs["project"] == PROJECT
    email = EMAIL

    [token] = graph.by_type(SA_MEMBER)
    assert token.inputs == {
        "serviceAccountId": f"projects/{PROJECT}/serviceAccounts/{email}",
        "role": "roles/iam.serviceAccountTokenCreator",
        "member": AGENT,
    }
    invoker = graph.one(RUN_MEMBER)
    assert invoker.inputs["role"] == "roles/run.invoker"
    assert invoker.inputs["member"] == f"serviceAccount:{email}"
    assert (invoker.inputs["name"], invoker.inputs["location"]) == ("orders", "europe-west1")

    sub = graph.one(SUB)
    assert sub.inputs["pushConfig"] == {
        "pushEndpoint": RUN_URL,
        "oidcToken": {"serviceAccountEmail": email, "audience": SERVICE_URL},
    }
    assert sub.inputs["name"] == pubsub_id(PROJECT, ORDERS_URN)
    assert {short(d) for d in sub.dependencies} >= {"orders-token-creator", "orders-invoker"}
    assert sub.replace_on_changes == ()


def test_iam_is_only_ever_additive() -> None:
    graph = run(
        program(
            dead_letter={}, deployers=["group:platform@example.com"], token_creator_grant="project"
        )
    )
    iam = [r.type for r in graph.records if "iam" in r.type.lower()]
    assert iam and all(t.lower().endswith("iammember") for t in iam)


@pytest.mark.parametrize(
    ("kind", "member_type", "role"),
    [
        ("cloud-run", RUN_MEMBER, "roles/run.invoker"),
        ("cloud-function-v2", RUN_MEMBER, "roles/run.invoker"),
        ("cloud-function-v1", FN_MEMBER, "roles/cloudfunctions.invoker"),
    ],
)
def test_invoker_binding_per_target_kind(kind: str, member_type: str, role: str) -> None:
    target = {"kind": kind, "name": "orders", "location": "europe-west1", "project": "acme-run"}
    endpoint = {}  # a 1st-gen function is served at cloudfunctions.net, never run.app
    if kind == "cloud-function-v1":
        endpoint = {"push_endpoint": "https://europe-west1-acme-run.cloudfunctions.net/orders"}
    graph = run(program(target=target, **endpoint))
    [invoker] = [r for r in graph.records if r.type in (RUN_MEMBER, FN_MEMBER)]
    assert invoker.type == member_type
    assert invoker.inputs["role"] == role
    assert invoker.inputs["project"] == "acme-run"


def test_external_target_has_no_invoker_binding() -> None:
    graph = run(program(target={"kind": "external"}, push_endpoint="https://hooks.example.com/p"))
    assert not graph.by_type(RUN_MEMBER) and not graph.by_type(FN_MEMBER)


def test_existing_account_is_used_not_created() -> None:
    email = f"shared-push@{PROJECT}.iam.gserviceaccount.com"
    graph = run(program(push_auth_service_account_email=email))
    assert not graph.by_type(SA)
    assert graph.one(SUB).inputs["pushConfig"]["oidcToken"]["serviceAccountEmail"] == email
    [token] = graph.by_type(SA_MEMBER)
    assert token.inputs["serviceAccountId"] == f"projects/{PROJECT}/serviceAccounts/{email}"


def test_token_creator_on_project_or_none() -> None:
    on_project = run(program(token_creator_grant="project"))
    grant = on_project.one("gcp:projects/iAMMember:IAMMember")
    assert (grant.inputs["project"], grant.inputs["member"]) == (PROJECT, AGENT)
    none = run(program(token_creator_grant="none"))
    assert not none.by_type(SA_MEMBER) and not none.by_type("gcp:projects/iAMMember:IAMMember")


def test_given_project_number_names_the_service_agent() -> None:
    graph = run(program(project_number="42424242"))
    [token] = graph.by_type(SA_MEMBER)
    assert (
        token.inputs["member"]
        == "serviceAccount:service-42424242@gcp-sa-pubsub.iam.gserviceaccount.com"
    )


def test_deployers_get_act_as_on_the_push_auth_account() -> None:
    graph = run(
        program(
            deployers=[
                "group:platform@example.com",
                "serviceAccount:ci@acme-ci.iam.gserviceaccount.com",
            ]
        )
    )
    act_as = [
        r for r in graph.by_type(SA_MEMBER) if r.inputs["role"] == "roles/iam.serviceAccountUser"
    ]
    assert sorted(r.inputs["member"] for r in act_as) == [
        "group:platform@example.com",
        "serviceAccount:ci@acme-ci.iam.gserviceaccount.com",
    ]
    assert {short(d) for d in graph.one(SUB).dependencies} >= {short(r.urn) for r in act_as}


def test_new_dead_letter_topic_with_forwarding_grants() -> None:
    graph = run(program(dead_letter={"max_delivery_attempts": 7}), preview=False)
    topic = graph.one("gcp:pubsub/topic:Topic")
    publisher = graph.one("gcp:pubsub/topicIAMMember:TopicIAMMember")
    subscriber = graph.one("gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember")
    sub, kept = sorted(graph.by_type(SUB), key=lambda r: r.name)
    policy = sub.inputs["deadLetterPolicy"]
    assert policy["maxDeliveryAttempts"] == 7
    topic_id = pubsub_id(PROJECT, ORDERS_URN, "dead-letter")
    assert topic.inputs["name"] == topic_id and topic_id.startswith("orders-dead-letter-")
    assert policy["deadLetterTopic"] == f"projects/{PROJECT}/topics/{topic_id}"
    assert kept.inputs["topic"] == policy["deadLetterTopic"] and "pushConfig" not in kept.inputs
    assert kept.urn in sub.dependencies, "the dead letters are kept before any is sent"
    assert publisher.inputs["topic"] == policy["deadLetterTopic"]
    assert (publisher.inputs["role"], publisher.inputs["member"]) == (
        "roles/pubsub.publisher",
        AGENT,
    )
    assert (subscriber.inputs["role"], subscriber.inputs["member"]) == (
        "roles/pubsub.subscriber",
        AGENT,
    )
    assert short(publisher.urn) in {short(d) for d in sub.dependencies}
    assert sub.urn in subscriber.dependencies, "the subscriber grant is on the subscription"
    assert topic.parent == graph.one(TYPE_TOKEN).urn


def test_existing_dead_letter_topic_by_id_or_path() -> None:
    by_id = run(program(dead_letter={"topic": "orders-dlq"}))
    assert not by_id.by_type("gcp:pubsub/topic:Topic")
    assert by_id.one(SUB).inputs["deadLetterPolicy"] == {
        "deadLetterTopic": f"projects/{PROJECT}/topics/orders-dlq",
        "maxDeliveryAttempts": 5,
    }
    by_path = run(program(dead_letter={"topic": "projects/acme-shared/topics/dlq"}))
    assert by_path.one("gcp:pubsub/topicIAMMember:TopicIAMMember").inputs["topic"] == (
        "projects/acme-shared/topics/dlq"
    )


def test_paused_is_a_pull_subscription_that_keeps_its_wiring() -> None:
    graph = run(program(paused=True))
    sub = graph.one(SUB)
    assert "pushConfig" not in sub.inputs
    assert graph.by_type(SA) and graph.by_type(RUN_MEMBER) and graph.by_type(SA_MEMBER)


def test_delivery_and_subscription_settings_pass_through() -> None:
    graph = run(
        program(
            no_wrapper=True,
            write_metadata=True,
            attributes={"x-goog-version": "v1"},
            ack_deadline_seconds=60,
            message_retention_duration="86400s",
            retain_acked_messages=True,
            expiration_ttl="",
            filter='attributes.kind = "order"',
            enable_message_ordering=True,
            retry_policy={"minimum_backoff": "5s", "maximum_backoff": "300s"},
            labels={"team": "orders"},
            subscription_name="orders-push",
            audience="orders-api",
            target={**args()["target"], "custom_audiences": ["orders-api"]},
        )
    )
    sub = graph.one(SUB).inputs
    assert sub["pushConfig"]["noWrapper"] == {"writeMetadata": True}
    assert sub["pushConfig"]["attributes"] == {"x-goog-version": "v1"}
    assert sub["pushConfig"]["oidcToken"]["audience"] == "orders-api"
    assert (sub["ackDeadlineSeconds"], sub["messageRetentionDuration"]) == (60, "86400s")
    assert sub["retainAckedMessages"] is True and sub["enableMessageOrdering"] is True
    assert sub["expirationPolicy"] == {"ttl": ""}
    assert sub["filter"] == 'attributes.kind = "order"'
    assert sub["retryPolicy"] == {"minimumBackoff": "5s", "maximumBackoff": "300s"}
    assert (sub["labels"], sub["name"]) == ({"team": "orders"}, "orders-push")


def test_outputs_resolve_to_what_receivers_check() -> None:
    seen: dict[str, Any] = {}

    def prog() -> None:
        sub = PushSubscription(
            "orders",
            args(
                subscription_name="orders-push",
                audience="orders-api",
                target={**args()["target"], "custom_audiences": ["orders-api"]},
            ),
        )
        pulumi.Output.all(
            sub.subscription_path,
            sub.push_auth_service_account_email,
            sub.audience,
            sub.service_agent_email,
            sub.subscription_name,
        ).apply(lambda values: seen.update(values=values))

    run(prog, preview=False)
    assert seen["values"] == [
        f"projects/{PROJECT}/subscriptions/orders-push",
        EMAIL,
        "orders-api",
        f"service-{NUMBER}@gcp-sa-pubsub.iam.gserviceaccount.com",
        "orders-push",
    ]


def test_perimeter_replaces_on_push_config_change_only_when_the_loss_is_accepted() -> None:
    kept = run(program(in_service_perimeter=True)).one(SUB)
    assert kept.replace_on_changes == (), "Google refuses the update: nothing is lost"
    accepted = run(program(in_service_perimeter=True, accept_backlog_loss=True)).one(SUB)
    assert accepted.replace_on_changes == ("pushConfig",)
    assert accepted.delete_before_replace is True, "the ID is fixed: delete first"


FUNCTION_V1 = {"kind": "cloud-function-v1", "name": "orders", "location": "europe-west1"}


@pytest.mark.parametrize(
    "endpoint",
    [
        unknown_output,
        lambda: pulumi.Output.from_input(
            "https://europe-west1-acme-orders.cloudfunctions.net/orders"
        ),
    ],
    ids=["unknown", "known-output"],
)
def test_perimeter_refuses_a_1st_gen_function_target_before_its_url_is_known(endpoint) -> None:
    """A 1st-gen function is served only at cloudfunctions.net, which a perimeter refuses: the plain
    inputs decide it, so nothing is registered, even at preview when the URL is not known yet."""
    graph, error = run_failing(
        lambda: PushSubscription(
            "orders", args(in_service_perimeter=True, target=FUNCTION_V1, push_endpoint=endpoint())
        )
    )
    assert isinstance(error, PushSubscriptionInputError), error
    problems = dict(error.problems)
    assert "push-vpcsc-default-url" in problems["push_endpoint"]
    assert "1st-gen Cloud Function" in problems["push_endpoint"]
    assert graph.records == [], "nothing may be registered for bad inputs"


def test_perimeter_accepts_a_2nd_gen_function_by_its_run_app_url() -> None:
    target = {"kind": "cloud-function-v2", "name": "orders", "location": "europe-west1"}
    graph = run(program(in_service_perimeter=True, target=target))
    assert graph.one(SUB).inputs["pushConfig"]["oidcToken"]["audience"] == SERVICE_URL
    pending = run(
        lambda: PushSubscription(
            "orders", args(in_service_perimeter=True, target=target, push_endpoint=unknown_output())
        )
    )
    assert pending.by_type(SUB), "a 2nd-gen function's run.app URL may work: checked when known"


BAD_INPUTS = [
    ({"push_endpoint": "http://orders.example.com/push"}, "push_endpoint", "push-endpoint-https"),
    (
        {"push_endpoint": "https://orders-3kq2x7ab9c-ew.a.run.app@evil.example/"},
        "push_endpoint",
        "userinfo",
    ),
    (
        {"push_endpoint": "https://orders.example.com/", "in_service_perimeter": True},
        "push_endpoint",
        "push-vpcsc-default-url",
    ),
    (
        {
            "push_endpoint": "https://europe-west1-acme-orders.cloudfunctions.net/orders",
            "in_service_perimeter": True,
            "target": {"kind": "cloud-function-v1", "name": "orders", "location": "europe-west1"},
        },
        "push_endpoint",
        "push-vpcsc-default-url",
    ),
    (
        {"push_auth_service_account_email": "push@acme-shared.iam.gserviceaccount.com"},
        "push_auth_service_account_email",
        "push-sa-same-project",
    ),
    (
        {"push_auth_service_account_email": "alice@example.com"},
        "push_auth_service_account_email",
        "service account email",
    ),
    ({"ack_deadline_seconds": 5}, "ack_deadline_seconds", "between 10 and 600"),
    ({"ack_deadline_seconds": 601}, "ack_deadline_seconds", "between 10 and 600"),
    (
        {"message_retention_duration": "60s"},
        "message_retention_duration",
        "between 600s and 2678400s",
    ),
    ({"message_retention_duration": "1d"}, "message_retention_duration", "like '600s'"),
    ({"expiration_ttl": "3600s"}, "expiration_ttl", "at least 86400s"),
    (
        {"dead_letter": {"max_delivery_attempts": 4}},
        "dead_letter.max_delivery_attempts",
        "between 5 and 100",
    ),
    (
        {"dead_letter": {"max_delivery_attempts": 101}},
        "dead_letter.max_delivery_attempts",
        "between 5 and 100",
    ),
    (
        {"retry_policy": {"minimum_backoff": "700s"}},
        "retry_policy.minimum_backoff",
        "between 0s and 600s",
    ),
    (
        {"retry_policy": {"minimum_backoff": "60s", "maximum_backoff": "10s"}},
        "retry_policy.minimum_backoff",
        "must not exceed",
    ),
    ({"subscription_name": "goog-orders"}, "subscription_name", "must not start with 'goog'"),
    ({"subscription_name": "1orders"}, "subscription_name", "starts with a letter"),
    ({"subscription_name": "ab"}, "subscription_name", "3 to 255"),
    ({"topic": "projects/acme-orders/topics/goog"}, "topic", "must not start with 'goog'"),
    ({"write_metadata": True}, "write_metadata", "requires no_wrapper"),
    ({"target": {"kind": "cloud-run", "location": "europe-west1"}}, "target.name", "required"),
    ({"target": {"kind": "lambda"}}, "target.kind", "cloud-run"),
    ({"push_auth_account_id": "ab"}, "push_auth_account_id", "6 to 30"),
    ({"deployers": ["allAuthenticatedUsers"]}, "deployers.0", "too broad"),
    ({"deployers": ["domain:example.com"]}, "deployers.0", "too broad"),
    ({"labels": {"Team": "x"}}, "labels", "label key 'Team'"),
    ({"ack_deadline": 30}, "ack_deadline", "not an input of PushSubscription"),
    ({"project": "Bad_Project"}, "project", "project ID"),
]


@pytest.mark.parametrize(("overrides", "field", "text"), BAD_INPUTS, ids=lambda v: str(v)[:40])
def test_bad_input_is_one_clear_error_and_registers_nothing(overrides, field, text) -> None:
    graph, error = run_failing(program(**overrides))
    assert isinstance(error, PushSubscriptionInputError)
    fields = dict(error.problems)
    assert field in fields, error
    assert text in fields[field] or text in str(error)
    assert graph.records == [], "nothing may be registered for bad inputs"


def test_several_bad_inputs_are_reported_together() -> None:
    _, error = run_failing(program(ack_deadline_seconds=1, push_endpoint="http://x.example.com/"))
    assert isinstance(error, PushSubscriptionInputError)
    assert {f for f, _ in error.problems} == {"ack_deadline_seconds", "push_endpoint"}


def test_secret_in_endpoint_is_not_echoed_in_errors() -> None:
    _, error = run_failing(program(push_endpoint="http://x.example.com/p?token=hunter2"))
    assert "hunter2" not in str(error)


def test_missing_project_names_the_config() -> None:
    graph, error = run_program_capturing(program(), GcpMocks(), config={})
    assert isinstance(error, PushSubscriptionInputError)
    assert dict(error.problems) == {
        "project": "is required: set the input or the gcp:project config"
    }
    assert graph.records == []


def test_missing_project_is_listed_with_every_other_bad_input() -> None:
    """Without a project, the one error still names the other bad inputs and the rules' problems
    (it used to stop at the project)."""
    bad = program(ack_deadline_seconds=5, push_endpoint="http://x.example.com/")
    graph, error = run_program_capturing(bad, GcpMocks(), config={})
    assert isinstance(error, PushSubscriptionInputError)
    problems = dict(error.problems)
    assert set(problems) == {"project", "ack_deadline_seconds", "push_endpoint"}
    assert "gcp:project" in problems["project"]
    assert "[push-endpoint-https]" in problems["push_endpoint"]
    assert graph.records == []


def test_known_output_inputs_are_validated_and_used() -> None:
    graph = run(
        lambda: PushSubscription(
            "orders",
            args(
                push_endpoint=pulumi.Output.from_input(RUN_URL),
                ack_deadline_seconds=pulumi.Output.from_input(30),
            ),
        )
    )
    sub = graph.one(SUB).inputs
    assert sub["pushConfig"]["pushEndpoint"] == RUN_URL and sub["ackDeadlineSeconds"] == 30


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"push_endpoint": "http://orders.example.com/"}, "push_endpoint"),
        ({"ack_deadline_seconds": 3}, "ack_deadline_seconds"),
        (
            {"push_auth_service_account_email": "x@acme-shared.iam.gserviceaccount.com"},
            "push_auth_service_account_email",
        ),
    ],
)
def test_bad_output_input_fails_when_it_resolves_and_blocks_the_subscription(
    overrides, field
) -> None:
    wrapped = {k: pulumi.Output.from_input(v) for k, v in overrides.items()}
    graph, raised = run_failing(lambda: PushSubscription("orders", args(**wrapped)))
    error = cause(raised, PushSubscriptionInputError)
    assert isinstance(error, PushSubscriptionInputError), raised
    assert field in dict(error.problems)
    assert str(error) in str(raised), "Pulumi's message carries ours"
    assert not graph.by_type(SUB), "the subscription must never receive an invalid value"


def test_unknown_outputs_at_preview_keep_the_subscription_shape() -> None:
    graph = run(lambda: PushSubscription("orders", args(push_endpoint=unknown_output())))
    push = graph.one(SUB).inputs["pushConfig"]
    assert push["pushEndpoint"] == UNKNOWN
    assert push["oidcToken"]["serviceAccountEmail"] == UNKNOWN, "known after apply, as in GCP"
    created = run(lambda: PushSubscription("orders", args()), preview=False).one(SUB)
    assert created.inputs["pushConfig"]["oidcToken"]["serviceAccountEmail"] == EMAIL


def test_secret_output_does_not_make_other_inputs_secret() -> None:
    graph = run(
        lambda: PushSubscription(
            "orders",
            args(
                audience=pulumi.Output.secret("orders-api"),
                ack_deadline_seconds=pulumi.Output.from_input(30),
                target={**args()["target"], "custom_audiences": ["orders-api"]},
            ),
        )
    )
    sub = graph.one(SUB).inputs
    assert sub["ackDeadlineSeconds"] == 30
    assert sub["pushConfig"]["oidcToken"]["audience"]["4dabf18193072939515e22adb298388d"]


@pytest.mark.parametrize("field", ["in_service_perimeter", "paused", "token_creator_grant"])
def test_structural_inputs_must_be_plain(field) -> None:
    graph, error = run_failing(
        lambda: PushSubscription("orders", args(**{field: pulumi.Output.from_input(True)}))
    )
    assert isinstance(error, PushSubscriptionInputError)
    assert "must be a plain value" in dict(error.problems)[field]
    assert graph.records == []


def test_advisory_violation_warns_but_builds() -> None:
    graph = run(program(push_endpoint=f"{RUN_URL}?token=abc123"))
    assert graph.by_type(SUB)
    warnings = [message for level, message in graph.logs if level == "warning"]
    assert any("push-no-query-token" in w for w in warnings)
    assert all("abc123" not in w for w in warnings)


@pytest.mark.parametrize("kind", ["cloud-run", "cloud-function-v2", "cloud-function-v1"])
def test_rules_whose_facts_the_component_cannot_see_report_nothing(kind: str) -> None:
    """push-target-requires-auth reads the service's IAM policy, which the component never sees
    (it knows only the grants it makes): not applicable here, so neither a warning nor an error,
    as for push-shared-iam-binding."""
    rule = RULES_BY_ID["push-target-requires-auth"]
    assert "component" not in rule.enforcement_points
    target = {"kind": kind, "name": "orders", "location": "europe-west1"}
    endpoint = {}
    if kind == "cloud-function-v1":
        endpoint = {"push_endpoint": f"https://europe-west1-{PROJECT}.cloudfunctions.net/orders"}
    graph = run(program(target=target, **endpoint))
    assert graph.by_type(SUB)
    logged = [message for _, message in graph.logs]
    assert not [m for m in logged if rule.id in m or "push-shared-iam-binding" in m], logged


def test_fields_of_nested_objects_may_be_outputs() -> None:
    graph = run(
        program(
            dead_letter={
                "topic": pulumi.Output.from_input("orders-dlq"),
                "max_delivery_attempts": pulumi.Output.from_input(9),
            },
            retry_policy={"minimum_backoff": pulumi.Output.from_input("5s")},
            target={
                "kind": "cloud-run",
                "name": pulumi.Output.from_input("orders"),
                "location": "europe-west1",
            },
        )
    )
    sub = graph.one(SUB).inputs
    assert sub["deadLetterPolicy"] == {
        "deadLetterTopic": f"projects/{PROJECT}/topics/orders-dlq",
        "maxDeliveryAttempts": 9,
    }
    assert sub["retryPolicy"] == {"minimumBackoff": "5s"}
    assert graph.one(RUN_MEMBER).inputs["name"] == "orders"


@pytest.mark.parametrize("field", ["dead_letter", "retry_policy", "target"])
def test_nested_objects_themselves_must_be_plain(field) -> None:
    value = pulumi.Output.from_input({"kind": "external"} if field == "target" else {})
    graph, error = run_failing(lambda: PushSubscription("orders", args(**{field: value})))
    assert isinstance(error, PushSubscriptionInputError)
    assert "must be a plain value" in dict(error.problems)[field]
    assert graph.records == []


def test_target_url_output_is_the_audience_and_custom_audiences_may_be_outputs() -> None:
    custom_domain = "https://orders.example.com/push"
    graph = run(
        lambda: PushSubscription(
            "orders",
            args(
                push_endpoint=custom_domain,
                target={
                    "kind": "cloud-run",
                    "name": "orders",
                    "location": "europe-west1",
                    "url": pulumi.Output.from_input(SERVICE_URL),
                },
            ),
        )
    )
    assert graph.one(SUB).inputs["pushConfig"]["oidcToken"]["audience"] == SERVICE_URL
    listed = run(
        lambda: PushSubscription(
            "orders",
            args(
                audience="orders-api",
                target={
                    **args()["target"],
                    "custom_audiences": pulumi.Output.from_input(["orders-api"]),
                },
            ),
        )
    )
    assert listed.one(SUB).inputs["pushConfig"]["oidcToken"]["audience"] == "orders-api"
    _, refused = run_failing(
        lambda: PushSubscription(
            "orders",
            args(
                audience="orders-api",
                target={
                    **args()["target"],
                    "custom_audiences": pulumi.Output.from_input(["other"]),
                },
            ),
        )
    )
    error = cause(refused, PushSubscriptionInputError)
    assert isinstance(error, PushSubscriptionInputError), refused
    assert "custom_audiences" in dict(error.problems)["audience"], "checked when it resolves"


def test_dead_letter_kept_subscription_can_be_left_out_and_paused_in_perimeter_when_accepted() -> (
    None
):
    graph = run(program(dead_letter={"subscription": False}))
    assert len(graph.by_type(SUB)) == 1, "no pull subscription on the dead-letter topic"
    accepted = run(program(in_service_perimeter=True, paused=True, accept_backlog_loss=True))
    sub = accepted.one(SUB)
    assert "pushConfig" not in sub.inputs and sub.replace_on_changes == ("pushConfig",)


def test_checks_across_inputs_are_reported_with_a_bad_field() -> None:
    _, error = run_failing(program(ack_deadline_seconds="60", dead_letter={"topic": "orders"}))
    assert isinstance(error, PushSubscriptionInputError)
    problems = dict(error.problems)
    assert problems["ack_deadline_seconds"].startswith("must be an integer, not str '60'")
    assert "the subscription's own topic" in problems["dead_letter.topic"]
