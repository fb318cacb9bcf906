"""SARIF 2.1.0 output of a preview, in the shape GitHub code scanning accepts.

One run whose tool driver lists every policy of the pack as a rule (short and full description,
help text with the remediation, help URI, default level, ``security-severity`` for GitHub's
severity badges) and one result per violation: ``error`` for mandatory, ``warning`` for
advisory, located at the line of the team's program that declared the resource (see
:func:`pushguard.gate.report.location`), with the URN as logical location and the finding's
stable ID (:func:`pushguard.rules.identity.finding_id`) as ``partialFingerprints``
``pushguardFinding/v2`` so a finding keeps its identity across runs (a pack that writes no ID:
a hash of policy, URN and message). A finding under an active exception carries an accepted
external ``suppressions`` entry with its reason and expiry. A result or not-checked note about a
resource the engine imports says so: its resource is labelled ``TYPE NAME (import)`` and it
carries ``properties.operation`` ``import`` (SARIF 2.1.0 section 3.8, property bags). A
subscription Google manages, which no policy judged, is an execution note, not a result, and so
is each value the real preview would know that the run did not (``unknown-offline``).
``automationDetails.id`` is ``pushguard-preview/PROJECT/STACK/`` so each stack is its own
analysis category. Sources: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html and
https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import quote

from pushguard import __version__
from pushguard._about import project_url
from pushguard.crossguard.google_managed_note import GoogleManagedEntry
from pushguard.crossguard.not_checked import NotChecked
from pushguard.gate.redact import redact_result
from pushguard.gate.report import (
    IMPORT,
    call_stack,
    location,
    message_text,
    relative_path,
    resource_label,
    unprintable_names,
    urn_operation,
)
from pushguard.gate.result import PolicyMeta, StackResult, Violation
from pushguard.gate.unknowns import UNKNOWN_OFFLINE, UnknownOffline
from pushguard.rules.google_managed import GOOGLE_MANAGED

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0"}
"""GitHub maps ``security-severity`` > 9.0 to critical, 7.0-8.9 high, 4.0-6.9 medium, else low."""


def _level(level: str) -> str:
    return "error" if level == "mandatory" else "warning"


def _configuration(level: str) -> dict[str, Any]:
    """A rule's ``defaultConfiguration`` (SARIF 2.1.0 section 3.50, ``reportingConfiguration``):
    a policy the policy config disabled is ``enabled: false`` with level ``none``, so a disabled
    mandatory rule does not read as a warning that found nothing."""
    if level == "disabled":
        return {"enabled": False, "level": "none"}
    return {"level": _level(level)}


def _rule(meta: PolicyMeta) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": meta.name,
        "name": "".join(part.capitalize() for part in meta.name.split("-")),
        "shortDescription": {"text": meta.display_name or meta.name},
        "fullDescription": {"text": meta.description or meta.display_name or meta.name},
        "help": {
            "text": meta.remediation or meta.description,
            "markdown": f"**{meta.display_name}**\n\n{meta.remediation or meta.description}",
        },
        "defaultConfiguration": _configuration(meta.level),
        "properties": {"tags": ["security", "pulumi", "pubsub"], "precision": "very-high"},
    }
    if meta.url.startswith(("https://", "http://")):
        rule["helpUri"] = meta.url
    if meta.severity in SECURITY_SEVERITY:
        rule["properties"]["security-severity"] = SECURITY_SEVERITY[meta.severity]
    return rule


def uri(path: str) -> str:
    """A report path as a SARIF ``artifactLocation.uri``: a URI reference (RFC 3986), so a space,
    ``#``, ``?`` or ``%`` in a file name is percent-encoded and code scanning finds the file
    (SARIF 2.1.0 section 3.4.3). ``/`` separates segments; an absolute path becomes a ``file``
    URI."""
    if path.startswith("/"):
        return "file://" + quote(path, safe="/")
    return quote(path, safe="/")


def error_sarif(message: str, result: StackResult | None) -> dict[str, Any]:
    """The SARIF log of a preview that failed (exit 2): what :func:`to_sarif` knows of
    ``result``, with an invocation marked unsuccessful that carries ``message`` as an error
    notification (SARIF 2.1.0 section 3.20, ``toolExecutionNotifications``)."""
    log = to_sarif(result) if result is not None else to_sarif(None)
    log["runs"][0]["invocations"] = [
        {
            "executionSuccessful": False,
            "exitCode": 2,
            "toolExecutionNotifications": [{"level": "error", "message": {"text": message}}],
        }
    ]
    return log


def to_sarif(result: StackResult | None) -> dict[str, Any]:
    """The SARIF log (a JSON-ready dict) of ``result`` (``None``: a run that found nothing
    because it could not start)."""
    if result is None:
        return _log([], [], "pushguard-preview/")
    result = redact_result(result)
    names = unprintable_names(result)
    rules = [_rule(meta) for meta in result.policies.values()]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = [_result(result, v, names, index) for v in result.violations]
    log = _log(rules, results, automation_id(result.origin.tool, result.project, result.stack))
    log["runs"][0]["invocations"] = [_invocation(result, names, index)]
    return log


def _fingerprint(result: StackResult, v: Violation) -> str:
    """The finding ID (asset, rule, cause); a pack that writes none: a hash of policy, URN and
    message (with the organisation, which the URN does not name: two orgs' stacks differ)."""
    identity: tuple[str, ...] = (
        (v.finding_id,) if v.finding_id else (v.policy, v.urn or result.stack, v.message)
    )
    if result.organization:
        identity = (result.organization, *identity)
    if len(identity) == 1:
        return identity[0]
    return hashlib.sha256("\0".join(identity).encode()).hexdigest()


def _result(
    result: StackResult, v: Violation, names: list[str], index: dict[str, int]
) -> dict[str, Any]:
    """One violation as a SARIF result (see the module documentation)."""
    path, line = location(result, v.urn, v.where)
    entry: dict[str, Any] = {
        "ruleId": v.policy,
        "level": _level(v.level),
        "message": {"text": message_text(f"{resource_label(result, v.urn)}: {v.message}", names)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri(path)},
                    "region": {"startLine": line},
                },
                "logicalLocations": [
                    {
                        "name": resource_label(result, v.urn),
                        "fullyQualifiedName": v.urn or f"stack:{result.stack}",
                        "kind": "resource",
                    }
                ],
            }
        ],
        "partialFingerprints": {"pushguardFinding/v2": _fingerprint(result, v)},
    }
    if urn_operation(result, v.urn) == IMPORT:
        entry["properties"] = {"operation": IMPORT}
    if v.excepted is not None and v.excepted.active:
        # SARIF 2.1.0 section 3.35: an accepted, external (policy config) suppression.
        entry["suppressions"] = [
            {
                "kind": "external",
                "status": "accepted",
                "justification": f"{v.excepted.reason} (until {v.excepted.expires})",
            }
        ]
    elif v.excepted is not None:
        entry["message"]["text"] += f" (exception expired {v.excepted.expires})"
    related = [
        {
            "id": n,
            "physicalLocation": {
                "artifactLocation": {"uri": uri(frame_path)},
                "region": {"startLine": max(frame_line, 1)},
            },
            "message": {"text": "called from" if n else "outermost call"},
        }
        for n, (frame_path, frame_line) in enumerate(call_stack(result, v.urn))
    ]
    if related:
        entry["relatedLocations"] = related
    if v.policy in index:
        entry["ruleIndex"] = index[v.policy]
    return entry


