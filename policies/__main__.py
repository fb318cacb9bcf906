"""The pushguard CrossGuard policy pack.

Run by the Pulumi CLI: ``pulumi preview --policy-pack policies --policy-pack-config
policy-config.json``. To publish it, build the folder with ``pushguard pack build``. The policies
are the rules of ``pushguard.rules``; see docs/rules.md.
"""

from pushguard.crossguard import serve

serve()
