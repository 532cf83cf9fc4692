"""Sample ACP values covering every wire type, with the message each one travels in.

Each :class:`Sample` says who writes it and how: the agent's notifications, requests and
results, and the client's requests, notifications and results. Tests round-trip them, check
their exact wire form, and validate the message around them against the official schema.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from acp_sidecar import protocol as p

Kind = Literal[
    "agent_notification",
    "agent_request",
    "agent_result",
    "client_request",
    "client_notification",
    "client_result",
]

META = {"vendor.example/trace": {"id": "abc", "n": [1, 2.5, None, True]}}
ANNOTATIONS = p.Annotations(
    audience=["user", "assistant"], last_modified="2026-11-30T12:00:00Z", priority=0.5, meta=META
)


@attrs.frozen
class Sample:
    """One value and the message it travels in."""

    name: str
    value: Any
    kind: Kind
    method: str

    def message(self, wire: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC message carrying ``wire`` (the value's wire form)."""
        if self.kind in ("agent_notification", "client_notification"):
            return {"jsonrpc": "2.0", "method": self.method, "params": wire}
        if self.kind in ("agent_request", "client_request"):
            return {"jsonrpc": "2.0", "id": 7, "method": self.method, "params": wire}
        return {"jsonrpc": "2.0", "id": 7, "result": wire}


def _update(name: str, update: p.SessionUpdate) -> Sample:
    return Sample(
        name,
        p.SessionNotification(session_id="sess-1", update=update),
        "agent_notification",
        p.SESSION_UPDATE,
    )


TEXT = p.TextContentBlock(text="Hello, **world**")
CONTENT_BLOCKS: list[p.ContentBlock] = [
    TEXT,
    p.TextContentBlock(text="annotated", annotations=ANNOTATIONS, meta=META),
    p.ImageContentBlock(data="iVBORw0KGgo=", mime_type="image/png"),
    p.ImageContentBlock(
        data="iVBORw0KGgo=", mime_type="image/png", uri="file:///a.png", annotations=ANNOTATIONS
    ),
    p.AudioContentBlock(data="UklGRg==", mime_type="audio/wav", meta=META),
    p.ResourceLinkContentBlock(name="main.py", uri="file:///w/main.py"),
    p.ResourceLinkContentBlock(
        name="main.py",
        uri="file:///w/main.py",
        title="Main",
        description="entry point",
        mime_type="text/x-python",
        size=1234,
        annotations=ANNOTATIONS,
        meta=META,
    ),
    p.EmbeddedResourceContentBlock(
        resource=p.TextResourceContents(text="print(1)\n", uri="file:///w/a.py")
    ),
    p.EmbeddedResourceContentBlock(
        resource=p.TextResourceContents(
            text="x", uri="file:///w/b.py", mime_type="text/x-python", meta=META
        ),
        annotations=ANNOTATIONS,
        meta=META,
    ),
    p.EmbeddedResourceContentBlock(
        resource=p.BlobResourceContents(blob="AAEC", uri="file:///w/c.bin")
    ),
    p.EmbeddedResourceContentBlock(
        resource=p.BlobResourceContents(
            blob="AAEC", uri="file:///w/c.bin", mime_type="application/octet-stream", meta=META
        )
    ),
]

TOOL_CALL_CONTENT: list[p.ToolCallContent] = [
    p.ToolCallContentBlock(content=TEXT),
    p.ToolCallContentBlock(content=CONTENT_BLOCKS[2], meta=META),
    p.ToolCallDiff(path="/w/new.py", new_text="print(1)\n"),
    p.ToolCallDiff(path="/w/a.py", old_text="a\n", new_text="b\n", meta=META),
    p.ToolCallTerminal(terminal_id="term-1"),
    p.ToolCallTerminal(terminal_id="term-2", meta=META),
]

LOCATIONS = [p.ToolCallLocation(path="/w/a.py"), p.ToolCallLocation(path="/w/b.py", line=3)]
MODES = p.SessionModeState(
    current_mode_id="ask",
    available_modes=[
        p.SessionMode(id="ask", name="Ask"),
        p.SessionMode(id="code", name="Code", description="Edits files", meta=META),
    ],
    meta=META,
)

