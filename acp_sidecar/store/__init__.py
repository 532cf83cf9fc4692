"""Durable append-only JSONL session logs: ``<store dir>/<session id>.jsonl``, a record a line.

The store knows no ACP types (a prompt is kept as the content-block JSON it arrived as). A
record is committed once its whole line is in the file; one writer per log (a lock), one process
per session (a claim: :mod:`.claims`). Loading skips damage with a warning but refuses a newer
schema version (:class:`UnsupportedVersionError`). Each module states its own invariants.

Each name loads its module on first use: the start finds the store's directory
(:mod:`.paths`) without loading the records, reader and writer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from acp_sidecar.store.paths import (
        STORE_ENV,
        default_store_dir,
        is_session_id,
        resolve_store_dir,
    )
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
        FileChangeRecord,
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
        SessionRuleRecord,
        Stamped,
        ToolCallRecord,
        ToolResultRecord,
        TurnEndRecord,
        UndoRecord,
        UsageRecord,
        UserMessageRecord,
        format_timestamp,
        permission_records,
    )
    from acp_sidecar.store.sessions import SessionStore
    from acp_sidecar.store.writer import FSYNC_POLICIES, FsyncPolicy, SessionWriter

_WHERE: dict[str, str] = {
    "AgentMessageRecord": "records",
    "AgentThoughtRecord": "records",
    "ChildRecord": "records",
    "ChildRecordable": "records",
    "CompactionRecord": "records",
    "ConfigChangeRecord": "records",
    "CorruptLogError": "errors",
    "DEFAULT_PAGE_SIZE": "listing",
    "DirectoriesChangeRecord": "records",
    "FSYNC_POLICIES": "writer",
    "FileChangeRecord": "records",
    "FsyncPolicy": "writer",
    "GapRecord": "records",
    "HeaderRecord": "records",
    "History": "history",
    "HistoryItem": "history",
    "InvalidCursorError": "errors",
    "InvalidSessionIdError": "errors",
    "LOCK_FILE": "claims",
    "LockFileError": "errors",
    "ModeChangeRecord": "records",
    "NoticeRecord": "records",
    "PermissionAnswer": "records",
    "PermissionAnswerRecord": "records",
    "PermissionAskedRecord": "records",
    "PermissionRecord": "records",
    "PermissionRememberedRecord": "records",
    "PermissionRuleRecord": "records",
    "Record": "records",
    "SCHEMA_VERSION": "records",
    "STORE_ENV": "paths",
    "SessionClaim": "claims",
    "SessionExistsError": "errors",
    "SessionLockedError": "errors",
    "SessionLog": "reader",
    "SessionLogUnsafeError": "errors",
    "SessionNotFoundError": "errors",
    "SessionPage": "listing",
    "SessionRuleRecord": "records",
    "SessionStore": "sessions",
    "SessionSummary": "listing",
    "SessionWriter": "writer",
    "Stamped": "records",
    "StoreError": "errors",
    "StoreWriteError": "errors",
    "ToolCallRecord": "records",
    "ToolResultRecord": "records",
    "TurnEndRecord": "records",
    "UndoRecord": "records",
    "UnsupportedVersionError": "errors",
    "UsageRecord": "records",
    "UserMessageRecord": "records",
    "WriterClosedError": "errors",
    "default_store_dir": "paths",
    "format_timestamp": "records",
    "interrupted_result": "history",
    "is_session_id": "paths",
    "permission_records": "records",
    "read_summary": "listing",
    "resolve_store_dir": "paths",
    "shorten": "listing",
}
"""The module of ``acp_sidecar.store`` each public name comes from."""


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


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
    "FileChangeRecord",
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
    "SessionRuleRecord",
    "SessionStore",
    "SessionSummary",
    "SessionWriter",
    "Stamped",
    "StoreError",
    "StoreWriteError",
    "ToolCallRecord",
    "ToolResultRecord",
    "TurnEndRecord",
    "UndoRecord",
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
