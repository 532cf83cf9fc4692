"""ACP v1 conformance: one test per requirement an agent must meet.

Each test names the requirement it checks in its docstring — quoted or paraphrased from the
protocol documentation (https://agentclientprotocol.com/protocol/...) or the official v1
schema (``tests/fixtures/acp/v1/schema.json``) — and drives the server ``acp-sidecar`` builds
over a pair of pipes, in this process, or a real subprocess where the requirement is one of the
process (stdout, exit; :mod:`tests.conformance.peer`). Every message the agent writes in these
tests is validated against the schema as it is read, and checked for members the
specification does not define.

A requirement known to fail today is marked ``xfail(strict=True)`` with the reason; the mark
goes when the fix lands.
"""
