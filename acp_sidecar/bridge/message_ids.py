"""The ``messageId`` of every message chunk (``user_message_chunk``, ``agent_message_chunk``,
``agent_thought_chunk``), live and on replay.

Invariants: the chunks of one message share an id and a new message gets a new one; any update
but a chunk of the message's own kind ends it (a tool call between two stretches of text, the
reply after a thought, the next prompt). An id is made once per message, never per chunk. The
log keeps each message's id with its record; a record written before ids were replays under
:func:`derived_message_id`, the same on every load of that log.
"""

from __future__ import annotations

import os

from acp_sidecar.protocol.updates import AgentMessageChunk, AgentThoughtChunk, SessionUpdate


def new_message_id() -> str:
    """A fresh opaque id (64 random bits: unique within any session; ``os.urandom``, not
    ``secrets``, which a first session must not import)."""
    return os.urandom(8).hex()


def derived_message_id(session_id: str, position: int) -> str:
    """The id of a stored message that has none: from its session and its record's position
    in the log (so two loads of one log give the same ids, and no two records the same)."""
    import hashlib  # replay only: not at start

    key = f"{session_id}\0{position}".encode()
    return hashlib.blake2b(key, digest_size=8).hexdigest()


class MessageIds:
    """Which message a session's updates are in: stamps each chunk with its message's id."""

    __slots__ = ("_current", "_kind", "_last_in", "_last_out")

    def __init__(self) -> None:
        self._kind: type[SessionUpdate] | None = None
        """The kind of chunk of the message open (``None``: none is)."""
        self._current = ""
        """The open message's id."""
        self._last_in: SessionUpdate | None = None
        self._last_out: SessionUpdate | None = None
        """The last chunk stamped, as sent and as stamped: a driver that sends one chunk
        object again and again (a benchmark's flood) pays for one stamp."""

    def stamp(self, update: SessionUpdate) -> SessionUpdate:
        """``update`` as sent: an agent text or thought chunk with its message's id (one it
        carries already is kept, and names the message); any other update ends the message."""
        if update is self._last_in:
            return self._last_out  # type: ignore[return-value]
        kind = type(update)
        if kind is AgentMessageChunk or kind is AgentThoughtChunk:
            chunk: AgentMessageChunk | AgentThoughtChunk = update  # type: ignore[assignment]
            if chunk.message_id is not None:
                self._kind, self._current = kind, chunk.message_id
                stamped: SessionUpdate = chunk
            else:
                if kind is not self._kind:
                    self._kind, self._current = kind, new_message_id()
                stamped = kind(content=chunk.content, message_id=self._current, meta=chunk.meta)
            self._last_in, self._last_out = update, stamped
            return stamped
        self.end()
        return update

    def end(self) -> None:
        """The open message, if any, is over: the next chunk starts a new one."""
        self._kind = None
        self._last_in = self._last_out = None

    def user_message(self) -> str:
        """The id of a new user message (a prompt), which ends the agent's."""
        self.end()
        return new_message_id()

    def agent_text(self) -> str:
        """The id the sidecar's own text in the agent's voice goes under (a notice): the
        agent message open, else a new one, which the agent's next text continues."""
        if self._kind is not AgentMessageChunk:
            self.end()
            self._kind, self._current = AgentMessageChunk, new_message_id()
        return self._current
