"""Reading the config file into checked values, or problems naming file, line and key.

Only :class:`ConfigError`, with every problem of the file at once. An unknown key is a warning,
never an error (a newer version's file must not switch the model off). No problem holds a key.
"""

from __future__ import annotations

import functools
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import urlsplit

import attrs

from acp_sidecar.settings.keys import KEYS_BY_NAME, MODEL_INFO, MODEL_INFO_KEYS, PERMISSIONS, Key
from acp_sidecar.settings.location import ConfigLocation
from acp_sidecar.text import close_match
from acp_sidecar.values import State, Value

if TYPE_CHECKING:
    from acp_sidecar.agent.model.config import ModelProfile

Severity = Literal["error", "warning"]

_ENV_NAME: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_BARE: Final = r"[A-Za-z0-9_-]+"
_PART: Final = rf"(?:\"(?:[^\"\\]|\\.)*\"|'[^']*'|{_BARE})"
_HEADER: Final = rf"^\[\[?\s*({_PART}(?:\s*\.\s*{_PART})*)\s*\]\]?\s*(?:#.*)?$"
_ASSIGN: Final = rf"^({_PART}(?:\s*\.\s*{_PART})*)\s*="


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: a start without a config file never reads one."""
    return re.compile(pattern)


@attrs.frozen(repr=False, eq=False)
class Problem(Value):
    """One thing wrong (or doubtful) in a config file."""

    path: str
    """The file."""
    line: int | None
    """The line (1-based) of the key, where it could be found."""
    key: str | None
    """The key's dotted name (``model_info."gpt-4.1".context``); ``None``: the whole file."""
    message: str
    """What is wrong and what was expected (never the value of a key)."""
    severity: Severity = "error"

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


class ConfigError(Exception):
    """The config file cannot be used; :attr:`problems` says why (errors first)."""

    def __init__(self, problems: tuple[Problem, ...]) -> None:
        super().__init__("\n".join(str(problem) for problem in problems))
        self.problems = problems


@attrs.frozen(repr=False, eq=False)
class FileSettings(Value):
    """What a config file says, checked (see the module invariants)."""

    location: ConfigLocation
    exists: bool = False
    """Whether there was a file (a missing default file is an empty configuration)."""
    values: Mapping[str, object] = attrs.field(factory=dict)
    """The top-level keys present, typed by their :class:`~acp_sidecar.settings.keys.Key`:
    ``str`` (text, choice, path: absolute), ``tuple[str, ...]`` (names), ``int`` (count),
    ``float`` (seconds), ``bool`` (flag). ``api_key`` is kept apart, in :attr:`api_key`."""
    model_info: tuple[ModelProfile, ...] = ()
    """The ``[model_info.NAME]`` tables, in file order."""
    api_key: str | None = attrs.field(default=None, repr=False)
    """The stored key (only from a private file)."""
    warnings: tuple[Problem, ...] = ()
    """Doubts that change nothing: unknown keys."""


def url_problem(text: str) -> str | None:
    """Why ``text`` is not an endpoint's base URL (``None``: it is one): an ``http`` or
    ``https`` URL with a host (and a port that is a number, if any)."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        return "expected an http:// or https:// URL (this one does not parse)"
    spaced = any(c.isspace() for c in text)
    if parts.scheme not in ("http", "https") or not parts.hostname or spaced:
        return "expected an http:// or https:// URL with a host"
    return None


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be an API key (``None``: it can): a key is sent in an HTTP header,
    so it is printable ASCII without spaces."""
    if not key or not all("!" <= c <= "~" for c in key):
        return "an API key is printable ASCII without spaces (this one is not; not shown)"
    return None


def file_stamp(path: Path | str) -> tuple[int, int, int, int] | None:
    """What changes when the file is written (device, inode, size, mtime); ``None``: no file.

    A file that is not there (a rules file, most turns) is told by ``os.access``, which
    raises nothing: the exception a failed ``stat`` raises costs several times the call."""
    if not os.access(path, os.F_OK):
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def read_settings(location: ConfigLocation) -> FileSettings:
    """The checked settings of the file at ``location`` (module invariants).

    Raises:
        ConfigError: the file cannot be used; every problem found is in it.
    """
    path = location.path
    shown = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if not location.explicit:
            return FileSettings(location)
        raise ConfigError(
            (Problem(shown, None, None, "no such file (named by --config or ACP_SIDECAR_CONFIG)"),)
        ) from None
    except OSError as exc:
        raise ConfigError(
            (Problem(shown, None, None, f"cannot be read: {exc.strerror}"),)
        ) from None
    import tomllib  # only when there is a file: tomllib is a tenth of the settings' import

    try:
        text = data.decode("utf-8")
        document = tomllib.loads(text)
    except UnicodeDecodeError:
        raise ConfigError((Problem(shown, None, None, "is not UTF-8 text"),)) from None
    except tomllib.TOMLDecodeError as exc:
        message, line = _decode_error(str(exc))
        raise ConfigError((Problem(shown, line, None, f"is not valid TOML: {message}"),)) from None
    checker = _Checker(shown, text.splitlines(), location.path.parent)
    values, profiles, api_key = checker.check(document)
    if api_key is not None:
        checker.require_private(path)
    errors = tuple(p for p in checker.problems if p.severity == "error")
    if errors:
        raise ConfigError(errors + tuple(p for p in checker.problems if p.severity != "error"))
    return FileSettings(
        location,
        exists=True,
        values=values,
        model_info=profiles,
        api_key=api_key,
        warnings=tuple(checker.problems),
    )


