"""The ACP agent side of one connection: the NDJSON stdio transport and what it serves.

- The wire: :mod:`.stdio` (serving on the process's stdin/stdout), :mod:`.framing`,
  :mod:`.transport` (JSON-RPC on pygls's machinery), :mod:`.messages` (decoding, encoding,
  bounded errors), :mod:`.pacing` (input held while the client is behind on our output),
  :mod:`.throttle`, :mod:`.hardening`.
- The connection: :mod:`.app` (:class:`~acp_sidecar.server.app.AcpServer`: state and handler
  registration), :mod:`.handlers` (one handler per method, listed in ``HANDLERS``) and
  :mod:`.loading` (``session/load``, ``session/list``), :mod:`.cwd`.
- Sessions: :mod:`.session` (running a turn), :mod:`.recording`, :mod:`.replay`, :mod:`.held`
  (the session logs).
- What the server asks of the client: :mod:`.client` (typed agent → client requests),
  :mod:`.files` (the editor's ``fs/*`` for the tools).
"""
