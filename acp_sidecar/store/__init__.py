"""Durable append-only JSONL session logs: ``<store dir>/<session id>.jsonl``, a record a line.

The store knows no ACP types (a prompt is kept as the content-block JSON it arrived as). A
record is committed once its whole line is in the file; one writer per log (a lock), one process
per session (a claim: :mod:`.claims`). Loading skips damage with a warning but refuses a newer
schema version (:class:`UnsupportedVersionError`). Each module states its own invariants.
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
    ChildRecord,
    ChildRecordable,
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
    PermissionRuleRecord,
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
    "ChildRecord",
    "ChildRecordable",
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
    "PermissionRuleRecord",
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
