"""Provider-faithful mocks of the Google Cloud provider for Pulumi's mock runtime.

A real ``pulumi-gcp`` provider plans a create in two halves: what it can know before the call
(the inputs, the default ``project`` and ``region`` from its configuration, auto-names) and what
only the API returns (ids, emails, URLs, etags), which ``pulumi preview`` shows as unknown
("known after apply"). These mocks do the same:

The mode is the runtime's (``pulumi.runtime.is_dry_run()``, set by ``set_mocks(preview=...)``):

- **preview** (what ``pushguard preview`` runs): the ID and every computed
  output of a known type are unknown (Pulumi's unknown sentinel); inputs, ``project`` and
  auto-names are known.
- **up**: computed outputs get the shapes the API gives them: a service
  account's email ``ACCOUNT_ID@PROJECT.iam.gserviceaccount.com``, Pub/Sub IDs
  ``projects/P/topics/T``, Cloud Run's hash URL ``https://NAME-HASH-REGIONCODE.a.run.app``, a
  1st-gen function's ``https://REGION-PROJECT.cloudfunctions.net/NAME``.

The same holds for the other routes to a push subscription (:mod:`pushguard.crossguard.routes`):
the Terraform ``google``/``google-beta`` providers bridged with ``pulumi package add
terraform-provider`` plan exactly as pulumi-gcp (same Terraform schemas, their own ``project``
configuration); Google Cloud Native fills ``project`` from ``google-native:project``, auto-names
``subscriptionId``/``topicId``/``serviceId`` and returns REST names
(``projects/P/subscriptions/ID``) and a service account's ``email``; pulumi-kubernetes echoes a
Config Connector object, auto-names ``metadata.name`` and leaves ``status`` (an account's
``email``, a service's ``uri``) to the cluster: unknown at preview.

Any other resource type echoes its inputs (its outputs the program reads are unknown at preview),
so programs using other providers run too. ``gcp:organizations/getProject:getProject`` answers
from the project-number map, or with :data:`PLACEHOLDER_PROJECT_NUMBER`. Any other function (a
data source) needs the cloud: at preview its output form (``get_*_output``) is unknown, as a
value ``pulumi preview`` cannot know yet (:meth:`GcpMocks.unknown_at_preview`); otherwise it
answers with its own arguments. Each placeholder answer, each function left unknown and each
function answered only with its arguments is recorded, so a report can say so.

Sources: the Terraform google provider's schemas behind pulumi-gcp (which attributes are
``Computed``), https://cloud.google.com/run/docs/triggering/https-request#url (Cloud Run URLs),
https://cloud.google.com/functions/1stgendocs/deploy (1st-gen trigger URL).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.runtime import rpc
from pulumi.runtime import settings as pulumi_settings

from pushguard.components.limits import function_service_name
from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.routes import kcc, native, terraform
from pushguard.crossguard.urn import package_of, provider_urn
from pushguard.preview.functions import UNKNOWN_TEXT, answer_at_preview  # noqa: F401 (re-export)
from pushguard.preview.kubernetes_invokes import YAML_DECODE, decode_yaml
from pushguard.rules.accounts import service_account_email, service_agent_email

PLACEHOLDER_PROJECT_NUMBER = "000000000000"
"""Answered by ``getProject`` for a project missing from the map (never a real number)."""

UNKNOWN: str = rpc.UNKNOWN
"""Pulumi's wire sentinel for a value that is unknown until the resource is created."""

GET_PROJECT = "gcp:organizations/getProject:getProject"
GCP_PROVIDER = "pulumi:providers:gcp"

State = dict[str, Any]

PROJECT_VARIABLES: tuple[str, ...] = (
    "GOOGLE_PROJECT",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "CLOUDSDK_CORE_PROJECT",
)
"""The environment variables the Google Cloud provider reads its ``project`` from when its
configuration has none, in their order of precedence
(https://www.pulumi.com/registry/packages/gcp/installation-configuration/; pulumi-gcp's
``Provider`` and ``gcp.config.project`` read the same list)."""

REGION_VARIABLES: tuple[str, ...] = ("GOOGLE_REGION", "GCLOUD_REGION", "CLOUDSDK_COMPUTE_REGION")
"""The same for ``region`` (pulumi-gcp's ``Provider``)."""

