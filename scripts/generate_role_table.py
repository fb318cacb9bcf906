"""Write ``pushguard/rules/role_table.py``: which of Google Cloud's predefined IAM roles carry the
service-account permissions ``push-sa-broad-grants`` and ``push-agent-token-creator`` judge.

Its inputs are the two things ``gcloud`` says of the predefined roles
(https://cloud.google.com/iam/docs/roles-permissions is the same data as a web page):

- ``--list FILE``: the roles that exist, as ``gcloud iam roles list --format=json`` writes them
  (a JSON array of roles, each with its ``name``; a role with ``"deleted": true`` is left out);
- ``--roles DIR``: one file per role, as ``gcloud iam roles describe ROLE --format=json`` writes
  it (a JSON object with ``name`` and ``includedPermissions``;
  https://cloud.google.com/iam/docs/reference/rest/v1/roles#Role). A file of a role the list
  does not name is a role since removed and is ignored; a listed role without a file is written
  as *unread*: the rules then say they could not check it, as for a custom role.

The public repository iann0036/iam-dataset runs exactly these two commands every day
(``.github/workflows/data.yml``) and keeps their output as ``gcp/predefined_roles.json`` and
``gcp/roles/*.json``; the table in this repository was generated from it::

    git clone https://github.com/iann0036/iam-dataset
    python scripts/generate_role_table.py \\
        --list iam-dataset/gcp/predefined_roles.json --roles iam-dataset/gcp/roles \\
        --source "https://github.com/iann0036/iam-dataset/tree/COMMIT/gcp" --date YYYY-MM-DD

``--date`` is the day the source was taken (the commit's date); ``--out`` writes elsewhere
(default: the module in this repository). The output is deterministic (sorted, no time stamp of
its own) and formatted as ``ruff format`` leaves it. Exit status 2 with a message on standard
error when an input is not what ``gcloud`` writes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

PREFIX = "iam.serviceAccounts."
PERMISSIONS = (
    "getOpenIdToken",
    "getAccessToken",
    "actAs",
    "implicitDelegation",
    "signJwt",
    "signBlob",
    "setIamPolicy",
)
"""The permissions on a service account that let a principal act as it, mint its tokens or sign
as it, or grant itself those (``setIamPolicy``), without the ``iam.serviceAccounts.`` prefix
(https://cloud.google.com/iam/docs/service-account-permissions)."""

OUT = Path(__file__).resolve().parents[1] / "pushguard" / "rules" / "role_table.py"
WIDTH = 99
DATE = re.compile(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


class InputError(Exception):
    """An input that is not what ``gcloud`` writes; the message names it."""


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{path}: cannot be read as JSON: {error}") from error


def listed_roles(path: Path) -> set[str]:
    """The names of the roles in a ``gcloud iam roles list --format=json`` file, deleted ones
    left out. Raises :class:`InputError` on another shape."""
    data = _load(path)
    if not isinstance(data, list):
        raise InputError(f"{path}: not a JSON array of roles")
    names = set()
    for role in data:
        name = role.get("name") if isinstance(role, dict) else None
        if not isinstance(name, str) or not name.startswith("roles/"):
            raise InputError(f"{path}: an entry without a predefined role's name: {role!r:.80}")
        if not role.get("deleted"):
            names.add(name)
    return names


def described_roles(folder: Path) -> dict[str, frozenset[str]]:
    """Each role described in ``folder`` (``*.json``, ``gcloud iam roles describe`` output) with
    the permissions of :data:`PERMISSIONS` it carries (short names). Raises :class:`InputError`
    on a file of another shape, or when the folder holds none."""
    found: dict[str, frozenset[str]] = {}
    for path in sorted(folder.glob("*.json")):
        role = _load(path)
        name = role.get("name") if isinstance(role, dict) else None
        included = role.get("includedPermissions", []) if isinstance(role, dict) else None
        if not isinstance(name, str) or not name.startswith("roles/"):
            raise InputError(f"{path}: not a predefined role (no name roles/...)")
        if not isinstance(included, list) or not all(isinstance(p, str) for p in included):
            raise InputError(f"{path}: includedPermissions is not a list of strings")
        found[name] = frozenset(p.removeprefix(PREFIX) for p in included if p.startswith(PREFIX))
    if not found:
        raise InputError(f"{folder}: no role file (*.json)")
    return {name: perms & frozenset(PERMISSIONS) for name, perms in found.items()}


def _pack(names: Iterable[str]) -> list[str]:
    """Role names without ``roles/``, grouped by service: ``service: role role ...`` (``*`` for
    the names without a service, the basic roles), wrapped at :data:`WIDTH`."""
    groups: dict[str, list[str]] = {}
    for name in sorted(names):
        short = name.removeprefix("roles/")
        service, dot, rest = short.partition(".")
        groups.setdefault(service if dot else "*", []).append(rest if dot else short)
    lines: list[str] = []
    for service in sorted(groups):
        text = f"{service}: {' '.join(groups[service])}"
        lines += textwrap.wrap(text, WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    return lines


def render(
    roles: Mapping[str, frozenset[str]], unread: Iterable[str], source: str, day: str
) -> str:
    """The text of the generated module: ``roles`` (each with the permissions of
    :data:`PERMISSIONS` it carries), the ``unread`` roles, the ``source`` and its ``day``."""
    carrying = {name: perms for name, perms in roles.items() if perms}
    none = [name for name, perms in roles.items() if not perms]
    rows = [_row(name, perms) for name, perms in sorted(carrying.items())]
    source_line = f'SOURCE: Final = "{source}"'
    if len(source_line) > WIDTH + 1:
        source_line = f'SOURCE: Final = (\n    "{source}"\n)'
    names = sorted(unread)
    unread_text = "frozenset()"
    if names:
        listed = "\n".join(f'        "{name}",' for name in names)
        unread_text = f"frozenset(\n    {{\n{listed}\n    }}\n)"
    return TEMPLATE.format(
        source=source,
        source_line=source_line,
        date=day,
        permissions="\n".join(f'    "{PREFIX}{p}",' for p in PERMISSIONS),
        carrying="\n".join(rows),
        none="\n".join(_pack(none)),
        unread=unread_text,
        count=len(roles),
    )


def _row(name: str, perms: frozenset[str]) -> str:
    """One entry of ``CARRYING`` as ``ruff format`` writes it: on one line when it fits, else
    one permission a line (kept so by the trailing comma)."""
    quoted = [f'"{p}"' for p in PERMISSIONS if p in perms]
    inner = f"{quoted[0]}," if len(quoted) == 1 else ", ".join(quoted)
    line = f'    "{name}": ({inner}),'
    if len(line) <= WIDTH + 1:
        return line
    return "\n".join([f'    "{name}": (', *(f"        {q}," for q in quoted), "    ),"])


TEMPLATE = '''"""Google Cloud's predefined IAM roles and which of the service-account permissions of
:data:`PERMISSIONS` each carries. GENERATED by ``scripts/generate_role_table.py`` (its docstring
says how to run it again); do not edit by hand.

Source (taken {date}; {count} roles):
{source}
the output of ``gcloud iam roles list`` and ``gcloud iam roles describe`` for every predefined
role. Google's IAM roles reference (https://cloud.google.com/iam/docs/roles-permissions) is the
same data as a web page. A role that Google added after that day is in none of the tables below:
the rules say they could not check it, as for a custom role.
"""

from __future__ import annotations

from typing import Final

{source_line}
DATE: Final = "{date}"

PERMISSIONS: Final = (
{permissions}
)
"""The permissions this table records, each a way to act as, sign as or take over a service
account (https://cloud.google.com/iam/docs/service-account-permissions)."""

CARRYING: Final[dict[str, tuple[str, ...]]] = {{
{carrying}
}}
"""Each predefined role that carries some of :data:`PERMISSIONS`, with those it carries (without
the ``iam.serviceAccounts.`` prefix)."""

_CARRYING_NONE = """
{none}
"""


def _unpack(packed: str) -> frozenset[str]:
    """``service: a b`` lines (``*``: roles without a service; a line that starts with spaces goes
    on with the line above) -> ``roles/service.a``, ``roles/service.b``."""
    names: set[str] = set()
    service = ""
    for line in packed.splitlines():
        shorts = line
        if line.strip() and not line.startswith(" "):
            service, _, shorts = line.partition(":")
        prefix = "roles/" if service == "*" else f"roles/{{service}}."
        names.update(prefix + short for short in shorts.split())
    return frozenset(names)


CARRYING_NONE: Final = _unpack(_CARRYING_NONE)
"""The predefined roles that carry none of :data:`PERMISSIONS`."""

UNREAD: Final[frozenset[str]] = {unread}
"""Predefined roles the source lists without their permissions: not known, like a custom role."""
'''


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, read the inputs and write the module; 0 on success, 2 on an input
    that is not what ``gcloud`` writes (the message on standard error)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", type=Path, required=True, help="gcloud iam roles list output")
    parser.add_argument("--roles", type=Path, required=True, help="folder of describe outputs")
    parser.add_argument("--source", required=True, help="where the inputs come from (a URL)")
    parser.add_argument("--date", required=True, help="the day the inputs were taken, YYYY-MM-DD")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default: {OUT}")
    args = parser.parse_args(argv)
    try:
        if not DATE.match(args.date):
            raise InputError(f"--date {args.date!r} is not YYYY-MM-DD")
        if '"' in args.source or "\\" in args.source or "\n" in args.source:
            raise InputError("--source may not hold quotes, backslashes or line breaks")
        listed = listed_roles(args.list)
        described = described_roles(args.roles)
    except InputError as error:
        print(f"generate_role_table: {error}", file=sys.stderr)
        return 2
    roles = {name: perms for name, perms in described.items() if name in listed}
    unread = listed - roles.keys()
    args.out.write_text(render(roles, unread, args.source, args.date), encoding="utf-8")
    print(f"{args.out}: {len(roles)} roles, {len(unread)} unread", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