CONFIG_OPTIONS = [
    p.SessionConfigOption(
        id="mode",
        name="Mode",
        current_value="ask",
        options=[
            p.SessionConfigSelectOption(value="ask", name="Ask"),
            p.SessionConfigSelectOption(
                value="auto", name="Auto", description="Run tools without asking", meta=META
            ),
        ],
        category="mode",
    ),
    p.SessionConfigOption(
        id="model",
        name="Model",
        current_value="gpt-x",
        options=[p.SessionConfigSelectOption(value="gpt-x", name="gpt-x")],
        description="The model that answers",
        category="model",
        meta=META,
    ),
]
BOOLEAN_OPTION = p.SessionConfigBooleanOption(
    id="allow_outside_workspace",
    name="Work outside the workspace",
    current_value=False,
    description="Let tools work outside the session's directories",
    category="_workspace",
    meta=META,
)
"""A boolean option: only for clients that set ``session.configOptions.boolean``."""
TOOL_CALL_UPDATE = p.ToolCallUpdate(
    tool_call_id="call-1",
    title="Edit main.py",
    kind="edit",
    status="pending",
    content=[TOOL_CALL_CONTENT[3]],
    locations=LOCATIONS,
    raw_input={"path": "main.py"},
)

SESSION_UPDATES: list[Sample] = [
    *[
        _update(f"agent_message_chunk/{block.type}/{i}", p.AgentMessageChunk(content=block))
        for i, block in enumerate(CONTENT_BLOCKS)
    ],
    _update(
        "agent_message_chunk/message_id",
        p.AgentMessageChunk(content=TEXT, message_id="m-1", meta=META),
    ),
    _update("user_message_chunk", p.UserMessageChunk(content=TEXT)),
    _update("user_message_chunk/full", p.UserMessageChunk(content=TEXT, message_id="m-0")),
    _update("agent_thought_chunk", p.AgentThoughtChunk(content=TEXT)),
    _update("tool_call/minimal", p.ToolCallStart(tool_call_id="call-1", title="Run ls")),
    *[
        _update(
            f"tool_call/content/{c.type}/{i}",
            p.ToolCallStart(tool_call_id=f"call-{i}", title="t", content=[c]),
        )
        for i, c in enumerate(TOOL_CALL_CONTENT)
    ],
    _update(
        "tool_call/full",
        p.ToolCallStart(
            tool_call_id="call-9",
            title="Run `ls -la`",
            kind="execute",
            status="in_progress",
            content=TOOL_CALL_CONTENT,
            locations=LOCATIONS,
            raw_input={"command": "ls -la", "timeout": 10},
            raw_output=["not", "yet"],
            name="shell",
            meta={"terminal_info": {"terminal_id": "term-1", "cwd": "/w"}},
        ),
    ),
    _update("tool_call_update/minimal", p.ToolCallProgress(tool_call_id="call-1")),
    _update(
        "tool_call_update/clear_content",
        p.ToolCallProgress(tool_call_id="call-1", status="failed", content=[]),
    ),
    _update(
        "tool_call_update/full",
        p.ToolCallProgress(
            tool_call_id="call-9",
            title="Ran `ls -la`",
            kind="execute",
            status="completed",
            content=[TOOL_CALL_CONTENT[0]],
            locations=[],
            raw_input={"command": "ls -la"},
            raw_output={"exit_code": 0},
            name="shell",
            meta={"terminal_exit": {"terminal_id": "term-1", "exit_code": 0}},
        ),
    ),
    _update(
        "plan",
        p.Plan(
            entries=[
                p.PlanEntry(content="Read the code", priority="high", status="completed"),
                p.PlanEntry(content="Fix it", priority="medium", status="in_progress", meta=META),
                p.PlanEntry(content="Test", priority="low", status="pending"),
            ],
            meta=META,
        ),
    ),
    _update("plan/empty", p.Plan(entries=[])),
    _update(
        "available_commands_update",
        p.AvailableCommandsUpdate(
            available_commands=[
                p.AvailableCommand(name="help", description="Show help"),
                p.AvailableCommand(
                    name="run",
                    description="Run a tool",
                    input=p.AvailableCommandInput(hint="tool name", meta=META),
                    meta=META,
                ),
            ]
        ),
    ),
    _update("current_mode_update", p.CurrentModeUpdate(current_mode_id="code", meta=META)),
    _update("config_option_update", p.ConfigOptionUpdate(config_options=CONFIG_OPTIONS, meta=META)),
    _update("session_info_update", p.SessionInfoUpdate()),
    _update(
        "session_info_update/full",
        p.SessionInfoUpdate(title="Fix the bug", updated_at="2026-11-30T12:00:00Z", meta=META),
    ),
    _update("usage_update", p.UsageUpdate(used=1200, size=128000)),
    _update(
        "usage_update/cost",
        p.UsageUpdate(
            used=1200, size=128000, cost=p.Cost(amount=0.0125, currency="USD", meta=META), meta=META
        ),
    ),
    *[
        _update(f"notice/{severity}", p.NoticeUpdate(severity=severity, title="MCP server failed"))
        for severity in ("info", "warning", "error")
    ],
    _update(
        "notice/full",
        p.NoticeUpdate(
            severity="warning", title="Retrying", description="429 from the endpoint", meta=META
        ),
    ),
    *[
        _update(
            f"compaction_update/{status}", p.CompactionUpdate(compaction_id="c1", status=status)
        )
        for status in ("in_progress", "completed", "failed", "cancelled")
    ],
    _update(
        "compaction_update/full",
        p.CompactionUpdate(
            compaction_id="c1", status="failed", summary=[TEXT], error="too long", meta=META
        ),
    ),
    _update(
        "compaction_summary_chunk",
        p.CompactionSummaryChunk(compaction_id="c1", content=TEXT, meta=META),
    ),
    Sample(
        "session_notification/meta",
        p.SessionNotification(
            session_id="sess-1", update=p.AgentThoughtChunk(content=TEXT), meta=META
        ),
        "agent_notification",
        p.SESSION_UPDATE,
    ),
]

