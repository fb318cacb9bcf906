"""Shared set-up of the component tests.

hypothesis is imported here, at collection, rather than by its pytest plugin's end-of-session
summary: when these tests run alone, programs that fail while Outputs resolve leave many "Future
exception was never retrieved" tracebacks to asyncio's garbage-collection logging, after which
pytest's assertion rewriting of hypothesis at session end tripped CPython 3.11.7's "AST
constructor recursion depth mismatch" (exit 1 after every test passed; it happens on main too
with ``-k bad_output_input``).
"""

import hypothesis  # noqa: F401 - imported early on purpose, see the module docstring
