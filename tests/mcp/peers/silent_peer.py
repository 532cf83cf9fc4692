"""A stdio "MCP server" that never answers (run as a script: ``silent_peer.py PIDFILE``).

It ignores SIGTERM, starts a grandchild (``sleep``) in its own process group that ignores it
too, writes ``"<its pid> <grandchild pid>"`` to PIDFILE, reads its stdin to EOF without
answering ``initialize`` and keeps running after: only SIGKILL of its group ends them.
No MCP SDK here, so it is up at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild
    child = subprocess.Popen(["sleep", "1000"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    Path(sys.argv[1]).write_text(f"{os.getpid()} {child.pid}")
    while sys.stdin.buffer.read(1):
        pass
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
