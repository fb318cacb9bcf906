"""``python -m pushguard.crossguard.routes``: print the routes table of ``docs/policy-pack.md``."""

from pushguard.crossguard.routes import routes_markdown

print(routes_markdown(), end="")
