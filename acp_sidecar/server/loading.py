"""``session/load`` and ``session/list``, and :func:`attach`, which ``load`` and ``resume`` share.

Every check that can fail (the log, its versions, its cwd, the claim, the lock) is made before
the first update is sent; a failure gives back the claim, the lock and the MCP servers started.
The history replays before ``session/load`` answers; mode, roots, the session's own permission
rules, model and effort are restored.
A resume, which replays nothing, sends the context meter the log left after its answer.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import attrs

from acp_sidecar.agent.model.budget import Spent
from acp_sidecar.bridge.modes import SessionPolicy
from acp_sidecar.bridge.notices import UserMessage
from acp_sidecar.bridge.rules import Rule, RuleError, parse_rule
from acp_sidecar.protocol.errors import INTERNAL_ERROR, RESOURCE_NOT_FOUND, AcpError
from acp_sidecar.protocol.methods import SESSION_LOAD
from acp_sidecar.protocol.session import (
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    SessionInfo,
)
from acp_sidecar.server.children import ChildSession
from acp_sidecar.server.config_options import restore_choices
from acp_sidecar.server.cwd import check_additional_directories, check_cwd
from acp_sidecar.server.refresh import refresh_settings, tell_settings
from acp_sidecar.server.session import Session
from acp_sidecar.server.state import announce_commands, announce_state, session_state

if TYPE_CHECKING:
    from acp_sidecar.protocol.updates import SessionUpdate, UsageUpdate
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.mcp_session import SessionServers
    from acp_sidecar.store import (
        HeaderRecord,
        Record,
        SessionClaim,
        SessionRuleRecord,
        SessionStore,
        SessionWriter,
        StoreError,
    )

logger = logging.getLogger(__name__)


def store_of(server: Connection, method: str) -> SessionStore:
    """The server's store, or ``-32601``: without one, the stored-session methods do not exist."""
    if server.store is None:
        raise AcpError.method_not_found(method)
    return server.store


def store_failure(verb: str, session_id: str, exc: StoreError) -> AcpError:
    """``-32603`` for a stored session the store could not serve (a newer version's log names
    the versions found and supported)."""
    from acp_sidecar.store import UnsupportedVersionError

    data = (
        {"found": exc.found, "supported": exc.supported}
        if isinstance(exc, UnsupportedVersionError)
        else None
    )
    return AcpError(INTERNAL_ERROR, f"Cannot {verb} session {session_id}: {exc}", data)


def not_found(session_id: str) -> AcpError:
    """``-32002`` naming the session."""
    return AcpError(
        RESOURCE_NOT_FOUND, f"Session not found: {session_id}", {"sessionId": session_id}
    )


async def session_load(server: Connection, params: LoadSessionRequest) -> LoadSessionResponse:
    """Replay a stored session's history, then continue it."""
    session = await attach(
        server,
        SESSION_LOAD,
        params.session_id,
        params.cwd,
        params.mcp_servers,
        params.additional_directories,
        replay=True,
    )
    state = session_state(server, session)
    return LoadSessionResponse(modes=state.modes, config_options=state.config_options)


class StoredState:
    """What a stored session's records leave in force: its mode and extra roots (the last
    change of each, else the header's), its own permission rules (each added and removed in
    order) and its context meter (the last usage record with a window: the last
    ``usage_update`` sent live, and replayed). Fed the records as read."""

    def __init__(self, header: HeaderRecord) -> None:
        self.mode = header.mode
        self.additional_directories = header.additional_directories
        self.meter: UsageUpdate | None = None
        self.spent = Spent()
        """What the session's model work used so far, for its budget."""
        self.currency: str | None = None
        """The unit of its cost (the last usage record's)."""
        self.rules: list[Rule] = []

    def watch(
        self, records: Iterable[Record], choices: dict[str, str] | None = None
    ) -> Iterator[Record]:
        """``records``, passed through, noting each change on the way; with ``choices``, the
        last value of each config option recorded too (for :func:`restore_choices`)."""
        from acp_sidecar.bridge.meter import usage_update
        from acp_sidecar.store import (
            ConfigChangeRecord,
            DirectoriesChangeRecord,
            ModeChangeRecord,
            SessionRuleRecord,
            UsageRecord,
        )

        # Records are exact classes; most (calls, results, text) change nothing: one test.
        noted = {ModeChangeRecord, SessionRuleRecord, DirectoriesChangeRecord, UsageRecord}
        if choices is not None:
            noted.add(ConfigChangeRecord)
        for record in records:
            if type(record) not in noted:
                pass
            elif isinstance(record, ConfigChangeRecord):
                assert choices is not None
                choices[record.config_id] = record.value
            elif isinstance(record, ModeChangeRecord):
                self.mode = record.mode
            elif isinstance(record, SessionRuleRecord):
                self._apply_rule(record)
            elif isinstance(record, DirectoriesChangeRecord):
                self.additional_directories = record.additional_directories
            elif isinstance(record, UsageRecord):
                spent = self.spent.add(
                    tokens=record.prompt_tokens + record.completion_tokens,
                    time=record.seconds or 0.0,
                )
                # A record's cost is the session's so far: it replaces, not adds.
                self.spent = spent if record.cost is None else attrs.evolve(spent, cost=record.cost)
                self.currency = record.currency or self.currency
                if record.context_window is not None:
                    self.meter = usage_update(record, record.context_window)
            yield record

    def _apply_rule(self, record: SessionRuleRecord) -> None:
        """As :meth:`RuleBook.remember` and :meth:`RuleBook.remove` did it live."""
        try:
            rule = attrs.evolve(parse_rule(record.rule), risk=record.risk)
        except RuleError as exc:
            logger.warning("the log's session rule %r is no rule (%s); left out", record.rule, exc)
            return
        if record.removed:
            self.rules[:] = [kept for kept in self.rules if kept.text != rule.text]
        elif rule not in self.rules:
            self.rules.append(rule)


