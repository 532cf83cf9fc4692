"""MCP servers named by the editor: their tools as tool definitions.

Only this package imports the ``mcp`` SDK, and nothing imports it at start: the server imports
it lazily, when a session has servers.
"""
