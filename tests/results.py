"""Reading a ``ToolExecutionResult`` in assertions: its text, its error, its meta.

One copy for every test that runs a tool, in process (the pipeline tests and the built-in
tools' tests alike). Each reader asserts the shape it relies on, so a result of the wrong
kind fails where it is read, with the result's text in the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_sidecar.tools import TextContent, ToolExecutionResult, ToolResult


def text(result: ToolExecutionResult) -> str:
    """The text of a result's content."""
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


def error_of(result: ToolExecutionResult) -> tuple[str, str]:
    """A failed result's error name and code."""
    assert result.is_error
    assert result.error is not None
    return (result.error.name, result.error.code)


def failure(result: ToolExecutionResult) -> tuple[str, str]:
    """``(code, message)`` of an error result."""
    assert result.is_error, text(result)
    assert result.error is not None
    return result.error.code, text(result)


def meta(result: ToolExecutionResult) -> Mapping[str, Any]:
    """The result's meta object (asserting it is one)."""
    assert isinstance(result.meta, dict), result.meta
    return result.meta


def outcome(result: ToolExecutionResult) -> ToolResult:
    """What ``present_result`` receives for ``result``."""
    return ToolResult(content=result.content, is_error=result.is_error, meta=result.meta)
