"""Durable append-only JSONL session logs: write, fsync policy, torn-tail recovery, load, list.

One file per session, ``<store dir>/<session id>.jsonl``; one record per line, each with a
schema version ``"v"`` and a ``"type"`` (shapes in :mod:`acp_sidecar.store.codec`).

Invariants (each module states its own in full):
- The store knows no ACP types: prompts are stored as the ACP content-block JSON they arrived
  as, results as :func:`~acp_sidecar.tools.result.result_to_json` writes them.
- A record is committed when its whole line, ``\\n`` included, is in the file; one writer
  per log (an advisory lock), one process per session (a claim, which outlives a log closed
  to save descriptors: :mod:`acp_sidecar.store.claims`); loading streams, skips damage with
  a warning and never crashes, but refuses a newer schema version with
  :class:`UnsupportedVersionError`.

Typical use::

    store = SessionStore(args.store)                      # --store DIR / $ACP_SIDECAR_STORE
    with store.create(session_id, cwd, mode="default") as log:
        log.user_message(prompt_json)
        log.agent_text("Hel"); log.agent_text("lo")      # one agent_message record
        await run_call(..., record=log.record_call_event)
        log.end_turn("end_turn")                          # flush + turn_end + fsync

    with store.open_log(session_id) as stored:            # session/load
        stored.header.cwd                                 # checked before anything is sent
        for record in stored: ...                         # match record: case ToolCallRecord() …
"""

from __future__ import annotations

from acp_sidecar.store.claims import LOCK_FILE, SessionClaim
from acp_sidecar.store.errors import (
    CorruptLogError,
    InvalidCursorError,
    InvalidSessionIdError,
    LockFileError,
    SessionExistsError,
    SessionLockedError,
    SessionLogUnsafeError,
    SessionNotFoundError,
    StoreError,
    StoreWriteError,
    UnsupportedVersionError,
    WriterClosedError,
)
from acp_sidecar.store.history import History, HistoryItem, interrupted_result
from acp_sidecar.store.listing import (
    DEFAULT_PAGE_SIZE,
    SessionPage,
    SessionSummary,
    read_summary,
    shorten,
)
from acp_sidecar.store.paths import STORE_ENV, default_store_dir, is_session_id, resolve_store_dir
from acp_sidecar.store.reader import SessionLog
from acp_sidecar.store.records import (
    SCHEMA_VERSION,
    AgentMessageRecord,
    AgentThoughtRecord,
    CompactionRecord,
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    GapRecord,
    HeaderRecord,
    ModeChangeRecord,
    NoticeRecord,
    PermissionAnswer,
    PermissionAnswerRecord,
    PermissionAskedRecord,
    PermissionRecord,
    PermissionRememberedRecord,
    Record,
    Stamped,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UsageRecord,
    UserMessageRecord,
    format_timestamp,
    permission_records,
)
from acp_sidecar.store.sessions import SessionStore
from acp_sidecar.store.writer import FSYNC_POLICIES, FsyncPolicy, SessionWriter

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "FSYNC_POLICIES",
    "LOCK_FILE",
    "SCHEMA_VERSION",
    "STORE_ENV",
    "AgentMessageRecord",
    "AgentThoughtRecord",
    "CompactionRecord",
    "ConfigChangeRecord",
    "CorruptLogError",
    "DirectoriesChangeRecord",
    "FsyncPolicy",
    "GapRecord",
    "HeaderRecord",
    "History",
    "HistoryItem",
    "InvalidCursorError",
    "InvalidSessionIdError",
    "LockFileError",
    "ModeChangeRecord",
    "NoticeRecord",
    "PermissionAnswer",
    "PermissionAnswerRecord",
    "PermissionAskedRecord",
    "PermissionRecord",
    "PermissionRememberedRecord",
    "Record",
    "SessionClaim",
    "SessionExistsError",
    "SessionLockedError",
    "SessionLog",
    "SessionLogUnsafeError",
    "SessionNotFoundError",
    "SessionPage",
    "SessionStore",
    "SessionSummary",
    "SessionWriter",
    "Stamped",
    "StoreError",
    "StoreWriteError",
    "ToolCallRecord",
    "ToolResultRecord",
    "TurnEndRecord",
    "UnsupportedVersionError",
    "UsageRecord",
    "UserMessageRecord",
    "WriterClosedError",
    "default_store_dir",
    "format_timestamp",
    "interrupted_result",
    "is_session_id",
    "permission_records",
    "read_summary",
    "resolve_store_dir",
    "shorten",
]
