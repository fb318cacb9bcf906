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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.runtime import rpc

from pushguard.rules.accounts import service_account_email, service_agent_email

PLACEHOLDER_PROJECT_NUMBER = "000000000000"
"""Answered by ``getProject`` for a project missing from the map (never a real number)."""

UNKNOWN: str = rpc.UNKNOWN
"""Pulumi's wire sentinel for a value that is unknown until the resource is created."""

GET_PROJECT = "gcp:organizations/getProject:getProject"
GCP_PROVIDER = "pulumi:providers:gcp"

State = dict[str, Any]


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
    name = str(ctx.inputs.get("name") or ctx.name)
    return {
        "url": f"https://{ctx.region}-{ctx.project}.cloudfunctions.net/{name}",
        "serviceConfig": {
            "uri": cloud_run_hash_url(name, ctx.project, ctx.region),
            "service": f"projects/{ctx.project}/locations/{ctx.region}/services/{name}",
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
    return value if isinstance(value, str) and value else None


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

    ``project`` and ``region``: the default provider's ``gcp:project`` and ``gcp:region``;
    ``project_numbers``: project ID to number, for ``getProject`` and the values that embed a
    number. At preview computed outputs are unknown; otherwise they are filled. After a run,
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
    ):
        self.project = project
        self.region = region
        self.project_numbers = dict(project_numbers or {})
        self.placeholder_projects: set[str] = set()
        self.echoed_calls: set[str] = set()
        self.unknown_calls: set[str] = set()
        self._providers: dict[str, State] = {}

    def project_number(self, project: str) -> str:
        """The configured number of ``project``, or :data:`PLACEHOLDER_PROJECT_NUMBER` (recorded
        in :attr:`placeholder_projects`)."""
        number = self.project_numbers.get(project)
        if number is None:
            self.placeholder_projects.add(project)
            return PLACEHOLDER_PROJECT_NUMBER
        return number

    def _provider_config(self, reference: str) -> State:
        """The configuration of an explicit provider (``URN::ID`` reference), else ``{}``."""
        urn = reference.rsplit("::", 1)[0] if reference else ""
        return self._providers.get(urn.rsplit("::", 1)[-1], {}) if urn else {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, State]:
        """ID and state of a new resource, as the provider plans (preview) or creates it.

        At preview the ID is ``""``, which the SDK reads as unknown, as for a real create.
        """
        inputs: State = dict(args.inputs)
        if not args.custom:
            return None, {}
        preview = pulumi.runtime.is_dry_run()
        if args.typ == GCP_PROVIDER:
            self._providers[args.name] = inputs
            return ("" if preview else f"{args.name}-provider"), inputs
        kind = _KINDS.get(args.typ) or _iam_kind(args.typ)
        if kind is None:
            return ("" if preview else f"{args.name}-id"), inputs
        provider = self._provider_config(args.provider or "")
        project = _text(inputs.get("project")) or provider.get("project") or self.project or ""
        region = str(provider.get("region") or self.region or "us-central1")
        state = self.check(args.typ, args.name, inputs)
        if kind.project and project:
            state.setdefault("project", project)
        if kind.region_key:
            region = _text(inputs.get(kind.region_key)) or region
            state.setdefault(kind.region_key, region)
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
        kind = _KINDS.get(type_token)
        if kind is not None and kind.autoname_key and kind.autoname_key not in checked:
            checked[kind.autoname_key] = autoname(name)
        return checked

    def unknown_at_preview(self, token: str) -> bool:
        """Whether the output-form invoke of function ``token`` is unknown at preview (the
        monitor asks; recorded in :attr:`unknown_calls`): every function but ``getProject``, whose
        answer is configured. A data source reads the cloud, which a preview offline cannot."""
        if token == GET_PROJECT:
            return False
        self.unknown_calls.add(token)
        return True

    def call(self, args: pulumi.runtime.MockCallArgs) -> State:  # type: ignore[override]
        """Answers to provider functions: ``getProject`` from the map (or the placeholder);
        any other function returns its arguments (recorded in :attr:`echoed_calls`): a plain
        invoke at preview, any invoke after create (at preview an output-form invoke of a data
        source never gets here: it is unknown, see :meth:`unknown_at_preview`)."""
        if args.token == GET_PROJECT:
            provider = self._provider_config(args.provider or "")
            project = str(
                args.args.get("projectId") or provider.get("project") or self.project or ""
            )
            return {
                "projectId": project,
                "number": self.project_number(project),
                "name": project,
                "id": f"projects/{project}",
            }
        self.echoed_calls.add(args.token)
        return dict(args.args)