def _decode_error(text: str) -> tuple[str, int | None]:
    found = re.search(r"\s*\(at line (\d+), column \d+\)\s*$", text)
    if found is None:
        return text, None
    return text[: found.start()], int(found.group(1))


def dotted(*parts: str) -> str:
    """A key's dotted name as written in TOML (parts quoted where they must be)."""
    return ".".join(part if re.fullmatch(_BARE, part) else f'"{part}"' for part in parts)


def _unquote(part: str) -> str:
    if part.startswith('"'):
        import tomllib

        try:
            return str(tomllib.loads(f"k = {part}")["k"])
        except tomllib.TOMLDecodeError:  # a line inside a multi-line string: not a key
            return part
    if part.startswith("'"):
        return part[1:-1]
    return part


def _split(text: str) -> tuple[str, ...]:
    return tuple(_unquote(part) for part in _compiled(_PART).findall(text))


def _key_lines(lines: list[str]) -> Iterator[tuple[int, tuple[str, ...]]]:
    """Each line that names a table or assigns a key, with the key's full path."""
    table: tuple[str, ...] = ()
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        header = _compiled(_HEADER).match(line)
        if header is not None:
            table = _split(header.group(1))
            yield number, table
            continue
        assign = _compiled(_ASSIGN).match(line)
        if assign is not None:
            yield number, table + _split(assign.group(1))


def line_of(lines: list[str], path: tuple[str, ...]) -> int | None:
    """The line of the key ``path``: where it is assigned or its table starts, else the line
    of the nearest enclosing key (an inline table); ``None`` when not found."""
    nearest: tuple[int, int] | None = None
    for number, found in _key_lines(lines):
        if found == path:
            return number
        if path[: len(found)] == found and (nearest is None or len(found) > nearest[0]):
            nearest = (len(found), number)
    return None if nearest is None else nearest[1]


def _unknown(what: str, name: str, known: Iterable[str]) -> str:
    """The warning for an unknown key: the key meant, when one is close."""
    meant = close_match(name, known)
    if meant is not None:
        return f"unknown {what}, ignored; did you mean {meant}?"
    return f"unknown {what}, ignored (a newer acp-sidecar's?)"


