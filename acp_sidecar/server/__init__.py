"""The ACP agent side of one connection: the NDJSON stdio transport and what it serves.

- The wire: :mod:`.stdio`, :mod:`.framing`, :mod:`.transport`, :mod:`.messages`,
  :mod:`.pacing`, :mod:`.outgoing`, :mod:`.hardening`; :mod:`.pygls_adapter`, all of
  pygls the package relies on.
- The connection: :mod:`.connection` (state, client proxy, sending, telling the user),
  :mod:`.drivers`, :mod:`.refresh` (settings re-read, driver replaced), :mod:`.app` (the
  server: the connection with :mod:`.handlers`' table registered; :mod:`.loading` and
  :mod:`.lifecycle` hold the stored-session handlers).
- Sessions: :mod:`.session`, :mod:`.state`, :mod:`.config_options`, :mod:`.mcp_session`,
  :mod:`.recording`, :mod:`.held`, :mod:`.cwd` (a stored session's replay is
  :mod:`acp_sidecar.bridge.replay`).
- What the server asks of the client: :mod:`.client`, :mod:`.files`; :mod:`.auth`.
"""
