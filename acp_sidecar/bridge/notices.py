"""Messages for the user, not the model: a ``notice`` where the client shows notices, else
agent text. Invariants: :func:`user_updates` alone decides between the two, from the client's
capabilities; what the sidecar says as agent text stands in a paragraph of its own
(:class:`Paragraphs`), never glued to the text around it. Nothing here records a message
(:meth:`~acp_sidecar.server.connection.Connection.tell` does, when asked to keep it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import attrs

from acp_sidecar.protocol.content import TextContentBlock
from acp_sidecar.protocol.initialize import ClientCapabilities
from acp_sidecar.protocol.updates import (
    AgentMessageChunk,
    NoticeSeverity,
    NoticeUpdate,
    SessionUpdate,
)
from acp_sidecar.text import shorten
from acp_sidecar.values import Value

TITLE_MAX: Final = 100
"""The longest notice title, in characters."""


@attrs.frozen(repr=False, eq=False)
class UserMessage(Value):
    """Something to tell the user that is not part of the conversation."""

    severity: NoticeSeverity
    """How a notice presents it."""
    text: str
    """The whole message (what a client without notices is sent, as an agent message)."""

    @property
    def title(self) -> str:
        """The notice's title: the first non-blank line, shortened (the description carries
        the lines after it)."""
        lines = [line for line in self.text.splitlines() if line.strip()]
        return shorten(lines[0] if lines else "", TITLE_MAX) or self.severity

    @property
    def description(self) -> str | None:
        """The notice's description: the whole text, unless the title already is it."""
        text = self.text.strip()
        return None if text == self.title else text


BREAK: Final = "\n\n"
"""Ends a paragraph (a single newline is a soft break in Markdown: the lines join)."""


class Paragraphs:
    """The agent message a session's user is shown, as far as where a paragraph ends: the
    sidecar's own texts (notices sent as agent text) each get a paragraph, so that two of
    them, or one and the model's text, never run together. Only what is shown changes: the
    log keeps each text as it was said."""

    def __init__(self) -> None:
        self._last = ""
        """The last agent text shown in this message (``""``: none yet)."""
        self._after_notice = False
        """The last text shown was the sidecar's own."""

    def new_message(self) -> None:
        """A prompt began: the agent's next text starts a message of its own."""
        self._last = ""
        self._after_notice = False

    def shown(self, update: SessionUpdate) -> SessionUpdate:
        """``update`` as shown: agent text right after a notice starts a new paragraph (the
        path every streamed chunk takes: it only notes the text otherwise)."""
        if not isinstance(update, AgentMessageChunk):
            return update
        content = update.content
        if not isinstance(content, TextContentBlock) or not content.text:
            return update
        if not self._after_notice:
            self._last = content.text
            return update
        self._after_notice = False
        self._last = text = BREAK + content.text.lstrip("\n")
        return attrs.evolve(update, content=attrs.evolve(content, text=text))

    def notice(self, text: str) -> str:
        """The sidecar's own ``text`` as shown: a paragraph of its own."""
        body = text.strip("\n")
        if not body:
            return text
        shown = BREAK + body if self._last and not self._last.endswith(BREAK) else body
        self._last = shown
        self._after_notice = True
        return shown


def shows_notices(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised ``session.notices``."""
    return capabilities.session is not None and capabilities.session.notices is not None


def user_updates(
    capabilities: ClientCapabilities,
    messages: Sequence[UserMessage],
    paragraphs: Paragraphs | None = None,
    message_id: str | None = None,
) -> list[NoticeUpdate | AgentMessageChunk]:
    """The updates that tell the user ``messages``: a notice each, or one agent message (a
    paragraph of its own in the message ``paragraphs`` follows, when given; in the message
    ``message_id``)."""
    if not messages:
        return []
    if shows_notices(capabilities):
        return [
            NoticeUpdate(severity=m.severity, title=m.title, description=m.description)
            for m in messages
        ]
    text = "\n\n".join(m.text for m in messages)  # a paragraph each, as Markdown shows them
    if paragraphs is not None:
        text = paragraphs.notice(text)
    return [AgentMessageChunk(content=TextContentBlock(text=text), message_id=message_id)]
