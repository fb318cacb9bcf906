"""The settings every pushguard policy accepts: one pydantic model, one JSON schema, one overlay.

Pulumi passes configuration per policy (``policy-config.json`` maps a policy name to its
``enforcementLevel`` and properties; https://www.pulumi.com/docs/iac/using-pulumi/crossguard/configuration/).
Every pushguard policy accepts the same settings, :class:`PackSettings`, and reads the ones it
needs; the settings table in docs/policy-pack.md (Configuration) says which. Unknown keys are an
error, so a typo does not silently switch a setting off.

The pack, the offline preview (through the pack) and the Spark audit read the settings the same way
and lay them over the facts their adapters read with the same :meth:`PackSettings.apply`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from pushguard.policy.exceptions import (
    DEFAULT_MAX_DAYS,
    Excepted,
    PolicyException,
    duplicates,
    exception_for,
    exceptions_schema,
    matching,
    too_far,
    utc_today,
)
from pushguard.policy.resources import path_project, project_variants
from pushguard.rules.accounts import service_account_project
from pushguard.rules.facts import (
    PROJECT_ID_PATTERN,
    PROJECT_NUMBER_PATTERN,
    ProjectNames,
    SubscriptionFacts,
)

_PROJECT_ID = re.compile(PROJECT_ID_PATTERN)
_PROJECT_NUMBER = re.compile(PROJECT_NUMBER_PATTERN)
_SCHEME_PREFIX = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def _project_ref(value: str) -> str:
    plain = value.strip().removeprefix("projects/")
    if _PROJECT_NUMBER.match(plain) or _PROJECT_ID.match(plain):
        return plain
    raise ValueError(
        f"must be a project ID (my-proj), a number (123456789012) or projects/NUMBER, not {value!r}"
    )


def _project_number(value: str) -> str:
    if not _PROJECT_NUMBER.match(value) or value.startswith("0"):
        raise ValueError(f"must be a project number (digits only, no leading zero), not {value!r}")
    return value


def _exempt_prefix(value: str) -> str:
    if not _SCHEME_PREFIX.match(value):
        raise ValueError(f"must start with a scheme such as rpc://, not {value!r}")
    try:
        parts = urlsplit(value)
    except ValueError:
        parts = None
    scheme, _, rest = value.partition("://")
    web = scheme.lower() in ("http", "https")
    if web and not rest.strip("/"):
        raise ValueError(
            f"{value!r} would exempt every {scheme.lower()}:// endpoint; name a host, "
            "such as https://partner.example/"
        )
    if parts is None or (web and not parts.hostname) or "@" in parts.netloc or parts.query:
        raise ValueError(
            f"{value!r} must name a host (such as https://partner.example/), without user@ or "
            "a query"
        )
    return value


ProjectRef = Annotated[str, AfterValidator(_project_ref)]
ProjectNumber = Annotated[str, AfterValidator(_project_number)]
ExemptPrefix = Annotated[str, AfterValidator(_exempt_prefix)]


class PackSettings(BaseModel):
    """Settings every pushguard policy accepts (camelCase in ``policy-config.json``).

    - ``perimeterProjects``: projects inside VPC Service Controls service perimeters, as IDs,
      numbers or ``projects/NUMBER``; read by ``push-vpcsc-default-url``.
    - ``projectNumbers``: project ID to number; service agents and perimeters are keyed by number.
    - ``exemptEndpointPrefixes``: endpoint prefixes exempt from ``push-endpoint-https``.
    - ``tokenCreatorGrantedProjects``: projects where the Pub/Sub service agent's token-creator
      grant exists outside the stack; read by ``push-agent-token-creator``.
    - ``defaultProject``: the project of resources that set none and whose provider sets none.
    - ``unknownAtPreview``: what a rule that cannot decide at preview does: ``warn`` (an advisory
      diagnostic, the default) or ``enforce`` (a violation at the policy's enforcement level).
    - ``exceptionMaxDays``: how far ahead (days, default 365) an exception may expire.
    - ``exceptions``: accepted risks, each ``resource``, ``reason``, ``expires``
      (:mod:`pushguard.policy.exceptions`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    _declared: dict[str, str] = PrivateAttr(default_factory=dict)
    """Project numbers the checked program declares (:meth:`with_numbers`)."""

    perimeter_projects: tuple[ProjectRef, ...] = Field((), alias="perimeterProjects")
    project_numbers: dict[Annotated[str, AfterValidator(_project_ref)], ProjectNumber] = Field(
        default_factory=dict, alias="projectNumbers"
    )
    exempt_endpoint_prefixes: tuple[ExemptPrefix, ...] = Field((), alias="exemptEndpointPrefixes")
    token_creator_granted_projects: tuple[ProjectRef, ...] = Field(
        (), alias="tokenCreatorGrantedProjects"
    )
    default_project: ProjectRef | None = Field(None, alias="defaultProject")
    unknown_at_preview: Literal["warn", "enforce"] = Field("warn", alias="unknownAtPreview")
    exception_max_days: int = Field(DEFAULT_MAX_DAYS, ge=1, le=3660, alias="exceptionMaxDays")
    exceptions: tuple[PolicyException, ...] = Field((), alias="exceptions")

    @field_validator("project_numbers")
    @classmethod
    def _one_project_per_number(cls, value: dict[str, str]) -> dict[str, str]:
        seen: dict[str, str] = {}
        for project, number in value.items():
            if number in seen:
                raise ValueError(
                    f"{seen[number]} and {project} are both given the number {number}; a "
                    "project number names one project"
                )
            seen[number] = project
        return value

    @field_validator("exceptions")
    @classmethod
    def _not_too_far(
        cls, value: tuple[PolicyException, ...], info: ValidationInfo
    ) -> tuple[PolicyException, ...]:
        max_days = info.data.get("exception_max_days", DEFAULT_MAX_DAYS)
        problems = too_far(value, max_days, utc_today())
        numbers = PackSettings(project_numbers=info.data.get("project_numbers") or {})
        problems += duplicates(value, numbers.canonical_resource)
        if problems:
            raise ValueError("; ".join(f"item {i}: {message}" for i, message in problems))
        return value

    def canonical_resource(self, resource: str) -> str:
        """An exception's resource with a path's project named by its ID where
        ``projectNumbers`` gives one: the identity two exceptions of one policy may not share."""
        project = path_project(resource)
        if project is None:
            return resource
        return project_variants(resource, [self.resolve(project).id])[-1]

    def resource_names(self, *names: str) -> list[str]:
        """``names`` (URNs, subscription or trigger paths, CAI full names) and each path again
        with its project's other name through ``projectNumbers`` (:meth:`resolve`)."""
        found: list[str] = []
        for name in names:
            if not name:
                continue
            project = self.resolve(path_project(name)) if path_project(name) else None
            other = (project.id, project.number) if project else ()
            found += project_variants(name, other)
        return list(dict.fromkeys(found))

    def exceptions_for(self, *names: str) -> list[PolicyException]:
        """This policy's exceptions that name the resource known by ``names`` (a path by either
        of its project's names: :meth:`resource_names`)."""
        return matching(self.exceptions, self.resource_names(*names))

    def exception_for(self, *names: str, today: date | None = None) -> Excepted | None:
        """The exception of the resource known by ``names`` (URN, subscription or trigger path,
        by either of its project's names: :meth:`resource_names`) under this policy, judged on
        ``today`` (default today, UTC); ``None`` when none names it."""
        return exception_for(self.exceptions, self.resource_names(*names), today or utc_today())

    def number_of(self, project: str | None) -> str | None:
        """The project number of a project ID or number (``projectNumbers``); ``None`` when
        not known."""
        return self.resolve(project).number

    def id_of(self, number: str | None) -> str | None:
        """The project ID whose number is ``number`` in ``projectNumbers``; ``None`` when no ID,
        or more than one, maps to it (a number is one project:
        https://cloud.google.com/resource-manager/docs/creating-managing-projects#identifying_projects)."""
        if not number:
            return None
        ids = [pid for pid, known in self.project_numbers.items() if known == number]
        return ids[0] if len(ids) == 1 else None

    def with_numbers(self, declared: Mapping[str, str]) -> PackSettings:
        """These settings with project numbers a program declares itself (``declared``: project
        ID -> number, such as the ``project_number`` a ``PushSubscription`` is given). They are
        the program's claim: ``projectNumbers`` wins where both name a project, and
        :meth:`perimeter_doubt` never relies on them (a claimed number cannot take a project out
        of a perimeter)."""
        extra = {k: v for k, v in declared.items() if k not in self.project_numbers}
        if not extra:
            return self
        copy = self.model_copy()
        copy._declared = {**self._declared, **extra}
        return copy

    def resolve(self, project: str | None) -> ProjectNames:
        """Both names of a project given by either (an ID, a number, ``projects/X``), through
        ``projectNumbers``: the one resolution of every rule that depends on the project
        (perimeters, same project, service agents, grants on the project). A project is named by
        its ID or its number anywhere in Google Cloud's APIs
        (https://cloud.google.com/resource-manager/docs/creating-managing-projects#identifying_projects).
        """
        plain = (project or "").strip().removeprefix("projects/")
        if not plain:
            return ProjectNames()
        if _PROJECT_NUMBER.match(plain):
            return ProjectNames(self.id_of(plain), plain)
        return ProjectNames(plain, self.project_numbers.get(plain) or self._declared.get(plain))

    def perimeter_doubt(self, facts: SubscriptionFacts) -> str | None:
        """Why membership of a perimeter cannot be decided from these settings, or ``None``: the
        subscription is not listed by a name it is known by, ``perimeterProjects`` lists a project
        by a number that ``projectNumbers`` gives no ID, and the subscription's own number is
        known neither from its source nor from ``projectNumbers``. "Not in the perimeter" would
        then be a guess, so the perimeter rule is not checked (never passed)."""
        number = facts.project_number or self.project_numbers.get(facts.project_id or "")
        if number or self.in_perimeter(facts.project_id):
            return None
        unresolved = [
            ref.number
            for ref in (self.resolve(r) for r in self.perimeter_projects)
            if ref.id is None and ref.number
        ]
        if not unresolved:
            return None
        project = facts.project_id or "the subscription's project"
        return (
            f"perimeterProjects lists project {unresolved[0]} by number and the number of "
            f"{project} is not in the top-level projectNumbers map"
        )

    def _matches(self, refs: tuple[str, ...], project: str | None) -> bool:
        names = self.resolve(project)
        listed = {self.resolve(ref) for ref in refs}
        return any(
            (names.id is not None and names.id == ref.id)
            or (names.number is not None and names.number == ref.number)
            for ref in listed
        )

    def in_perimeter(self, project: str | None) -> bool:
        """True when the project (ID or number) is listed in ``perimeterProjects`` by either of
        its names."""
        return self._matches(self.perimeter_projects, project)

    def token_creator_granted(self, project: str | None) -> bool:
        """True when the project (ID or number) is listed in ``tokenCreatorGrantedProjects`` by
        either of its names."""
        return self._matches(self.token_creator_granted_projects, project)

    def apply(self, facts: SubscriptionFacts) -> SubscriptionFacts:
        """``facts`` with these settings laid over them: the one overlay of every enforcement
        point that reads a policy config (the pack, the preview through it, the audit).

        - ``project_id`` and ``project_number``: each kept if the source knew it, else the other
          name's through ``projectNumbers`` (:meth:`resolve`), so a subscription that names its
          project by number is judged as the project it is;
        - ``project_number_claimed``: the number is only the program's claim (:meth:`with_numbers`);
        - ``push_auth_account_project_names``: the push-auth account's project by both names
          (from its e-mail or ``push_auth_account_project``), for the same-project comparison;
        - ``exempt_endpoint_prefixes``: ``exemptEndpointPrefixes``;
        - ``in_service_perimeter``: true if the source said so or the project, by either name, is
          in ``perimeterProjects``;
        - ``token_creator_known_granted``: true if the source said so or the project is in
          ``tokenCreatorGrantedProjects``.

        Settings only ever add knowledge: nothing the source read is removed or turned false.
        """
        names = self.resolve(facts.project_number or facts.project_id)
        project_id = facts.project_id or names.id
        number = facts.project_number or self.resolve(project_id).number or names.number
        claimed = bool(number) and not (
            facts.project_number or self.project_numbers.get(project_id or "")
        )
        both = (project_id, number)
        return facts.model_copy(
            update={
                "project_id": project_id,
                "project_number": number,
                "project_number_claimed": facts.project_number_claimed or claimed,
                "push_auth_account_project_names": self._account_names(facts),
                "exempt_endpoint_prefixes": self.exempt_endpoint_prefixes,
                "in_service_perimeter": facts.in_service_perimeter
                or any(self.in_perimeter(name) for name in both),
                "token_creator_known_granted": facts.token_creator_known_granted
                or any(self.token_creator_granted(name) for name in both),
            }
        )

    def _account_names(self, facts: SubscriptionFacts) -> ProjectNames | None:
        """The push-auth account's project by both names, ``None`` when not known."""
        if facts.push_auth_account:
            owner = service_account_project(facts.push_auth_account)
            given = (owner.project_number or owner.project_id) if owner else None
        else:
            given = facts.push_auth_account_project
        if not given:
            return facts.push_auth_account_project_names
        return self.resolve(given)


class PackConfigError(ValueError):
    """The configuration of one policy does not match :class:`PackSettings`; ``problems`` lists
    ``(camelCase field path, message)`` pairs."""

    def __init__(self, policy: str, problems: list[tuple[str, str]]) -> None:
        self.policy = policy
        self.problems = problems
        detail = "; ".join(f"{field}: {message}" for field, message in problems)
        super().__init__(f"invalid configuration for policy {policy}: {detail}")


def parse_settings(policy: str, raw: Mapping[str, Any] | None) -> PackSettings:
    """Validate one policy's configuration properties (``enforcementLevel`` already removed).

    Raises:
        PackConfigError: naming each bad field and what it allows (unknown keys list the known
            ones).
    """
    try:
        return PackSettings.model_validate(dict(raw or {}))
    except ValidationError as error:
        problems = []
        known = ", ".join(sorted(f.alias or name for name, f in PackSettings.model_fields.items()))
        for item in error.errors():
            field = ".".join(str(part) for part in item["loc"]) or "(config)"
            if item["type"] == "extra_forbidden":
                problems.append((field, f"is not a pushguard setting; known settings: {known}"))
            else:
                problems.append((field, item["msg"].removeprefix("Value error, ")))
        raise PackConfigError(policy, problems) from None


def settings_json_schema() -> dict[str, dict[str, Any]]:
    """The JSON schema ``properties`` of :class:`PackSettings`, as each policy's config schema
    (Pulumi validates ``policy-config.json`` against it before the pack runs)."""
    schema = PackSettings.model_json_schema(by_alias=True)
    properties: dict[str, dict[str, Any]] = {}
    for name, generated in schema["properties"].items():
        spec = {k: v for k, v in generated.items() if k not in ("title", "default")}
        if "anyOf" in spec:  # Optional[str]: accept the string form only
            spec = dict(next(s for s in spec["anyOf"] if s.get("type") != "null"))
        properties[name] = spec
    descriptions = {
        "perimeterProjects": "Projects inside VPC Service Controls service perimeters: IDs, "
        "numbers or projects/NUMBER.",
        "projectNumbers": "Map of project ID to project number.",
        "exemptEndpointPrefixes": "Endpoint prefixes exempt from push-endpoint-https.",
        "tokenCreatorGrantedProjects": "Projects where the Pub/Sub service agent's token-creator "
        "grant exists outside the stack.",
        "defaultProject": "Project of resources that set none and whose provider sets none.",
        "unknownAtPreview": "warn: advisory diagnostic when a rule cannot decide at preview; "
        "enforce: a violation at the policy's level.",
        "exceptionMaxDays": "How many days ahead an exception may expire (default 365).",
    }
    properties["exceptions"] = exceptions_schema()
    for name, text in descriptions.items():
        properties[name]["description"] = text
    return properties
