"""``acp-sidecar replay SESSION [--json]``: a stored session drawn in the terminal, or as the
NDJSON ``session/update`` stream ``session/load`` sends. A reader gone (``| head``) ends it: 1.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from rich.console import Console

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.replay import load_notifications, replay_client, session_info
from acp_sidecar.bridge.translate import ToolLookup
from acp_sidecar.export.source import StoredSession
from acp_sidecar.export.terminal import write_terminal
from acp_sidecar.store import SessionLog, read_summary


def replay_session(
    path: Path,
    lookup: ToolLookup,
    *,
    as_json: bool = False,
    terminal_output: bool = True,
    notices: bool = True,
    compaction: bool = True,
    console: Console | None = None,
) -> int:
    """Replay the log at ``path`` to stdout (``console``: the terminal's); the exit status.

    Raises:
        StoreError: the log's header is damaged or from a newer version.
    """
    try:
        if as_json:
            _write_json(path, lookup, terminal_output, notices, compaction)
        else:
            with StoredSession(
                path,
                lookup,
                terminal_output=terminal_output,
                notices=notices,
                compaction=compaction,
            ) as session:
                write_terminal(session, console or Console())
    except BrokenPipeError:
        # Nothing more to say, and nothing for Python to fail on when it flushes at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


def _write_json(
    path: Path, lookup: ToolLookup, terminal_output: bool, notices: bool, compaction: bool
) -> None:
    with SessionLog(path) as log:
        header = log.header
        ctx = CardContext(cwd=header.cwd, terminal_output=terminal_output)
        summary = read_summary(path, header.session_id)
        info = session_info(summary.title, summary.updated_at)
        client = replay_client(notices=notices, compaction=compaction)
        messages = load_notifications(header.session_id, header, log, lookup, ctx, info, client)
        for message in messages:
            sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
        sys.stdout.flush()