AGENT_RESULTS: list[Sample] = [
    Sample(
        "initialize/minimal", p.InitializeResponse(protocol_version=1), "agent_result", p.INITIALIZE
    ),
    Sample(
        "initialize/full",
        p.InitializeResponse(
            protocol_version=p.PROTOCOL_VERSION,
            agent_capabilities=p.AgentCapabilities(
                load_session=True,
                prompt_capabilities=p.PromptCapabilities(
                    image=True, audio=False, embedded_context=True, meta=META
                ),
                mcp_capabilities=p.McpCapabilities(http=True, sse=False, meta=META),
                session_capabilities=p.SessionCapabilities(
                    list=p.SessionListCapabilities(meta=META),
                    resume=p.SessionResumeCapabilities(meta=META),
                    close=p.SessionCloseCapabilities(meta=META),
                    delete=p.SessionDeleteCapabilities(meta=META),
                    additional_directories=p.SessionAdditionalDirectoriesCapabilities(meta=META),
                    meta=META,
                ),
                auth=p.AgentAuthCapabilities(logout=p.LogoutCapabilities(meta=META), meta=META),
                meta=META,
            ),
            auth_methods=[
                p.AuthMethodAgent(id="token", name="API token"),
                p.AuthMethodAgent(id="oauth", name="OAuth", description="Browser login", meta=META),
                p.AuthMethodTerminal(id="login", name="Log in"),
                p.AuthMethodTerminal(
                    id="login-env",
                    name="Log in (staging)",
                    description="Interactive set-up in a terminal",
                    args=["login", "--staging"],
                    env={"APP_ENV": "staging", "EMPTY": ""},
                    meta=META,
                ),
            ],
            agent_info=p.Implementation(
                name="acp-sidecar", version="0.1.0", title="ACP Sidecar", meta=META
            ),
            meta=META,
        ),
        "agent_result",
        p.INITIALIZE,
    ),
    Sample("authenticate", p.AuthenticateResponse(), "agent_result", p.AUTHENTICATE),
    Sample("authenticate/meta", p.AuthenticateResponse(meta=META), "agent_result", p.AUTHENTICATE),
    Sample("logout", p.LogoutResponse(), "agent_result", p.LOGOUT),
    Sample("logout/meta", p.LogoutResponse(meta=META), "agent_result", p.LOGOUT),
    Sample("session/new", p.NewSessionResponse(session_id="sess-1"), "agent_result", p.SESSION_NEW),
    Sample(
        "session/new/modes",
        p.NewSessionResponse(session_id="sess-1", modes=MODES, meta=META),
        "agent_result",
        p.SESSION_NEW,
    ),
    Sample("session/load", p.LoadSessionResponse(), "agent_result", p.SESSION_LOAD),
    Sample(
        "session/load/modes",
        p.LoadSessionResponse(modes=MODES, meta=META),
        "agent_result",
        p.SESSION_LOAD,
    ),
    Sample(
        "session/list/empty", p.ListSessionsResponse(sessions=[]), "agent_result", p.SESSION_LIST
    ),
    Sample(
        "session/list",
        p.ListSessionsResponse(
            sessions=[
                p.SessionInfo(session_id="s1", cwd="/w"),
                p.SessionInfo(
                    session_id="s2",
                    cwd="/w",
                    title="Fix the bug",
                    updated_at="2026-11-30T12:00:00Z",
                    additional_directories=["/lib"],
                    meta=META,
                ),
            ],
            next_cursor="c2",
            meta=META,
        ),
        "agent_result",
        p.SESSION_LIST,
    ),
    Sample("session/set_mode", p.SetSessionModeResponse(), "agent_result", p.SESSION_SET_MODE),
    Sample(
        "session/new/config_options",
        p.NewSessionResponse(session_id="sess-1", modes=MODES, config_options=CONFIG_OPTIONS),
        "agent_result",
        p.SESSION_NEW,
    ),
    Sample(
        "session/load/config_options",
        p.LoadSessionResponse(config_options=CONFIG_OPTIONS),
        "agent_result",
        p.SESSION_LOAD,
    ),
    Sample("session/resume", p.ResumeSessionResponse(), "agent_result", "session/resume"),
    Sample(
        "session/resume/full",
        p.ResumeSessionResponse(modes=MODES, config_options=CONFIG_OPTIONS, meta=META),
        "agent_result",
        "session/resume",
    ),
    Sample("session/close", p.CloseSessionResponse(meta=META), "agent_result", "session/close"),
    Sample("session/delete", p.DeleteSessionResponse(meta=META), "agent_result", "session/delete"),
    Sample(
        "session/set_config_option",
        p.SetSessionConfigOptionResponse(config_options=CONFIG_OPTIONS, meta=META),
        "agent_result",
        "session/set_config_option",
    ),
    Sample(
        "session/set_config_option/boolean",
        p.SetSessionConfigOptionResponse(config_options=[*CONFIG_OPTIONS, BOOLEAN_OPTION]),
        "agent_result",
        "session/set_config_option",
    ),
    *[
        Sample(
            f"session/prompt/{reason}",
            p.PromptResponse(stop_reason=reason),
            "agent_result",
            p.SESSION_PROMPT,
        )
        for reason in ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")
    ],
    Sample(
        "session/prompt/meta",
        p.PromptResponse(stop_reason="end_turn", meta=META),
        "agent_result",
        p.SESSION_PROMPT,
    ),
]

