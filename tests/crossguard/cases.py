"""Pass and fail fixtures per policy, in the style of Checkov/KICS: each case names the policy it
must (``fail``) or must not (``pass``) trigger, the resources of one stack in wire form, and the
pack settings given to every policy."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pushguard.preview.analyzer import AnalyzerResource
from tests.crossguard.wire import (
    AGENT, NUMBER, PROJECT, PUSH_SA, RUN_URL, UNKNOWN, account, push_config, resource, run_invoker,
    run_service, sa_member, subscription, token_creator, urn,
)

NUMBERS = {"projectNumbers": {PROJECT: NUMBER}}
DETERMINISTIC = f"https://orders-{NUMBER}.europe-west1.run.app/"
ACCOUNT_URN = urn("gcp:serviceaccount/account:Account", "orders-push")
RUN_URN = urn("gcp:cloudrunv2/service:Service", "orders")
TOPIC_URN = urn("gcp:pubsub/topic:Topic", "orders-dlq")
SUB_URN = urn("gcp:pubsub/subscription:Subscription", "orders")
FUNCTION_URN = urn("gcp:cloudfunctions/function:Function", "orders")
TOKEN_CREATOR = "roles/iam.serviceAccountTokenCreator"
PUSHER = f"serviceAccount:{PUSH_SA}"
SELF_GRANT = ("push-auth service account itself", PUSH_SA, "should go to the Pub/Sub service agent")
REMOVES_AGENT = ("authoritative", "would remove the Pub/Sub service agent's token-creator grant")


@dataclass(frozen=True)
class Case:
    policy: str
    expect: str  # "pass" or "fail"
    name: str
    resources: tuple[AnalyzerResource, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    message: tuple[str, ...] = ()
    """Texts each violation of a ``fail`` case must contain (what the user reads)."""

    @property
    def id(self) -> str:
        return f"{self.policy}:{self.expect}:{self.name}"


def case(policy: str, expect: str, name: str, *resources: AnalyzerResource,
         message: tuple[str, ...] = (), **settings: Any) -> Case:
    return Case(policy, expect, name, resources, settings, message)


def perimeter(*projects: str, services: tuple[str, ...] = ("pubsub.googleapis.com",)) -> AnalyzerResource:
    return resource("gcp:accesscontextmanager/servicePerimeter:ServicePerimeter", "perimeter", {
        "name": "accessPolicies/1/servicePerimeters/orders", "title": "orders",
        "status": {"resources": list(projects), "restrictedServices": list(services)}})


def unknown_account_sub(**kw: Any) -> AnalyzerResource:
    return subscription(pushConfig=push_config(account=UNKNOWN), deps={"pushConfig": (ACCOUNT_URN,)}, **kw)


def cloud_run_sub(**kw: Any) -> AnalyzerResource:
    return subscription(pushConfig=push_config(endpoint=UNKNOWN), deps={"pushConfig": (RUN_URN,)}, **kw)


def function_v1_sub() -> AnalyzerResource:
    """A subscription pushing to the URL of the 1st-gen function below (unknown at preview)."""
    return subscription(pushConfig=push_config(endpoint=UNKNOWN), deps={"pushConfig": (FUNCTION_URN,)})


def function_v1() -> AnalyzerResource:
    return resource("gcp:cloudfunctions/function:Function", "orders", {
        "name": "orders", "region": "europe-west1", "runtime": "python312", "triggerHttp": True,
        "httpsTriggerUrl": UNKNOWN})


def project_binding(*members: str, role: str = TOKEN_CREATOR) -> AnalyzerResource:
    """An authoritative project-level binding: it sets every member of ``role`` on the project."""
    return resource("gcp:projects/iAMBinding:IAMBinding", "token-creators",
                    {"project": PROJECT, "role": role, "members": list(members)})


def project_policy(*members: str) -> AnalyzerResource:
    """An authoritative project IAM policy that binds token creator."""
    data = {"bindings": [{"role": TOKEN_CREATOR, "members": list(members)},
                         {"role": "roles/viewer", "members": ["group:all@example.com"]}]}
    return resource("gcp:projects/iAMPolicy:IAMPolicy", "project-policy",
                    {"project": PROJECT, "policyData": json.dumps(data)})


def dlq_sub() -> AnalyzerResource:
    return subscription(deadLetterPolicy={"deadLetterTopic": f"projects/{PROJECT}/topics/orders-dlq",
                                          "maxDeliveryAttempts": 10})


def dlq_grants() -> tuple[AnalyzerResource, ...]:
    return (
        resource("gcp:pubsub/topicIAMMember:TopicIAMMember", "dlq-publisher",
                 {"topic": f"projects/{PROJECT}/topics/orders-dlq", "role": "roles/pubsub.publisher",
                  "member": AGENT}),
        resource("gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember", "dlq-subscriber",
                 {"subscription": UNKNOWN, "role": "roles/pubsub.subscriber", "member": AGENT},
                 property_dependencies={"subscription": (SUB_URN,)}),
    )


CASES: list[Case] = [
    # push-endpoint-https
    case("push-endpoint-https", "pass", "cloud run default url", subscription()),
    case("push-endpoint-https", "pass", "pull subscription", subscription(pushConfig=None)),
    case("push-endpoint-https", "pass", "exempt prefix", subscription(pushConfig=push_config("rpc://x/y")),
         exemptEndpointPrefixes=["rpc://"]),
    case("push-endpoint-https", "pass", "uri of a cloud run service in the stack", cloud_run_sub(), run_service()),
    case("push-endpoint-https", "fail", "plain http", subscription(pushConfig=push_config("http://events.example.com/p"))),
    case("push-endpoint-https", "fail", "userinfo", subscription(pushConfig=push_config("https://a:b@events.example.com/"))),
    case("push-endpoint-https", "fail", "metadata server", subscription(pushConfig=push_config("https://169.254.169.254/"))),
    case("push-endpoint-https", "fail", "exemption is for another scheme",
         subscription(pushConfig=push_config("http://events.example.com/")), exemptEndpointPrefixes=["rpc://"]),
    case("push-endpoint-https", "fail", "nested list form", subscription(pushConfig=[push_config("http://x.example.com/")])),
    # push-auth-oidc
    case("push-auth-oidc", "pass", "oidc token", subscription()),
    case("push-auth-oidc", "pass", "account created in the stack", unknown_account_sub(), account()),
    case("push-auth-oidc", "fail", "no oidc token", subscription(pushConfig=push_config(account=None))),
    # push-sa-same-project
    case("push-sa-same-project", "pass", "same project", subscription()),
    case("push-sa-same-project", "pass", "project from pack config", subscription(provider=None),
         defaultProject=PROJECT),
    case("push-sa-same-project", "pass", "account created in the stack", unknown_account_sub(), account()),
    case("push-sa-same-project", "fail", "other project",
         subscription(pushConfig=push_config(account="orders-push@other-proj.iam.gserviceaccount.com"))),
    case("push-sa-same-project", "fail", "own project property wins over the provider's",
         subscription(project="billing-prod")),
    case("push-sa-same-project", "fail", "account created in the stack in another project",
         unknown_account_sub(), account(project="shared-identities")),
    case("push-sa-same-project", "fail", "user email", subscription(pushConfig=push_config(account="dev@example.com"))),
    # push-vpcsc-default-url
    case("push-vpcsc-default-url", "pass", "no perimeter, custom domain",
         subscription(pushConfig=push_config("https://events.example.com/"))),
    case("push-vpcsc-default-url", "pass", "perimeter, default url", subscription(), perimeterProjects=[PROJECT]),
    case("push-vpcsc-default-url", "pass", "perimeter, uri of a cloud run service in the stack",
         cloud_run_sub(), run_service(), perimeterProjects=[PROJECT]),
    case("push-vpcsc-default-url", "fail", "configured perimeter project, custom domain",
         subscription(pushConfig=push_config("https://events.example.com/")), perimeterProjects=[PROJECT]),
    case("push-vpcsc-default-url", "fail", "configured by number, custom domain",
         subscription(pushConfig=push_config("https://events.example.com/")),
         perimeterProjects=[f"projects/{NUMBER}"], **NUMBERS),
    case("push-vpcsc-default-url", "fail", "perimeter declared in the stack, custom domain",
         subscription(pushConfig=push_config("https://events.example.com/")), perimeter(f"projects/{NUMBER}"),
         **NUMBERS),
    case("push-vpcsc-default-url", "fail", "project added with ServicePerimeterResource",
         subscription(pushConfig=push_config("https://events.example.com/")),
         resource("gcp:accesscontextmanager/servicePerimeterResource:ServicePerimeterResource", "member",
                  {"perimeterName": "accessPolicies/1/servicePerimeters/orders",
                   "resource": f"projects/{NUMBER}"}), **NUMBERS),
    case("push-vpcsc-default-url", "pass", "declared perimeter does not restrict pubsub",
         subscription(pushConfig=push_config("https://events.example.com/")),
         perimeter(f"projects/{NUMBER}", services=("storage.googleapis.com",)), **NUMBERS),
    case("push-vpcsc-default-url", "fail", "lookalike host", subscription(
        pushConfig=push_config("https://x.a.run.app.evil.example/")), perimeterProjects=[PROJECT]),
    case("push-vpcsc-default-url", "fail", "perimeter, 1st-gen cloudfunctions.net url", subscription(
        pushConfig=push_config("https://europe-west1-acme-orders.cloudfunctions.net/orders")),
         perimeterProjects=[PROJECT], message=("cloudfunctions.net/…", "is not one")),
    case("push-vpcsc-default-url", "fail", "perimeter, url of a 1st-gen function in the stack",
         function_v1_sub(), function_v1(), perimeterProjects=[PROJECT],
         message=("1st-gen Cloud Function", "cloudfunctions.net")),
    case("push-vpcsc-default-url", "pass", "no perimeter, url of a 1st-gen function in the stack",
         function_v1_sub(), function_v1()),
    # push-no-exactly-once
    case("push-no-exactly-once", "pass", "off", subscription(enableExactlyOnceDelivery=False)),
    case("push-no-exactly-once", "pass", "pull with exactly once",
         subscription(pushConfig=None, enableExactlyOnceDelivery=True)),
    case("push-no-exactly-once", "fail", "push with exactly once", subscription(enableExactlyOnceDelivery=True)),
    # push-agent-token-creator
    case("push-agent-token-creator", "pass", "grant on the account in the stack", subscription(),
         token_creator(), **NUMBERS),
    case("push-agent-token-creator", "pass", "granted outside the stack", subscription(),
         tokenCreatorGrantedProjects=[PROJECT], **NUMBERS),
    case("push-agent-token-creator", "pass", "project-level grant", subscription(),
         resource("gcp:projects/iAMMember:IAMMember", "agent-token-creator",
                  {"project": PROJECT, "role": "roles/iam.serviceAccountTokenCreator", "member": AGENT}),
         **NUMBERS),
    case("push-agent-token-creator", "pass", "grant on an account created in the stack",
         unknown_account_sub(), account(),
         sa_member("tc", UNKNOWN, "roles/iam.serviceAccountTokenCreator", AGENT,
                   deps={"serviceAccountId": (ACCOUNT_URN,)}), **NUMBERS),
    case("push-agent-token-creator", "pass", "binding on the account",  subscription(),
         resource("gcp:serviceaccount/iAMBinding:IAMBinding", "tc-binding", {
             "serviceAccountId": f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}",
             "role": "roles/iam.serviceAccountTokenCreator", "members": ["user:a@example.com", AGENT]}),
         **NUMBERS),
    case("push-agent-token-creator", "fail", "conditional binding only", subscription(),
         resource("gcp:serviceaccount/iAMMember:IAMMember", "tc", {
             "serviceAccountId": PUSH_SA, "role": "roles/iam.serviceAccountTokenCreator", "member": AGENT,
             "condition": {"title": "office-hours", "expression": "request.time.getHours() < 18"}}),
         **NUMBERS),
    case("push-agent-token-creator", "fail", "no grant", subscription(), **NUMBERS),
    case("push-agent-token-creator", "fail", "grant to another member", subscription(),
         sa_member("tc", f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}",
                   "roles/iam.serviceAccountTokenCreator", "user:dev@example.com"), **NUMBERS),
    # ... to the push-auth account itself instead of the service agent (no project numbers needed)
    case("push-agent-token-creator", "fail", "on the account, to the push-auth account itself", subscription(),
         sa_member("tc", f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}", TOKEN_CREATOR, PUSHER),
         message=SELF_GRANT),
    case("push-agent-token-creator", "fail", "on the project, to the push-auth account itself", subscription(),
         resource("gcp:projects/iAMMember:IAMMember", "tc", {"project": PROJECT, "role": TOKEN_CREATOR,
                                                             "member": PUSHER}),
         message=(*SELF_GRANT, f"project:{PROJECT}")),
    case("push-agent-token-creator", "fail", "to an account created in the stack, itself",
         unknown_account_sub(), account(),
         sa_member("tc", UNKNOWN, TOKEN_CREATOR, UNKNOWN,
                   deps={"serviceAccountId": (ACCOUNT_URN,), "member": (ACCOUNT_URN,)}),
         message=SELF_GRANT),
    case("push-agent-token-creator", "fail", "to the push-auth account itself, numbers configured", subscription(),
         sa_member("tc", f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}", TOKEN_CREATOR, PUSHER),
         message=("has no roles/iam.serviceAccountTokenCreator", "push-auth service account itself"),
         **NUMBERS),
    case("push-agent-token-creator", "pass", "self grant beside the service agent's", subscription(),
         sa_member("tc", f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}", TOKEN_CREATOR, PUSHER),
         token_creator()),
    # authoritative bindings of the role on the project (no project numbers needed)
    case("push-agent-token-creator", "fail", "project IAMBinding without the service agent", subscription(),
         project_binding("group:ops@example.com"),
         message=(*REMOVES_AGENT, f"project:{PROJECT}", "group:ops@example.com")),
    case("push-agent-token-creator", "fail", "project IAMBinding beside the agent's grant on the account",
         subscription(), token_creator(), project_binding("group:ops@example.com"),
         message=REMOVES_AGENT, **NUMBERS),
    case("push-agent-token-creator", "fail", "project IAMPolicy binding the role without the service agent",
         subscription(), project_policy("group:ops@example.com"), message=REMOVES_AGENT),
    case("push-agent-token-creator", "pass", "project IAMBinding that keeps the service agent", subscription(),
         project_binding("group:ops@example.com", AGENT)),
    case("push-agent-token-creator", "pass", "project IAMBinding that keeps the service agent, numbers",
         subscription(), project_binding("group:ops@example.com", AGENT), **NUMBERS),
    case("push-agent-token-creator", "pass", "project IAMPolicy that keeps the service agent", subscription(),
         project_policy(AGENT)),
    case("push-agent-token-creator", "pass", "project IAMBinding of another role", subscription(),
         token_creator(), project_binding("group:ops@example.com", role="roles/viewer"), **NUMBERS),
    # push-invoker-binding
    case("push-invoker-binding", "pass", "binding on the deterministic url's service",
         subscription(pushConfig=push_config(DETERMINISTIC)), run_invoker()),
    case("push-invoker-binding", "pass", "external endpoint",
         subscription(pushConfig=push_config("https://hooks.partner.example/"))),
    case("push-invoker-binding", "pass", "binding through the service's urn", cloud_run_sub(), run_service(),
         run_invoker(service="orders", deps={"name": (RUN_URN,)})),
    case("push-invoker-binding", "fail", "no binding on the deterministic url's service",
         subscription(pushConfig=push_config(DETERMINISTIC))),
    case("push-invoker-binding", "fail", "cloud run service in the stack, no binding", cloud_run_sub(), run_service()),
    case("push-invoker-binding", "fail", "binding for another account",
         subscription(pushConfig=push_config(DETERMINISTIC)),
         run_invoker(member="serviceAccount:other@acme-orders.iam.gserviceaccount.com")),
    # push-dead-letter-iam
    case("push-dead-letter-iam", "pass", "no dead-letter topic", subscription(), **NUMBERS),
    case("push-dead-letter-iam", "pass", "both grants", dlq_sub(), *dlq_grants(), **NUMBERS),
    case("push-dead-letter-iam", "fail", "no grants", dlq_sub(), **NUMBERS),
    case("push-dead-letter-iam", "fail", "publisher only", dlq_sub(), dlq_grants()[0], **NUMBERS),
    # push-no-query-token
    case("push-no-query-token", "pass", "harmless parameter",
         subscription(pushConfig=push_config(RUN_URL + "?tenant=eu"))),
    case("push-no-query-token", "fail", "token parameter", subscription(pushConfig=push_config(RUN_URL + "?token=s3cr3t"))),
    case("push-no-query-token", "fail", "api_key parameter", subscription(pushConfig=push_config(RUN_URL + "?API-Key=x"))),
    # push-audience-explicit
    case("push-audience-explicit", "pass", "explicit", subscription()),
    case("push-audience-explicit", "pass", "unknown yet", subscription(pushConfig=push_config(audience=UNKNOWN))),
    case("push-audience-explicit", "fail", "implicit", subscription(pushConfig=push_config(audience=None))),
    # push-sa-broad-grants
    case("push-sa-broad-grants", "pass", "group may act as", subscription(),
         sa_member("act-as", PUSH_SA, "roles/iam.serviceAccountUser", "group:platform@example.com")),
    case("push-sa-broad-grants", "fail", "allUsers may act as", subscription(),
         sa_member("act-as", PUSH_SA, "roles/iam.serviceAccountUser", "allUsers")),
    case("push-sa-broad-grants", "fail", "domain may mint tokens", subscription(),
         sa_member("tc", f"projects/-/serviceAccounts/{PUSH_SA}", "roles/iam.serviceAccountTokenCreator",
                   "domain:example.com")),
]
