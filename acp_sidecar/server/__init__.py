"""The NDJSON stdio transport and the ACP request handlers."""
