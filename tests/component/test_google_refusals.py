"""What Google would refuse, or deploy other than the team meant, refused by ``PushSubscription``
under Pulumi's mock runtime before any of its resources is registered (issue 36, item 1): an
expiration shorter than the message retention, a deterministic run.app URL of another region or
project, a 2nd-gen function's cloudfunctions.net URL, a filter outside the syntax of Google's
"Filter messages" page; and what Google accepts and the component refused (a camelCase 2nd-gen
function name), plus the component's default of never expiring."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp
import pytest

from pushguard.components import TYPE_TOKEN, PushSubscription, PushSubscriptionInputError
from tests.helpers import NUMBER, PROJECT, cause, mocks, run, run_failing
from tests.mock_runtime.engine import run_program_capturing

RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
SUB = "gcp:pubsub/subscription:Subscription"
RUN_MEMBER = "gcp:cloudrunv2/serviceIamMember:ServiceIamMember"
FUNCTION_V2 = "gcp:cloudfunctionsv2/function:Function"
ORDERS = {"kind": "cloud-run", "name": "orders", "location": "europe-west1"}
FILTER_PAGE = "https://cloud.google.com/pubsub/docs/subscription-message-filter"


def args(**overrides: Any) -> dict[str, Any]:
    return {"topic": "orders", "push_endpoint": RUN_URL, "target": ORDERS, **overrides}


def refused(**overrides: Any) -> dict[str, str]:
    """The problems of a component refused at construction, which registered nothing."""
    graph, error = run_failing(lambda: PushSubscription("orders", args(**overrides)))
    assert isinstance(error, PushSubscriptionInputError), error
    assert graph.records == [], "nothing may be registered for bad inputs"
    return dict(error.problems)


def refused_when_resolved(**overrides: Any) -> dict[str, str]:
    """The problems of a component refused when its Outputs resolved: of its resources only the
    component itself was registered (every child depends on the validation)."""
    graph, raised = run_failing(lambda: PushSubscription("orders", args(**overrides)))
    error = cause(raised, PushSubscriptionInputError)
    assert isinstance(error, PushSubscriptionInputError), raised
    assert [r.type for r in graph.records if r.type != FUNCTION_V2] == [TYPE_TOKEN], [
        r.type for r in graph.records
    ]
    return dict(error.problems)


# -- expiration ---------------------------------------------------------------------------------


def test_expiration_shorter_than_the_retention_is_refused() -> None:
    """subscription-properties ties the expiration period to the message retention duration:
    86400s (the documented minimum) with the default 7-day retention is refused."""
    problems = refused(expiration_ttl="86400s")
    assert "604800s, Pub/Sub's default" in problems["expiration_ttl"]
    problems = refused(expiration_ttl="172800s", message_retention_duration="259200s")
    assert "259200s, message_retention_duration" in problems["expiration_ttl"]
    kept = run(lambda: PushSubscription("orders", args(
        expiration_ttl="86400s", message_retention_duration="86400s"
    ))).one(SUB)  # fmt: skip
    assert kept.inputs["expirationPolicy"] == {"ttl": "86400s"}


def test_expiration_is_checked_again_when_the_retention_resolves() -> None:
    problems = refused_when_resolved(
        expiration_ttl="604800s",
        message_retention_duration=pulumi.Output.from_input("1209600s"),
    )
    assert "1209600s, message_retention_duration" in problems["expiration_ttl"]


def test_subscriptions_the_component_makes_never_expire_by_default() -> None:
    graph = run(lambda: PushSubscription("orders", args(dead_letter={})))
    expirations = {r.name: r.inputs.get("expirationPolicy") for r in graph.by_type(SUB)}
    assert expirations == {"orders": {"ttl": ""}, "orders-dead-letter": {"ttl": ""}}


# -- deterministic run.app URLs --------------------------------------------------------------------

ELSEWHERE = "https://orders-210987654321.us-central1.run.app/push"
"""The issue's URL: service orders, project number 210987654321, region us-central1."""


