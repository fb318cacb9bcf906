"""What ``pushguard preview`` and ``pushguard analyze`` share: the gate around a policy pack.

- :mod:`~pushguard.gate.pack`: which pack folder and interpreter, as the Pulumi CLI chooses;
- :mod:`~pushguard.gate.analyzer`: the pack started and spoken to over the Analyzer protocol;
- :mod:`~pushguard.gate.session`: the pack configured once, its answers as the result model;
- :mod:`~pushguard.gate.result`: the result model (resources, violations, not-checked entries,
  the stack's origin) and the error of a failed run;
- :mod:`~pushguard.gate.report`, :mod:`~pushguard.gate.sarif`: text, JSON and SARIF reports;
- :mod:`~pushguard.gate.redact`: what no report may show (secrets, query strings, userinfo).

The preview (a program under the mock runtime) and analyze (stack state) each supply the
resources and an :class:`~pushguard.gate.result.Origin`; neither imports the other.
"""
