"""Is a local folder a mount point (a Docker or Kubernetes volume, a bind mount)?

A mount point cannot be renamed or replaced (``rename(2)`` fails with ``EBUSY``, or ``EXDEV``
across mounts: https://man7.org/linux/man-pages/man2/rename.2.html), so the audit publishes
inside such a folder instead of replacing it (:mod:`pushguard.audit.publish`).
``os.path.ismount`` finds a mount point whose device differs from its parent's
(https://docs.python.org/3/library/os.path.html#os.path.ismount); a bind mount of a folder of
the same file system has the same device, so the mount table of this process
(``/proc/self/mountinfo``, field 5 the mount point with octal escapes:
https://man7.org/linux/man-pages/man5/proc_pid_mountinfo.5.html) is read too, where it exists.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
_ESCAPE = re.compile(r"\\([0-7]{3})")


def mount_points(mountinfo: Path = MOUNTINFO) -> set[str]:
    """The mount points listed in ``mountinfo`` (empty when it cannot be read: not Linux)."""
    try:
        text = mountinfo.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return set()
    points = set()
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) > 4:
            points.add(_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), fields[4]))
    return points


def is_mount_point(path: Path, mountinfo: Path = MOUNTINFO) -> bool:
    """Whether ``path`` (resolved: no symbolic links) is a mount point."""
    return os.path.ismount(path) or str(path) in mount_points(mountinfo)
