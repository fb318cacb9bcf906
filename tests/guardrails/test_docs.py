"""The guardrails documentation stays true: docs/guardrails.md's coverage table is the registry's,
and the README's example runs through the console script and names files it writes."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from pushguard.guardrails import compile_guardrails
from pushguard.guardrails.table import coverage_markdown
from pushguard.policy.config_file import load_rule_config

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "pushguard"


def test_the_coverage_table_is_generated_from_the_registry() -> None:
    page = (ROOT / "docs/guardrails.md").read_text(encoding="utf-8")
    table = page.split("<!-- coverage:start -->\n", 1)[1].split("<!-- coverage:end -->", 1)[0]
    expected = coverage_markdown(compile_guardrails(load_rule_config(None), "1"))
    assert table == expected, "regenerate the table (pushguard.guardrails.table.coverage_markdown)"


def test_the_readme_example_runs_and_names_the_files_it_writes(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(pushguard guardrails .*?)\n```", readme, flags=re.S)
    assert block, "README: the guardrails example"
    lines = block[1].splitlines()
    (tmp_path / "policy-config.json").write_text(json.dumps({"push-audience-explicit": "advisory"}))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    words = shlex.split(lines[0])
    result = subprocess.run(
        [str(SCRIPT), *words[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for line in lines[1:]:
        gcloud = shlex.split(line)
        assert gcloud[:2] == ["gcloud", "org-policies"]
        assert (tmp_path / gcloud[-1]).is_file(), gcloud[-1]
