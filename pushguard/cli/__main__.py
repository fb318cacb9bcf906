"""``python -m pushguard.cli``: the ``pushguard`` command, run by an interpreter named
explicitly (the GitHub Action and the pre-commit hook start one preview per stack this way)."""

from pushguard.cli import main

main()