def test_a_deterministic_url_of_another_region_or_project_is_refused() -> None:
    problems = refused(push_endpoint=ELSEWHERE, project_number=NUMBER)
    assert "'us-central1'" in problems["target.location"]
    assert "set target.location to 'us-central1'" in problems["target.location"]
    assert "numbered 210987654321" in problems["target.project"]
    assert f"project_number {NUMBER}" in problems["target.project"]
    here = f"https://orders-{NUMBER}.us-central1.run.app/push"
    assert set(refused(push_endpoint=here, project_number=NUMBER)) == {"target.location"}
    function = {"kind": "cloud-function-v2", "name": "orders", "location": "europe-west1"}
    assert "target.location" in refused(push_endpoint=ELSEWHERE, target=function)


def test_what_a_url_cannot_say_is_not_judged() -> None:
    """Without project_number, or with the service in another project, the number is not
    compared; the right region and number pass; a hash URL names no region or number at all."""
    assert set(refused(push_endpoint=ELSEWHERE)) == {"target.location"}, "no number to compare"
    matching = f"https://orders-{NUMBER}.europe-west1.run.app/push"
    other = {**ORDERS, "project": "acme-shared"}
    east = "https://orders-210987654321.europe-west1.run.app/push"
    for overrides in (
        {"push_endpoint": matching, "project_number": NUMBER},
        {"push_endpoint": east},
        {"push_endpoint": east, "project_number": NUMBER, "target": other},
        {"push_endpoint": "https://orders-3kq2x7ab9c-uc.a.run.app/push"},
    ):
        graph = run(lambda o=overrides: PushSubscription("orders", args(**o)))
        assert graph.by_type(SUB), overrides


def test_a_deterministic_url_is_checked_when_outputs_resolve() -> None:
    problems = refused_when_resolved(
        push_endpoint=pulumi.Output.from_input(ELSEWHERE),
        project_number=pulumi.Output.from_input(NUMBER),
    )
    assert {"target.location", "target.project"} <= set(problems)


# -- 2nd-gen functions ----------------------------------------------------------------------------

RENDER = {"kind": "cloud-function-v2", "name": "renderInvoice", "location": "europe-west1"}


def test_a_2nd_gen_functions_cloudfunctions_net_url_is_refused_naming_its_cloud_run_uri() -> None:
    endpoint = "https://europe-west1-acme-orders.cloudfunctions.net/renderInvoice"
    problems = refused(push_endpoint=endpoint, target=RENDER)
    assert "service_config.uri" in problems["push_endpoint"]
    assert "audience" not in problems, "one problem, on the field to change"


def function_program(endpoint: str) -> Any:
    """A team's program: a 2nd-gen function and its push subscription, wired through the
    function's outputs (``url`` or ``service_config.uri``)."""

    def program() -> None:
        fn = gcp.cloudfunctionsv2.Function("render", name="renderInvoice", location="europe-west1")
        url = fn.url if endpoint == "url" else fn.service_config.uri
        PushSubscription(
            "orders",
            args(
                push_endpoint=url.apply(lambda u: f"{u}/push"),
                target={**RENDER, "name": fn.name},
            ),
        )

    return program


def test_fn_url_fails_at_up_before_any_resource_of_the_component_is_registered() -> None:
    """The issue's failure: ``push_endpoint=fn.url`` passed the preview (the URL is unknown
    there, and still is) and failed at ``up`` after the service account and grants existed.
    Now nothing of the component is registered: only the function (the program's) exists."""
    preview = run(function_program("url"))
    assert preview.by_type(SUB), "at preview a new function's URL is not known: not judged"
    graph, raised = run_program_capturing(
        function_program("url"), mocks(), config={"gcp:project": PROJECT}, preview=False
    )
    error = cause(raised, PushSubscriptionInputError)
    assert isinstance(error, PushSubscriptionInputError), raised
    assert "service_config.uri" in dict(error.problems)["push_endpoint"]
    # registration order follows the SDK's event loop, not the program's order
    assert sorted(r.type for r in graph.records) == sorted([FUNCTION_V2, TYPE_TOKEN])


def test_fn_service_config_uri_deploys_with_the_invoker_on_the_functions_service() -> None:
    graph = run(function_program("uri"), preview=False)
    sub = graph.one(SUB).inputs["pushConfig"]
    assert sub["pushEndpoint"].startswith("https://renderinvoice-")
    assert sub["pushEndpoint"].endswith(".a.run.app/push")
    assert sub["oidcToken"]["audience"] == sub["pushEndpoint"].removesuffix("/push")
    assert graph.one(RUN_MEMBER).inputs["name"] == "renderinvoice"


