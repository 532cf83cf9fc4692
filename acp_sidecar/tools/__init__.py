"""The public surface of the tool pipeline: define tools, register them, run them.

``__all__`` is exactly what a tool author (definitions, arguments, output, cards, errors) and
a pipeline extender (registry, decisions, permissions) need; the rest is not advertised.
"""

from acp_sidecar.tools.args import validate_args
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.content import (
    AudioContent,
    BlobResource,
    ContentBlock,
    EmbeddedResourceContent,
    ImageContent,
    ResourceLinkContent,
    TextContent,
    TextResource,
    ToolOutput,
)
from acp_sidecar.tools.context import (
    EditorFiles,
    SessionPermissions,
    ToolContext,
    WorkspaceRoot,
    tool_context,
)
from acp_sidecar.tools.decisions import (
    Accept,
    Allow,
    Ask,
    Block,
    Deny,
    PermissionDecision,
    PostToolDecision,
    PreToolDecision,
)
from acp_sidecar.tools.definition import ToolDefinition, ToolReturn, define_tool
from acp_sidecar.tools.errors import (
    OutputSchemaError,
    ToolArgsError,
    ToolBlockedError,
    ToolCancelledError,
    ToolDeniedError,
    ToolError,
    ToolExecutionError,
    ToolInputError,
    ToolListenerError,
    ToolNotFoundError,
    ToolRegistrationError,
    ToolResultError,
    ToolTimeoutError,
)
from acp_sidecar.tools.execution import ToolExecution, ToolExecutionInput, ToolExecutionToken
from acp_sidecar.tools.json_values import FrozenDict, JsonValueError
from acp_sidecar.tools.presentation import (
    DiffCallView,
    DiffResultView,
    FileDiff,
    FileLocation,
    GenericCallView,
    GenericResultView,
    PlanItem,
    PlanResultView,
    TerminalCallView,
    TerminalResultView,
    ToolCallKind,
    ToolCallView,
    ToolResult,
    ToolResultView,
)
from acp_sidecar.tools.registry import ToolRegistry
from acp_sidecar.tools.result import ToolErrorInfo, ToolExecutionResult
from acp_sidecar.tools.schema import (
    SchemaProp,
    SchemaSpec,
    SchemaSpecError,
    schema_spec_to_json_schema,
)
from acp_sidecar.tools.structured import (
    StructuredValueError,
    assert_supported_output_schema,
    validate_structured_value,
)
from acp_sidecar.tools.workspace import workspace_path

__all__ = [
    "Accept",
    "Allow",
    "Ask",
    "AudioContent",
    "BlobResource",
    "Block",
    "CancelSignal",
    "ContentBlock",
    "Deny",
    "DiffCallView",
    "DiffResultView",
    "EditorFiles",
    "EmbeddedResourceContent",
    "FileDiff",
    "FileLocation",
    "FrozenDict",
    "GenericCallView",
    "GenericResultView",
    "ImageContent",
    "JsonValueError",
    "OutputSchemaError",
    "PermissionDecision",
    "PlanItem",
    "PlanResultView",
    "PostToolDecision",
    "PreToolDecision",
    "ResourceLinkContent",
    "SchemaProp",
    "SchemaSpec",
    "SchemaSpecError",
    "SessionPermissions",
    "StructuredValueError",
    "TerminalCallView",
    "TerminalResultView",
    "TextContent",
    "TextResource",
    "ToolArgsError",
    "ToolBlockedError",
    "ToolCallKind",
    "ToolCallView",
    "ToolCancelledError",
    "ToolContext",
    "ToolDefinition",
    "ToolDeniedError",
    "ToolError",
    "ToolErrorInfo",
    "ToolExecution",
    "ToolExecutionError",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolExecutionToken",
    "ToolInputError",
    "ToolListenerError",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolResult",
    "ToolResultError",
    "ToolResultView",
    "ToolReturn",
    "ToolTimeoutError",
    "WorkspaceRoot",
    "assert_supported_output_schema",
    "define_tool",
    "schema_spec_to_json_schema",
    "tool_context",
    "validate_args",
    "validate_structured_value",
    "workspace_path",
]
