"""The records of a session log: a closed union of frozen values, one per JSONL line.

:data:`Record` is closed (consumers ``match`` it with ``assert_never``); records hold plain,
deep-frozen data, no ACP types. A log is one :class:`HeaderRecord`, then the rest in order.
Every record carries its time (:attr:`Stamped.at`, ``None`` before version 2), which is not part
of its equality: two prompts of the same text are the same prompt made twice. So is the
``message_id`` of the records of messages (:class:`Said`), which older logs do not have.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Final, Literal, TypeAlias, get_args

import attrs

from acp_sidecar.store.times import format_timestamp as format_timestamp
from acp_sidecar.store.times import parse_timestamp as parse_timestamp
from acp_sidecar.store.times import timestamp_now as timestamp_now
from acp_sidecar.store.times import utc_now as utc_now
from acp_sidecar.tools.execution import ToolCallRecord as ToolCallRecord  # a record of the log
from acp_sidecar.tools.json_values import FrozenDict
from acp_sidecar.tools.result import ToolExecutionResult

SCHEMA_VERSION = 2
"""The version written into every record (``"v"``); logs with a newer one are refused.

Version 2 added the time of every record (``"t"``) and the permission records; a version-1
log reads as it always did (its records have no time). The message id of a message's record
(``"id"``) is an optional member of version 2: a reader that does not know it ignores it, and
a record without it replays under an id derived from where it stands in its log."""


def version_named(version: object) -> float:
    """The version a record's ``"v"`` names when it is not a JSON integer: a number by its
    value (``2.0`` is version 2, ``1e1`` version 10, a fraction above :data:`SCHEMA_VERSION`
    newer); a fraction below it, an infinity (``1e400``) or anything but a number, none (0)."""
    if type(version) is not float or not math.isfinite(version):
        return 0
    if version.is_integer():
        return int(version)
    return version if version > SCHEMA_VERSION else 0


@attrs.frozen
class Stamped:
    """What every record has: the time it was written (see the module docstring). Every
    record class inherits it (the tools' :class:`ToolCallRecord` declares the same field), and
    the codec reads and writes it for all of them alike."""

    at: datetime | None = attrs.field(default=None, kw_only=True, eq=False)
    """When the record was written (aware, UTC); ``None`` when the log did not say (a
    version-1 log) or before the writer stamped it."""


@attrs.frozen
class Said(Stamped):
    """What the records of messages add: the id of the message they are (part of)."""

    message_id: str | None = attrs.field(default=None, kw_only=True, eq=False)
    """The ``messageId`` the message was sent under (``None``: a log written before ids)."""


@attrs.frozen
class HeaderRecord(Stamped):
    """The first record of every log: which session, where, since when, in which mode."""

    session_id: str
    """The session's id (the log's file is named after it)."""
    cwd: str
    """The session's absolute working directory."""
    created_at: datetime
    """When the session was created (timezone-aware, UTC)."""
    mode: str | None = None
    """The session's mode id at creation, if the agent has modes."""
    additional_directories: tuple[str, ...] = ()
    """The session's extra workspace roots at creation (absolute), in the client's order."""
    title: str | None = None
    """A title given at creation (a fork's: its parent's, marked), listed instead of the first
    prompt's. Optional and ignored by older readers, so no new version: a log with it reads by
    their rules (titled by its first prompt)."""


@attrs.frozen
class UserMessageRecord(Said):
    """A prompt: the user's content blocks, as ACP content-block JSON objects."""

    content: tuple[FrozenDict, ...]
    """The prompt's blocks (``{"type": "text", "text": …}``, images, resources, …)."""
    command: str | None = attrs.field(default=None, kw_only=True)
    """The name of the session command the prompt ran (``/export``: ``"export"``); such a
    turn, up to its end, is never part of a model's history. ``None``: a prompt for the
    driver. Optional and ignored by older readers, so no new version."""


@attrs.frozen
class AgentMessageRecord(Said):
    """One whole agent message (its streamed chunks coalesced)."""

    text: str
    """The message's text."""


@attrs.frozen
class AgentThoughtRecord(Said):
    """One whole agent thought (its streamed chunks coalesced)."""

    text: str
    """The thought's text."""


@attrs.frozen
class NoticeRecord(Said):
    """Something the sidecar itself told the user, never part of the conversation a model is
    sent (the model did not say it): in the agent's voice during a turn (why a model request
    failed, that an answer was cut off), or outside the conversation (an MCP server that did
    not start), whatever form the client that saw it took it in."""

    text: str
    """The notice's text."""
    severity: str | None = None
    """``None``: told in the agent's voice, and replayed as an agent message to every client.
    Else how it was told outside the conversation (``info``, ``warning``, ``error``): replayed
    as a ``notice`` of that severity where the client shows notices, as an agent message
    elsewhere."""
    content: tuple[FrozenDict, ...] = attrs.field(default=(), kw_only=True)
    """ACP content blocks (JSON) shown after the text in the same agent message (the
    ``resource_link`` to a file a command wrote); only with no ``severity``. Optional and
    ignored by older readers (they show the text, which names the file too)."""


