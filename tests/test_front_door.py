"""Issue 36: the front door. An honest install story, and a policy-pack page that starts with
what an organisation does.

pushguard is on no package index, so every install the README, the docs site, the repository's
requirements files and the CLI's own messages show must name the repository and a pinned ref:
``pip install "pushguard[pulumi]"`` (or ``==0.1.0``) asks the index for whatever is published
under that name (dependency confusion). A ref is a full commit SHA or a release tag that exists,
or the placeholder ``REF`` that the install page explains; never a branch, never nothing (pip
takes the default branch, ``pulumi package add`` the newest tag or commit). The versions the
pages state are the package's (``pyproject.toml``), and the install page opens the site. The
policy-pack page leads with the organisation roll-out; how routes map to facts comes last.

Sources: pip's direct references, ``NAME[EXTRAS] @ git+URL@REF`` with a branch, tag or commit
(https://pip.pypa.io/en/stable/topics/vcs-support/); ``pulumi package add`` takes a semver tag or
a Git commit hash after ``@`` (https://www.pulumi.com/docs/iac/cli/commands/pulumi_package_add/).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from pushguard.cli import extras

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
REPOSITORY = "https://github.com/pushguard/pushguard"
PLACEHOLDER = "REF"
"""The ref the docs show, explained on the install page (a commit SHA or a release tag)."""

PAGES = {
    path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
}
REQUIREMENT_FILES = ["policies/requirements.txt", "components/requirements.txt"]
COMPONENT_FILES = [
    "components/PulumiPlugin.yaml",
    "components/requirements.txt",
    "components/examples/yaml/Pulumi.yaml",
    "components/examples/typescript/index.ts",
]


def ref_problem(ref: str) -> str | None:
    """Why ``ref`` does not pin pushguard's repository (``None`` when it does)."""
    if ref == PLACEHOLDER:
        return None
    if re.fullmatch(r"[0-9a-f]{40}", ref):
        known = subprocess.run(
            ["git", "cat-file", "-e", f"{ref}^{{commit}}"], cwd=ROOT, check=False
        )
        return None if known.returncode == 0 else f"{ref} is no commit of this repository"
    if re.fullmatch(r"v\d+\.\d+\.\d+", ref):
        tag = subprocess.run(
            ["git", "rev-parse", "-q", "--verify", f"refs/tags/{ref}"],
            cwd=ROOT,
            capture_output=True,
            check=False,
        )
        return None if tag.returncode == 0 else f"the tag {ref} does not exist"
    return f"{ref!r} is neither a full commit SHA, a release tag nor {PLACEHOLDER} (a branch moves)"


def requirement_problem(text: str) -> str | None:
    """Why the requirement ``text`` installs pushguard other than from its repository at a
    pinned ref (``None`` for any other requirement, a local path, or a pinned one)."""
    if text.startswith((".", "/", "~")):  # a checkout: ".[dev]", "./pushguard[receiver]", ".."
        return None
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    if requirement.name.lower() != "pushguard":
        return None
    if requirement.url is None:
        return f"{text!r} installs pushguard by its bare name from a package index"
    match = re.fullmatch(rf"git\+{re.escape(REPOSITORY)}(?:\.git)?@([^#@]+)", requirement.url)
    if match is None:
        return f"{text!r} does not install pushguard from {REPOSITORY} at a ref"
    return ref_problem(match[1])


def pip_arguments(text: str) -> Iterator[str]:
    """The package arguments of every ``pip install`` in ``text`` (options and the files of
    ``-r`` left out)."""
    for command in re.findall(r"pip install ([^\n`]*)", text):
        try:
            words = shlex.split(command, comments=True)
        except ValueError:  # an inline quote cut by the line's end
            words = command.split()
        skip = False
        for word in words:
            if skip:
                skip = False
            elif word in {"-r", "--requirement", "-c", "--constraint", "-w", "-d"}:
                skip = True
            elif word in {"&&", "||", ";", "|"}:
                break
            elif not word.startswith("-"):
                yield word


def quoted(text: str) -> Iterator[str]:
    """Every quoted string in ``text`` that starts with pushguard's name (a requirement written
    for a requirements file, or for pip)."""
    spec = r"pushguard(?:\[[^\]'\"]*\]|\s*(?:@|==|>=|<=|~=|!=|<|>))[^'\"\n]*"
    for match in re.finditer(rf"""(['"])({spec})\1""", text):
        yield match[2]


