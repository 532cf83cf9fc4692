"""The settings a running server uses, and re-reading the config file without a restart.

:class:`ServeSettings` is made once by ``command_line.serving`` and refreshed on
``authenticate`` and each ``session/new``, ``load`` and ``resume``: the file is re-read only when
its stamp changed, layered under the same command line and the current environment. What needs a
restart (:data:`RESTART_KEYS`) is logged once per value. A file that cannot be used changes
nothing (the last good settings stay); its problems are shown after every session until fixed.
No message or log line holds a key's value. After :meth:`ServeSettings.log_out` no model is
configured until a re-read finds the endpoint a key. Nothing here imports more than the
settings package and the model's configuration.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

import attrs

from acp_sidecar.agent.model.budget import KINDS, NO_LIMITS, Limits
from acp_sidecar.bridge.modes import DEFAULT_MODE, MODE_IDS, ModeId
from acp_sidecar.bridge.notices import UserMessage
from acp_sidecar.settings.keys import DEFAULTS, KEYS_BY_NAME
from acp_sidecar.settings.location import ConfigLocation
from acp_sidecar.settings.reading import (
    ConfigError,
    FileSettings,
    Problem,
    file_stamp,
    read_settings,
)
from acp_sidecar.text import shown_url
from acp_sidecar.values import Value

if TYPE_CHECKING:
    from acp_sidecar.agent.driver import DriverFactory
    from acp_sidecar.agent.model.config import ModelConfig
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.settings.layering import EndpointKey
    from acp_sidecar.tools.environment import ChildEnvironment

logger = logging.getLogger(__name__)

Stamp = tuple[int, int, int, int] | None
"""What :func:`~acp_sidecar.settings.reading.file_stamp` says of the file (``None``: none)."""

RESTART_KEYS: Final = ("tools", "store", "fsync", "log_level", "log_file", "pass_env")
"""Keys read once, at start: a change in the file takes effect at the next start."""

UNREAD: Final = (-1, -1, -1, -1)
"""A stamp no file has: the next :meth:`ServeSettings.refresh` reads the file whatever it is."""
OPENAI_API: Final = "OpenAI's API"
"""The endpoint named when no base URL is configured."""

MODEL_PROBLEM: Final = "acp-sidecar cannot use the configured model: "
"""How a model configuration that cannot work starts (every prompt answers with it too)."""


@attrs.frozen(repr=False, eq=False)
class LiveSettings(Value):
    """What the running server applies from the settings, each from its next use: a running
    turn keeps its model, a variable once hidden from children stays hidden."""

    model: ModelConfig | None
    """The model configured; ``None``: none (the console answers), or :attr:`model_problem`."""
    model_problem: str | None
    """Why the configured model cannot be used (every prompt answers with it)."""
    default_mode: ModeId
    """The mode new sessions start in."""
    allow_outside_workspace: bool
    """Whether tools may work outside the session's directories."""
    mcp_start_timeout: float
    """Seconds each MCP server gets to start."""
    secret_variable: str | None
    """The environment variable the endpoint's key is read from (hidden from children)."""
    budget: Limits = NO_LIMITS
    """The budget each session starts with (a loaded one keeps what its log set)."""


@attrs.frozen(repr=False, eq=False)
class Changed(Value):
    """What a re-read of the config file changed (the problems may be all of it)."""

    before: LiveSettings
    after: LiveSettings

    @property
    def model(self) -> bool:
        """Whether the model's configuration (or why it cannot be used) changed: the driver
        must be made again."""
        return (self.before.model, self.before.model_problem) != (
            self.after.model,
            self.after.model_problem,
        )


def _environ() -> Mapping[str, str]:
    return os.environ


