"""Property keys as each route's provider reads them, so a key spelled otherwise than in the
schema (``push_config``, ``PushConfig``) is read as the provider would read it, or refused.

The bridged routes (pulumi-gcp, and the Terraform ``google``/``google-beta`` providers added with
``pulumi package add terraform-provider``) are Terraform providers behind
pulumi-terraform-bridge. The bridge turns each Pulumi property key into a Terraform attribute name
with ``PulumiToTerraformName`` (``pkg/tfbridge/names.go``): every upper-case letter but the
first becomes ``_`` and its lower case, every other character is kept. ``pushConfig``,
``PushConfig`` and ``push_config`` are all ``push_config``; the provider's ``Check`` returns the
inputs under the schema's Pulumi names, so under the Pulumi CLI the pack sees ``pushConfig``
whichever spelling the program used. An offline preview has no provider ``Check``, so
:func:`bridged` does the bridge's part: each key is placed by its Terraform name and read under
the schema's camelCase name. Two spellings of one attribute in one object (``pushConfig`` and
``push_config``) that disagree are refused (:class:`SpellingError`): which one the bridge keeps
depends on map order, so neither may be presumed.

Google Cloud Native and Config Connector do not rename: google-native builds the REST request
from its schema's names only (``provider/pkg/provider/provider.go``, ``Create``/``Check``: a key
outside the schema is not sent) and a Kubernetes API server prunes or, with strict field
validation, rejects a field a CRD's structural schema does not declare
(https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning).
A key there that is another spelling of a property the rules read (:func:`misspelt`) is refused
too: the program's author meant that property, and what the provider does with it is not the
pack's to presume.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pushguard.crossguard.wire import WireShapeError

MAP_KEYS = frozenset(
    {
        "labels",
        "attributes",
        "annotations",
        "tags",
        "effective_labels",
        "terraform_labels",
        "pulumi_labels",
        "user_labels",
        "resource_labels",
        "env_vars",
        "environment_variables",
        "build_environment_variables",
        "secret_environment_variables",
    }
)
"""Terraform attributes (by their Terraform name) whose value is a map of the user's own keys
(``labels``, ``pushConfig.attributes``...): their keys are data, not schema names, and are not
renamed."""


READ = frozenset(
    {
        "pushConfig",
        "pushEndpoint",
        "oidcToken",
        "serviceAccountEmail",
        "audience",
        "noWrapper",
        "enableExactlyOnceDelivery",
        "deadLetterPolicy",
        "deadLetterTopic",
        "project",
        "name",
        "topic",
    }
)
"""The camelCase names of the subscription properties the rules read: a key that only
resembles one of them (:func:`bridged`) is refused rather than ignored."""


class SpellingError(WireShapeError):
    """A property given under two spellings that disagree, or under a spelling its provider does
    not read (``path``: where, in dotted camelCase; ``detail``: why, in words)."""

    def __init__(self, path: str, detail: str) -> None:
        ValueError.__init__(self, f"{path}: {detail}")
        self.path = path
        self.expected = detail
        self.got_type = "another spelling"


@lru_cache(maxsize=4096)
def terraform_name(key: str) -> str:
    """A Pulumi property key as pulumi-terraform-bridge's ``PulumiToTerraformName`` turns it into
    a Terraform attribute name: ``pushConfig`` and ``PushConfig`` -> ``push_config``;
    ``push_config`` is kept. (Memoised: a stack repeats the same few keys on every resource.)"""
    out = []
    for i, c in enumerate(key):
        if "A" <= c <= "Z":
            out.append(("_" if i else "") + c.lower())
        else:
            out.append(c)
    return "".join(out)


@lru_cache(maxsize=4096)
def pulumi_name(attribute: str) -> str:
    """A Terraform attribute name as the bridge names it for Pulumi (``TerraformToPulumiName``,
    without a schema override): ``push_config`` -> ``pushConfig``."""
    head, *rest = attribute.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def bridged(props: Mapping[str, Any], path: str = "") -> dict[str, Any]:
    """``props`` with every key, at every depth, under the camelCase name the bridge reads it as
    (:func:`terraform_name` then :func:`pulumi_name`), but for the keys inside a map of
    :data:`MAP_KEYS`. Lists (Terraform blocks sent as one-element lists) are walked.

    Raises:
        SpellingError: two spellings of one attribute in one object have different values.
    """
    out: dict[str, Any] = {}
    spelt: dict[str, str] = {}
    for key, value in props.items():
        attribute = terraform_name(key) if isinstance(key, str) else key
        name = pulumi_name(attribute) if isinstance(attribute, str) else key
        where = f"{path}.{name}" if path else str(name)
        if isinstance(attribute, str) and terraform_name(name) != attribute:
            # The bridge looks up an attribute no schema has (push__config, oidc_Token ->
            # oidc__token): the provider does not apply it as the property it resembles.
            if name in READ:
                raise SpellingError(
                    where,
                    f"{key!r} is read by the Terraform bridge as {attribute!r}, which is not "
                    f"the schema's {terraform_name(name)!r}, so the provider does not apply it "
                    f"as {name!r}; spell it {name!r}",
                )
            name, where = key, (f"{path}.{key}" if path else key)
        read = value if attribute in MAP_KEYS else _walk(value, where)
        if name in out and out[name] != read:
            raise SpellingError(
                where,
                f"given as both {spelt[name]!r} and {key!r} with different values; the "
                f"Terraform bridge reads both as {attribute!r} and keeps one of them, so neither "
                "is presumed: give it once",
            )
        out[name] = read
        spelt[name] = str(key)
    return out


def _walk(value: Any, path: str) -> Any:
    if isinstance(value, Mapping):
        return bridged(value, path)
    if isinstance(value, list):
        return [_walk(item, path) for item in value]
    return value


def misspelt(props: Any, schema: Mapping[str, Any], path: str, provider: str) -> None:
    """Refuse a key of ``props`` that is not in ``schema`` but is another spelling (snake_case,
    PascalCase) of a key that is: ``schema`` maps each camelCase key the rules read to the
    schema of its object (or ``None`` for a leaf). ``provider``: who drops the key, for the
    message.

    Raises:
        SpellingError: naming the key, the property it spells and what ``provider`` does.
    """
    if isinstance(props, list) and len(props) == 1:
        props = props[0]
    if not isinstance(props, Mapping):
        return
    by_bridge = {pulumi_name(terraform_name(k)): k for k in schema}
    for key, value in props.items():
        if not isinstance(key, str):
            continue
        if key in schema:
            inner = schema[key]
            if inner is not None:
                misspelt(value, inner, f"{path}.{key}" if path else key, provider)
            continue
        meant = by_bridge.get(pulumi_name(terraform_name(key)))
        if meant is not None:
            where = f"{path}.{key}" if path else key
            raise SpellingError(
                where,
                f"{key!r} is not {meant!r}, the property's name: {provider}, so the pack cannot "
                f"tell what the subscription will do; spell it {meant!r}",
            )


def keys_of(*names: str) -> dict[str, None]:
    """A leaf schema for :func:`misspelt`."""
    return dict.fromkeys(names)


PUSH_CONFIG: dict[str, Any] = {
    "pushEndpoint": None,
    "oidcToken": keys_of("serviceAccountEmail", "audience"),
    "noWrapper": keys_of("writeMetadata"),
    "attributes": None,
}
"""``pushConfig`` as the rules read it (the Pub/Sub REST ``PushConfig``, whose names pulumi-gcp,
Google Cloud Native and Config Connector share)."""