@pytest.mark.parametrize(
    ("name", "service"),
    [("renderInvoice", "renderinvoice"), ("render_invoice", "render-invoice"), ("r", "r")],
)
def test_2nd_gen_function_names_are_accepted_and_granted_on_their_service(
    name: str, service: str
) -> None:
    target = {**RENDER, "name": name}
    endpoint = f"https://{service}-3kq2x7ab9c-ew.a.run.app/push"
    graph = run(lambda: PushSubscription("orders", args(push_endpoint=endpoint, target=target)))
    assert graph.one(RUN_MEMBER).inputs["name"] == service
    other = "https://render-invoice-3kq2x7ab9c-ew.a.run.app/push"
    if service != "render-invoice":
        problem = refused(push_endpoint=other, target=target)["target.name"]
        named = f"its Cloud Run service {service!r}" if service != name else f"is {name!r} but"
        assert named in problem and "service 'render-invoice'" in problem
    assert "function name" in refused(target={**RENDER, "name": "render_"})["target.name"]


# -- filters --------------------------------------------------------------------------------------

DOCUMENTED = [
    'attributes.author="unknown"',
    'attributes.is-even = "false"',
    "attributes:name",
    "NOT attributes:name",
    'attributes.name = "com"',
    'attributes.name != "com"',
    'hasPrefix(attributes.name, "co")',
    'NOT hasPrefix(attributes.name, "co")',
    'attributes."iana.org/language_tag" = "en"',
    r'attributes:"\u307F\u3093\u306A"',
    'attributes:"iana.org/language_tag" AND NOT attributes.name = "com"',
    'attributes:"iana.org/language_tag" AND (attributes.name = "net" OR attributes.name = "org")',
    'attributes.name = "com" AND -attributes:"iana.org/language_tag"',
]
"""Every filter Google's "Filter messages" page (FILTER_PAGE) gives as an example or calls
valid, in its samples, its table and its sections on operators and functions."""

REFUSED_FILTERS = [
    ('"com" = attributes.name', "where a condition starts"),  # the page: Invalid
    ("attributes.name = attributes.website", "not a string literal"),  # the page: Invalid
    (r"attributes:\u307F\u3093\u306A", "escape sequence outside a string literal"),  # Invalid
    (
        'attributes:"iana.org/language_tag" AND attributes.name = "net" OR attributes.name = "org"',
        "AND and OR at one level",
    ),  # the page: Invalid
    ('attributes.name = "com" AND ("net" OR "org")', "where a condition starts"),  # Invalid
    ('eventType = "order.paid"', "written attributes.KEY"),  # issue 36
    ("attributes.eventType = order.paid", "not a string literal"),  # issue 36
    ('attributes.eventType IN ("order.paid", "order.refunded")', "IN"),  # issue 36
    ('hasSuffix(attributes.name, "co")', "the only one supported"),
    ("attributes:name and attributes:domain", "upper case"),
]


@pytest.mark.parametrize("expression", DOCUMENTED)
def test_every_documented_filter_is_accepted(expression: str) -> None:
    graph = run(lambda: PushSubscription("orders", args(filter=expression)))
    assert graph.one(SUB).inputs["filter"] == expression


@pytest.mark.parametrize(("expression", "said"), REFUSED_FILTERS, ids=lambda v: str(v)[:30])
def test_filters_outside_the_syntax_are_refused(expression: str, said: str) -> None:
    problem = refused(filter=expression)["filter"]
    assert problem.startswith("is not a Pub/Sub filter: at character ")
    assert said in problem and FILTER_PAGE in problem
    assert expression not in problem, "the filter is never repeated"


def test_a_filter_output_is_parsed_when_it_resolves() -> None:
    problems = refused_when_resolved(filter=pulumi.Output.from_input('eventType = "order.paid"'))
    assert "written attributes.KEY" in problems["filter"]


# -- Outputs ---------------------------------------------------------------------------------------


def test_a_refused_output_leaves_none_of_the_components_resources_behind() -> None:
    problems = refused_when_resolved(
        push_endpoint=pulumi.Output.from_input("http://orders.example.com/push"),
        dead_letter={},
        deployers=["group:platform@example.com"],
    )
    assert "[push-endpoint-https]" in problems["push_endpoint"]
