"""The tool author's whole surface: define tools, register them, run them through the pipeline.

Everything a tool author needs is importable from here. Names are resolved lazily (PEP 562)
so that importing one submodule — the server needs only the cancellation signal to start —
does not pay for the whole package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_sidecar.tools.args import validate_args
    from acp_sidecar.tools.cancel import CancelSignal
    from acp_sidecar.tools.content import ContentBlock, ImageContent, TextContent, ToolOutput
    from acp_sidecar.tools.context import EditorFiles, ToolContext, tool_context
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
    from acp_sidecar.tools.execution import (
        ToolErrorInfo,
        ToolExecution,
        ToolExecutionInput,
        ToolExecutionResult,
        ToolExecutionToken,
    )
    from acp_sidecar.tools.json_values import FrozenDict
    from acp_sidecar.tools.presentation import (
        DiffCallView,
        DiffResultView,
        FileDiff,
        FileLocation,
        GenericCallView,
        GenericResultView,
        TerminalCallView,
        TerminalResultView,
        ToolCallKind,
        ToolCallView,
        ToolResult,
        ToolResultView,
    )
    from acp_sidecar.tools.registry import ToolRegistry
    from acp_sidecar.tools.schema import SchemaProp, SchemaSpec, schema_spec_to_json_schema
    from acp_sidecar.tools.structured import (
        StructuredValueError,
        assert_supported_output_schema,
        validate_structured_value,
    )

_WHERE: dict[str, str] = {
    "CancelSignal": "cancel",
    "ContentBlock": "content",
    "ImageContent": "content",
    "TextContent": "content",
    "ToolOutput": "content",
    "EditorFiles": "context",
    "ToolContext": "context",
    "tool_context": "context",
    "Accept": "decisions",
    "Allow": "decisions",
    "Ask": "decisions",
    "Block": "decisions",
    "Deny": "decisions",
    "PermissionDecision": "decisions",
    "PostToolDecision": "decisions",
    "PreToolDecision": "decisions",
    "ToolDefinition": "definition",
    "ToolReturn": "definition",
    "define_tool": "definition",
    "OutputSchemaError": "errors",
    "ToolArgsError": "errors",
    "ToolBlockedError": "errors",
    "ToolCancelledError": "errors",
    "ToolDeniedError": "errors",
    "ToolError": "errors",
    "ToolExecutionError": "errors",
    "ToolInputError": "errors",
    "ToolListenerError": "errors",
    "ToolNotFoundError": "errors",
    "ToolRegistrationError": "errors",
    "ToolResultError": "errors",
    "ToolTimeoutError": "errors",
    "ToolErrorInfo": "execution",
    "ToolExecution": "execution",
    "ToolExecutionInput": "execution",
    "ToolExecutionResult": "execution",
    "ToolExecutionToken": "execution",
    "FrozenDict": "json_values",
    "DiffCallView": "presentation",
    "DiffResultView": "presentation",
    "FileDiff": "presentation",
    "FileLocation": "presentation",
    "GenericCallView": "presentation",
    "GenericResultView": "presentation",
    "TerminalCallView": "presentation",
    "TerminalResultView": "presentation",
    "ToolCallKind": "presentation",
    "ToolCallView": "presentation",
    "ToolResult": "presentation",
    "ToolResultView": "presentation",
    "ToolRegistry": "registry",
    "SchemaProp": "schema",
    "SchemaSpec": "schema",
    "schema_spec_to_json_schema": "schema",
    "validate_args": "args",
    "StructuredValueError": "structured",
    "assert_supported_output_schema": "structured",
    "validate_structured_value": "structured",
}

__all__ = [
    "Accept",
    "Allow",
    "Ask",
    "Block",
    "CancelSignal",
    "ContentBlock",
    "Deny",
    "DiffCallView",
    "DiffResultView",
    "EditorFiles",
    "FileDiff",
    "FileLocation",
    "FrozenDict",
    "GenericCallView",
    "GenericResultView",
    "ImageContent",
    "OutputSchemaError",
    "PermissionDecision",
    "PostToolDecision",
    "PreToolDecision",
    "SchemaProp",
    "SchemaSpec",
    "StructuredValueError",
    "TerminalCallView",
    "TerminalResultView",
    "TextContent",
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
    "assert_supported_output_schema",
    "define_tool",
    "schema_spec_to_json_schema",
    "tool_context",
    "validate_args",
    "validate_structured_value",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'acp_sidecar.tools' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"acp_sidecar.tools.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
