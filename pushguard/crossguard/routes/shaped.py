"""The pack passes nothing it has not judged: a resource of a type no route maps whose properties
are shaped like a push configuration cannot be checked, so it cannot pass (issue 34).

:data:`~pushguard.crossguard.routes.SUBSCRIPTION_TYPES` lists the types known to create a Pub/Sub
subscription; a route nobody listed (a Crossplane version not mapped yet, a custom resource of
another operator, a third-party provider) would otherwise pass without a word. So every other
resource is searched (:func:`push_shaped_path`) for a key spelt like a push configuration,
``pushConfig`` or ``pushEndpoint`` in any spelling (:func:`spelling`: ``push_config``,
``PushConfig``, ``PUSH_ENDPOINT``, ``push-endpoint``... the spellings
:func:`~pushguard.crossguard.routes.names.bridged` reads and more), at any depth, through
objects, lists, secrets and state output values, Kubernetes custom resources included
(``spec.forProvider.pushConfig[0].pushEndpoint``). Such a resource is reported as "cannot be
checked", naming its type and the field's path:

- by the pack, as a violation of every enabled policy at the **mandatory** level whatever the
  policy's configured level (:mod:`pushguard.crossguard.server` raises it), from its inputs
  (``Analyze``) and from its outputs (``AnalyzeStack``);
- by ``pushguard preview`` and ``pushguard analyze``, as a failed run (exit 2,
  :func:`unjudged_error`), whatever the policy levels.

The search stops at :data:`MAX_DEPTH` levels or :data:`MAX_VALUES` values; a resource where it
stops before the end counts as push-shaped (what was not read is not presumed empty). It runs only
when the properties' text mentions a push key at all (:func:`mentions_push`: read to the end,
whatever the size or depth, in microseconds), so most resources cost a scan of their text; the
pack's server answers ``Analyze`` for every other resource from that scan alone.

Not searched, each for a reason:

- the types of :data:`~pushguard.crossguard.routes.SUBSCRIPTION_TYPES`: their route judges them
  (mapped, cannot be checked, or Google's own);
- Pulumi's own resources (package ``pulumi``: the stack, providers, stack references), and a
  component (not a custom resource: no provider): a component creates nothing itself, what it
  creates is registered as its children and judged each on its own. Over the Analyzer protocol
  a component is a resource without a provider; a remote component has its plugin as provider,
  like a custom resource, and is searched, but for those of :data:`REMOTE_COMPONENTS`:
  pushguard's own, whose inputs it validates itself, and pulumi-kubernetes' ``ConfigFile``,
  ``ConfigGroup``, ``Chart`` (v4) and ``Directory``, which register every object they hold as a
  child (its ``objs`` or values may hold a Crossplane subscription, which is judged as a child);
- a ``CustomResourceDefinition`` (:data:`SCHEMA_TYPES`): its keys name a schema's fields
  (installing the Crossplane or Config Connector CRDs declares ``pushConfig``), they configure
  nothing;
- the maps whose keys are the user's data (:data:`DATA_MAPS`: labels, annotations, tags,
  environment variables; a ``ConfigMap``'s or ``Secret``'s data): an environment variable named
  ``PUSH_ENDPOINT`` configures an application, not a subscription.

A push configuration written inside a string (a Deployment Manager template, a YAML document in
a ``ConfigMap``, a Helm chart's rendered manifests) is not parsed here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pushguard.crossguard.routes import SUBSCRIPTION_TYPES, uncheckable_error, unreadable_error
from pushguard.crossguard.routes import Declared as Routed
from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY
from pushguard.state.document import OUTPUT_VALUE_SIG

PUSH_KEYS = {"pushendpoint": 0, "pushconfig": 1}
"""The keys shaped like a push configuration, by :func:`spelling`; the lower number is the more
telling one, named first when a resource has both."""
MAX_DEPTH = 100
"""Levels below the properties searched; deeper, the resource counts as push-shaped."""
MAX_VALUES = 100_000
"""Values (objects, lists, leaves) searched per resource; more, it counts as push-shaped."""

COMPONENT_TYPE = "pushguard:index:PushSubscription"
"""pushguard's own component (:data:`pushguard.components.push_subscription.TYPE_TOKEN`; a test
keeps them equal): its inputs carry a push endpoint, validated by the component itself."""
REMOTE_COMPONENTS = frozenset(
    {
        COMPONENT_TYPE,
        "kubernetes:yaml/v2:ConfigFile",
        "kubernetes:yaml/v2:ConfigGroup",
        "kubernetes:helm.sh/v4:Chart",
        "kubernetes:kustomize/v2:Directory",
    }
)
"""Remote components whose children are registered with the engine and judged each on its own:
pushguard's, and pulumi-kubernetes' component resources (``resourceProviders`` in
https://github.com/pulumi/pulumi-kubernetes ``provider/pkg/provider/provider_construct.go``,
constructed by the provider's ``Construct``, which registers each object as a child)."""
SCHEMA_TYPES = frozenset(
    f"kubernetes:apiextensions.k8s.io/{version}:{kind}"
    for version in ("v1", "v1beta1")
    for kind in (
        "CustomResourceDefinition",
        "CustomResourceDefinitionPatch",
        "CustomResourceDefinitionList",
    )
)
"""pulumi-kubernetes' ``CustomResourceDefinition`` types: a schema, not a configuration."""
DATA_MAPS = frozenset(
    {
        "labels",
        "annotations",
        "tags",
        "userlabels",
        "resourcelabels",
        "effectivelabels",
        "terraformlabels",
        "pulumilabels",
        "env",
        "envvars",
        "envvariables",
        "environment",
        "environmentvariables",
        "buildenvironmentvariables",
        "secretenvironmentvariables",
        "variables",
    }
)
"""Keys (by :func:`spelling`) whose value is a map of the user's own keys, not searched."""
_KUBERNETES_DATA = frozenset(
    f"kubernetes:core/v1:{kind}{suffix}"
    for kind in ("ConfigMap", "Secret")
    for suffix in ("", "Patch", "List")
)
_DATA_KEYS = frozenset({"data", "stringData", "binaryData"})
"""A ``ConfigMap``'s or ``Secret``'s data, whose keys are file or variable names."""


@functools.lru_cache(maxsize=8192)
def spelling(key: str) -> str:
    """A key lower-cased without ``_``, ``-`` and ``.``: ``pushConfig``, ``push_config``,
    ``PushConfig``, ``PUSH-CONFIG`` are all ``pushconfig``."""
    return key.lower().replace("_", "").replace("-", "").replace(".", "")


@dataclass(frozen=True)
class PushShaped:
    """A resource of an unmapped type that may make a push subscription: ``path`` of the field
    shaped like a push configuration (``spec.forProvider.pushConfig[0].pushEndpoint``), or, when
    the search stopped first, ``stopped`` saying where and why (``path`` then ``""``)."""

    type: str
    name: str
    path: str = ""
    stopped: str = ""

    @property
    def where(self) -> str:
        """The field, or why its properties were not all read, in words."""
        if self.path:
            return f"its properties carry a push configuration ({self.path})"
        return (
            f"its properties are {self.stopped}, past what pushguard reads, so a push "
            "configuration in them cannot be ruled out"
        )

    def message(self) -> str:
        """The pack's "cannot be checked" text for this resource."""
        return (
            f"{self.name}: cannot be checked: {self.type} is not a type pushguard maps, and "
            f"{self.where}; a gate cannot pass what it cannot read: declare the subscription "
            "with a mapped type (python -m pushguard.crossguard.routes lists them)"
        )


_LEAVES = (str, int, float, bool, bytes, type(None))
_OPENED = (SECRET_SIG, OUTPUT_VALUE_SIG)


def _items(value: Any) -> Iterable[tuple[Any, Any]] | Any | None:
    """The children of an object (its items) or a list (index, item); for a secret envelope or
    a state output value, the value inside (to search in its place); ``None`` for a leaf (an
    encrypted secret, an asset and a resource reference included). Plain ``dict`` and ``list``
    first: the abstract checks are slow."""
    kind = type(value)
    if kind is list:
        return enumerate(value)
    if kind is not dict:
        if kind in _LEAVES:
            return None
        if isinstance(value, Sequence) and not isinstance(value, str | bytes):
            return enumerate(value)
        if not isinstance(value, Mapping):
            return None
    if SIG_KEY in value:
        return _Inside(value["value"]) if value[SIG_KEY] in _OPENED and "value" in value else None
    return value.items()


@dataclass(frozen=True)
class _Inside:
    """The value inside a secret envelope or a state output value."""

    value: Any


def mentions_push(text: str | bytes) -> bool:
    """Whether ``text`` (properties as JSON, or a protobuf ``Struct`` serialized) may hold a key
    :func:`spelling` reads as a push key: a necessary condition, read to the end at C speed.
    Without it no key at any depth is push-shaped, so the search is skipped (and cannot stop
    short). A key that spells one is ASCII (no other character lower-cases to a letter of
    ``pushconfig``/``pushendpoint`` alone), so lower-casing the bytes is enough."""
    if isinstance(text, bytes):
        raw = text.lower().translate(None, b"_-.")
        return b"pushconfig" in raw or b"pushendpoint" in raw
    plain = text.lower().replace("_", "").replace("-", "").replace(".", "")
    return "pushconfig" in plain or "pushendpoint" in plain


def _text(props: Any) -> str | None:
    """``props`` as JSON text (keys kept as they are), ``None`` when it cannot be written."""
    try:
        return json.dumps(props, ensure_ascii=False, default=repr, check_circular=False)
    except (RecursionError, ValueError, TypeError):
        return None


Trail = tuple[Any, ...] | None
"""Where a value is: ``(parent trail, key or index)``, ``None`` for the properties."""


def _path(trail: Trail) -> str:
    """``spec.x[0].push_endpoint`` of a trail."""
    parts: list[str] = []
    while trail is not None:
        trail, step = trail
        parts.append(f"[{step}]" if isinstance(step, int) else f".{step}")
    return "".join(reversed(parts)).lstrip(".")


def _steps(trail: Trail) -> tuple[tuple[int, Any], ...]:
    """A trail as comparable steps (the first of two paths in key order is the smaller)."""
    steps: list[tuple[int, Any]] = []
    while trail is not None:
        trail, step = trail
        steps.append((0, step) if isinstance(step, int) else (1, str(step)))
    return tuple(reversed(steps))


def push_shaped_path(props: Any, skip: frozenset[str] = frozenset()) -> tuple[str, str]:
    """``(path, "")`` of the field shaped like a push configuration in ``props`` (plain data or
    a protobuf ``Struct``): a ``pushEndpoint`` before a ``pushConfig``, then the first in key
    order; ``("", why)`` when the search stopped at :data:`MAX_DEPTH` or :data:`MAX_VALUES`
    first; ``("", "")`` when there is none. A key whose value is ``null`` is absent; the keys
    in ``skip`` (top level) and the maps of :data:`DATA_MAPS` are not searched. Iterative: never
    recurses, whatever the depth; skipped when the text of ``props`` does not
    :func:`mention a push key <mentions_push>` at all."""
    text = props.SerializeToString() if hasattr(props, "SerializeToString") else _text(props)
    if text is not None and not mentions_push(text):
        return "", ""
    best: dict[int, tuple[tuple[tuple[int, Any], ...], Trail]] = {}
    pending: list[tuple[int, Trail, Any]] = [(0, None, props)]
    seen = 0
    while pending:
        depth, trail, value = pending.pop()
        seen += 1
        if seen > MAX_VALUES:
            return _best(best) or ("", f"more than {MAX_VALUES} values")
        items = _items(value)
        if isinstance(items, _Inside):
            pending.append((depth, trail, items.value))
            continue
        for key, child in items or ():
            if depth >= MAX_DEPTH:
                deep = f"nested more than {MAX_DEPTH} levels deep at {_path(trail)}"
                return _best(best) or ("", deep)
            if type(key) is str:
                name = spelling(key)
                if name in DATA_MAPS or (depth == 0 and key in skip):
                    continue
                rank = PUSH_KEYS.get(name)
                if rank is not None and child is not None:
                    here = (trail, key)
                    steps = _steps(here)
                    if rank not in best or steps < best[rank][0]:
                        best[rank] = (steps, here)
            pending.append((depth + 1, (trail, key), child))
    return _best(best) or ("", "")


def _best(best: dict[int, tuple[Any, Trail]]) -> tuple[str, str] | None:
    return (_path(best[min(best)][1]), "") if best else None


_JUDGED = frozenset(t.type for t in SUBSCRIPTION_TYPES) | SCHEMA_TYPES | REMOTE_COMPONENTS


def push_shaped(
    resource_type: str, name: str, *props: Any, custom: bool = True
) -> PushShaped | None:
    """The :class:`PushShaped` of a resource whose ``props`` (its inputs, its outputs, or both)
    are shaped like a push configuration, or ``None``: for a type no route judges (see the
    module), ``custom`` (a custom resource or a remote component: over the Analyzer protocol,
    a resource with a provider)."""
    if not custom or resource_type in _JUDGED or resource_type.startswith("pulumi:"):
        return None
    skip = _DATA_KEYS if resource_type in _KUBERNETES_DATA else frozenset()
    stopped = ""
    for each in props:
        path, why = push_shaped_path(each, skip)
        if path:
            return PushShaped(resource_type, name, path=path)
        stopped = stopped or why
    return PushShaped(resource_type, name, stopped=stopped) if stopped else None


class Declared(Routed, Protocol):
    """What :func:`unjudged_error` reads of a resource (a
    :class:`~pushguard.gate.result.ResourceRecord`): what the routes read, and more."""

    @property
    def custom(self) -> bool: ...
    @property
    def provider(self) -> str: ...
    @property
    def outputs(self) -> Mapping[str, Any]: ...


def unjudged_error(resources: Iterable[Declared]) -> str | None:
    """The exit-2 message of ``pushguard preview`` and ``analyze`` naming what the pack cannot
    judge among ``resources``: the subscriptions of a known type pushguard does not map
    (:func:`~pushguard.crossguard.routes.uncheckable_error`), those a Deployment Manager
    configuration declares but cannot be read offline
    (:func:`~pushguard.crossguard.routes.unreadable_error`) and the resources of any other type
    whose inputs or outputs are :func:`push_shaped`; ``None`` when there are none."""
    listed = list(resources)
    shaped = [
        found
        for r in listed
        if (found := push_shaped(r.type, r.name, r.inputs, r.outputs, custom=_custom(r)))
    ]
    parts = [uncheckable_error(r.type for r in listed) or "", unreadable_error(listed) or ""]
    if shaped:
        named = "; ".join(
            f"{s.type} {s.name!r} ({s.path or s.stopped})"
            for s in sorted(shaped, key=lambda s: (s.type, s.name, s.path))
        )
        parts.append(
            "a resource of a type pushguard does not map is shaped like a push configuration, "
            f"so it was not checked and the stack cannot pass: {named}; declare the "
            "subscription with a mapped type (python -m pushguard.crossguard.routes lists them)"
        )
    text = "; and ".join(p for p in parts if p)
    return text or None


def _custom(resource: Declared) -> bool:
    """A custom resource, or a remote component (a provider reference): what the pack sees
    with a provider."""
    return bool(resource.custom or resource.provider)
