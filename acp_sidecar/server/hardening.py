"""Process-wide protections the serving sidecar sets once, before anything else runs (Linux).

Not dumpable: a command a tool runs (the same user) cannot open the wire's descriptors under
``/proc/<sidecar>/fd``, read the key from ``environ`` or ``mem``, nor ``ptrace`` the sidecar
(root still can); the kernel resets the flag on ``exec``. Child subreaper: a command's
double-forked daemon is re-parented to the sidecar, so the call's end can still find it.
Neither is a sandbox; off Linux both are skipped and the skip is logged.
"""

from __future__ import annotations

import ctypes
import logging
import sys

import attrs

from acp_sidecar.tools.builtin.shell import reaper
from acp_sidecar.values import Value

logger = logging.getLogger(__name__)

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


@attrs.frozen(repr=False, eq=False)
class Hardening(Value):
    """What :func:`harden_process` could set."""

    not_dumpable: bool
    subreaper: bool


def _prctl(option: int, value: int) -> bool:
    """``prctl(option, value)``; whether it succeeded (failures are logged)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError) as exc:
        logger.warning("prctl is not available: %s", exc)
        return False
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    if prctl(option, value, 0, 0, 0) != 0:
        logger.warning("prctl(%d, %d) failed: errno %d", option, value, ctypes.get_errno())
        return False
    return True


def harden_process() -> Hardening:
    """Make this process non-dumpable and a child subreaper, where the platform allows."""
    if not sys.platform.startswith("linux"):
        logger.info(
            "not on Linux: the sidecar stays dumpable (no /proc/<pid>/fd here) and is not a "
            "child subreaper (daemons that leave a command's session are not tracked)"
        )
        return Hardening(not_dumpable=False, subreaper=False)
    hardening = Hardening(
        not_dumpable=_prctl(PR_SET_DUMPABLE, 0),
        subreaper=_prctl(PR_SET_CHILD_SUBREAPER, 1),
    )
    # A subreaper also inherits orphans nobody waits for: the sweeper reaps those that stay
    # zombies for seconds, and the call scans walk the sidecar's own tree, not all of /proc.
    if hardening.subreaper:
        reaper.use_tree_walk()
        reaper.start_sweeper()
    return hardening
