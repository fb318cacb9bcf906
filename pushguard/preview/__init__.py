"""``pushguard preview``: a team's program run against pushguard's engine (:mod:`pushguard.engine`),
its registrations sent to a policy pack as ``pulumi preview --policy-pack`` sends them.

This package holds what the preview needs around the engine: the project and stack config
(:mod:`~pushguard.preview.project`, :mod:`~pushguard.preview.stacks`), the provider knowledge the
engine plans with (:mod:`~pushguard.preview.mocks`), the program's process and how it ended
(:mod:`~pushguard.preview.isolation`), and the streaming analysis
(:mod:`~pushguard.preview.streaming`). Starting the pack, the result model and the reports are
the gate's (:mod:`pushguard.gate`), shared with ``pushguard analyze``.
"""
