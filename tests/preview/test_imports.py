"""Issue 34, item 5: a resource declared with ``import_`` is judged as the Pulumi engine will have
it after the import (:mod:`pushguard.preview.imports`): its ``ignoreChanges`` paths, read with
Pulumi's property-path grammar, keep what the cloud holds, which an offline preview does not
know."""

from __future__ import annotations

from typing import Any

import pytest

from pushguard.gate.result import ResourceRecord
from pushguard.preview.imports import UNKNOWN, as_imported, parse_path, wholly_imported

SECRET_SIG = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}


@pytest.mark.parametrize(
    ("path", "parsed"),
    # ParsePropertyPath's examples (pulumi/pulumi sdk/go/common/resource/properties_path.go)
    [
        ("root", ("root",)),
        ("root.nested", ("root", "nested")),
        ('root["nested"]', ("root", "nested")),
        ("root.array[0].nested", ("root", "array", 0, "nested")),
        ('root["key with \\"escaped\\" quotes"]', ("root", 'key with "escaped" quotes')),
        ('["root key with a ."][100]', ("root key with a .", 100)),
        ("root.array[*].field", ("root", "array", "*", "field")),
        ("foo-bar", ("foo-bar",)),
        ("*", ("*",)),
        (".root", None),
        ("root.", None),
        ("root[x]", None),
        ('root["open', None),
    ],
)
def test_paths_are_read_as_pulumi_reads_them(path: str, parsed: tuple[Any, ...] | None) -> None:
    assert parse_path(path) == parsed


def record(
    inputs: dict[str, Any], ignore: tuple[str, ...], import_id: str = "sub"
) -> ResourceRecord:
    return ResourceRecord(
        urn="urn:pulumi:dev::team::gcp:pubsub/subscription:Subscription::s",
        type="gcp:pubsub/subscription:Subscription",
        name="s",
        parent="",
        custom=True,
        provider="",
        inputs=inputs,
        dependencies=(),
        property_dependencies={},
        ignore_changes=ignore,
        outputs=inputs,
        import_id=import_id,
    )


PUSH = {"pushEndpoint": "http://h.example/push", "oidcToken": {"audience": "a"}}


@pytest.mark.parametrize(
    ("inputs", "ignore", "expected"),
    [
        (
            {"topic": "t", "pushConfig": PUSH},
            ("pushConfig",),
            {"topic": "t", "pushConfig": UNKNOWN},
        ),
        # a pull subscription declared, the cloud's push config kept
        ({"topic": "t"}, ("pushConfig",), {"topic": "t", "pushConfig": UNKNOWN}),
        (
            {"pushConfig": PUSH},
            ("pushConfig.pushEndpoint",),
            {"pushConfig": {**PUSH, "pushEndpoint": UNKNOWN}},
        ),
        (
            {"pushConfig": PUSH},
            ('pushConfig["oidcToken"].*',),
            {"pushConfig": {**PUSH, "oidcToken": UNKNOWN}},
        ),
        # no intermediate object to reset into: the engine keeps the declared value
        ({"topic": "t"}, ("pushConfig.pushEndpoint",), {"topic": "t"}),
        # a path Pulumi refuses is skipped, as the engine skips it
        ({"pushConfig": PUSH}, ("pushConfig[",), {"pushConfig": PUSH}),
        (
            {"pushConfig": {**SECRET_SIG, "value": PUSH}},
            ("pushConfig.pushEndpoint",),
            {"pushConfig": {**SECRET_SIG, "value": {**PUSH, "pushEndpoint": UNKNOWN}}},
        ),
        ({"topic": "t", "pushConfig": PUSH}, ("*",), {"topic": UNKNOWN, "pushConfig": UNKNOWN}),
    ],
)
def test_what_an_import_keeps_from_the_cloud_is_unknown(
    inputs: dict[str, Any], ignore: tuple[str, ...], expected: dict[str, Any]
) -> None:
    imported = as_imported(record(inputs, ignore))
    assert imported.inputs == expected and imported.outputs == expected


def test_without_an_import_or_ignored_paths_the_declared_values_stand() -> None:
    created = record({"pushConfig": PUSH}, ("pushConfig",), import_id="")
    assert as_imported(created) is created, "ignoreChanges on a create uses the program's values"
    adopted = record({"pushConfig": PUSH}, ())
    assert as_imported(adopted) is adopted, "imported, then updated to what the program declares"
    assert wholly_imported(record({}, ("*",))) and not wholly_imported(record({}, ("a.*",)))
