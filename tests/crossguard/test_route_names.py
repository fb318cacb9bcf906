"""The key and namespace readers behind the issue-25 follow-ups, on their own (fast; the
end-to-end checks are in tests/preview/test_routes_followup.py): keys as pulumi-terraform-bridge
reads them, spellings refused where a provider does not rename, the kubeconfig context's
namespace, and ``kubernetes:yaml:decode`` as the provider answers it."""

from __future__ import annotations

import json

import pytest

from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.routes import kcc
from pushguard.crossguard.routes.names import SpellingError, bridged, terraform_name
from pushguard.crossguard.wire import UNKNOWN_SENTINELS
from pushguard.preview.kubernetes_invokes import YamlDecodeError, decode_yaml


@pytest.mark.parametrize(
    ("key", "attribute"),
    [
        ("pushConfig", "push_config"),
        ("PushConfig", "push_config"),
        ("push_config", "push_config"),
        ("serviceAccountEmail", "service_account_email"),
        ("oidc_Token", "oidc__token"),  # as PulumiToTerraformName: never oidc_token
    ],
)
def test_keys_become_terraform_names_as_the_bridge_makes_them(key: str, attribute: str) -> None:
    assert terraform_name(key) == attribute


def test_nested_blocks_and_block_lists_are_renamed_but_user_map_keys_are_not() -> None:
    props = {
        "PushConfig": [{"push_endpoint": "https://a", "attributes": {"x_goog_version": "v1"}}],
        "labels": {"team_name": "a", "teamName": "b"},
    }
    assert bridged(props) == {
        "pushConfig": [{"pushEndpoint": "https://a", "attributes": {"x_goog_version": "v1"}}],
        "labels": {"team_name": "a", "teamName": "b"},
    }


@pytest.mark.parametrize(
    "props",
    [
        {"push__config": {"pushEndpoint": "https://a"}},
        {"pushConfig": {"oidc_Token": {"serviceAccountEmail": "sa@p.iam.gserviceaccount.com"}}},
        {"pushConfig_": {"pushEndpoint": "https://a"}},
    ],
)
def test_a_key_the_bridge_cannot_place_is_refused_not_read_as_the_property(props) -> None:
    """``oidc_Token`` is ``oidc__token`` to the bridge, no attribute: read as ``oidcToken`` it
    would pass push-auth-oidc for a subscription the provider makes without a token."""
    with pytest.raises(SpellingError, match="not the schema's"):
        bridged(props)


def test_an_unplaceable_key_the_rules_do_not_read_is_kept_as_it_is() -> None:
    assert bridged({"ack__deadline": 10}) == {"ack__deadline": 10}


def test_agreeing_spellings_are_one_property_and_disagreeing_ones_are_refused() -> None:
    same = {
        "pushConfig": {"pushEndpoint": "https://a"},
        "push_config": {"push_endpoint": "https://a"},
    }
    assert bridged(same) == {"pushConfig": {"pushEndpoint": "https://a"}}
    inner = {"pushConfig": {"pushEndpoint": "https://a", "PushEndpoint": "http://b"}}
    with pytest.raises(SpellingError, match=r"pushConfig\.pushEndpoint: given as both"):
        bridged(inner)


def _kcc(provider: dict | None, namespace: str | None = None) -> WireResource:
    metadata = {"name": "s", **({"namespace": namespace} if namespace else {})}
    return WireResource(
        urn="urn:pulumi:dev::team::k::s",
        type=kcc.SUBSCRIPTION,
        name="s",
        props={"metadata": metadata, "spec": {}},
        provider_props=provider,
    )


KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "contexts": [
        {"name": "a", "context": {"cluster": "c", "namespace": "ns-a"}},
        {"name": "b", "context": {"cluster": "c"}},
    ],
    "current-context": "a",
}


@pytest.mark.parametrize(
    ("provider", "namespace", "expected"),
    [
        ({"kubeconfig": json.dumps(KUBECONFIG)}, None, ("ns-a", True)),  # JSON text too
        ({"kubeconfig": json.dumps(KUBECONFIG), "context": "b"}, None, ("default", True)),
        ({"kubeconfig": json.dumps(KUBECONFIG), "namespace": "own"}, None, ("own", True)),
        ({"kubeconfig": json.dumps(KUBECONFIG)}, "meta", ("meta", True)),
        ({"kubeconfig": "~/.kube/config"}, None, (None, True)),  # a path: read where it runs
        ({"kubeconfig": next(iter(UNKNOWN_SENTINELS))}, None, (None, True)),
        ({"kubeconfig": "contexts: [unclosed"}, None, (None, True)),
        ({}, None, (None, False)),  # the ambient kubeconfig
        (None, None, (None, False)),
    ],
)
def test_the_namespace_as_pulumi_kubernetes_chooses_it(provider, namespace, expected) -> None:
    where = kcc.placement(_kcc(provider, namespace))
    assert (where.name, where.explicit) == expected
    if where.name is None:
        assert where.why


def test_yaml_decode_answers_as_the_provider() -> None:
    text = (
        "---\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n"
        "---\nkind: NoApiVersion\n"
        '---\n{"apiVersion": "a/v1", "kind": "K", "metadata": {"namespace": "kept"}}\n'
        "---\napiVersion: a/v1\nkind: K\n"
    )
    result = decode_yaml({"text": text, "defaultNamespace": "team"})["result"]
    assert [o["kind"] for o in result] == ["Namespace", "K", "K"]
    assert "namespace" not in result[0]["metadata"]  # cluster-scoped
    assert result[1]["metadata"]["namespace"] == "kept"
    assert result[2]["metadata"]["namespace"] == "team"


@pytest.mark.parametrize("args", [{}, {"text": 3}, {"text": "- a list"}, {"text": "a: [b"}])
def test_yaml_decode_refuses_what_the_provider_refuses(args) -> None:
    with pytest.raises(YamlDecodeError):
        decode_yaml(args)
