"""A stdio MCP server whose behaviour the first argument picks (run as a script).

``exit``: writes a line to stderr and exits 3 before reading anything.
``hang [PIDFILE]``: writes its pid to PIDFILE, reads its stdin and never answers (exits at
EOF, as a hung server's pipe closes).
``family PIDFILE``: starts a grandchild (``sleep``) in its own process group, writes its pid
to PIDFILE, then serves normally: for the no-orphan test.
``stubborn PIDFILE``: like ``family``, but it and its grandchild ignore SIGTERM, and it
keeps running after its stdin closes: only SIGKILL ends them.
``serve [MARKDIR]``: serves the tools below; a cancelled ``slow`` call writes
``MARKDIR/cancelled`` (proof that ``notifications/cancelled`` arrived and interrupted it).

Tools: ``noop``; ``echo(text)``; ``peek`` (declared read-only and closed-world); ``slow(steps)`` (progress per step, 0.1 s apart);
``die`` (the process exits mid-call); ``elicit`` (asks the client for a name);
``sample`` (asks the client for a completion); ``roots`` (lists the client's roots);
``grow`` (adds the tool ``extra``, then sends ``notifications/tools/list_changed``);
``capabilities`` (what the client advertised); ``environment`` (its environment as JSON); ``complain(text)`` (writes text to stderr);
``fail(text)`` (answers a JSON-RPC error whose message is ``text``); ``nudge(n)`` (sends
``notifications/tools/list_changed`` n times, its tools unchanged).

The SDK is imported only by the modes that serve, so ``exit`` and ``hang`` are up at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    mode = sys.argv[1]
    if mode == "exit":
        print("peer: refusing to start", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "hang":
        if len(sys.argv) > 2:
            Path(sys.argv[2]).write_text(str(os.getpid()))
        while sys.stdin.buffer.read(1):
            pass
        return
    from peer_tools import build  # the SDK takes a second to import: not for the modes above

    if mode == "family":
        child = subprocess.Popen(["sleep", "1000"])
        Path(sys.argv[2]).write_text(str(child.pid))
        build(None).run("stdio")
        return
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild
        child = subprocess.Popen(["sleep", "1000"])
        Path(sys.argv[2]).write_text(str(child.pid))
        build(None).run("stdio")
        while True:
            time.sleep(1)
    markdir = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    build(markdir).run("stdio")


if __name__ == "__main__":
    main()
