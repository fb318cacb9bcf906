"""Explicit Spark schemas for the Cloud Asset Inventory lines the audit reads.

No schema is ever inferred from the export. A line is parsed in two steps:

1. the **envelope** (:data:`ENVELOPE`): the asset's name and type, its ancestors, and the payloads
   kept as raw JSON text (``resource``, ``iam_policy``, ``service_perimeter``);
2. the **payload**, only for the asset types the rules need, with the schema of that type
   (:data:`RESOURCE_DATA`, :data:`IAM_POLICY`, :data:`SERVICE_PERIMETER`).

A line that fails either step, or whose fields have the wrong JSON types, is quarantined.

Both spellings of the envelope occur in real files: snake_case in Cloud Storage exports
(``asset_type``, ``iam_policy``, ``service_perimeter``) and camelCase from the CAI API and
``gcloud asset list`` (``assetType``, ``iamPolicy``, ``servicePerimeter``). ``resource.data`` keeps
the service's REST field names (camelCase) in both
(https://cloud.google.com/asset-inventory/docs/reference/rest/v1/Asset). Access-policy exports put
perimeters in snake_case proto form (``restricted_services``); the ``ServicePerimeter`` resource
form uses camelCase (``restrictedServices``).

The audit's own tables have declared schemas too: :data:`JOINED_SCHEMA`, the rows that
:func:`pushguard.audit.join.subscription_facts` produces and
:func:`pushguard.audit.evaluate.facts_from_row` reads, and :data:`FINDINGS_DDL`, the findings the
evaluation writes (its Arrow form is derived from it: :mod:`pushguard.audit.arrow`).
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    MapType,
    StringType,
    StructField,
    StructType,
)

CORRUPT = "_corrupt_record"

SUBSCRIPTION = "pubsub.googleapis.com/Subscription"
TOPIC = "pubsub.googleapis.com/Topic"
SERVICE_ACCOUNT = "iam.googleapis.com/ServiceAccount"
PROJECT = "cloudresourcemanager.googleapis.com/Project"
FOLDER = "cloudresourcemanager.googleapis.com/Folder"
ORGANIZATION = "cloudresourcemanager.googleapis.com/Organization"
RUN_SERVICE = "run.googleapis.com/Service"
FUNCTION_V1 = "cloudfunctions.googleapis.com/CloudFunction"
FUNCTION_V2 = "cloudfunctions.googleapis.com/Function"
PERIMETER = "accesscontextmanager.googleapis.com/ServicePerimeter"
ROLE = "iam.googleapis.com/Role"

RESOURCE_TYPES = frozenset(
    {
        SUBSCRIPTION,
        TOPIC,
        SERVICE_ACCOUNT,
        PROJECT,
        FOLDER,
        RUN_SERVICE,
        FUNCTION_V1,
        FUNCTION_V2,
        PERIMETER,
        ROLE,
    }
)
"""Asset types whose ``resource`` the audit reads."""
IAM_TYPES = frozenset(
    {
        SUBSCRIPTION,
        TOPIC,
        SERVICE_ACCOUNT,
        PROJECT,
        FOLDER,
        ORGANIZATION,
        RUN_SERVICE,
        FUNCTION_V1,
        FUNCTION_V2,
    }
)
"""Asset types whose IAM policy can grant what the rules look for (directly or inherited)."""
NEEDED_TYPES = RESOURCE_TYPES | IAM_TYPES
"""Only these folders are read in the per-asset-type layout (``PREFIX/<asset type>/<shard>``)."""


def data_column(asset_type: str) -> str:
    """The column holding the typed ``resource.data`` of ``asset_type``
    (``pubsub.googleapis.com/Subscription`` -> ``data_subscription_pubsub``)."""
    service, _, kind = asset_type.partition("/")
    return f"data_{kind.lower()}_{service.partition('.')[0]}"


def _strings(*names: str) -> list[StructField]:
    return [StructField(name, StringType()) for name in names]


IDENTITY = StructType(
    [
        *_strings("name", "asset_type", "assetType", "update_time", "updateTime"),
        StructField("ancestors", ArrayType(StringType())),
        StructField(CORRUPT, StringType()),
    ]
)
"""What every line is parsed for: its identity (name, type, ancestors, update time) and whether
it is JSON at all. Each of these must have its JSON type (strings, an array of strings)."""

ENVELOPE = StructType(
    [
        StructField("resource", StructType(_strings("parent", "data"))),
        *_strings("iam_policy", "iamPolicy", "service_perimeter", "servicePerimeter"),
        StructField(CORRUPT, StringType()),
    ]
)
"""The rest of the CAI asset envelope, parsed for the lines of :data:`NEEDED_TYPES` only; payloads
stay raw JSON text (Spark keeps a nested object as its JSON text when the schema says string).
``resource.parent`` must be a JSON string."""

_URL = StructType(_strings("url"))


def _data(*fields: StructField) -> StructType:
    return StructType([*fields, StructField(CORRUPT, StringType())])


_PERIMETER_CONFIG = StructType(
    [
        StructField("resources", ArrayType(StringType())),
        StructField("restricted_services", ArrayType(StringType())),
        StructField("restrictedServices", ArrayType(StringType())),
    ]
)

SERVICE_PERIMETER = _data(
    *_strings("name"),  # accessPolicies/P/servicePerimeters/S: which copies are one perimeter
    StructField("status", _PERIMETER_CONFIG),
    StructField("spec", _PERIMETER_CONFIG),
)
"""A service perimeter, in both the access-policy (snake_case) and the resource (camelCase) form
(https://cloud.google.com/access-context-manager/docs/reference/rest/v1/accessPolicies.servicePerimeters):
its ``name`` (``accessPolicies/POLICY/servicePerimeters/NAME``, for reports) and configurations."""


RESOURCE_DATA: dict[str, StructType] = {
    # https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions
    SUBSCRIPTION: _data(
        StructField(
            "pushConfig",
            StructType(
                [
                    *_strings("pushEndpoint"),
                    StructField(
                        "oidcToken", StructType(_strings("serviceAccountEmail", "audience"))
                    ),
                    # read by --stacks (push-state-drift): unwrapped delivery and attributes
                    StructField(
                        "noWrapper", StructType([StructField("writeMetadata", BooleanType())])
                    ),
                    StructField("attributes", MapType(StringType(), StringType())),
                ]
            ),
        ),
        StructField("enableExactlyOnceDelivery", BooleanType()),
        StructField("deadLetterPolicy", StructType(_strings("deadLetterTopic"))),
        # the subscription's own topic: with the name, what tells a Google-managed subscription
        *_strings("topic"),
    ),
    TOPIC: _data(),
    # https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts
    SERVICE_ACCOUNT: _data(*_strings("email")),
    # https://cloud.google.com/resource-manager/reference/rest/v3/projects (--stacks: which
    # projects the export holds)
    PROJECT: _data(*_strings("projectId")),
    FOLDER: _data(),
    # run.googleapis.com/Service: v2 (uri, urls) and v1 Knative (status.url, status.address.url)
    RUN_SERVICE: _data(
        *_strings("uri"),
        StructField("urls", ArrayType(StringType())),
        StructField("status", StructType([*_strings("url"), StructField("address", _URL)])),
    ),
    FUNCTION_V1: _data(StructField("httpsTrigger", _URL)),
    FUNCTION_V2: _data(StructField("serviceConfig", StructType(_strings("uri", "service")))),
    PERIMETER: SERVICE_PERIMETER,
    # A custom role (https://cloud.google.com/iam/docs/reference/rest/v1/organizations.roles):
    # the permissions the grant rules judge a binding of it by. A deleted role's bindings have
    # no effect (https://cloud.google.com/iam/docs/reference/rest/v1/projects.roles/delete).
    ROLE: _data(
        StructField("includedPermissions", ArrayType(StringType())),
        StructField("deleted", BooleanType()),
    ),
}
"""Per asset type, the ``resource.data`` fields the audit reads, and only those: every field
declared here must have its declared JSON type (a line where one does not is quarantined). A
type with no field (a topic, a project, a folder) is only checked to carry a JSON object as its
``resource.data``: the joins need the asset, not its fields."""

_CONDITION = StructType(_strings("title", "expression"))

IAM_POLICY = _data(
    StructField(
        "bindings",
        ArrayType(
            StructType(
                [
                    *_strings("role"),
                    StructField("members", ArrayType(StringType())),
                    StructField("condition", _CONDITION),
                ]
            )
        ),
    ),
)
"""An IAM policy (https://cloud.google.com/iam/docs/reference/rest/v1/Policy)."""

GRANT = StructType(
    [
        *_strings("role", "member", "resource", "condition"),
        StructField("permissions", ArrayType(StringType())),
    ]
)
"""One IAM grant in a joined row, field for field :class:`pushguard.rules.facts.IamGrant`: the
role, the member, the resource the binding is on (``projects/N``, ``folders/N``,
``organizations/N`` or the asset's full name), the condition's title or expression (null for
an unconditional binding) and, for a custom role the export describes, the permissions of
:data:`~pushguard.rules.iam.IMPERSONATION_PERMISSIONS` it carries (null otherwise)."""

GRANT_FACTS = ("account_grants", "target_grants", "dead_letter_grants", "subscription_grants")
"""The grant columns of a joined row: the grants on the push-auth service account, on the push
target (the service whose IAM policy holds the invoker grant), on the dead-letter topic and on the
subscription, each with the grants inherited from their ancestors."""

_GRANTS = ArrayType(GRANT, containsNull=False)

JOINED_SCHEMA = StructType(
    [
        *_strings("asset_name", "project_id", "project_number"),
        StructField("ancestors", ArrayType(StringType()), nullable=False),
        *_strings("push_endpoint", "push_auth_account", "audience", "topic"),
        StructField("exactly_once_delivery", BooleanType(), nullable=False),
        *_strings("dead_letter_topic"),
        StructField("in_service_perimeter", BooleanType(), nullable=False),
        StructField("service_perimeters", ArrayType(StringType()), nullable=False),
        *_strings("target_kind", "target_name"),
        *(StructField(name, _GRANTS) for name in GRANT_FACTS),
    ]
)
"""One row per subscription, the contract between the join and the evaluation: what
:func:`pushguard.audit.join.subscription_facts` returns (exactly these columns, in this order) and
:func:`pushguard.audit.evaluate.facts_from_row` reads.

- ``asset_name``: the subscription's CAI asset name
  (``//pubsub.googleapis.com/projects/P/subscriptions/S``);
- ``project_id`` (empty when the name has none; when the name holds the project's number, the
  ID the export's project assets give it, null when none does), ``project_number`` (null when
  unknown), plain;
- ``ancestors``: ``projects/N``, ``folders/N``, ..., ``organizations/N``, nearest first (empty
  when unknown, never null);
- ``push_endpoint`` (null or empty for a pull subscription), ``push_auth_account`` (the OIDC
  token's service account e-mail, lower case), ``audience``: the subscription's push config;
- ``topic``: the subscription's topic (``projects/P/topics/T``; null when the export omits it);
- ``exactly_once_delivery`` (false when unset), ``dead_letter_topic`` (``projects/P/topics/T``);
- ``in_service_perimeter``: the project is in a perimeter that restricts Pub/Sub;
- ``service_perimeters``: the names of those perimeters, sorted (empty when none, never null);
- ``target_kind`` (``cloud-run``, ``cloud-function-v1``; null when no Cloud Run service or
  function in the export serves the endpoint's host), ``target_name``;
- the :data:`GRANT_FACTS` columns: arrays of :data:`GRANT`, null where the asset is not in the
  export (its grants were not collected).
"""

JOINED_COLUMNS = tuple(field.name for field in JOINED_SCHEMA.fields)
"""The column names of :data:`JOINED_SCHEMA`, in order."""


FINDINGS_DDL = (
    "asset_name string, project_id string, project_number string, ancestors array<string>, "
    "rule_id string, level string, status string, message string, remediation string, "
    "field string, evidence map<string,string>, finding_id string, exception_state string, "
    "exception_reason string, exception_expires string, run_time string"
)
"""The schema of a finding row (``findings.parquet``, ``findings.jsonl``), defined once: Spark
reads it as the return type of ``mapInArrow``, and the Arrow batches the rules yield are built
with :func:`pushguard.audit.arrow.arrow_schema` of it."""


def ddl_columns(ddl: str) -> list[tuple[str, str]]:
    """The top-level ``(name, type)`` pairs of a Spark DDL string of plain names
    (``"a string, b map<string,string>"`` -> ``[("a", "string"), ("b", "map<string,string>")]``):
    commas inside ``<...>`` belong to the type.

    Raises:
        ValueError: a column without a name and a type, or unbalanced ``<``/``>``.
    """
    columns: list[tuple[str, str]] = []
    depth, start = 0, 0
    for index, char in enumerate(ddl + ","):
        depth += {"<": 1, ">": -1}.get(char, 0)
        if depth < 0:
            raise ValueError(f"unbalanced '>' in the DDL {ddl!r}")
        if char == "," and depth == 0:
            name, _, data_type = ddl[start:index].strip().partition(" ")
            if not name or not data_type.strip():
                raise ValueError(f"a column without a name and a type in the DDL {ddl!r}")
            columns.append((name, data_type.strip()))
            start = index + 1
    if depth:
        raise ValueError(f"unbalanced '<' in the DDL {ddl!r}")
    return columns


FINDINGS_COLUMNS = tuple(name for name, _ in ddl_columns(FINDINGS_DDL))
"""The column names of :data:`FINDINGS_DDL`, in order."""