@attrs.frozen
class GapRecord(Stamped):
    """Some records of this session were not written (a failed write: disk full, file too
    large, I/O error) and recording resumed here: replay says that part of the session is
    missing instead of silently leaving it out."""

    reason: str
    """Why the records were lost (the write error), for the user."""


@attrs.frozen
class ToolResultRecord(Stamped):
    """The outcome of a call (content, ``is_error``, error info, additional context, meta)."""

    result: ToolExecutionResult
    """The result, stored as :func:`~acp_sidecar.tools.result.result_to_json` writes it."""

    @property
    def call_id(self) -> str:
        """The id of the call this result answers."""
        return self.result.call_id


@attrs.frozen
class ModeChangeRecord(Stamped):
    """The session switched mode."""

    mode: str
    """The id of the mode now active."""


@attrs.frozen
class DirectoriesChangeRecord(Stamped):
    """The session's extra workspace roots were replaced (a ``session/load`` or
    ``session/resume`` naming a list): from here on they are these, not the header's."""

    additional_directories: tuple[str, ...]
    """The complete list now in force (absolute paths; empty: none)."""


@attrs.frozen
class ConfigChangeRecord(Stamped):
    """The user changed one of the session's config options (its model, its reasoning
    effort); the mode has :class:`ModeChangeRecord`. Replayed by restoring the choice."""

    config_id: str
    """The option's id (``model``, ``reasoning_effort``)."""
    value: str
    """The id of the value now selected."""


@attrs.frozen
class TurnEndRecord(Stamped):
    """A prompt turn ended (when it is synced: the writer's ``fsync`` invariants)."""

    stop_reason: str
    """Why the turn ended (the ACP stop reason: ``end_turn``, ``cancelled``, …)."""


@attrs.frozen
class UsageRecord(Stamped):
    """What one model response used, as the endpoint reported it, and the session's cost so
    far: a loaded session continues its sum from the last one, and replay redraws the
    context meter from it."""

    model: str
    """The model that answered."""
    prompt_tokens: int
    """Tokens of the request (the context sent)."""
    completion_tokens: int
    """Tokens of the response."""
    cached_tokens: int | None = None
    """Of the prompt tokens, those the endpoint served from its cache (if it said)."""
    context_window: int | None = None
    """The model's context window when it answered (``None``: unknown)."""
    cost: float | None = None
    """The session's cumulative cost after this response (``None``: unknown, as it is once
    any response was not priced)."""
    currency: str | None = None
    """The unit of :attr:`cost`."""
    seconds: float | None = None
    """How long its request took, streaming included (``None``: not measured)."""

    @property
    def counted(self) -> bool:
        """Whether the endpoint reported tokens (a record of a request's time alone has none)."""
        return bool(self.prompt_tokens or self.completion_tokens)


@attrs.frozen
class CompactionRecord(Stamped):
    """The oldest part of the conversation, summarised so later requests send the summary
    instead; the records it covers stay in the log (replay shows them all)."""

    summary: str
    """The summary the model wrote (covering any earlier summary too)."""
    turns: int
    """How many prompts, from the session's first, it covers (with all that answered them)."""


@attrs.frozen
class FileChangeRecord(Stamped):
    """A call (or an undo) changed a file it declared: the file's hash before and after. The
    whole before-image is in the session's blob store under ``before`` (written first); the
    log never holds file content, so replay and loading never read a blob."""

    call_id: str
    """The call (or the undo's revert card) that changed the file."""
    path: str
    """The file, absolute as the call resolved it."""
    before: str | None
    """The SHA-256 (hex) of the file before; ``None``: it did not exist."""
    after: str | None
    """The SHA-256 (hex) of the file after; ``None``: it no longer exists."""
    kept: bool = True
    """Whether the before-image is in the blob store (``False``: the file was too big or
    unreadable, and the change cannot be undone)."""


@attrs.frozen
class UndoRecord(Stamped):
    """``/undo`` (or ``/redo``) took turns back (or forward): the file changes it made are
    the :class:`FileChangeRecord` s of its own turn, written before this record."""

    turns: tuple[int, ...]
    """The turns (numbered from 1, session commands' turns not counted) it took back or
    forward."""
    redo: bool = False
    """``True``: a ``/redo``, which gives back what the last undo took."""


