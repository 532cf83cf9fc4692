"""Small MCP servers of our own, built with the MCP SDK's server side, for the tests."""
