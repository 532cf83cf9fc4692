"""Messages for the user, not the model: a ``notice`` where the client shows notices, else an
agent message (as before notices existed).

Invariants:
- :func:`user_update` is the one place that decides between the two, from the client's
  capabilities alone (``clientCapabilities.session.notices`` present).
- Nothing here records a message (the server does, with its severity, when a load is to
  replay it: :meth:`~acp_sidecar.server.app.AcpServer.inform`). A notice's title is one line
  of plain text that stands alone (the message's first line, shortened); the whole message is
  its description when the title does not already say all of it.
- A client without notices gets the message's full text as an agent message, exactly as it
  was told before; several messages told together are one agent message, a paragraph each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import attrs

from acp_sidecar.protocol.content import TextContentBlock
from acp_sidecar.protocol.initialize import ClientCapabilities
from acp_sidecar.protocol.updates import AgentMessageChunk, NoticeSeverity, NoticeUpdate
from acp_sidecar.text import shorten

TITLE_MAX: Final = 100
"""The longest notice title, in characters."""


@attrs.frozen
class UserMessage:
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


def shows_notices(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised ``session.notices``."""
    return capabilities.session is not None and capabilities.session.notices is not None


def shows_compaction(capabilities: ClientCapabilities) -> bool:
    """Whether the client advertised ``session.compaction``."""
    return capabilities.session is not None and capabilities.session.compaction is not None


def user_updates(
    capabilities: ClientCapabilities, messages: Sequence[UserMessage]
) -> list[NoticeUpdate | AgentMessageChunk]:
    """The updates that tell the user ``messages``: a notice each, or one agent message."""
    if not messages:
        return []
    if shows_notices(capabilities):
        return [
            NoticeUpdate(severity=m.severity, title=m.title, description=m.description)
            for m in messages
        ]
    text = "\n\n".join(m.text for m in messages)  # a paragraph each, as Markdown shows them
    return [AgentMessageChunk(content=TextContentBlock(text=text))]


def user_update(
    capabilities: ClientCapabilities, message: UserMessage
) -> NoticeUpdate | AgentMessageChunk:
    """The update that tells the user ``message``: a notice, or an agent message."""
    [update] = user_updates(capabilities, [message])
    return update