def _invocation(result: StackResult, names: list[str], index: dict[str, int]) -> dict[str, Any]:
    """The run's invocation: its exit code, each check that could not judge a value (exit 2) as
    an error notification (SARIF 2.1.0 section 3.20.21), what was not checked as
    configuration notifications, and each Google-managed subscription as a note
    (:func:`_google_managed`), with their count in ``properties.googleManaged``."""
    invocation: dict[str, Any] = {"executionSuccessful": True, "exitCode": result.exit_code}
    if result.unjudged:
        invocation["toolExecutionNotifications"] = [
            {
                "level": "error",
                "message": {
                    "text": message_text(
                        f"not checked: {v.policy} on {resource_label(result, v.urn)}", names
                    )
                },
            }
            for v in result.unjudged
        ]
    notes = [_not_checked(result, n, index) for n in result.not_checked]
    if notes:
        invocation["toolConfigurationNotifications"] = notes
    if result.google_managed:
        invocation.setdefault("toolExecutionNotifications", []).extend(
            _google_managed(result, m) for m in result.google_managed
        )
        invocation["properties"] = {"googleManaged": len(result.google_managed)}
    if result.unknown_offline:
        invocation.setdefault("toolExecutionNotifications", []).extend(
            _unknown_offline(u, names) for u in result.unknown_offline
        )
        invocation.setdefault("properties", {})["unknownOffline"] = len(result.unknown_offline)
    return invocation


