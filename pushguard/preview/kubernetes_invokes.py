"""The pulumi-kubernetes provider functions behind ``yaml.ConfigFile``, ``ConfigGroup`` and helm
v3 ``Chart``, as the real provider answers them at preview.

``kubernetes:yaml:decode`` (``args``: ``text``, optional ``defaultNamespace``; result
``{"result": [object, ...]}``) is a pure parse the provider runs at preview too: the SDK's
``ConfigFile`` and ``ConfigGroup`` (v1) read their files and pass the text, then register one
resource per object returned (``pulumi_kubernetes/yaml/yaml.py``,
``_invoke_yaml_decode_async``). The provider decodes it with ``k8s.io/apimachinery``'s
``NewYAMLOrJSONDecoder`` document by document, skips a document without ``kind`` or
``apiVersion``, and sets ``defaultNamespace`` on a namespaced object that has no namespace
(https://github.com/pulumi/pulumi-kubernetes, ``provider/pkg/provider/yaml_decode.go`` and the
``invokeDecodeYaml`` case of ``Invoke``). :func:`decode_yaml` does the same offline, so the
objects register and the pack checks them (a Config Connector ``PubSubSubscription`` among them).

``kubernetes:helm:template`` (helm v3 ``Chart``) renders a chart with the helm engine and may
fetch it from a repository, and ``kubernetes:kustomize:directory`` runs kustomize: neither can be
answered offline, so the resources they would create are not known (:data:`UNANSWERABLE`; the
preview fails closed, exit 2, naming them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

YAML_DECODE = "kubernetes:yaml:decode"

UNANSWERABLE: Mapping[str, str] = {
    "kubernetes:helm:template": "a helm v3 Chart (kubernetes.helm.v3.Chart) renders its "
    "templates with the helm engine in the kubernetes provider, and may fetch the chart",
    "kubernetes:kustomize:directory": "a kustomize Directory (kubernetes.kustomize.Directory) "
    "runs kustomize in the kubernetes provider",
}
"""Provider functions that create a stack's resources and that the preview cannot answer
offline: token -> what calls it."""

_CLUSTER_SCOPED = frozenset(
    {
        "Namespace",
        "Node",
        "PersistentVolume",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "StorageClass",
        "PriorityClass",
        "APIService",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "CSIDriver",
        "IngressClass",
        "RuntimeClass",
        "ComponentStatus",
    }
)
"""Built-in kinds without a namespace. The provider asks the cluster which kinds are
namespaced and, without that information, assumes the kind is (``IsNoNamespaceInfoErr``); the
Config Connector kinds are all namespaced."""


class YamlDecodeError(ValueError):
    """The text is not YAML or JSON Kubernetes objects (the provider's invoke fails too)."""


def decode_yaml(args: Mapping[str, Any]) -> dict[str, Any]:
    """The provider's answer to ``kubernetes:yaml:decode``: ``{"result": [object, ...]}``.

    Raises:
        YamlDecodeError: ``text`` is missing or not a string, or a document is not an object.
    """
    text = args.get("text")
    if not isinstance(text, str):
        raise YamlDecodeError("missing required field 'text' of type string")
    namespace = args.get("defaultNamespace")
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        raise YamlDecodeError(f"the YAML cannot be decoded: {error}") from None
    objects: list[dict[str, Any]] = []
    for document in documents:
        if document is None:
            continue
        if not isinstance(document, Mapping):
            raise YamlDecodeError(f"a YAML document is a {type(document).__name__}, not an object")
        obj = dict(document)
        if not obj.get("kind") or not obj.get("apiVersion"):
            continue  # the provider skips empty documents
        if isinstance(namespace, str) and namespace and obj["kind"] not in _CLUSTER_SCOPED:
            metadata = obj.get("metadata")
            metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
            metadata.setdefault("namespace", namespace)
            if not metadata["namespace"]:
                metadata["namespace"] = namespace
            obj["metadata"] = metadata
        objects.append(obj)
    return {"result": objects}