AGENT_REQUESTS: list[Sample] = [
    Sample(
        "request_permission",
        p.RequestPermissionRequest(
            session_id="sess-1",
            tool_call=TOOL_CALL_UPDATE,
            options=[
                p.PermissionOption(option_id="allow-once", name="Allow once", kind="allow_once"),
                p.PermissionOption(option_id="allow-always", name="Always", kind="allow_always"),
                p.PermissionOption(option_id="reject-once", name="Reject", kind="reject_once"),
                p.PermissionOption(
                    option_id="reject-always", name="Never", kind="reject_always", meta=META
                ),
            ],
            meta=META,
        ),
        "agent_request",
        p.SESSION_REQUEST_PERMISSION,
    ),
    Sample(
        "request_permission/minimal_tool_call",
        p.RequestPermissionRequest(
            session_id="sess-1",
            tool_call=p.ToolCallUpdate(tool_call_id="call-1"),
            options=[p.PermissionOption(option_id="ok", name="OK", kind="allow_once")],
        ),
        "agent_request",
        p.SESSION_REQUEST_PERMISSION,
    ),
    Sample(
        "read_text_file",
        p.ReadTextFileRequest(session_id="sess-1", path="/w/a.py"),
        "agent_request",
        p.FS_READ_TEXT_FILE,
    ),
    Sample(
        "read_text_file/range",
        p.ReadTextFileRequest(session_id="sess-1", path="/w/a.py", line=10, limit=5, meta=META),
        "agent_request",
        p.FS_READ_TEXT_FILE,
    ),
    Sample(
        "write_text_file",
        p.WriteTextFileRequest(session_id="sess-1", path="/w/a.py", content="x = 1\n", meta=META),
        "agent_request",
        p.FS_WRITE_TEXT_FILE,
    ),
    Sample(
        "elicitation/form",
        p.CreateElicitationRequest(
            session_id="sess-1",
            message="Which branch?",
            mode="form",
            requested_schema={
                "type": "object",
                "properties": {"branch": {"type": "string", "title": "Branch"}},
                "required": ["branch"],
            },
            tool_call_id="call-1",
            meta=META,
        ),
        "agent_request",
        p.ELICITATION_CREATE,
    ),
    Sample(
        "elicitation/url",
        p.CreateElicitationRequest(
            session_id="sess-1",
            message="Sign in to continue",
            mode="url",
            elicitation_id="el-1",
            url="https://example.com/login",
        ),
        "agent_request",
        p.ELICITATION_CREATE,
    ),
    Sample(
        "cancel_request",
        p.CancelRequestNotification(request_id=12),
        "agent_notification",
        p.CANCEL_REQUEST,
    ),
    Sample(
        "cancel_request/string_id",
        p.CancelRequestNotification(request_id="r-1", meta=META),
        "agent_notification",
        p.CANCEL_REQUEST,
    ),
    Sample(
        "cancel_request/null_id",
        p.CancelRequestNotification(request_id=None),
        "agent_notification",
        p.CANCEL_REQUEST,
    ),
]

