"""A process's figures as ``/proc`` gives them (Linux): memory fields and CPU time.

For tests that bound what a sidecar subprocess costs while it serves (peak memory while
streaming, CPU burnt after a cancel). Each reader fails the test when the figure is missing.
"""

from __future__ import annotations

import os
from pathlib import Path


def status_bytes(pid: int, field: str) -> int:
    """A ``VmRSS``/``VmHWM``-like field of ``/proc/<pid>/status``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field}")


def peak_rss(pid: int) -> int:
    """A process's peak resident set size in bytes (VmHWM)."""
    return status_bytes(pid, "VmHWM")


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used so far (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
