"""Wire-form resources for the protocol tests: what the Pulumi engine sends a policy pack."""

from __future__ import annotations

from typing import Any

from pushguard.gate.analyzer import AnalyzerResource
from tests.helpers import NUMBER, PROJECT, UNKNOWN

AGENT = f"serviceAccount:service-{NUMBER}@gcp-sa-pubsub.iam.gserviceaccount.com"
PUSH_SA = f"orders-push@{PROJECT}.iam.gserviceaccount.com"
RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
PROVIDER = {"project": PROJECT}
SUBSCRIPTION = "gcp:pubsub/subscription:Subscription"


def secret(value: Any) -> dict[str, Any]:
    """A secret envelope around ``value``."""
    return {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": value}


def urn(kind: str, name: str) -> str:
    return f"urn:pulumi:dev::team::{kind}::{name}"


ACCOUNT_URN = urn("gcp:serviceaccount/account:Account", "orders-push")
"""The URN of :func:`account`'s default service account."""
RUN_URN = urn("gcp:cloudrunv2/service:Service", "orders")
"""The URN of :func:`run_service`'s default Cloud Run service."""


def resource(kind: str, name: str, props: dict[str, Any], **kw: Any) -> AnalyzerResource:
    kw.setdefault("provider", PROVIDER)
    return AnalyzerResource(urn=urn(kind, name), type=kind, name=name, properties=props, **kw)


def push_config(
    endpoint: Any = RUN_URL, account: Any = PUSH_SA, audience: Any = "orders-api"
) -> dict[str, Any]:
    config: dict[str, Any] = {"pushEndpoint": endpoint}
    if account is not None:
        config["oidcToken"] = {"serviceAccountEmail": account}
        if audience is not None:
            config["oidcToken"]["audience"] = audience
    return config


def subscription(
    name: str = "orders",
    deps: dict[str, tuple[str, ...]] | None = None,
    provider: Any = PROVIDER,
    **props: Any,
) -> AnalyzerResource:
    """A raw gcp.pubsub.Subscription with a compliant push config unless overridden."""
    body = {"topic": f"projects/{PROJECT}/topics/orders", "name": name, "pushConfig": push_config()}
    body.update(props)
    body = {k: v for k, v in body.items() if v is not None}
    return resource(SUBSCRIPTION, name, body, provider=provider, property_dependencies=deps or {})


def account(
    name: str = "orders-push", project: str = PROJECT, email: Any = None
) -> AnalyzerResource:
    props: dict[str, Any] = {"accountId": name, "project": project}
    if email is not None:
        props["email"] = email
    return resource("gcp:serviceaccount/account:Account", name, props)


def sa_member(
    name: str,
    account_ref: str,
    role: str,
    member: Any,
    deps: dict[str, tuple[str, ...]] | None = None,
) -> AnalyzerResource:
    return resource(
        "gcp:serviceaccount/iAMMember:IAMMember",
        name,
        {"serviceAccountId": account_ref, "role": role, "member": member},
        property_dependencies=deps or {},
    )


def token_creator(account_email: str = PUSH_SA) -> AnalyzerResource:
    return sa_member(
        "token-creator",
        f"projects/{PROJECT}/serviceAccounts/{account_email}",
        "roles/iam.serviceAccountTokenCreator",
        AGENT,
    )


def run_service(name: str = "orders", uri: Any = UNKNOWN) -> AnalyzerResource:
    return resource(
        "gcp:cloudrunv2/service:Service",
        name,
        {"name": name, "location": "europe-west1", "uri": uri},
    )


def run_invoker(
    service: str = "orders",
    member: str = f"serviceAccount:{PUSH_SA}",
    deps: dict[str, tuple[str, ...]] | None = None,
) -> AnalyzerResource:
    return resource(
        "gcp:cloudrunv2/serviceIamMember:ServiceIamMember",
        f"{service}-invoker",
        {
            "name": service,
            "location": "europe-west1",
            "role": "roles/run.invoker",
            "member": member,
        },
        property_dependencies=deps or {},
    )
