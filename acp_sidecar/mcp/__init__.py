"""MCP servers named by the editor: connect with the official MCP SDK, list and call their
tools, answer their requests to the client, stop them with the session.

Only this package imports the ``mcp`` SDK, and only when a session has servers (a cold start
does not pay for it); this module imports nothing, for the same reason.
"""