def test_no_page_installs_pushguard_by_its_bare_name() -> None:
    problems = []
    for page, text in PAGES.items():
        for requirement in {*pip_arguments(text), *quoted(text)}:
            problem = requirement_problem(requirement)
            if problem:
                problems.append(f"{page}: {problem}")
    for name in REQUIREMENT_FILES:
        for raw in (ROOT / name).read_text(encoding="utf-8").splitlines():
            line = raw.split("#", 1)[0].strip()
            problem = requirement_problem(line) if line else None
            if problem:
                problems.append(f"{name}: {problem}")
    assert not problems, "\n".join(problems)


def test_the_cli_names_the_repository_for_a_missing_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(extras, "missing_module", lambda extra: "pulumi_gcp")
    with pytest.raises(typer.Exit) as stopped:
        extras.require_extra("preview", "pulumi")
    assert stopped.value.exit_code == 2
    message = capsys.readouterr().err
    arguments = list(pip_arguments(message))
    assert arguments and all(requirement_problem(a) is None for a in arguments), message
    assert any("git+" in a for a in arguments), message


def test_the_receiver_names_the_repository_for_its_missing_extra() -> None:
    from pushguard.receiver import _extra

    arguments = list(pip_arguments(_extra.INSTALL))
    assert arguments and all(requirement_problem(a) is None for a in arguments), _extra.INSTALL
    assert any("git+" in a for a in arguments), _extra.INSTALL


def test_every_component_source_names_a_pinned_ref() -> None:
    """``pulumi package add github.com/pushguard/pushguard/components@...`` and the YAML
    ``packages`` entries, wherever the repository shows them."""
    problems, found = [], 0
    texts = {**PAGES, **{n: (ROOT / n).read_text(encoding="utf-8") for n in COMPONENT_FILES}}
    for name, text in texts.items():
        for match in re.finditer(r"github\.com/pushguard/pushguard/components(@[\w.-]*)?", text):
            found += 1
            ref = (match[1] or "@")[1:]
            problem = ref_problem(ref) if ref else "no ref: Pulumi takes the newest tag or commit"
            if problem:
                problems.append(f"{name}: {match[0]}: {problem}")
    assert found >= 5
    assert not problems, "\n".join(problems)


def test_the_install_page_opens_the_site() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    assert nav[0] == {"Install": "install.md"}
    page = PAGES["docs/install.md"]
    arguments = list(pip_arguments(page))
    assert f"pushguard[pulumi] @ git+{REPOSITORY}@{PLACEHOLDER}" in arguments
    assert f"echo 'pushguard[pulumi] @ git+{REPOSITORY}@{PLACEHOLDER}' >> requirements.txt" in page
    assert f"pulumi package add github.com/pushguard/pushguard/components@{PLACEHOLDER}" in page
    assert f"`{PLACEHOLDER}` below is one of" in page  # the placeholder is explained there
    assert "install.md" in PAGES["README.md"] and "install.md" in PAGES["docs/index.md"]


def test_the_versions_the_pages_state_are_the_packages() -> None:
    """The version the pages publish and enable is the package's, and the old behaviour the
    component page describes is named by an older version than this one."""
    current = Version(VERSION)
    stated = []
    for page, text in PAGES.items():
        stated += [(page, v) for v in re.findall(r"pushguard[@ ](\d+\.\d+(?:\.\d+)?)\b", text)]
        stated += [(page, v) for v in re.findall(r"version (\d+\.\d+\.\d+)\b", text)]
    assert stated
    for page, version in stated:
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{page}: say {version} in full"
        assert Version(version) <= current, f"{page}: {version} is newer than {VERSION}"
    for page in ("README.md", "docs/policy-pack.md"):
        enabled = re.findall(r"policy enable \S+/pushguard (\S+)", PAGES[page])
        published = re.findall(r"publishes pushguard@(\S+)", PAGES[page])
        assert enabled and set(enabled + published) == {VERSION}, page
    old = re.search(r"pushguard (\S+) let Pulumi\s+auto-name", PAGES["docs/component.md"])
    assert old, "the component page no longer says which version auto-named subscriptions"
    assert Version(old[1]) < current, "the old naming and the current one have the same version"
    pack = yaml.safe_load((ROOT / "policies/PulumiPolicy.yaml").read_text(encoding="utf-8"))
    assert pack["version"] == VERSION


def test_the_policy_pack_page_leads_with_the_roll_out() -> None:
    page = PAGES["docs/policy-pack.md"]
    headings = re.findall(r"^## (.+)$", page, flags=re.M)
    assert headings[0] == "Across an organisation, step by step"
    assert headings[-1] == "Routes to a push subscription", "route internals come last"
    opening = page.split("\n## ", 1)[0]
    assert len(opening.splitlines()) <= 12, "the page opens with a paragraph, not internals"
    steps = page.split("\n## ", 2)[1]
    for step in ("pushguard pack build", "pulumi policy publish", "pulumi policy enable"):
        assert step in steps, f"the roll-out does not say {step}"
