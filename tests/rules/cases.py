"""Pass and fail fixtures per rule, in the style of Checkov/KICS: each case names the rule it must
(``fail``) or must not (``pass``) trigger, and the facts of one subscription."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pushguard.rules import IamBinding, IamGrant, InvokerTarget

AGENT = "serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com"
PUSH_SA = "orders-push@acme-orders.iam.gserviceaccount.com"
RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app/push"

BASE: dict[str, Any] = {
    "resource": "projects/acme-orders/subscriptions/orders",
    "project_id": "acme-orders",
    "project_number": "123456789012",
    "push_endpoint": RUN_URL,
    "push_auth_account": PUSH_SA,
    "audience": "orders-push",
}


@dataclass(frozen=True)
class Case:
    rule: str
    expect: str  # "pass" or "fail"
    name: str
    facts: dict[str, Any]
    message: tuple[str, ...] = ()
    """Texts every violation of a ``fail`` case must contain (what the user reads)."""

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.expect}:{self.name}"


def case(rule: str, expect: str, name: str, *, message: tuple[str, ...] = (), **facts: Any) -> Case:
    return Case(rule, expect, name, {**BASE, **facts}, message)


TOKEN = IamGrant(role="roles/iam.serviceAccountTokenCreator", member=AGENT, resource="sa")
SELF_TOKEN = IamGrant(role="roles/iam.serviceAccountTokenCreator", member=f"serviceAccount:{PUSH_SA}",
                      resource=f"projects/acme-orders/serviceAccounts/{PUSH_SA}")
NO_NUMBER: dict[str, Any] = {"project_number": None}


def binding(*members: str, resource: str = "projects/acme-orders", **facts: Any) -> dict[str, Any]:
    """Facts with an authoritative binding of token creator (``*IAMBinding``, ``*IAMPolicy``) on
    ``resource``: the binding, and its members among the grants (with ``facts``' own grants)."""
    role = "roles/iam.serviceAccountTokenCreator"
    grants = tuple(IamGrant(role=role, member=m, resource=resource) for m in members)
    return {**facts,
            "push_auth_account_grants": (*facts.get("push_auth_account_grants", ()), *grants),
            "push_auth_account_bindings": (IamBinding(role=role, members=members, resource=resource),)}


V1_FUNCTION = InvokerTarget(kind="cloud-function-v1", name="orders")
INVOKER = IamGrant(role="roles/run.invoker", member=f"serviceAccount:{PUSH_SA}", resource="run")

CASES: list[Case] = [
    # push-endpoint-https
    case("push-endpoint-https", "pass", "cloud run default url"),
    case("push-endpoint-https", "pass", "custom domain", push_endpoint="https://events.example.com/p"),
    case("push-endpoint-https", "pass", "explicit 443", push_endpoint="https://events.example.com:443/"),
    case("push-endpoint-https", "pass", "pull subscription", push_endpoint=None),
    case("push-endpoint-https", "pass", "exempt prefix", push_endpoint="rpc://pubsub.internal/x",
         exempt_endpoint_prefixes=("rpc://",)),
    case("push-endpoint-https", "fail", "exempt host is a prefix of the endpoint's host",
         push_endpoint="http://partner.example.attacker.net/push",
         exempt_endpoint_prefixes=("http://partner.example",)),
    case("push-endpoint-https", "fail", "exempt host as userinfo",
         push_endpoint="https://partner.example@attacker.net/push",
         exempt_endpoint_prefixes=("https://partner.example",)),
    case("push-endpoint-https", "fail", "exempt host with userinfo and a port",
         push_endpoint="http://partner.example:1@10.0.0.1/push",
         exempt_endpoint_prefixes=("http://partner.example",)),
    case("push-endpoint-https", "fail", "exempt path is a string prefix of another segment",
         push_endpoint="http://partner.example/hooks-evil",
         exempt_endpoint_prefixes=("http://partner.example/hooks",)),
    case("push-endpoint-https", "pass", "exempt host and path",
         push_endpoint="http://PARTNER.example/hooks/orders",
         exempt_endpoint_prefixes=("http://partner.example/hooks",)),
    case("push-endpoint-https", "fail", "prefix of another host", exempt_endpoint_prefixes=("https://partner.example/",),
         push_endpoint="http://partner.example.evil.test/"),
    case("push-endpoint-https", "fail", "plain http", push_endpoint="http://events.example.com/p"),
    case("push-endpoint-https", "fail", "upper-case HTTP", push_endpoint="HTTP://events.example.com/"),
    case("push-endpoint-https", "fail", "userinfo", push_endpoint="https://u:p@events.example.com/"),
    case("push-endpoint-https", "fail", "relative", push_endpoint="/push"),
    case("push-endpoint-https", "fail", "no host", push_endpoint="https:///push"),
    case("push-endpoint-https", "fail", "space", push_endpoint="https://events.example.com/a b"),
    case("push-endpoint-https", "fail", "newline", push_endpoint="https://events.example.com/\n"),
    case("push-endpoint-https", "fail", "metadata server", push_endpoint="https://169.254.169.254/"),
    case("push-endpoint-https", "fail", "private address", push_endpoint="https://10.1.2.3/push"),
    case("push-endpoint-https", "fail", "localhost", push_endpoint="https://localhost/push"),
    case("push-endpoint-https", "fail", "internal name", push_endpoint="https://svc.corp.internal/"),
    case("push-endpoint-https", "fail", "octal-ish host", push_endpoint="https://0x7f.1/"),
    case("push-endpoint-https", "fail", "ftp", push_endpoint="ftp://events.example.com/"),
    # push-auth-oidc
    case("push-auth-oidc", "pass", "with account"),
    case("push-auth-oidc", "pass", "account created in stack", push_auth_account=None,
         push_auth_account_project="acme-orders"),
    case("push-auth-oidc", "pass", "pull subscription", push_endpoint=None, push_auth_account=None),
    case("push-auth-oidc", "fail", "no account", push_auth_account=None),
    case("push-auth-oidc", "fail", "empty account", push_auth_account=""),
    # push-sa-same-project
    case("push-sa-same-project", "pass", "same project"),
    case("push-sa-same-project", "pass", "case differs", push_auth_account=PUSH_SA.upper()),
    case("push-sa-same-project", "pass", "compute default of same number",
         push_auth_account="123456789012-compute@developer.gserviceaccount.com"),
    case("push-sa-same-project", "pass", "domain-scoped project", project_id="example.com:orders",
         push_auth_account="push@orders.example.com.iam.gserviceaccount.com"),
    case("push-sa-same-project", "fail", "other project",
         push_auth_account="orders-push@acme-shared.iam.gserviceaccount.com"),
    case("push-sa-same-project", "fail", "compute default of other project",
         push_auth_account="999999999999-compute@developer.gserviceaccount.com"),
    case("push-sa-same-project", "fail", "user email", push_auth_account="alice@example.com"),
    case("push-sa-same-project", "fail", "account created in other project", push_auth_account=None,
         push_auth_account_project="acme-shared"),
    case("push-sa-same-project", "fail", "lookalike domain",
         push_auth_account="x@acme-orders.iam.gserviceaccount.com.evil.example"),
    # push-vpcsc-default-url
    case("push-vpcsc-default-url", "pass", "hash url in perimeter", in_service_perimeter=True),
    case("push-vpcsc-default-url", "pass", "deterministic url in perimeter", in_service_perimeter=True,
         push_endpoint="https://orders-123456789012.europe-west1.run.app/push"),
    case("push-vpcsc-default-url", "pass", "tagged deterministic url", in_service_perimeter=True,
         push_endpoint="https://blue---orders-123456789012.europe-west1.run.app/"),
    case("push-vpcsc-default-url", "pass", "custom domain outside perimeter",
         push_endpoint="https://events.example.com/"),
    case("push-vpcsc-default-url", "fail", "custom domain", in_service_perimeter=True,
         push_endpoint="https://events.example.com/"),
    case("push-vpcsc-default-url", "fail", "cloudfunctions.net", in_service_perimeter=True,
         push_endpoint="https://europe-west1-acme-orders.cloudfunctions.net/orders"),
    case("push-vpcsc-default-url", "fail", "suffix lookalike", in_service_perimeter=True,
         push_endpoint="https://orders-3kq2x7ab9c-ew.a.run.app.evil.example/"),
    case("push-vpcsc-default-url", "fail", "no dot lookalike", in_service_perimeter=True,
         push_endpoint="https://orders-3kq2x7ab9c-ewa.run.app/"),
    case("push-vpcsc-default-url", "fail", "userinfo trick", in_service_perimeter=True,
         push_endpoint="https://orders-3kq2x7ab9c-ew.a.run.app@evil.example/"),
    case("push-vpcsc-default-url", "fail", "non-default port", in_service_perimeter=True,
         push_endpoint="https://orders-3kq2x7ab9c-ew.a.run.app:8443/"),
    case("push-vpcsc-default-url", "fail", "nested label", in_service_perimeter=True,
         push_endpoint="https://x.orders-3kq2x7ab9c-ew.a.run.app/"),
    case("push-vpcsc-default-url", "fail", "http default url", in_service_perimeter=True,
         push_endpoint="http://orders-3kq2x7ab9c-ew.a.run.app/"),
    case("push-vpcsc-default-url", "fail", "1st-gen function url with its target",
         in_service_perimeter=True, invoker_target=V1_FUNCTION,
         push_endpoint="https://europe-west1-acme-orders.cloudfunctions.net/orders",
         message=("cloudfunctions.net/…", "is not one")),
    case("push-vpcsc-default-url", "fail", "endpoint not known yet, 1st-gen function target",
         in_service_perimeter=True, push_endpoint=None, unknown=frozenset({"push_endpoint"}),
         invoker_target=V1_FUNCTION, message=("1st-gen Cloud Function", "cloudfunctions.net")),
    case("push-vpcsc-default-url", "fail", "presumed url of a 1st-gen function in the deployment",
         in_service_perimeter=True, push_endpoint=None, push_endpoint_source="cloud-function",
         invoker_target=V1_FUNCTION, message=("1st-gen Cloud Function",)),
    case("push-vpcsc-default-url", "pass", "presumed uri of a cloud run service", in_service_perimeter=True,
         push_endpoint=None, push_endpoint_source="cloud-run",
         invoker_target=InvokerTarget(kind="cloud-run", name="orders")),
    case("push-vpcsc-default-url", "pass", "1st-gen function target outside a perimeter",
         push_endpoint=None, unknown=frozenset({"push_endpoint"}), invoker_target=V1_FUNCTION),
    case("push-vpcsc-default-url", "pass", "default url wins over a stale target kind", in_service_perimeter=True,
         invoker_target=V1_FUNCTION),
    # push-no-exactly-once
    case("push-no-exactly-once", "pass", "off"),
    case("push-no-exactly-once", "pass", "pull with exactly once", push_endpoint=None,
         exactly_once_delivery=True),
    case("push-no-exactly-once", "fail", "on", exactly_once_delivery=True),
    # push-agent-token-creator
    case("push-agent-token-creator", "pass", "grant on account", push_auth_account_grants=(TOKEN,)),
    case("push-agent-token-creator", "pass", "openid token creator role", push_auth_account_grants=(
        IamGrant(role="roles/iam.serviceAccountOpenIdTokenCreator", member=AGENT),)),
    case("push-agent-token-creator", "pass", "known granted elsewhere", push_auth_account_grants=(),
         token_creator_known_granted=True),
    case("push-agent-token-creator", "fail", "no grant", push_auth_account_grants=()),
    case("push-agent-token-creator", "fail", "other project's agent", push_auth_account_grants=(
        IamGrant(role="roles/iam.serviceAccountTokenCreator",
                 member="serviceAccount:service-1@gcp-sa-pubsub.iam.gserviceaccount.com"),)),
    case("push-agent-token-creator", "fail", "only conditional", push_auth_account_grants=(
        IamGrant(role="roles/iam.serviceAccountTokenCreator", member=AGENT, condition="expires"),)),
    case("push-agent-token-creator", "fail", "owner is not enough", push_auth_account_grants=(
        IamGrant(role="roles/owner", member=AGENT),)),
    case("push-agent-token-creator", "fail", "granted to the push-auth account itself, no project number",
         push_auth_account_grants=(SELF_TOKEN,), **NO_NUMBER,
         message=("push-auth service account itself", PUSH_SA, "should go to the Pub/Sub service agent")),
    case("push-agent-token-creator", "fail", "granted to the push-auth account itself on its project",
         push_auth_account_grants=(SELF_TOKEN.model_copy(update={"resource": "projects/acme-orders"}),),
         **NO_NUMBER, message=("push-auth service account itself", "projects/acme-orders")),
    case("push-agent-token-creator", "fail", "granted to the push-auth account itself, number known",
         push_auth_account_grants=(SELF_TOKEN,),
         message=("has no roles/iam.serviceAccountTokenCreator", "push-auth service account itself")),
    case("push-agent-token-creator", "pass", "self grant beside a service agent's grant, no number",
         push_auth_account_grants=(SELF_TOKEN, TOKEN), **NO_NUMBER),
    case("push-agent-token-creator", "pass", "self grant but granted elsewhere",
         push_auth_account_grants=(SELF_TOKEN,), token_creator_known_granted=True),
    case("push-agent-token-creator", "fail", "authoritative project binding without the agent, no number",
         **binding("user:ops@example.com", **NO_NUMBER),
         message=("authoritative", "projects/acme-orders", "user:ops@example.com",
                  "would remove the Pub/Sub service agent's token-creator grant")),
    case("push-agent-token-creator", "fail", "authoritative binding beside the agent's grant on the account",
         **binding("user:ops@example.com", push_auth_account_grants=(TOKEN,)),
         message=("would remove the Pub/Sub service agent's token-creator grant",)),
    case("push-agent-token-creator", "fail", "authoritative binding with another project's agent",
         **binding("serviceAccount:service-1@gcp-sa-pubsub.iam.gserviceaccount.com",
                   push_auth_account_grants=(TOKEN,)),
         message=("would remove the Pub/Sub service agent's token-creator grant",)),
    case("push-agent-token-creator", "fail", "authoritative binding even when granted elsewhere",
         **binding("user:ops@example.com", token_creator_known_granted=True),
         message=("would remove the Pub/Sub service agent's token-creator grant",)),
    case("push-agent-token-creator", "fail", "authoritative binding with no member", **binding(**NO_NUMBER),
         message=("lists no member", "would remove the Pub/Sub service agent's token-creator grant")),
    case("push-agent-token-creator", "pass", "authoritative binding that keeps the agent",
         **binding("user:ops@example.com", AGENT)),
    case("push-agent-token-creator", "pass", "authoritative binding that keeps a service agent, no number",
         **binding("user:ops@example.com", AGENT, **NO_NUMBER)),
    case("push-agent-token-creator", "pass", "conditional authoritative binding", push_auth_account_grants=(TOKEN,),
         push_auth_account_bindings=(IamBinding(role="roles/iam.serviceAccountTokenCreator",
                                                members=("user:ops@example.com",), condition="expires"),)),
    case("push-agent-token-creator", "pass", "authoritative binding of another role", push_auth_account_grants=(TOKEN,),
         push_auth_account_bindings=(IamBinding(role="roles/viewer", members=("user:ops@example.com",)),)),
    # push-invoker-binding
    case("push-invoker-binding", "pass", "run invoker",
         invoker_target=InvokerTarget(kind="cloud-run", name="orders", grants=(INVOKER,))),
    case("push-invoker-binding", "pass", "function invoker", invoker_target=InvokerTarget(
        kind="cloud-function-v1", grants=(IamGrant(role="roles/cloudfunctions.invoker",
                                                   member=f"serviceAccount:{PUSH_SA}"),))),
    case("push-invoker-binding", "pass", "external", invoker_target=InvokerTarget(kind="external")),
    case("push-invoker-binding", "fail", "no grant",
         invoker_target=InvokerTarget(kind="cloud-run", name="orders", grants=())),
    case("push-invoker-binding", "fail", "wrong product role", invoker_target=InvokerTarget(
        kind="cloud-run", grants=(IamGrant(role="roles/cloudfunctions.invoker",
                                           member=f"serviceAccount:{PUSH_SA}"),))),
    case("push-invoker-binding", "fail", "other account", invoker_target=InvokerTarget(
        kind="cloud-run", grants=(IamGrant(role="roles/run.invoker",
                                           member="serviceAccount:x@acme-orders.iam.gserviceaccount.com"),))),
    # push-dead-letter-iam
    case("push-dead-letter-iam", "pass", "both grants", dead_letter_topic="projects/acme-orders/topics/dlq",
         dead_letter_topic_grants=(IamGrant(role="roles/pubsub.publisher", member=AGENT),),
         subscription_grants=(IamGrant(role="roles/pubsub.subscriber", member=AGENT),)),
    case("push-dead-letter-iam", "pass", "no dead letter"),
    case("push-dead-letter-iam", "fail", "no publisher", dead_letter_topic="projects/acme-orders/topics/dlq",
         dead_letter_topic_grants=(),
         subscription_grants=(IamGrant(role="roles/pubsub.subscriber", member=AGENT),)),
    case("push-dead-letter-iam", "fail", "no subscriber", dead_letter_topic="projects/acme-orders/topics/dlq",
         dead_letter_topic_grants=(IamGrant(role="roles/pubsub.publisher", member=AGENT),),
         subscription_grants=()),
    # push-no-query-token
    case("push-no-query-token", "pass", "no query"),
    case("push-no-query-token", "pass", "harmless query", push_endpoint=f"{RUN_URL}?tenant=a&v=2"),
    case("push-no-query-token", "fail", "token", push_endpoint=f"{RUN_URL}?token=s3cr3t"),
    case("push-no-query-token", "fail", "api key spelled oddly", push_endpoint=f"{RUN_URL}?API-Key=x"),
    case("push-no-query-token", "fail", "blank secret", push_endpoint=f"{RUN_URL}?secret="),
    case("push-no-query-token", "fail", "token beside userinfo (a malformed endpoint)",
         push_endpoint="https://user:pw@orders.example.com/p?token=X"),
    # push-audience-explicit
    case("push-audience-explicit", "pass", "set"),
    case("push-audience-explicit", "pass", "unauthenticated (push-auth-oidc reports)",
         push_auth_account=None, audience=None),
    case("push-audience-explicit", "fail", "missing", audience=None),
    case("push-audience-explicit", "fail", "blank", audience="  "),
    # push-sa-broad-grants
    case("push-sa-broad-grants", "pass", "agent only", push_auth_account_grants=(TOKEN,)),
    case("push-sa-broad-grants", "pass", "viewer to everyone", push_auth_account_grants=(
        IamGrant(role="roles/iam.serviceAccountViewer", member="allUsers"),)),
    case("push-sa-broad-grants", "fail", "token creator to allUsers", push_auth_account_grants=(
        IamGrant(role="roles/iam.serviceAccountTokenCreator", member="allUsers"),)),
    case("push-sa-broad-grants", "fail", "actAs to a domain", push_auth_account_grants=(
        IamGrant(role="roles/iam.serviceAccountUser", member="domain:example.com",
                 resource="projects/acme-orders"),)),
    case("push-sa-broad-grants", "fail", "token creator to all authenticated", push_auth_account_grants=(
        IamGrant(role="roles/iam.serviceAccountTokenCreator", member="allAuthenticatedUsers"),)),
]
