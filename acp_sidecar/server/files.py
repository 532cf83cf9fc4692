"""The editor's ``fs/*`` methods as the tools' neutral :class:`EditorFiles`.

Invariant: reads and writes go to the editor only when the client advertised the matching
capability (``can_read`` / ``can_write`` say so); a tool checks them before calling.
"""

from __future__ import annotations

from acp_sidecar.agent.driver import ClientRequests
from acp_sidecar.protocol.client import ReadTextFileRequest, WriteTextFileRequest
from acp_sidecar.tools.cancel import CancelSignal


class ClientFiles:
    """Reads and writes files through the editor, for one session."""

    def __init__(
        self, client: ClientRequests, session_id: str, signal: CancelSignal | None = None
    ) -> None:
        self._client = client
        self._session_id = session_id
        self._signal = signal

    @property
    def can_read(self) -> bool:
        return self._client.capabilities.fs.read_text_file

    @property
    def can_write(self) -> bool:
        return self._client.capabilities.fs.write_text_file

    async def read_text_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> str:
        response = await self._client.read_text_file(
            ReadTextFileRequest(session_id=self._session_id, path=path, line=line, limit=limit),
            signal=self._signal,
        )
        return response.content

    async def write_text_file(self, path: str, content: str) -> None:
        await self._client.write_text_file(
            WriteTextFileRequest(session_id=self._session_id, path=path, content=content),
            signal=self._signal,
        )
