"""pushguard's own policy pack, as installed with the package: the default of
``pushguard preview --policy-pack``. The repository's ``policies/`` folder is the same pack in the
form ``pulumi policy publish`` takes (with its ``requirements.txt``).
"""

from pushguard.crossguard import serve

serve()