class ServeSettings:
    """The settings of ``serve``, re-read from the config file when it changes."""

    def __init__(
        self,
        command_line: argparse.Namespace,
        location: ConfigLocation,
        file: FileSettings | None,
        file_problems: tuple[Problem, ...] = (),
        stamp: Stamp = None,
        *,
        driver_pinned: bool = False,
        environ: Callable[[], Mapping[str, str]] = _environ,
    ) -> None:
        """``file`` is what was read at start (``None``: it could not be used, for
        ``file_problems``); ``stamp`` the file's stamp taken before it was read;
        ``driver_pinned``: ``--driver`` was given (the driver is never replaced);
        ``environ`` gives the environment as it is now."""
        self._command_line = command_line
        self.location = location
        self._stamp = stamp
        self._environ = environ
        self.driver_pinned = driver_pinned
        self.file_problems = file_problems
        """Why the file cannot be used (empty: it can)."""
        self._file = file if file is not None else FileSettings(location)
        self._read_good = file is not None and file.exists
        """Whether the settings in force came from the file (not only from the start)."""
        self._told_restart: dict[str, object] = {}
        self._secrets: set[str] = set()
        self.logged_out = False
        """A ``logout`` removed the stored key and no key has been found since (the console
        answers meanwhile, whatever model is configured)."""
        layered = self._layer()
        self._started = {key: getattr(layered, key, None) for key in RESTART_KEYS}
        self.pass_env: tuple[str, ...] = tuple(getattr(layered, "pass_env", None) or ())

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServeSettings:
        """The settings of the command line ``cli.with_config_file`` completed."""
        file: FileSettings = args.config_file
        problems: tuple[Problem, ...] = tuple(args.config_problems)
        return cls(
            args.command_line,
            file.location,
            None if problems else file,
            problems,
            args.config_stamp,
            driver_pinned=bool(getattr(args, "driver", None)),
        )

    # ---- the state in force ----

    def _layer(self) -> argparse.Namespace:
        """Layer the file in force under the command line and the environment now, and
        settle :attr:`live`, :attr:`warnings` and :attr:`setting_problems` from it."""
        env = self._environ()
        layered, problems = layered_leniently(self._command_line, self._file, env)
        key: EndpointKey | None = getattr(layered, "endpoint_key", None)
        self.endpoint_key = key
        """The endpoint's key in force and where it comes from (never shown)."""
        base_url = getattr(layered, "base_url", None)
        self.endpoint = shown_url(base_url) if base_url else OPENAI_API
        """The configured endpoint, as the user is shown it (without credentials)."""
        live = live_settings(layered, env)
        if self.logged_out and key is not None and key.value is not None:
            self.logged_out = False  # a key again: configured, or from the environment
        if self.logged_out:
            live = attrs.evolve(live, model=None, model_problem=None)
        self.live = live
        if self.live.secret_variable is not None:
            self._secrets.add(self.live.secret_variable)
        self.setting_problems = problems
        """Bad values of variables (the message names the variable)."""
        self.warnings = self._file.warnings
        """The file's warnings: unknown keys. Shown once per connection: they change nothing,
        and repeating them on every session would teach the user to skip errors shown alike."""
        return layered

    @property
    def secret_variables(self) -> tuple[str, ...]:
        """Every variable the endpoint's key was read from since start (kept from children)."""
        return tuple(sorted(self._secrets))

    def child_environment(self) -> ChildEnvironment:
        """The rules child processes' environments follow (``pass_env`` as at start)."""
        from acp_sidecar.tools.environment import ChildEnvironment

        return ChildEnvironment.from_env(pass_env=self.pass_env, secrets=self.secret_variables)

    def driver_factory(self, tools: ToolsProvider) -> DriverFactory | None:
        """The driver the settings ask for: the model's, one that answers every prompt with
        why the model cannot be used, or ``None`` (the console)."""
        live = self.live
        if live.model_problem is not None:
            from acp_sidecar.agent.driver import MessageDriver

            message = live.model_problem
            return lambda: MessageDriver(message)
        if live.model is None:
            return None
        from acp_sidecar.agent.model import ModelDriver

        config = live.model
        return lambda: ModelDriver(config, lambda: tools.registry)

    # ---- telling ----

    def problems(self) -> tuple[UserMessage, ...]:
        """What the user is shown after every ``session/new`` (errors; empty: nothing)."""
        told: list[UserMessage] = []
        if self.file_problems:
            text = file_problem_text(self.file_problems, self._read_good)
            told.append(UserMessage("error", text))
        told.extend(
            UserMessage("error", f"A setting cannot be used: {problem}.")
            for problem in self.setting_problems
        )
        if self.live.model_problem is not None:
            told.append(UserMessage("error", f"{self.live.model_problem}."))
        return tuple(told)

    def warning_messages(self) -> tuple[UserMessage, ...]:
        """The file's warnings, one message each (the server shows each once)."""
        return tuple(
            UserMessage("warning", f"Config file: {_short(w)}.\n\nThe file: {w.path}")
            for w in self.warnings
        )

    def log_problems(self) -> None:
        """Log the problems and warnings (at start, and when a re-read changes them: the
        editor shows none of stderr)."""
        for message in (*self.problems(), *self.warning_messages()):
            level = logging.ERROR if message.severity == "error" else logging.WARNING
            logger.log(level, "%s", message.text)

    def log_out(self) -> None:
        """The stored key was removed: serve the console until a key is found, from the next
        :meth:`refresh` on (which reads the file again)."""
        self.logged_out = True
        self._stamp = UNREAD

    # ---- re-reading ----

    def refresh(self) -> Changed | None:
        """Read the file again if it changed since it was last read (see the module docstring);
        ``None``: it did not."""
        stamp = file_stamp(self.location.path)
        if stamp == self._stamp:
            return None
        self._stamp = stamp
        before = self.live
        told = (self.problems(), self.warnings)
        try:
            file = read_settings(self.location)
        except ConfigError as exc:
            self.file_problems = exc.problems
        else:
            self.file_problems = ()
            self._file = file
            self._read_good = file.exists
            self._note_restart_only(self._layer())
        if (self.problems(), self.warnings) != told:
            self.log_problems()
        if self.live != before:
            logger.info("config file %s read again: the new settings apply", self.location.path)
        return Changed(before, self.live)

    def _note_restart_only(self, layered: argparse.Namespace) -> None:
        for key in RESTART_KEYS:
            value = getattr(layered, key, None)
            if value == self._started[key]:
                self._told_restart.pop(key, None)
            elif key not in self._told_restart or self._told_restart[key] != value:
                self._told_restart[key] = value
                logger.warning(
                    "config file %s: %s changed; it takes effect at the next start",
                    self.location.path,
                    key,
                )