def _unknown_offline(item: UnknownOffline, names: list[str]) -> dict[str, Any]:
    """A value the real preview would know, unknown offline (:mod:`pushguard.gate.unknowns`),
    as a note (SARIF 2.1.0 section 3.58) with the descriptor ``unknown-offline`` at its source
    line when there is one: never a result, the run's gap named."""
    note: dict[str, Any] = {
        "level": "note",
        "descriptor": {"id": UNKNOWN_OFFLINE},
        "message": {"text": message_text(item.message, names)},
        "properties": {"kind": item.kind, "name": item.name},
    }
    place = item.location(relative_path)
    if place is not None:
        note["locations"] = [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri(place["path"])},
                    "region": {"startLine": place["line"]},
                }
            }
        ]
    return note


def _google_managed(result: StackResult, item: GoogleManagedEntry) -> dict[str, Any]:
    """A subscription Google manages, which no rule judged, as a note (SARIF 2.1.0 section
    3.58) with the descriptor ``google-managed`` on the subscription's line: never a result, so
    code scanning raises no alert for it."""
    path, line = location(result, item.urn)
    text = f"{resource_label(result, item.urn)}: {item.reason}"
    return {
        "level": "note",
        "descriptor": {"id": GOOGLE_MANAGED},
        "message": {"text": message_text(text, unprintable_names(result))},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri(path)},
                    "region": {"startLine": line},
                }
            }
        ],
        "properties": {"product": item.product},
    }


def automation_id(tool: str, project: str, stack: str, key: str = "") -> str:
    """A run's ``automationDetails.id`` (SARIF 2.1.0 section 3.17.4): ``TOOL/PROJECT/STACK/``,
    or ``TOOL/PROJECT/STACK/KEY/`` when a ``key`` tells apart runs of one stack (analyze: one
    per state file). It ends in ``/``, so GitHub code scanning takes the whole id as the
    category and each stack (each file) keeps its own alerts."""
    return f"{tool}/{project}/{stack}/{key}/" if key else f"{tool}/{project}/{stack}/"


def _not_checked(result: StackResult, item: NotChecked, index: dict[str, int]) -> dict[str, Any]:
    """A rule that could not check a subscription, as a configuration notification (SARIF
    2.1.0 section 3.20.22) on the subscription's line."""
    path, line = location(result, item.urn)
    note: dict[str, Any] = {
        "level": "note",
        "message": {
            "text": message_text(
                f"{resource_label(result, item.urn)}: {item.reason}", unprintable_names(result)
            )
        },
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri(path)},
                    "region": {"startLine": line},
                }
            }
        ],
        "associatedRule": {"id": item.policy},
    }
    if urn_operation(result, item.urn) == IMPORT:
        note["properties"] = {"operation": IMPORT}
    if item.policy in index:
        note["associatedRule"]["index"] = index[item.policy]
    return note


def _log(rules: list[Any], results: list[Any], category: str) -> dict[str, Any]:
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "pushguard",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": project_url("Repository"),
                        "rules": rules,
                    }
                },
                "automationDetails": {"id": category},
                "results": results,
            }
        ],
    }


def render_sarif(result: StackResult | None, error: str | None = None) -> str:
    """:func:`to_sarif` (or :func:`error_sarif` when ``error`` is given) as indented JSON."""
    log = error_sarif(error, result) if error is not None else to_sarif(result)
    return json.dumps(log, indent=2) + "\n"
