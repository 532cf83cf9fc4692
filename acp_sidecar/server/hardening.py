"""Process-wide protections the serving sidecar sets once, before anything else runs.

- **Not dumpable** (Linux ``prctl(PR_SET_DUMPABLE, 0)``). A process of the same user — any
  command a tool runs — can then no longer open ``/proc/<sidecar>/fd/*`` (the wire's private
  descriptors: it could inject bytes into the editor's stream, or requests such as
  ``session/set_mode auto`` into the sidecar's own input), read ``/proc/<sidecar>/environ``
  or ``mem`` (the API key), or ``ptrace`` the sidecar; and no core dump is written. Root
  (``CAP_SYS_PTRACE``) still can. The kernel resets the flag on ``exec``, so the commands the
  sidecar runs are ordinary processes. This is not a sandbox: a command still runs as the user.
- **Child subreaper** (Linux ``prctl(PR_SET_CHILD_SUBREAPER, 1)``). A process whose parent
  exits — a command's double-forked daemon — is re-parented to the sidecar rather than to
  init, so the end of a call can still find and end it
  (:mod:`acp_sidecar.tools.builtin.shell.reaper`). Being one, the sidecar also inherits orphans
  that nobody waits for: a sweeper thread reaps the zombies among its children that stay
  zombies for seconds (the rule and its limit: the reaper module), and the call scans walk
  the sidecar's own tree instead of all of ``/proc``.

Elsewhere (macOS, the BSDs) there is no ``prctl``: both are skipped and the skip is logged.
There is no ``/proc/<pid>/fd`` to open there, and attaching to another process is the
platform's policy (macOS asks for a debugging entitlement); a daemon that leaves a command's
session is not tracked there.
"""

from __future__ import annotations

import ctypes
import logging
import sys

import attrs

from acp_sidecar.tools.builtin.shell import reaper

logger = logging.getLogger(__name__)

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


@attrs.frozen
class Hardening:
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
    if hardening.subreaper:
        reaper.use_tree_walk()
        reaper.start_sweeper()
    return hardening