def file_problem_text(problems: tuple[Problem, ...], kept: bool) -> str:
    """The message for a config file that cannot be used: its first line names the first
    problem by the file's name (a notice's title, kept short), then what is in force, every
    problem with the file's whole path, and the fix."""
    errors = [p for p in problems if p.severity == "error"] or list(problems)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    in_force = (
        "The file cannot be used; the settings read from it before stay in force."
        if kept
        else "The file cannot be used: acp-sidecar runs without it (options and environment "
        "variables still apply)."
    )
    lines = [
        f"Config file error: {_short(errors[0])}{more}",
        "",
        in_force,
        "",
        *(f"- {problem}" for problem in problems),
        "",
        "Fix it (`acp-sidecar doctor` checks it); it is read again at the next new session.",
    ]
    return "\n".join(lines)


def _short(problem: Problem) -> str:
    """``problem`` naming the file by its name alone (a notice's title is kept short)."""
    return str(attrs.evolve(problem, path=os.path.basename(problem.path)))


def layered_leniently(
    command_line: argparse.Namespace, file: FileSettings, env: Mapping[str, str]
) -> tuple[argparse.Namespace, tuple[str, ...]]:
    """:func:`~acp_sidecar.settings.layering.layered`, leaving out a variable with a bad
    value (``ACP_SIDECAR_MODE``) rather than refusing: the problems name it."""
    from acp_sidecar.settings.layering import layered

    try:
        return layered(command_line, file, env), ()
    except ValueError as exc:
        variable = KEYS_BY_NAME["mode"].env
        if variable is None or not str(exc).startswith(variable):
            raise  # not the one variable layering reads (the file's values are checked)
        rest = {name: value for name, value in env.items() if name != variable}
        return layered(command_line, file, rest), (str(exc),)


def wants_model(args: argparse.Namespace, env: Mapping[str, str]) -> bool:
    """Whether the layered settings or the environment name a model (else the console)."""
    from acp_sidecar.agent.model.variables import MODEL_ENV, MODEL_INFO_ENV, MODELS_ENV
    from acp_sidecar.settings.layering import no_model

    if no_model(args):
        return False
    named = (env.get(name, "").strip() for name in (MODEL_ENV, MODELS_ENV, MODEL_INFO_ENV))
    described = getattr(args, "model_profiles", ())
    return bool(args.model or args.models or args.model_info or described or any(named))


def model_settings(
    args: argparse.Namespace, env: Mapping[str, str]
) -> tuple[ModelConfig | None, str | None]:
    """The model the layered settings configure, or why it cannot be used."""
    if not wants_model(args, env):
        return None, None
    from acp_sidecar.settings.layering import layered_model_config

    try:
        config = layered_model_config(args, env)
    except ValueError as exc:
        return None, f"{MODEL_PROBLEM}{exc}"
    return config, None


def live_settings(args: argparse.Namespace, env: Mapping[str, str]) -> LiveSettings:
    """What the server applies of the layered settings ``args``."""
    model, problem = model_settings(args, env)
    key = getattr(args, "endpoint_key", None)
    timeout = getattr(args, "mcp_start_timeout", None)
    return LiveSettings(
        model=model,
        model_problem=problem,
        default_mode=next((m for m in MODE_IDS if m == getattr(args, "mode", None)), DEFAULT_MODE),
        allow_outside_workspace=bool(getattr(args, "allow_outside_workspace", False)),
        mcp_start_timeout=float(
            timeout if timeout is not None else DEFAULTS["mcp_start_timeout"]  # type: ignore[arg-type]
        ),
        secret_variable=None if key is None else key.variable,
        budget=budget_defaults(args),
    )


def budget_defaults(args: argparse.Namespace) -> Limits:
    """The budget each new session starts with, from the layered settings ``args``."""
    cost, tokens, time = (getattr(args, f"budget_{kind}", None) for kind in KINDS)
    return Limits(
        cost=None if cost is None else float(cost),
        tokens=tokens,
        time=None if time is None else float(time),
    )
