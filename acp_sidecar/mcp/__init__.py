"""MCP servers named by the editor: connect with the official MCP SDK, list and call their
tools, answer their requests to the client, stop them with the session.

Only this package imports the ``mcp`` SDK, and nothing imports this package at start-up: the
server imports it when a session has servers, so a cold start does not pay for the SDK.
This module itself imports nothing, for the same reason; import the submodules.
"""