CLIENT_MESSAGES: list[Sample] = [
    Sample(
        "initialize/minimal",
        p.InitializeRequest(protocol_version=1),
        "client_request",
        p.INITIALIZE,
    ),
    Sample(
        "initialize/full",
        p.InitializeRequest(
            protocol_version=1,
            client_capabilities=p.ClientCapabilities(
                fs=p.FileSystemCapability(read_text_file=True, write_text_file=True, meta=META),
                terminal=True,
                elicitation=p.ElicitationCapabilities(form={}, url={}, meta=META),
                session=p.ClientSessionCapabilities(
                    compaction={}, config_options={"boolean": {}}, notices={}, meta=META
                ),
                auth=p.AuthCapabilities(terminal=True, meta=META),
                meta={"terminal_output": True, "terminal-auth": True},
            ),
            client_info=p.Implementation(name="zed", version="0.200.0", title="Zed"),
            meta=META,
        ),
        "client_request",
        p.INITIALIZE,
    ),
    Sample(
        "authenticate",
        p.AuthenticateRequest(method_id="token", meta=META),
        "client_request",
        p.AUTHENTICATE,
    ),
    Sample("logout", p.LogoutRequest(), "client_request", p.LOGOUT),
    Sample("logout/meta", p.LogoutRequest(meta=META), "client_request", p.LOGOUT),
    Sample("session/new", p.NewSessionRequest(cwd="/w"), "client_request", p.SESSION_NEW),
    Sample(
        "session/new/full",
        p.NewSessionRequest(
            cwd="/w",
            mcp_servers=[
                {"name": "fs", "command": "/bin/mcp-fs", "args": ["--root", "/w"], "env": []},
                {"type": "http", "name": "web", "url": "https://mcp.example", "headers": []},
            ],
            additional_directories=["/lib"],
            meta=META,
        ),
        "client_request",
        p.SESSION_NEW,
    ),
    Sample(
        "session/load",
        p.LoadSessionRequest(session_id="sess-1", cwd="/w", meta=META),
        "client_request",
        p.SESSION_LOAD,
    ),
    Sample(
        "session/resume",
        p.ResumeSessionRequest(
            session_id="sess-1",
            cwd="/w",
            additional_directories=["/lib"],
            mcp_servers=[],
            meta=META,
        ),
        "client_request",
        "session/resume",
    ),
    Sample(
        "session/close",
        p.CloseSessionRequest(session_id="sess-1", meta=META),
        "client_request",
        "session/close",
    ),
    Sample(
        "session/delete",
        p.DeleteSessionRequest(session_id="sess-1", meta=META),
        "client_request",
        "session/delete",
    ),
    Sample(
        "session/set_config_option",
        p.SetSessionConfigOptionRequest(
            session_id="sess-1", config_id="model", value="gpt-x", meta=META
        ),
        "client_request",
        "session/set_config_option",
    ),
    Sample(
        "session/set_config_option/boolean",
        p.SetSessionConfigOptionRequest(
            session_id="sess-1", config_id="allow_outside_workspace", value=True, type="boolean"
        ),
        "client_request",
        "session/set_config_option",
    ),
    Sample(
        "session/set_config_option/id",
        p.SetSessionConfigOptionRequest(
            session_id="sess-1", config_id="mode", value="auto", type="id"
        ),
        "client_request",
        "session/set_config_option",
    ),
    Sample("session/list", p.ListSessionsRequest(), "client_request", p.SESSION_LIST),
    Sample(
        "session/list/full",
        p.ListSessionsRequest(cwd="/w", cursor="c2", meta=META),
        "client_request",
        p.SESSION_LIST,
    ),
    Sample(
        "session/set_mode",
        p.SetSessionModeRequest(session_id="sess-1", mode_id="code", meta=META),
        "client_request",
        p.SESSION_SET_MODE,
    ),
    Sample(
        "session/prompt",
        p.PromptRequest(session_id="sess-1", prompt=CONTENT_BLOCKS, meta=META),
        "client_request",
        p.SESSION_PROMPT,
    ),
    Sample(
        "session/cancel",
        p.CancelNotification(session_id="sess-1", meta=META),
        "client_notification",
        p.SESSION_CANCEL,
    ),
    Sample(
        "request_permission/selected",
        p.RequestPermissionResponse(outcome=p.SelectedPermissionOutcome(option_id="allow-once")),
        "client_result",
        p.SESSION_REQUEST_PERMISSION,
    ),
    Sample(
        "request_permission/selected_meta",
        p.RequestPermissionResponse(
            outcome=p.SelectedPermissionOutcome(option_id="allow-once", meta=META), meta=META
        ),
        "client_result",
        p.SESSION_REQUEST_PERMISSION,
    ),
    Sample(
        "request_permission/cancelled",
        p.RequestPermissionResponse(outcome=p.CancelledPermissionOutcome()),
        "client_result",
        p.SESSION_REQUEST_PERMISSION,
    ),
    Sample(
        "read_text_file",
        p.ReadTextFileResponse(content="line 1\nline 2\n", meta=META),
        "client_result",
        p.FS_READ_TEXT_FILE,
    ),
    Sample("write_text_file", p.WriteTextFileResponse(), "client_result", p.FS_WRITE_TEXT_FILE),
    Sample(
        "elicitation/accept",
        p.CreateElicitationResponse(action="accept", content={"branch": "main", "n": 2}),
        "client_result",
        p.ELICITATION_CREATE,
    ),
    Sample(
        "elicitation/decline",
        p.CreateElicitationResponse(action="decline", meta=META),
        "client_result",
        p.ELICITATION_CREATE,
    ),
]