GOOGLE_PACKAGES: tuple[str, ...] = ("gcp", *terraform.PACKAGES, "google-native")
"""The packages whose provider reads :data:`PROJECT_VARIABLES` when its configuration names no
project: pulumi-gcp and the bridged Terraform providers (the same Terraform provider code) and
Google Cloud Native (``provider/pkg/provider/provider.go``, ``Configure``, the same list)."""


def from_environment(
    variables: tuple[str, ...], environ: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """``(variable, value)`` of the first of ``variables`` set to a non-empty value in
    ``environ`` (default ``os.environ``), as the provider searches them; ``None`` if none is."""
    env = os.environ if environ is None else environ
    for name in variables:
        value = env.get(name)
        if value:
            return name, value
    return None


def _digest(*parts: str, length: int = 8) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


def autoname(resource_name: str) -> str:
    """Pulumi's auto-name: the resource name plus a 7-character suffix (stable here)."""
    return f"{resource_name}-{_digest(resource_name, length=7)}"


_REGION_CODES = {
    "us-central1": "uc",
    "us-east1": "ue",
    "us-east4": "uk",
    "us-west1": "uw",
    "europe-west1": "ew",
    "europe-west2": "nw",
    "europe-west3": "ey",
    "europe-west4": "ez",
    "asia-northeast1": "an",
    "asia-east1": "de",
}


def cloud_run_hash_url(service: str, project: str, region: str) -> str:
    """The hash form of a Cloud Run default URL, ``https://SERVICE-HASH-REGIONCODE.a.run.app``
    (HASH stable per project here; REGIONCODE from a table of common regions, else ``uc``)."""
    code = _REGION_CODES.get(region, "uc")
    return f"https://{service}-{_digest(project, length=10)}-{code}.a.run.app"


def cloud_run_deterministic_url(service: str, number: str, region: str) -> str:
    """The deterministic form, ``https://SERVICE-PROJECT_NUMBER.REGION.run.app``."""
    return f"https://{service}-{number}.{region}.run.app"


@dataclass(frozen=True)
class _Context:
    """What a computed-output builder knows: names, the resource's project and region."""

    name: str
    inputs: State
    project: str
    region: str
    number: str


_Computed = Callable[[_Context], State]


@dataclass(frozen=True)
class _Kind:
    """How the provider plans one resource type: whether it fills ``project`` (and ``region``)
    from its configuration, which property it auto-names, the computed outputs after create."""

    computed: _Computed
    project: bool = True
    region_key: str | None = None
    autoname_key: str | None = None
    ident: Callable[[_Context, State], str] | None = None


def _account(ctx: _Context) -> State:
    email = service_account_email(str(ctx.inputs.get("accountId")), ctx.project)
    return {
        "email": email,
        "name": f"projects/{ctx.project}/serviceAccounts/{email}",
        "member": f"serviceAccount:{email}",
        "uniqueId": str(int(_digest(email, length=15), 16)).rjust(21, "1")[:21],
    }


def _run_v2(ctx: _Context) -> State:
    name = str(ctx.inputs.get("name") or ctx.name)
    uri = cloud_run_hash_url(name, ctx.project, ctx.region)
    return {
        "uri": uri,
        "urls": [cloud_run_deterministic_url(name, ctx.number, ctx.region), uri],
        "uid": _digest(ctx.project, name, length=32),
        "etag": f'"{_digest(name, length=12)}"',
    }


def _run_v1(ctx: _Context) -> State:
    name = str(ctx.inputs.get("name") or ctx.name)
    url = cloud_run_hash_url(name, ctx.project, ctx.region)
    return {"statuses": [{"url": url, "latestReadyRevisionName": f"{name}-00001-abc"}]}


def _function_v1(ctx: _Context) -> State:
    name = str(ctx.inputs.get("name") or ctx.name)
    return {"httpsTriggerUrl": f"https://{ctx.region}-{ctx.project}.cloudfunctions.net/{name}"}


def _function_v2(ctx: _Context) -> State:
    """A 2nd-gen function's URLs: its cloudfunctions.net ``url`` and its Cloud Run service, named
    after the function (:func:`~pushguard.components.limits.function_service_name`)."""
    name = str(ctx.inputs.get("name") or ctx.name)
    service = function_service_name(name)
    return {
        "url": f"https://{ctx.region}-{ctx.project}.cloudfunctions.net/{name}",
        "serviceConfig": {
            "uri": cloud_run_hash_url(service, ctx.project, ctx.region),
            "service": f"projects/{ctx.project}/locations/{ctx.region}/services/{service}",
        },
        "state": "ACTIVE",
    }


def _service_identity(ctx: _Context) -> State:
    service = str(ctx.inputs.get("service", ""))
    agent = service.split(".", 1)[0]
    email = service_agent_email(ctx.number, agent)
    return {"email": email, "member": f"serviceAccount:{email}"}


def _etag(ctx: _Context) -> State:
    return {"etag": f"BwX{_digest(ctx.name, str(ctx.inputs.get('member')), length=8)}"}


def _nothing(ctx: _Context) -> State:
    return {}


def _pubsub_id(collection: str) -> Callable[[_Context, State], str]:
    return lambda ctx, state: f"projects/{ctx.project}/{collection}/{state.get('name')}"


_KINDS: dict[str, _Kind] = {
    "gcp:serviceaccount/account:Account": _Kind(
        _account, ident=lambda ctx, state: str(state["name"])
    ),
    "gcp:pubsub/topic:Topic": _Kind(_nothing, autoname_key="name", ident=_pubsub_id("topics")),
    "gcp:pubsub/subscription:Subscription": _Kind(
        _nothing, autoname_key="name", ident=_pubsub_id("subscriptions")
    ),
    "gcp:cloudrunv2/service:Service": _Kind(_run_v2, region_key="location", autoname_key="name"),
    "gcp:cloudrun/service:Service": _Kind(_run_v1, region_key="location", autoname_key="name"),
    "gcp:cloudfunctions/function:Function": _Kind(
        _function_v1, region_key="region", autoname_key="name"
    ),
    "gcp:cloudfunctionsv2/function:Function": _Kind(
        _function_v2, region_key="location", autoname_key="name"
    ),
    "gcp:projects/serviceIdentity:ServiceIdentity": _Kind(_service_identity),
}


def _native_account(ctx: _Context) -> State:
    email = service_account_email(str(ctx.inputs.get("accountId")), ctx.project)
    return {
        "email": email,
        "name": f"projects/{ctx.project}/serviceAccounts/{email}",
        "uniqueId": str(int(_digest(email, length=15), 16)).rjust(21, "1")[:21],
    }


def _native_name(collection: str, key: str) -> _Computed:
    return lambda ctx: {"name": f"projects/{ctx.project}/{collection}/{ctx.inputs.get(key)}"}


def _native_run(ctx: _Context) -> State:
    name = str(ctx.inputs.get("serviceId") or ctx.name)
    uri = cloud_run_hash_url(name, ctx.project, ctx.region)
    return {
        "name": f"projects/{ctx.project}/locations/{ctx.region}/services/{name}",
        "uri": uri,
        "urls": [cloud_run_deterministic_url(name, ctx.number, ctx.region), uri],
    }


_NATIVE_KINDS: dict[str, _Kind] = {
    native.SUBSCRIPTION: _Kind(
        _native_name("subscriptions", "subscriptionId"),
        autoname_key="subscriptionId",
        ident=lambda ctx, state: str(state["name"]),
    ),
    "google-native:pubsub/v1:Topic": _Kind(
        _native_name("topics", "topicId"),
        autoname_key="topicId",
        ident=lambda ctx, state: str(state["name"]),
    ),
    "google-native:iam/v1:ServiceAccount": _Kind(
        _native_account, ident=lambda ctx, state: str(state["name"])
    ),
    "google-native:run/v2:Service": _Kind(
        _native_run, region_key="location", autoname_key="serviceId"
    ),
}
"""Google Cloud Native's plans (``pulumi-google-native``'s resource metadata: the auto-named
``*Id`` property, the REST ``name``; a service account's ``email`` is
``ACCOUNT_ID@PROJECT.iam.gserviceaccount.com``)."""


def _kcc_status(ctx: _Context) -> State:
    """What Config Connector writes to ``status`` once the cloud resource exists (its CRDs'
    ``status.email`` of an ``IAMServiceAccount``, ``status.uri`` of a ``RunService``)."""
    spec = _object(ctx.inputs.get("spec"))
    metadata = _object(ctx.inputs.get("metadata"))
    ident = str(spec.get("resourceID") or metadata.get("name") or ctx.name)
    if ctx.inputs.get("kind") == "IAMServiceAccount":
        email = service_account_email(ident, ctx.project or "unknown-project")
        return {"status": {"email": email, "member": f"serviceAccount:{email}"}}
    if ctx.inputs.get("kind") == "RunService":
        region = str(spec.get("location") or ctx.region)
        return {"status": {"uri": cloud_run_hash_url(ident, ctx.project, region)}}
    return {"status": {"observedGeneration": 1}}


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _annotated(state: Any) -> str | None:
    metadata = state.get("metadata") if isinstance(state, Mapping) else None
    notes = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return _text(notes.get(kcc.PROJECT_ANNOTATION)) if isinstance(notes, Mapping) else None


def _kcc_project(
    state: State, provider: Mapping[str, Any], registered: Iterable[Mapping[str, Any]]
) -> str:
    """The project Config Connector creates an object in: its annotation, else its namespace's
    (a ``Namespace`` among the ``registered`` states of this run), else the namespace's name
    (https://cloud.google.com/config-connector/docs/how-to/organizing-resources/project-scoped-resources)."""
    own = _annotated(state)
    if own:
        return own
    placed = WireResource(urn="", type="", name="", props=state, provider_props=provider)
    namespace = kcc.namespace_of(placed)  # the provider's kubeconfig context's too
    for state_of in registered:
        found = _object(state_of)
        name = _object(found.get("metadata")).get("name")
        if found.get("kind") == "Namespace" and name == namespace:
            return _annotated(found) or namespace
    return namespace


def _kind_of(type_token: str) -> _Kind | None:
    """How the provider of ``type_token`` plans it (``None``: echo the inputs)."""
    if type_token in terraform.TYPES:  # the same Terraform schema as pulumi-gcp's type
        gcp = terraform.TYPES[type_token]
        return _KINDS.get(gcp) or _iam_kind(gcp)
    if type_token in native.TYPES:
        return _NATIVE_KINDS.get(type_token) or _Kind(_etag, project=False)
    if type_token in kcc.TYPES:
        return _Kind(_kcc_status, project=False)
    return _KINDS.get(type_token) or _iam_kind(type_token)


def _iam_kind(type_token: str) -> _Kind | None:
    """IAM members and bindings: ``project`` only on project-scoped types; ``etag`` computed."""
    lowered = type_token.lower()
    if not type_token.startswith("gcp:") or not lowered.endswith(
        ("iammember", "iambinding", "iampolicy")
    ):
        return None
    # A service account's or an organization's IAM resources have no project property.
    scoped = not type_token.startswith(("gcp:serviceaccount/", "gcp:organizations/"))
    return _Kind(_etag, project=scoped)


def _text(value: Any) -> str | None:
    """``value`` if it is a non-empty string (not an unknown or an Output), else ``None``."""
    return value if isinstance(value, str) and value and value != UNKNOWN else None


def _merge(state: State, computed: State, *, unknown: bool) -> State:
    """``state`` with ``computed`` laid over it; with ``unknown`` each computed value is
    Pulumi's unknown sentinel instead, except inside objects the inputs already hold, where
    only the computed keys are unknown."""
    merged = dict(state)
    for key, value in computed.items():
        known = merged.get(key)
        if isinstance(value, dict) and isinstance(known, dict):
            merged[key] = _merge(known, value, unknown=unknown)
        else:
            merged[key] = UNKNOWN if unknown else value
    return merged


class GcpMocks(pulumi.runtime.Mocks):
    """Mocks for ``pulumi.runtime.set_mocks`` that plan like the Google Cloud provider.

    ``project`` and ``region``: the default provider's ``gcp:project`` and ``gcp:region``; when
    not given, the provider's environment variables (:data:`PROJECT_VARIABLES`,
    :data:`REGION_VARIABLES`, read from ``environ``, default ``os.environ``), as the provider
    does. ``project_numbers``: project ID to number, for ``getProject`` and the values that embed
    a number.

    A resource's project is its own ``project`` input, else its provider's: an explicit provider
    (named by the resource's provider reference, found by its URN, never by its name: two
    providers may share a name under different parents) has only its own inputs, the default
    provider the configuration above. At preview computed outputs are unknown; otherwise they are
    filled. After a run,
    :attr:`placeholder_projects` lists projects ``getProject`` answered with
    :data:`PLACEHOLDER_PROJECT_NUMBER`, :attr:`unknown_calls` the function tokens left unknown at
    preview and :attr:`echoed_calls` those answered only with their arguments.
    """

    def __init__(
        self,
        project: str | None = None,
        project_numbers: Mapping[str, str] | None = None,
        *,
        region: str | None = None,
        environ: Mapping[str, str] | None = None,
        providers: Mapping[str, Mapping[str, Any]] | None = None,
    ):
        found = None if project else from_environment(PROJECT_VARIABLES, environ)
        self.project = project or (found[1] if found else None)
        found = None if region else from_environment(REGION_VARIABLES, environ)
        self.region = region or (found[1] if found else None)
        self.project_numbers = dict(project_numbers or {})
        self.providers = {k: dict(v) for k, v in (providers or {}).items()}
        self.placeholder_projects: set[str] = set()
        self.echoed_calls: set[str] = set()
        self.unknown_calls: set[str] = set()

    def dry_run(self) -> bool:
        """Whether resources are planned as ``pulumi preview`` plans them: the runtime's mode
        (``pulumi.runtime.is_dry_run()``); an engine that plans outside the SDK's runtime
        (:mod:`pushguard.engine`) answers for itself."""
        return pulumi.runtime.is_dry_run()

    def project_number(self, project: str) -> str:
        """The configured number of ``project``, or :data:`PLACEHOLDER_PROJECT_NUMBER` (recorded
        in :attr:`placeholder_projects`)."""
        number = self.project_numbers.get(project)
        if number is None:
            self.placeholder_projects.add(project)
            return PLACEHOLDER_PROJECT_NUMBER
        return number

    def _provider_config(self, reference: str, package: str = "gcp") -> State:
        """The configuration of the provider a resource or an invoke names by its reference
        (``PROVIDER_URN::ID``): an explicit provider's inputs as it was registered, found by its
        URN in the mock monitor's registrations (``{}`` for a reference to no registered
        provider); the default provider's ``project`` and ``region`` without a reference
        (``package``'s default provider: for another package than ``gcp``, its configuration as
        given in ``providers``)."""
        urn = provider_urn(reference)
        if not urn and package != "gcp":
            return dict(self.providers.get(package, {}))
        if not urn:
            return {"project": self.project, "region": self.region}
        registered = getattr(pulumi_settings.get_monitor(), "resources", {}).get(urn)
        state = getattr(registered, "state", None)
        return dict(state) if isinstance(state, Mapping) else {}

    def registered_states(self) -> list[Mapping[str, Any]]:
        """The states of the resources registered so far in this run (the mock monitor's);
        an engine that records them itself (:mod:`pushguard.engine`) answers for itself."""
        registered = getattr(pulumi_settings.get_monitor(), "resources", {})
        return [getattr(entry, "state", None) or {} for entry in registered.values()]

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, State]:
        """ID and state of a new resource, as the provider plans (preview) or creates it.

        At preview the ID is ``""``, which the SDK reads as unknown, as for a real create.
        """
        inputs: State = dict(args.inputs)
        if not args.custom:
            return None, {}
        preview = self.dry_run()
        if args.typ == GCP_PROVIDER:
            return ("" if preview else f"{args.name}-provider"), inputs
        kind = _kind_of(args.typ)
        if kind is None:
            return ("" if preview else f"{args.name}-id"), inputs
        provider = self._provider_config(args.provider or "", package_of(args.typ))
        own = inputs.get("project")  # an unknown one stays unknown: the provider's is not used
        fallback = provider.get("project") if own in (None, "") else None
        project = _text(own) or _text(fallback) or ""
        region = _text(provider.get("region")) or "us-central1"
        state = self.check(args.typ, args.name, inputs)
        if kind.project and project:
            state.setdefault("project", project)
        if kind.region_key:
            region = _text(inputs.get(kind.region_key)) or region
            state.setdefault(kind.region_key, region)
        if args.typ in kcc.TYPES:  # Config Connector: annotations, not a provider's project
            project = _kcc_project(state, provider, self.registered_states())
        number = self.project_numbers.get(project, PLACEHOLDER_PROJECT_NUMBER)
        ctx = _Context(name=args.name, inputs=state, project=project, region=region, number=number)
        state = _merge(state, kind.computed(ctx), unknown=preview)
        if preview:
            return "", state
        ident = kind.ident(ctx, state) if kind.ident else f"{args.name}-{_digest(args.name)}"
        return ident, state

    @staticmethod
    def check(type_token: str, name: str, inputs: Mapping[str, Any]) -> State:
        """The inputs after the provider's ``Check``: the auto-named property filled in
        (``name`` plus a suffix), as the engine sends them to analyzers."""
        checked = dict(inputs)
        if type_token == kcc.SUBSCRIPTION_PATCH:  # a patch names an existing object
            return checked
        if type_token in kcc.TYPES:  # pulumi-kubernetes auto-names metadata.name
            metadata = checked.get("metadata")
            metadata = dict(metadata) if isinstance(metadata, dict) else {}
            metadata.setdefault("name", autoname(name))
            checked["metadata"] = metadata
            return checked
        kind = _kind_of(type_token)
        if kind is not None and kind.autoname_key and kind.autoname_key not in checked:
            checked[kind.autoname_key] = autoname(name)
        return checked

    def unknown_at_preview(self, token: str) -> bool:
        """Whether the output-form invoke of function ``token`` is unknown at preview (the
        monitor asks; recorded in :attr:`unknown_calls`): every function but ``getProject``, whose
        answer is configured. A data source reads the cloud, which a preview offline cannot."""
        if token in (GET_PROJECT, YAML_DECODE):
            return False
        self.unknown_calls.add(token)
        return True

    def call(self, args: pulumi.runtime.MockCallArgs) -> State:  # type: ignore[override]
        """Answers to provider functions: ``getProject`` from the map (or the placeholder);
        ``kubernetes:yaml:decode`` as the provider parses it (:func:`decode_yaml`); any other
        function returns its arguments (recorded in :attr:`echoed_calls`), and at
        preview, where it is a plain invoke (``get_*``; an output-form invoke of a data source
        never gets here: it is unknown, see :meth:`unknown_at_preview`), its computed outputs
        unknown as well (:func:`data_source_at_preview`; recorded in :attr:`unknown_calls`)."""
        if args.token == GET_PROJECT:
            provider = self._provider_config(args.provider or "")
            project = str(args.args.get("projectId") or _text(provider.get("project")) or "")
            return {
                "projectId": project,
                "number": self.project_number(project),
                "name": project,
                "id": f"projects/{project}",
            }
        if args.token == YAML_DECODE:  # a pure parse, answered at preview by the provider too
            return decode_yaml(args.args)
        self.echoed_calls.add(args.token)
        if not self.dry_run():
            return dict(args.args)
        self.unknown_calls.add(args.token)
        return data_source_at_preview(args.token, args.args)


def data_source_at_preview(token: str, arguments: Mapping[str, Any]) -> State:
    """A plain data source's answer at preview: its ``arguments`` (known, as the program gave
    them) and every computed output its result type declares unknown where Pulumi's Python SDK
    can carry an unknown in a plain value (:func:`pushguard.preview.functions.answer_at_preview`,
    the result type found through the installed SDK's own definition of ``token``); only the
    arguments for a token no installed SDK defines.

    Why not unknown as a whole: a plain invoke's result is a value, not an Output, and the SDK
    hands the program ``None`` for a result the engine declines to serve, which the generated
    ``get_*`` cannot read (the program fails at ``pulumi.get``). The real engine serves a plain
    invoke at preview by reading the cloud; offline that value cannot be known, so what the
    program derives from it must reach the resources, and the pack, as unknown, never as absent
    (an absent ``pushEndpoint`` would make a push subscription look like a pull one).
    """
    answer = answer_at_preview(token, arguments)
    if answer is None:
        return {key: value for key, value in arguments.items() if value is not None}
    return answer.values
