"""Issue 25: the one list of subscription types and the route adapters, on their own (the
end-to-end checks are in tests/preview/test_routes.py, test_routes_protocol.py and
tests/analyze/test_routes_state.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pushguard.crossguard.facts import wire_facts
from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.crossguard.routes import (
    MAPPED_SUBSCRIPTION_TYPES,
    SUBSCRIPTION_TYPES,
    TRIGGER_TYPES,
    canonical,
    canonical_stack,
    routes_markdown,
    unmapped,
    unmapped_iam,
)
from pushguard.crossguard.wire import UNKNOWN

ROOT = Path(__file__).resolve().parents[2]
PUSH = {"pushEndpoint": "https://hooks.example.com/push"}
KCC = "kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:PubSubSubscription"


def wire(kind: str, props: dict, **kw) -> WireResource:
    return WireResource(
        urn=f"urn:pulumi:dev::team::{kind}::s", type=kind, name="s", props=props, **kw
    )


def test_the_policy_pack_page_lists_every_known_subscription_type() -> None:
    page = (ROOT / "docs" / "policy-pack.md").read_text(encoding="utf-8")
    assert routes_markdown() in page, "run `python -m pushguard.crossguard.routes`"


@pytest.mark.parametrize(
    "known", [t for t in SUBSCRIPTION_TYPES if t.mapped and t.kind == "subscription"], ids=str
)
def test_every_mapped_type_reads_as_a_subscription(known) -> None:
    config = {"resources": [{"name": "s", "type": "pubsub.v1.subscription",
                             "properties": {"pushConfig": PUSH}}]}  # fmt: skip
    target = {"config": {"content": json.dumps(config)}}  # Deployment Manager's YAML
    spec = {"pushConfig": PUSH, "forProvider": {"pushConfig": PUSH}}  # KCC's, Crossplane's
    props = {"pushConfig": PUSH, "project": "p", "spec": spec, "target": target}
    [sub] = canonical(wire(known.type, props))
    assert sub.type == SUBSCRIPTION_TYPE
    assert wire_facts(sub).facts.push_endpoint == PUSH["pushEndpoint"]
    assert unmapped(known.type) is None


def test_an_unmapped_type_is_never_a_resource_half_type() -> None:
    for known in SUBSCRIPTION_TYPES:
        subscription = known.mapped and known.kind == "subscription"
        assert (known.type in MAPPED_SUBSCRIPTION_TYPES) is subscription
        assert (known.type in TRIGGER_TYPES) is (known.mapped and known.kind == "eventarc-trigger")
        assert known.why


def test_a_kcc_spec_not_known_yet_leaves_the_endpoint_unknown_not_absent() -> None:
    [sub] = canonical(wire(KCC, {"metadata": {"name": "s"}, "spec": UNKNOWN}))
    read = wire_facts(sub)
    assert "push_endpoint" in read.facts.unknown  # never a pull subscription


def test_a_kcc_project_from_the_namespace_declared_in_the_stack() -> None:
    namespace = WireResource(
        urn="urn:pulumi:dev::team::kubernetes:core/v1:Namespace::team",
        type="kubernetes:core/v1:Namespace",
        name="team",
        props={"metadata": {"name": "team"}},  # no annotation: the namespace's name
    )
    sub = wire(KCC, {"metadata": {"name": "s", "namespace": "team"}, "spec": {"pushConfig": PUSH}})
    placed = [r for r in canonical_stack([namespace, sub]) if r.type == SUBSCRIPTION_TYPE]
    assert placed[0].props["project"] == "team" and placed[0].no_project is None
    [alone] = canonical(sub)
    assert "project" not in alone.props and "namespace 'team'" in str(alone.no_project)
    assert wire_facts(alone).unconfigured["project_id"] == alone.no_project


def test_a_kcc_annotation_beats_the_namespace_and_a_hostile_annotation_is_kept_verbatim() -> None:
    annotations = {"cnrm.cloud.google.com/project-id": "acme/../x"}
    sub = wire(KCC, {"metadata": {"name": "s", "annotations": annotations}, "spec": {}})
    [read] = canonical(sub)
    assert read.props["project"] == "acme/../x"  # compared as a string, never parsed as a path


def test_a_native_subscription_read_back_from_state_keeps_its_short_name() -> None:
    props = {"name": "projects/p/subscriptions/orders", "pushConfig": PUSH, "project": "p"}
    [sub] = canonical(wire("google-native:pubsub/v1:Subscription", props))
    assert sub.props["name"] == "orders"


def test_a_kcc_partial_policy_grants_each_member_on_its_target() -> None:
    policy = WireResource(
        urn="urn:pulumi:dev::team::kubernetes:iam.cnrm.cloud.google.com/v1beta1:IAMPartialPolicy::p",
        type="kubernetes:iam.cnrm.cloud.google.com/v1beta1:IAMPartialPolicy",
        name="p",
        props={
            "spec": {
                "resourceRef": {"kind": "Project", "external": "projects/acme"},
                "bindings": [
                    {
                        "role": "roles/run.invoker",
                        "members": [{"member": "user:a@x"}, {"member": "user:b@x"}],
                    }
                ],
            }
        },
    )
    members = canonical(policy)
    assert [m.type for m in members] == ["gcp:projects/iAMMember:IAMMember"] * 2
    assert [m.props["member"] for m in members] == ["user:a@x", "user:b@x"]
    assert len({m.urn for m in members}) == 2


@pytest.mark.parametrize(
    "props",
    [
        {"metadata": "not an object", "spec": {"resourceRef": {"kind": ["IAMServiceAccount"]}}},
        {"metadata": {"name": ["s"]}, "spec": {"resourceRef": {"kind": {"x": 1}}, "member": 5}},
        {"metadata": {"name": "s"}, "spec": {"resourceRef": "projects/x", "bindings": "all"}},
    ],
)
def test_malformed_config_connector_iam_never_breaks_the_stack(props) -> None:
    kinds = ("IAMPolicyMember", "IAMPartialPolicy", "IAMPolicy")
    hostile = [wire(f"kubernetes:iam.cnrm.cloud.google.com/v1beta1:{k}", props) for k in kinds] + [
        wire("kubernetes:core/v1:Namespace", props)
    ]
    good = wire(KCC, {"metadata": {"name": "s"}, "spec": {"pushConfig": PUSH}})
    read = canonical_stack([*hostile, good])
    assert [r.type for r in read].count(SUBSCRIPTION_TYPE) == 1


@pytest.mark.parametrize(
    ("kind", "unread"),
    [
        ("google:index/organizationIamMember:OrganizationIamMember", True),
        ("google-beta:index/folderIamBinding:FolderIamBinding", True),
        ("google-native:cloudfunctions/v2:FunctionIamMember", True),
        ("google:index/serviceAccountIamMember:ServiceAccountIamMember", False),  # mapped
        ("google:index/storageBucketIamMember:StorageBucketIamMember", False),  # not read
        ("google-native:notebooks/v1:RuntimeIamMember", False),
        ("gcp:serviceaccount/iAMMember:IAMMember", False),  # pulumi-gcp, read by the graph
        # pulumi-gcp IAM the graph does not read (issue 34): a grant there may be the one
        ("gcp:organizations/iAMMember:IAMMember", True),
        ("gcp:folder/iAMMember:IAMMember", True),
        ("gcp:cloudfunctionsv2/functionIamMember:FunctionIamMember", True),
        ("gcp:projects/iamMemberRemove:IamMemberRemove", True),
        ("gcp:storage/bucketIAMMember:BucketIAMMember", False),  # not on what the rules read
    ],
)
def test_which_iam_resources_leave_the_grant_rules_not_checked(kind: str, unread: bool) -> None:
    assert (unmapped_iam(wire(kind, {"role": "r", "member": "user:a@x"})) is not None) is unread