UNSTABLE_SAMPLES: list[Sample] = [
    # Only the unstable schema has these (tests/server/test_fork.py validates them there). No
    # systemPrompt: the Python SDK 0.12.1 drops it (test_fork.py decodes it).
    Sample(
        "session/fork",
        p.ForkSessionRequest(
            session_id="sess-1",
            cwd="/w",
            mcp_servers=[],
            additional_directories=["/lib"],
            meta=META,
        ),
        "client_request",
        "session/fork",
    ),
    Sample(
        "session/fork", p.ForkSessionResponse(session_id="sess-2"), "agent_result", "session/fork"
    ),
    Sample(
        "session/fork (all)",
        p.ForkSessionResponse(
            session_id="sess-2", modes=MODES, config_options=CONFIG_OPTIONS, meta=META
        ),
        "agent_result",
        "session/fork",
    ),
    Sample(
        "initialize (fork)",
        p.InitializeResponse(
            protocol_version=p.PROTOCOL_VERSION,
            agent_capabilities=p.AgentCapabilities(
                session_capabilities=p.SessionCapabilities(
                    fork=p.SessionForkCapabilities(meta=META)
                )
            ),
        ),
        "agent_result",
        p.INITIALIZE,
    ),
]
UNSTABLE_TYPES: frozenset[type] = frozenset(
    {p.ForkSessionRequest, p.ForkSessionResponse, p.SessionForkCapabilities}
)
"""Wire types only the unstable schema defines."""