async def attach(
    server: Connection,
    method: str,
    session_id: str,
    cwd: str,
    mcp_servers: list[dict[str, Any]],
    additional_directories: list[str] | None,
    *,
    replay: bool,
) -> Session:
    """Make stored session ``session_id`` this connection's again (``session/load`` with
    ``replay``, ``session/resume`` without), making every check of the module docstring
    before anything is sent; returns the session, in :attr:`Connection.sessions`."""
    store = store_of(server, method)
    refresh_settings(server)
    check_cwd(cwd, must_exist=False)
    directories = check_additional_directories(additional_directories)
    # A second attach of one session waits for the first; at once they are bounded (two fds
    # each). Close and delete take the same per-session turn.
    async with server.held_logs.loading(session_id), server.held_logs.replaying():
        session, servers, choices, meter = await _attach(
            server, store, session_id, cwd, mcp_servers, replay=replay
        )
        await restore_choices(server, session, choices)
        if directories and directories != session.additional_directories:
            # The request's non-empty list is the whole new list (the schema's rule); the log
            # keeps it as a ``directories`` record, so listing and the next attach see it.
            session.additional_directories = directories
            if session.recorder is not None:
                session.recorder.directories_change(directories)
        session.fix_roots()
    tell_settings(server, session_id)  # as after session/new: a broken config file is seen
    announce_commands(server, session_id)  # an attached session keeps its slash commands
    announce_state(server, session_id, meter, replayed=replay)
    if servers is not None:
        servers.release()  # problems starting them, told after the answer and commands
    return session


