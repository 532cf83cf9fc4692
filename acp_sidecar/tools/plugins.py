"""Tools from the user's own code: ``--tools package.module:attr`` and the entry-point group.
Loading never raises for a bad plugin: one message per failure, the others still load.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import traceback
from collections.abc import Iterable

from acp_sidecar.tools.definition import ToolDefinition

logger = logging.getLogger(__name__)

_MACHINERY = (os.path.dirname(importlib.__file__), __file__)
"""Where the frames of importing itself are: importlib, and this module."""

ENTRY_POINT_GROUP = "acp_sidecar.tools"
"""The entry-point group installed packages offer tools in."""


class PluginError(Exception):
    """A tool source that could not be loaded; the message names it and says why."""


def _tools_of(value: object, source: str, *, call: bool = True) -> list[ToolDefinition]:
    if isinstance(value, ToolDefinition):
        return [value]
    if isinstance(value, list | tuple):
        wrong = [
            f"item {index} is {type(item).__name__}"
            for index, item in enumerate(value)
            if not isinstance(item, ToolDefinition)
        ]
        if wrong:
            raise PluginError(f"{source}: expected only ToolDefinitions, but {'; '.join(wrong)}")
        return list(value)
    if call and callable(value):
        try:
            produced = value()
        except Exception as exc:
            raise PluginError(f"{source}: calling it raised {type(exc).__name__}: {exc}") from exc
        return _tools_of(produced, f"{source}()", call=False)
    raise PluginError(
        f"{source}: expected a ToolDefinition, a list of them, or a callable returning "
        f"them; got {type(value).__name__}"
    )


def _import_failed(what: str, exc: Exception) -> PluginError:
    """The error for an import that raised ``exc``, with where (module invariants)."""
    logger.debug("%s:", what, exc_info=exc)
    said = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    place = _where(exc)
    at = f" (at {place})" if place is not None else ""
    return PluginError(f"{what}: {type(exc).__name__}: {said}{at}")


def _where(exc: Exception) -> str | None:
    """``file:line`` where an import failed: a syntax error's own, else the innermost frame in
    the plugin's own directory (not in a library it called); ``None`` when the import never
    reached the plugin's code (the module was not found)."""
    if isinstance(exc, SyntaxError) and exc.filename and not exc.filename.startswith("<"):
        return f"{exc.filename}:{exc.lineno}"
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith(("<frozen ", *_MACHINERY))
    ]
    if not frames:
        return None
    home = os.path.dirname(frames[0].filename) + os.sep  # the first frame is the module's own
    frame = [frame for frame in frames if frame.filename.startswith(home)][-1]
    return f"{frame.filename}:{frame.lineno}"


def load_tool_spec(spec: str) -> list[ToolDefinition]:
    """The tools named by ``"package.module:attr"`` (``attr`` may be dotted).

    Raises:
        PluginError: the spec is malformed, the module does not import, the attribute is
            missing, or it is not a tool source (see the module invariants).
    """
    module_name, colon, attr_path = spec.partition(":")
    if not colon or not module_name or not attr_path:
        raise PluginError(f"{spec!r}: expected MODULE:ATTR, e.g. my_tools.tools:all_tools")
    try:
        value: object = importlib.import_module(module_name)
    except Exception as exc:  # an import runs arbitrary code: any failure is the plugin's
        raise _import_failed(f"{spec}: cannot import {module_name}", exc) from exc
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError as exc:
            raise PluginError(f"{spec}: {module_name} has no attribute {attr_path!r}") from exc
    return _tools_of(value, spec)


def entry_point_tools() -> tuple[list[ToolDefinition], list[str]]:
    """The tools of every entry point in :data:`ENTRY_POINT_GROUP`, and one error per failure."""
    tools: list[ToolDefinition] = []
    errors: list[str] = []
    try:
        entry_points = sorted(
            importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name
        )
    except Exception as exc:  # broken distribution metadata
        return [], [f"entry points {ENTRY_POINT_GROUP}: cannot list them: {exc}"]
    for entry_point in entry_points:
        dist = getattr(entry_point, "dist", None)
        origin = f" (from {dist.name})" if dist is not None else ""
        source = f"entry point {entry_point.name} = {entry_point.value}{origin}"
        try:
            value = entry_point.load()
        except Exception as exc:
            errors.append(str(_import_failed(f"{source}: cannot load it", exc)))
            continue
        try:
            tools.extend(_tools_of(value, source))
        except PluginError as exc:
            errors.append(str(exc))
    return tools, errors


def load_plugins(
    specs: Iterable[str], *, entry_points: bool = True
) -> tuple[list[ToolDefinition], list[str]]:
    """The tools of every ``--tools`` spec, then of the entry points; and the errors.

    Never raises for a bad plugin: each failure is one message in the second list.
    """
    loaded: list[tuple[ToolDefinition, str]] = []
    errors: list[str] = []
    for spec in specs:
        try:
            loaded.extend((tool, spec) for tool in load_tool_spec(spec))
        except PluginError as exc:
            errors.append(str(exc))
    if entry_points:
        tools, failures = entry_point_tools()
        loaded.extend((tool, f"entry point group {ENTRY_POINT_GROUP}") for tool in tools)
        errors.extend(failures)
    seen: dict[str, str] = {}
    result: list[ToolDefinition] = []
    for tool, source in loaded:
        if tool.name in seen:
            errors.append(
                f"{source}: a tool named {tool.name!r} was already loaded from "
                f"{seen[tool.name]}; skipped"
            )
            continue
        seen[tool.name] = source
        result.append(tool)
    return result, errors