PermissionAnswer: TypeAlias = Literal[
    "allow_once",
    "allow_always",
    "allow_always_project",
    "allow_always_user",
    "reject_once",
    "reject_always",
    "reject_always_project",
    "reject_always_user",
    "cancelled",
]
"""How the user answered a permission request: one of the options, or the dialog cancelled
(``…_always`` alone: in the session; ``…_project`` and ``…_user``: in the project's rules
file, in the config file)."""
PERMISSION_ANSWERS: Final[tuple[PermissionAnswer, ...]] = get_args(PermissionAnswer)


@attrs.frozen
class PermissionAskedRecord(Stamped):
    """The user was asked whether a tool call may run (``session/request_permission``)."""

    call_id: str
    """The call asked about."""
    tool: str
    """The tool's registered name."""
    options: tuple[str, ...]
    """The ids of the options offered, in the order shown."""


@attrs.frozen
class PermissionAnswerRecord(Stamped):
    """The user's answer to the permission request for a call."""

    call_id: str
    """The call asked about."""
    tool: str
    """The tool's registered name."""
    answer: PermissionAnswer
    """The option chosen, or ``cancelled`` (the dialog was dismissed or the turn cancelled)."""


@attrs.frozen
class PermissionRememberedRecord(Stamped):
    """A call was decided without asking, by an earlier "always" answer for its tool (logs
    written before permission rules; now a :class:`PermissionRuleRecord` says it)."""

    call_id: str
    """The call decided."""
    tool: str
    """The tool's registered name."""
    allowed: bool
    """Whether the remembered answer allowed the call (``False``: it was rejected)."""


@attrs.frozen
class PermissionRuleRecord(Stamped):
    """A permission rule decided a call: allowed it, refused it, or had the user asked."""

    call_id: str
    """The call decided."""
    tool: str
    """The tool's registered name."""
    verdict: Literal["allow", "ask", "deny"]
    """What the rule decided."""
    rule: str
    """The rule as written (``deny bash rm -rf *``)."""
    source: str
    """Where it came from: ``session``, or the scope and ``file:line``."""


@attrs.frozen
class SessionRuleRecord(Stamped):
    """A rule of the session's own was added (an "always … in this session" answer,
    ``/permissions add``) or removed; load, resume and fork apply them in order. Optional and
    skipped by older readers (their sessions forget the rule on load, as they always did)."""

    rule: str
    """The rule as written (``allow write``)."""
    risk: tuple[bool, bool] | None = None
    """What the tool declared when an answer made the rule (see ``Rule.risk``)."""
    removed: bool = False
    """``True``: every session rule of this text was taken out."""


PermissionRecord: TypeAlias = (
    PermissionAskedRecord
    | PermissionAnswerRecord
    | PermissionRememberedRecord
    | PermissionRuleRecord
)
"""The records of permission decisions (a closed union; see :func:`permission_records`)."""

ChildRecordable: TypeAlias = (
    UserMessageRecord
    | AgentMessageRecord
    | AgentThoughtRecord
    | NoticeRecord
    | ToolCallRecord
    | ToolResultRecord
    | PermissionAskedRecord
    | PermissionAnswerRecord
    | PermissionRememberedRecord
    | PermissionRuleRecord
    | UsageRecord
    | TurnEndRecord
)
"""What a child conversation (a subagent the session delegated a job to) adds to its
parent's log: its messages, calls, decisions and usage, never session state."""


@attrs.frozen
class ChildRecord:
    """A record of a child conversation, kept in its parent's log in the order it happened:
    ``record``, tagged with the child's session id. On disk it is the record's own line with
    an optional ``"s"`` member (no new version: an older reader ignores the tag and reads the
    child's records as the parent's)."""

    session_id: str
    """The child's session id."""
    record: ChildRecordable
    """What the child did."""

    @property
    def at(self) -> datetime | None:
        """The inner record's time (every record answers it)."""
        return self.record.at


Record: TypeAlias = (
    HeaderRecord
    | UserMessageRecord
    | AgentMessageRecord
    | AgentThoughtRecord
    | NoticeRecord
    | GapRecord
    | ToolCallRecord
    | ToolResultRecord
    | ModeChangeRecord
    | DirectoriesChangeRecord
    | ConfigChangeRecord
    | TurnEndRecord
    | PermissionAskedRecord
    | PermissionAnswerRecord
    | PermissionRememberedRecord
    | PermissionRuleRecord
    | SessionRuleRecord
    | UsageRecord
    | CompactionRecord
    | FileChangeRecord
    | UndoRecord
    | ChildRecord
)
"""The closed union of everything a session log holds."""


def permission_records(records: Iterable[Record]) -> Iterator[PermissionRecord]:
    """The permission decisions among ``records``, in order: the read-only view a later
    export of the session uses (replay and the model's history leave them out)."""
    for record in records:
        if isinstance(
            record,
            PermissionAskedRecord
            | PermissionAnswerRecord
            | PermissionRememberedRecord
            | PermissionRuleRecord,
        ):
            yield record
