"""The tool set a server offers: built-in tools plus the user's own, in one registry.

Built on first use, so loading the tools stays out of the cold start. A tool that fails to
load or register is logged and skipped. Every registry carries the bridge's policy.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_sidecar.tools.definition import ToolDefinition
    from acp_sidecar.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)


class ToolsProvider:
    """Makes the server's :class:`ToolRegistry` when it is first asked for."""

    def __init__(
        self,
        specs: Sequence[str] = (),
        *,
        builtins: bool = True,
        entry_points: bool = True,
        extra: Sequence[ToolDefinition] = (),
    ) -> None:
        self._specs = tuple(specs)
        self._builtins = builtins
        self._entry_points = entry_points
        self._extra = tuple(extra)
        self._registry: ToolRegistry | None = None
        self._building = threading.Lock()
        self.problems: list[str] = []
        """What could not be loaded or registered (also logged)."""

    @property
    def registry(self) -> ToolRegistry:
        """The registry, built on first use (once, even when a worker thread builds it while
        the event loop asks for it: the loop then waits for that build)."""
        if self._registry is None:
            with self._building:
                if self._registry is None:
                    self._registry = self._build()
        return self._registry

    def session_registry(
        self, extra: Sequence[ToolDefinition]
    ) -> tuple[ToolRegistry, tuple[str, ...]]:
        """A registry of the server's tools followed by ``extra`` (one session's own), with
        the bridge's policy; and a message per tool of ``extra`` that could not be registered
        (skipped, and logged). The server's registry is not changed."""
        from acp_sidecar.tools.errors import ToolRegistrationError

        registry = _policed_registry()
        for definition in self.registry.visible():
            registry.register(definition)  # registered once already: it cannot fail
        problems: list[str] = []
        for definition in extra:
            try:
                registry.register(definition)
            except ToolRegistrationError as exc:
                problems.append(f"skipped a tool: {exc}")
                logger.error("skipped a session's tool: %s", exc)
        return registry, tuple(problems)

    def _build(self) -> ToolRegistry:
        from acp_sidecar.tools.errors import ToolRegistrationError

        registry = _policed_registry()
        definitions: list[ToolDefinition] = []
        if self._builtins:
            from acp_sidecar.tools.builtin import builtin_tools

            definitions.extend(builtin_tools())
        if self._specs or self._entry_points:
            from acp_sidecar.tools.plugins import load_plugins

            loaded, errors = load_plugins(self._specs, entry_points=self._entry_points)
            definitions.extend(loaded)
            for error in errors:
                self._problem(f"skipped a tool plugin: {error}")
        definitions.extend(self._extra)
        for definition in definitions:
            try:
                registry.register(definition)
            except ToolRegistrationError as exc:
                self._problem(f"skipped a tool: {exc}")
        return registry

    def _problem(self, message: str) -> None:
        self.problems.append(message)
        logger.error("%s", message)


def narrowed(
    registry: ToolRegistry,
    *,
    keep: Callable[[ToolDefinition], bool] | None = None,
    extra: Sequence[ToolDefinition] = (),
) -> ToolRegistry:
    """A registry of ``registry``'s tools that ``keep`` keeps (all without it), then those of
    ``extra`` whose name is free, with the bridge's policy (``registry`` is not changed)."""
    narrow = _policed_registry()
    for definition in registry.visible():
        if keep is None or keep(definition):
            narrow.register(definition)  # registered once already: it cannot fail
    for definition in extra:
        if narrow.get(definition.name) is None:
            narrow.register(definition)
    return narrow


def _policed_registry() -> ToolRegistry:
    """An empty registry with the bridge's policy installed."""
    from acp_sidecar.bridge.effects import keep_file_effects
    from acp_sidecar.bridge.policy import install_policy
    from acp_sidecar.tools.registry import ToolRegistry

    registry = ToolRegistry()
    install_policy(registry)
    registry.on_execute(keep_file_effects(registry.get))
    return registry