@attrs.define(repr=False, eq=False)
class _Checker(State):
    """Checks one parsed file, collecting its problems."""

    shown: str
    lines: list[str]
    base: Path
    problems: list[Problem] = attrs.Factory(list)

    def add(self, path: tuple[str, ...], message: str, severity: Severity = "error") -> None:
        self.problems.append(
            Problem(self.shown, line_of(self.lines, path), dotted(*path), message, severity)
        )

    def check(
        self, document: Mapping[str, Any]
    ) -> tuple[dict[str, object], tuple[ModelProfile, ...], str | None]:
        values: dict[str, object] = {}
        profiles: list[ModelProfile] = []
        api_key: str | None = None
        for name, raw in document.items():
            if name == MODEL_INFO:
                profiles = self.model_info(raw)
                continue
            if name == PERMISSIONS:
                continue  # the permission rules, read and reported by the server's rule book
            key = KEYS_BY_NAME.get(name)
            if key is None:
                known = (*KEYS_BY_NAME, MODEL_INFO, PERMISSIONS)
                self.add((name,), _unknown("key", name, known), "warning")
                continue
            value = self.value(key, raw)
            if value is None:
                continue
            if name == "api_key":
                api_key = str(value)
            else:
                values[name] = value
        return values, tuple(profiles), api_key

    def value(self, key: Key, raw: object) -> object | None:
        """The typed value of ``key``, or ``None`` with a problem added."""
        path = (key.name,)
        match key.kind:
            case "text" | "path":
                if not isinstance(raw, str) or not raw.strip():
                    self.add(path, "expected a non-empty string")
                    return None
                text = raw.strip()
                if key.kind == "path":
                    try:
                        return str((self.base / Path(text).expanduser()).absolute())
                    except RuntimeError:  # ~user for no such user
                        self.add(path, "cannot expand the ~ at its start (no such user)")
                        return None
                if key.name == "base_url" and (problem := url_problem(text)) is not None:
                    self.add(path, problem)
                    return None
                if key.name == "api_key" and (problem := key_problem(text)) is not None:
                    self.add(path, problem)
                    return None
                if key.name == "api_key_env" and not _compiled(_ENV_NAME).fullmatch(text):
                    self.add(path, "expected the name of an environment variable")
                    return None
                return text
            case "names":
                if (
                    not isinstance(raw, list)
                    or not raw
                    or not all(isinstance(item, str) and item.strip() for item in raw)
                ):
                    self.add(path, 'expected a list of non-empty strings, such as ["a", "b"]')
                    return None
                return tuple(dict.fromkeys(item.strip() for item in raw))
            case "count":
                if isinstance(raw, bool) or not isinstance(raw, int) or raw < key.least:
                    self.add(path, f"expected a whole number of at least {key.least}")
                    return None
                return raw
            case "seconds" | "amount":
                number = _number(raw)
                if number is None or number <= 0:
                    unit = " of seconds" if key.kind == "seconds" else ""
                    self.add(path, f"expected a positive number{unit}")
                    return None
                return number
            case "flag":
                if not isinstance(raw, bool):
                    self.add(path, "expected true or false")
                    return None
                return raw
            case "choice":
                chosen = raw.strip() if isinstance(raw, str) else None
                if key.name == "log_level" and chosen is not None:
                    chosen = chosen.upper()
                if chosen not in key.choices:
                    self.add(path, f"expected one of {', '.join(key.choices)}")
                    return None
                return chosen

    def model_info(self, raw: object) -> list[ModelProfile]:
        if not isinstance(raw, dict):
            self.add((MODEL_INFO,), 'expected tables, one per model: [model_info."NAME"]')
            return []
        profiles = []
        for name, settings in raw.items():
            profile = self.profile(name, settings)
            if profile is not None:
                profiles.append(profile)
        return profiles

    def profile(self, name: str, raw: object) -> ModelProfile | None:
        # Imported here: the model package is only loaded for a file that describes models.
        from acp_sidecar.agent.model.config import ModelProfile, Prices

        where = (MODEL_INFO, name)
        if not name.strip():
            self.add(where, "a model name is empty")
            return None
        if not isinstance(raw, dict):
            self.add(where, f"expected a table of the settings {', '.join(MODEL_INFO_KEYS)}")
            return None
        before = len(self.problems)
        window: int | None = None
        prices: dict[str, float] = {}
        currency: str | None = None
        for setting, value in raw.items():
            path = (*where, setting)
            match setting:
                case "context":
                    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                        self.add(path, "expected a whole number of tokens of at least 1")
                    else:
                        window = value
                case "images" | "reasoning":
                    if not isinstance(value, bool):
                        self.add(path, "expected true or false")
                case "input" | "output":
                    price = _number(value)
                    if price is None or price < 0:
                        self.add(path, "expected a price per million tokens (a number, 0 or more)")
                    else:
                        prices[setting] = price
                case "currency":
                    if not isinstance(value, str) or not value.strip() or " " in value.strip():
                        self.add(path, "expected a currency code such as USD or EUR")
                    else:
                        currency = value.strip()
                case _:
                    self.add(path, _unknown("model setting", setting, MODEL_INFO_KEYS), "warning")
        given = [s for s in ("input", "output", "currency") if s in raw]
        if given and len(given) < 3:
            missing = ", ".join(s for s in ("input", "output", "currency") if s not in raw)
            self.add(where, f"prices need input, output and currency together (missing {missing})")
        if any(p.severity == "error" for p in self.problems[before:]):
            return None
        return ModelProfile(
            name=name.strip(),
            context_window=window,
            images=raw.get("images") is True,
            reasoning_effort=raw.get("reasoning") is True,
            prices=(
                Prices(prices["input"], prices["output"], currency)
                if currency is not None and len(prices) == 2
                else None
            ),
        )

    def require_private(self, path: Path) -> None:
        """A stored key must be in a file only its owner can read."""
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            return
        if mode & 0o077:
            self.add(
                ("api_key",),
                f"the file holds an API key but others can read it (mode {mode:04o}), so it "
                f"is not read. Fix: chmod 600 {path}",
            )


def _number(raw: object) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    value = float(raw)
    return value if math.isfinite(value) else None
