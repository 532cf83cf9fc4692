"""The public surface of the tool pipeline: define tools, register them, run them.

``__all__`` is exactly what a tool author (definitions, arguments, output, cards, errors) and
a pipeline extender (registry, decisions, permissions) need; the rest is not advertised.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from acp_sidecar.tools.effects import FileEffect, FileEffectKind
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

# Each name loads with its module on first use: the serving sidecar imports a few of these
# modules at start (through ``tools.builtin.shell.reaper``), not the whole pipeline.
_WHERE = {
    "Accept": "decisions",
    "Allow": "decisions",
    "Ask": "decisions",
    "AudioContent": "content",
    "BlobResource": "content",
    "Block": "decisions",
    "CancelSignal": "cancel",
    "ContentBlock": "content",
    "Deny": "decisions",
    "DiffCallView": "presentation",
    "DiffResultView": "presentation",
    "EditorFiles": "context",
    "EmbeddedResourceContent": "content",
    "FileDiff": "presentation",
    "FileEffect": "effects",
    "FileEffectKind": "effects",
    "FileLocation": "presentation",
    "FrozenDict": "json_values",
    "GenericCallView": "presentation",
    "GenericResultView": "presentation",
    "ImageContent": "content",
    "JsonValueError": "json_values",
    "OutputSchemaError": "errors",
    "PermissionDecision": "decisions",
    "PlanItem": "presentation",
    "PlanResultView": "presentation",
    "PostToolDecision": "decisions",
    "PreToolDecision": "decisions",
    "ResourceLinkContent": "content",
    "SchemaProp": "schema",
    "SchemaSpec": "schema",
    "SchemaSpecError": "schema",
    "SessionPermissions": "context",
    "StructuredValueError": "structured",
    "TerminalCallView": "presentation",
    "TerminalResultView": "presentation",
    "TextContent": "content",
    "TextResource": "content",
    "ToolArgsError": "errors",
    "ToolBlockedError": "errors",
    "ToolCallKind": "presentation",
    "ToolCallView": "presentation",
    "ToolCancelledError": "errors",
    "ToolContext": "context",
    "ToolDefinition": "definition",
    "ToolDeniedError": "errors",
    "ToolError": "errors",
    "ToolErrorInfo": "result",
    "ToolExecution": "execution",
    "ToolExecutionError": "errors",
    "ToolExecutionInput": "execution",
    "ToolExecutionResult": "result",
    "ToolExecutionToken": "execution",
    "ToolInputError": "errors",
    "ToolListenerError": "errors",
    "ToolNotFoundError": "errors",
    "ToolOutput": "content",
    "ToolRegistrationError": "errors",
    "ToolRegistry": "registry",
    "ToolResult": "presentation",
    "ToolResultError": "errors",
    "ToolResultView": "presentation",
    "ToolReturn": "definition",
    "ToolTimeoutError": "errors",
    "WorkspaceRoot": "context",
    "assert_supported_output_schema": "structured",
    "define_tool": "definition",
    "schema_spec_to_json_schema": "schema",
    "tool_context": "context",
    "validate_args": "args",
    "validate_structured_value": "structured",
    "workspace_path": "workspace",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


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
    "FileEffect",
    "FileEffectKind",
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


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})  # the lazy names too, before they are loaded