AGENT_SAMPLES = SESSION_UPDATES + AGENT_RESULTS + AGENT_REQUESTS

PLAN_OPERATIONS = [
    _update(
        "plan_update/items",
        p.PlanUpdate(
            plan=p.PlanItems(
                plan_id="checklist",
                entries=[p.PlanEntry(content="Fix it", priority="high", status="pending")],
                meta=META,
            ),
            meta=META,
        ),
    ),
    _update(
        "plan_update/markdown",
        p.PlanUpdate(plan=p.PlanMarkdown(plan_id="markdown", content="# Plan\n", meta=META)),
    ),
    _update(
        "plan_update/markdown-path",
        p.PlanUpdate(plan=p.PlanMarkdown(plan_id="m", content="# P", path="/w/PLAN.md")),
    ),
    _update("plan_removed", p.PlanRemoved(plan_id="checklist", meta=META)),
]
"""Updates only the unstable schema (and the stable page) define: kept out of the samples
checked against the vendored stable schema and the SDK (``tests/agent/test_plan_operations.py``
checks them against the unstable one)."""
SUBAGENT_UPDATES = [
    _update(
        "subagent_update/announce",
        p.SubagentUpdate(
            session_id="sess-1~task~call_1",
            title="Read the parser",
            capabilities=p.SubagentSessionCapabilities(
                cancel=p.SessionCancelCapabilities(meta=META), meta=META
            ),
            state=p.SubagentState("running", meta=META),
            meta=META,
        ),
    ),
    _update(
        "subagent_update/idle",
        p.SubagentUpdate(
            session_id="sess-1~task~call_1", state=p.SubagentState("idle", stop_reason="end_turn")
        ),
    ),
    _update(
        "subagent_update/idle-with-usage",
        p.SubagentUpdate(
            session_id="sess-1~task~call_1",
            state=p.SubagentState(
                "idle",
                stop_reason="end_turn",
                usage=p.TokenUsage(
                    total_tokens=320, input_tokens=300, output_tokens=20, cached_read_tokens=100
                ),
            ),
        ),
    ),
    _update(
        "session_message",
        p.SessionMessage(
            message_id="m1",
            sender_session_id="sess-1",
            recipient_session_id="sess-1~task~call_1",
            meta=META,
        ),
    ),
    _update(
        "session_message_chunk",
        p.SessionMessageChunk(message_id="m1", content=p.TextContentBlock(text="Go."), meta=META),
    ),
    _update(
        "tool_call_update/session",
        p.ToolCallProgress(
            tool_call_id="call_1",
            content=[p.ToolCallSession(session_id="sess-1~task~call_1", meta=META)],
        ),
    ),
]
"""Subagents' updates: in the unstable schema only, the page's ``session`` card content in
neither (``tests/server/test_subagents.py`` checks them)."""
ALL_SAMPLES = AGENT_SAMPLES + CLIENT_MESSAGES + UNSTABLE_SAMPLES


def sample_id(sample: Sample) -> str:
    """A readable pytest id."""
    return f"{sample.kind}:{sample.name}"


def wire_types_in(value: Any) -> set[type]:
    """Every wire class appearing in ``value`` (nested values included)."""
    found: set[type] = set()
    if isinstance(value, p.WireType):
        found.add(type(value))
        for field in attrs.fields(type(value)):
            found |= wire_types_in(getattr(value, field.name))
    elif isinstance(value, list):
        for item in value:
            found |= wire_types_in(item)
    return found
