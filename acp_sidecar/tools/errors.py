"""The tool pipeline's errors: each carries a stable ``code``; at the registry seam they become
``ToolErrorInfo`` values, so a failed call never fails a turn.
"""

from __future__ import annotations

from typing import ClassVar


class ToolError(Exception):
    """Base of the pipeline's errors. ``code`` is stable; the message is for the model."""

    code: ClassVar[str] = "TOOL_ERROR"

    @property
    def name(self) -> str:
        """The error's name as it travels in ``ToolErrorInfo.name``."""
        return type(self).__name__


class ToolArgsError(ToolError):
    """Model-generated arguments do not match the tool's parameters.

    The message lists every violation with its JSON-pointer path, one per line, so the model
    can correct all of them in one step.
    """

    code: ClassVar[str] = "INVALID_ARGS"

    def __init__(self, violations: list[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__("Invalid arguments:\n" + "\n".join(f"- {v}" for v in violations))


class ToolNotFoundError(ToolError):
    """No tool of that name is registered."""

    code: ClassVar[str] = "UNKNOWN_TOOL"


class ToolInputError(ToolError):
    """A call's input is malformed; rejected before any policy runs.

    Its arguments are not lossless JSON, or its name, signal or ``parent`` (which must be a
    :class:`~acp_sidecar.tools.execution.ToolExecutionToken`, never a live execution) has the
    wrong type.
    """

    code: ClassVar[str] = "INVALID_INPUT"


class ToolDeniedError(ToolError):
    """A pre-execute listener or a guard denied the call."""

    code: ClassVar[str] = "DENIED"


class ToolBlockedError(ToolError):
    """A post-execute listener blocked the result and replaced it with feedback."""

    code: ClassVar[str] = "BLOCKED"


class ToolTimeoutError(ToolError):
    """The call ran past its ``timeout_ms``; its signal was cancelled."""

    code: ClassVar[str] = "TIMEOUT"


class ToolCancelledError(ToolError):
    """The call's signal was cancelled from outside (``session/cancel``)."""

    code: ClassVar[str] = "CANCELLED"


class ToolListenerError(ToolError):
    """A pre-/post-execute listener, guard or execute wrapper raised."""

    code: ClassVar[str] = "LISTENER_FAILED"


class ToolResultError(ToolError):
    """The result (content, error, context, meta) does not round-trip through JSON.

    Also raised when a post-execute listener's decision carries ``additional_context`` that
    is not lossless JSON (the message names the listener).
    """

    code: ClassVar[str] = "INVALID_RESULT"


class ToolExecutionError(ToolError):
    """The tool's ``execute`` raised an exception that is not a :class:`ToolError`."""

    code: ClassVar[str] = "EXECUTION_FAILED"


class ToolRegistrationError(ToolError):
    """A definition cannot be registered (duplicate name, parameters not lossless JSON, …)."""

    code: ClassVar[str] = "INVALID_DEFINITION"


class OutputSchemaError(ToolError):
    """A structured-output schema uses something the validator does not enforce.

    The message lists every violation with its path.
    """

    code: ClassVar[str] = "INVALID_OUTPUT_SCHEMA"

    def __init__(self, violations: list[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__("Unsupported output schema:\n" + "\n".join(f"- {v}" for v in violations))
