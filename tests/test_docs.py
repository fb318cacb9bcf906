"""The README's examples run, and the generated rule reference is current."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from pushguard.rules.docs import rules_markdown
from pushguard.components import TYPE_TOKEN
from pushguard.rules import RULES
from tests.helpers import run

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTHON = re.findall(r"```python\n(.*?)```", README, flags=re.S)
EXAMPLES = [code for code in PYTHON if "pushguard.receiver" not in code]
RECEIVER_EXAMPLES = [code for code in PYTHON if "pushguard.receiver" in code]


def test_readme_has_examples() -> None:
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("code", EXAMPLES, ids=lambda c: c.splitlines()[-1][:40])
def test_readme_example_runs_under_the_mock_runtime(code: str) -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        graph = run(lambda: exec(compile(code, "README.md", "exec"), {}))
    expected = re.findall(r"^    # (  - .*|PushSubscription .*)$", code, flags=re.M)
    if expected:  # an example that documents its output must print exactly that
        assert printed.getvalue().splitlines() == expected
        assert graph.records == []
    else:
        assert graph.by_type(TYPE_TOKEN)


def test_readme_receiver_example_serves_and_rejects_unauthenticated_pushes() -> None:
    [code] = RECEIVER_EXAMPLES
    namespace: dict[str, object] = {"__name__": "readme_receiver"}
    exec(compile(code, "README.md", "exec"), namespace)
    client = namespace["app"].test_client()  # type: ignore[attr-defined]
    response = client.post("/push", data=b'{"message": {}}')
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'


def test_docs_rules_md_is_generated_from_the_rules() -> None:
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == rules_markdown(), (
        "docs/rules.md is stale: run `pushguard rules --format markdown > docs/rules.md`"
    )


def test_readme_lists_every_rule_with_its_level() -> None:
    for rule in RULES:
        assert f"| `{rule.id}` | {rule.default_level.value} |" in README


def test_ci_runs_the_readmes_two_commands() -> None:
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    setup, tests = re.findall(r"```bash\n(.*?)\n```", README, flags=re.S)[:2]
    main_job = setup.split('pip install -e ".[dev]" && ', 1)[1]
    assert main_job in ci, "the README's main job is what CI runs"
    assert tests.split("&& ", 1)[1] in ci


def test_packaged_pack_is_the_policies_folder() -> None:
    from pushguard.crossguard import PACK_DIR

    assert (PACK_DIR / "PulumiPolicy.yaml").read_text() == (
        ROOT / "policies/PulumiPolicy.yaml").read_text()
    for folder in (PACK_DIR, ROOT / "policies"):
        assert "from pushguard.crossguard import serve\n\nserve()" in (folder / "__main__.py").read_text()
