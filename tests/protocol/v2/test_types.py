"""Every v2 wire type encodes to what the v2 schema accepts, requests decode back to the value
they were encoded from, and the v2 method table names only methods of the v2 schema."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.protocol.converter import from_wire, to_wire
from acp_sidecar.protocol.initialize import ElicitationCapabilities, Implementation
from acp_sidecar.protocol.session import SessionConfigSelectOption, SessionInfo
from acp_sidecar.protocol.updates import NoticeUpdate, SessionInfoUpdate
from acp_sidecar.protocol.v2 import initialize as i
from acp_sidecar.protocol.v2 import options as o
from acp_sidecar.protocol.v2 import session as s
from acp_sidecar.protocol.v2 import updates as u
from acp_sidecar.protocol.v2.methods import METHOD_TO_TYPES
from tests.acp_schema import (
    schema_def_for,
    schema_methods,
    validate_agent_message,
    validate_client_message,
    validate_instance,
)

META = {"vendor.example/trace": {"id": "abc"}}
INFO = Implementation(name="acp-sidecar", version="1.0", title="ACP Sidecar")
SELECT = o.SessionConfigSelect(
    config_id="mode",
    name="Mode",
    current_value="ask",
    options=[
        SessionConfigSelectOption(value="ask", name="Ask", description="Ask first"),
        SessionConfigSelectOption(value="auto", name="Auto"),
    ],
    description="When to ask",
    category="mode",
    meta=META,
)
BOOLEAN = o.SessionConfigBoolean(config_id="outside", name="Outside", current_value=False)
COMMANDS = [
    o.Command(name="help", description="List the commands"),
    o.Command(name="read", description="Read a file", input=o.TextCommandInput(hint="path")),
]

RESULTS: dict[str, list[Any]] = {
    "initialize": [
        i.InitializeResponse(protocol_version=2, info=INFO),
        i.InitializeResponse(
            protocol_version=2,
            info=INFO,
            capabilities=i.AgentCapabilities(
                session=i.SessionCapabilities(
                    prompt=i.PromptCapabilities(image={}, audio={}, embedded_context={}),
                    mcp=i.McpCapabilities(stdio={}, http={}),
                    delete={},
                    additional_directories={},
                ),
                auth=i.AgentAuthCapabilities(),
            ),
            auth_methods=[
                i.AuthMethodAgent(method_id="a", name="Agent", description="Does it"),
                i.AuthMethodTerminal(
                    method_id="t",
                    name="Configure",
                    args=["configure"],
                    env=[i.EnvVariable(name="X", value="1")],
                ),
            ],
            meta=META,
        ),
    ],
    "auth/login": [i.LoginAuthResponse(), i.LoginAuthResponse(meta=META)],
    "auth/logout": [i.LogoutAuthResponse()],
    "session/new": [
        s.NewSessionResponse(session_id="s1"),
        s.NewSessionResponse(
            session_id="s1", config_options=[SELECT, BOOLEAN], available_commands=COMMANDS
        ),
    ],
    "session/list": [
        s.ListSessionsResponse(sessions=[]),
        s.ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id="s1",
                    cwd="/w",
                    title="T",
                    updated_at="2026-12-03T12:00:00Z",
                    additional_directories=["/x"],
                )
            ],
            next_cursor="c",
        ),
    ],
    "session/close": [s.CloseSessionResponse()],
    "session/delete": [s.DeleteSessionResponse()],
    "session/set_config_option": [
        s.SetSessionConfigOptionResponse(config_options=[SELECT, BOOLEAN])
    ],
    "session/resume": [
        s.ResumeSessionResponse(),
        s.ResumeSessionResponse(config_options=[SELECT], available_commands=COMMANDS, meta=META),
    ],
}

REQUESTS: dict[str, list[Any]] = {
    "initialize": [
        i.InitializeRequest(protocol_version=2, info=INFO),
        i.InitializeRequest(
            protocol_version=2,
            info=INFO,
            capabilities=i.ClientCapabilities(
                auth=i.ClientAuthCapabilities(terminal={}),
                elicitation=ElicitationCapabilities(form={}, url={}),
            ),
        ),
    ],
    "auth/login": [i.LoginAuthRequest(method_id="a")],
    "auth/logout": [i.LogoutAuthRequest()],
    "session/new": [
        s.NewSessionRequest(cwd="/w"),
        s.NewSessionRequest(
            cwd="/w",
            additional_directories=["/x"],
            mcp_servers=[{"type": "stdio", "name": "m", "command": "/bin/m"}],
        ),
    ],
    "session/list": [s.ListSessionsRequest(), s.ListSessionsRequest(cwd="/w", cursor="c")],
    "session/close": [s.CloseSessionRequest(session_id="s1")],
    "session/delete": [s.DeleteSessionRequest(session_id="s1")],
    "session/set_config_option": [
        s.SetSessionConfigOptionRequest(session_id="s1", config_id="mode", type="id", value="a"),
        s.SetSessionConfigOptionRequest(
            session_id="s1", config_id="outside", type="boolean", value=True
        ),
    ],
    "session/resume": [
        s.ResumeSessionRequest(session_id="s1", cwd="/w"),
        s.ResumeSessionRequest(
            session_id="s1",
            cwd="/w",
            additional_directories=["/x"],
            mcp_servers=[{"type": "http", "name": "h", "url": "https://h.example/mcp"}],
            replay_from=s.ReplayFrom(type="start"),
        ),
        s.ResumeSessionRequest(session_id="s1", cwd="/w", replay_from=s.ReplayFrom(type="_x")),
    ],
}

UPDATES = [
    u.AvailableCommandsUpdate(available_commands=COMMANDS),
    u.AvailableCommandsUpdate(available_commands=[]),
    u.ConfigOptionUpdate(config_options=[SELECT, BOOLEAN]),
    NoticeUpdate(severity="warning", title="Heads up", description="more"),
    SessionInfoUpdate(title="T", updated_at="2026-12-03T12:00:00Z"),
]
"""What session set-up sends over v2 (the last two are v1 values: same shape)."""


def _cases(table: dict[str, list[Any]]) -> list[tuple[str, Any]]:
    return [(method, value) for method, values in table.items() for value in values]


@pytest.mark.parametrize(("method", "value"), _cases(RESULTS))
def test_results_validate(method: str, value: Any) -> None:
    message = {"jsonrpc": "2.0", "id": 3, "result": to_wire(value)}
    validate_agent_message(message, request_method=method, version=2)


@pytest.mark.parametrize(("method", "value"), _cases(REQUESTS))
def test_requests_validate_and_decode_back(method: str, value: Any) -> None:
    wire = to_wire(value)
    validate_client_message(
        {"jsonrpc": "2.0", "id": 3, "method": method, "params": wire}, version=2
    )
    assert from_wire(wire, METHOD_TO_TYPES[method].params) == value


@pytest.mark.parametrize("update", UPDATES, ids=lambda v: type(v).__name__)
def test_updates_validate(update: Any) -> None:
    params = {"sessionId": "s1", "update": to_wire(update)}
    validate_agent_message(
        {"jsonrpc": "2.0", "method": "session/update", "params": params}, version=2
    )


def test_config_options_are_judged_as_their_own_kind() -> None:
    validate_instance(to_wire(SELECT), "SessionConfigOption", version=2)
    wire = to_wire(SELECT)
    assert wire["type"] == "select" and wire["configId"] == "mode" and "id" not in wire


def test_method_table_is_the_schemas() -> None:
    served = set(METHOD_TO_TYPES)
    notified = {method for method, types in METHOD_TO_TYPES.items() if types.result is None}
    assert notified == {"session/cancel"}
    assert notified <= schema_methods("agent", "Notification", version=2)
    # session/fork is the unstable schema's only (served behind the same flag).
    unstable = {"session/fork"}
    assert not unstable & schema_methods("agent", "Request", version=2)
    assert unstable <= schema_methods("agent", "Request", unstable=True, version=2)
    assert served - notified - unstable <= schema_methods("agent", "Request", version=2)
    for method in served - notified:
        found = schema_def_for("agent", method, "Response", unstable=method in unstable, version=2)
        assert found is not None
    # v1-only names are absent: a v2 connection answers them -32601.
    assert not served & {"authenticate", "logout", "session/load", "session/set_mode"}


names = st.text(min_size=1, max_size=12)


@given(
    session_id=names,
    config_id=names,
    value=st.one_of(st.booleans(), names),
)
def test_set_config_option_round_trips(session_id: str, config_id: str, value: str | bool) -> None:
    kind = "boolean" if isinstance(value, bool) else "id"
    request = s.SetSessionConfigOptionRequest(
        session_id=session_id, config_id=config_id, type=kind, value=value
    )
    wire = to_wire(request)
    validate_instance(wire, "SetSessionConfigOptionRequest", version=2)
    assert from_wire(wire, s.SetSessionConfigOptionRequest) == request


@given(
    cwd=st.sampled_from(["/w", "/home/u/project"]),
    dirs=st.lists(st.sampled_from(["/a", "/b/c"]), max_size=3),
    version=st.integers(min_value=0, max_value=65535),
)
def test_new_session_and_initialize_round_trip(cwd: str, dirs: list[str], version: int) -> None:
    new = s.NewSessionRequest(cwd=cwd, additional_directories=dirs)
    assert from_wire(to_wire(new), s.NewSessionRequest) == new
    init = i.InitializeRequest(protocol_version=version, info=INFO)
    validate_instance(to_wire(init), "InitializeRequest", version=2)
    assert from_wire(to_wire(init), i.InitializeRequest) == init