async def _attach(
    server: Connection,
    store: SessionStore,
    session_id: str,
    cwd: str,
    mcp_servers: list[dict[str, Any]],
    *,
    replay: bool,
) -> tuple[Session, SessionServers | None, dict[str, str], UsageUpdate | None]:
    """The session attached, the MCP servers this request started for it, the config
    choices (model, effort) its log recorded, and the context meter it left."""
    from acp_sidecar.agent.model.task import with_task_cards
    from acp_sidecar.bridge.replay import (
        known_mode,
        replay_sessions,
        replay_updates,
        session_info,
    )
    from acp_sidecar.server.recording import SessionRecorder
    from acp_sidecar.store import (
        SessionNotFoundError,
        StoreError,
    )

    verb = "load" if replay else "resume"
    loaded = server.sessions.get(session_id)
    if loaded is not None and loaded.running is not None:
        raise AcpError.invalid_request(
            f"Invalid request: session {session_id} is running a prompt turn"
        )
    if loaded is not None and loaded.recorder is not None:
        loaded.recorder.flush()  # its log exists (a new one is created meanwhile) and is whole
    if loaded is not None and loaded.mcp is not None:
        # Attached again: the servers this request names replace the ones it had.
        replaced, loaded.mcp, loaded.tools = loaded.mcp, None, None
        await replaced.aclose()
    claim: SessionClaim | None = None
    writer: SessionWriter | None = None
    servers: SessionServers | None = None
    choices: dict[str, str] = {}
    attached = False
    try:
        try:
            if loaded is None:
                # The session and its log's lock first: nothing is sent if they are held.
                claim = store.claim(session_id)
                writer = store.reopen(session_id, claim=claim)
            with store.open_log(session_id) as log:
                header = log.header
                if os.path.normpath(header.cwd) != os.path.normpath(cwd):
                    raise AcpError.invalid_params(
                        f"Invalid params: cwd: session {session_id} works in {header.cwd}, "
                        f"not {cwd}"
                    )
                # A newer record anywhere refuses the log before any update. The whole log is
                # read (here, for a resume's state, for the summary) in a worker thread, so a
                # big one does not hold up the other sessions.
                await asyncio.to_thread(log.check_versions)
                session = loaded or Session(session_id=session_id, cwd=header.cwd)
                if mcp_servers:
                    # Started before the replay, so stored calls of a server that is there
                    # draw the cards they drew live; a server that is absent leaves its calls
                    # to the generic card, as for any tool no longer registered.
                    from acp_sidecar.server.mcp_session import start_session_servers

                    servers = await start_session_servers(server, session, mcp_servers)
                stored = StoredState(header)
                records = stored.watch(log, choices)  # and the model, effort chosen
                if replay:
                    ctx = server.card_context(header.cwd)
                    lookup = with_task_cards((session.tools or server.tools.registry).get)
                    client = server.client_capabilities
                    if client.takes_subagents:
                        sessions = replay_sessions(header, records, lookup, ctx, client)
                        await send_sessions(server, session_id, sessions)
                    else:
                        replayed = replay_updates(header, records, lookup, ctx, client)
                        await server.send_updates(session_id, replayed)
                else:
                    await asyncio.to_thread(_read_through, records)  # for the state it leaves
                summary = await asyncio.to_thread(store.summary, session_id)
                session.prompted, session.title = summary.prompted, summary.title
                if replay:
                    await server.send_update(
                        session_id, session_info(summary.title, summary.updated_at)
                    )
        except SessionNotFoundError:
            raise not_found(session_id) from None
        except StoreError as exc:  # the session locked, from a newer version, damaged
            raise store_failure(verb, session_id, exc) from None
        except OSError as exc:
            raise AcpError(
                INTERNAL_ERROR,
                f"Cannot {verb} session {session_id}: its log could not be read "
                f"({exc.strerror or exc})",
            ) from None
        if loaded is None:
            assert writer is not None
            session.policy = SessionPolicy(mode=known_mode(stored.mode), rules=stored.rules)
            session.additional_directories = stored.additional_directories
            session.recorder = SessionRecorder(
                server.require_store,
                session_id,
                header.cwd,
                session.policy.mode,
                held=server.held_logs,
                tell=lambda text: server.tell(session_id, UserMessage("warning", text)),
                writer=writer,
                claim=claim,
            )
            session.budget.restore(stored.spent, stored.currency)
            server.sessions[session_id] = session
            loaded = session
        loaded.mcp = servers
        attached = True
    finally:
        if not attached:
            if writer is not None:  # every failure gives the lock back
                writer.close()
            if claim is not None:  # and the session
                claim.release()
            if servers is not None:  # and the servers it started stop
                if loaded is not None:
                    loaded.tools = None
                await servers.aclose()
    return loaded, servers, choices, stored.meter


def _read_through(records: Iterable[Record]) -> None:
    for _record in records:
        pass


async def session_list(server: Connection, params: ListSessionsRequest) -> ListSessionsResponse:
    """Stored sessions, newest first, optionally only those for ``cwd``; cursor paging. The
    logs are read in a worker thread: other sessions are served meanwhile."""
    from acp_sidecar.store import InvalidCursorError, format_timestamp

    store = store_of(server, "session/list")
    try:
        page = await asyncio.to_thread(store.list, cwd=params.cwd, cursor=params.cursor)
    except InvalidCursorError as exc:
        raise AcpError.invalid_params(f"Invalid params: cursor: {exc}") from None
    return ListSessionsResponse(
        sessions=[
            SessionInfo(
                session_id=summary.session_id,
                cwd=summary.cwd,
                title=summary.title,
                updated_at=format_timestamp(summary.updated_at),
                additional_directories=list(summary.additional_directories) or None,
            )
            for summary in page.sessions
        ],
        next_cursor=page.next_cursor,
    )


async def send_sessions(
    server: Connection, parent_id: str, updates: Iterable[tuple[str, SessionUpdate]]
) -> None:
    """Send a replay that redraws a session and its children, each run of updates for one
    session as :meth:`Connection.send_updates` sends it; each child is known to the
    connection from then on (the methods restricted on a child are refused)."""
    for session_id, run in itertools.groupby(updates, key=lambda pair: pair[0]):
        if session_id != parent_id:
            server.children.setdefault(session_id, ChildSession(parent_id))
        await server.send_updates(session_id, (update for _, update in run))
