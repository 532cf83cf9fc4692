"""Permission rules: ``allow|ask|deny TOOL [PATTERN]``, parsed, matched against one call, ranked.

Pure (no I/O). Of the rules that match a call, the first ``deny`` wins, then the first ``ask``,
then the first ``allow``; none matching leaves the call to the mode. A pattern never matches a
call that has nothing to match it against, so a patterned ``allow`` cannot widen a call it
cannot see.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypeAlias, get_args

import attrs

from acp_sidecar.values import Value

if TYPE_CHECKING:
    from acp_sidecar.tools.context import WorkspaceRoot

Verdict: TypeAlias = Literal["allow", "ask", "deny"]
VERDICTS: Final[tuple[Verdict, ...]] = get_args(Verdict)
RuleScope: TypeAlias = Literal["session", "project", "user"]
"""Where a rule lives: the session (gone with it), the workspace's rules file, the config file."""
SCOPES: Final[tuple[RuleScope, ...]] = get_args(RuleScope)

PATH_ARGUMENTS: Final = ("path", "file_path", "paths")
"""The arguments a path pattern is matched against (a string, or a list of strings)."""
COMMAND_ARGUMENT: Final = "command"
"""The argument a command pattern is matched against (``bash``'s command line)."""

_TOOL: Final = re.compile(r"[A-Za-z0-9_.\-*?\[\]]+")
_CONTROL: Final = re.compile(r"[;&|\n`<>]|\$\(")
"""What chains or redirects commands in a shell line: a patterned ``allow`` does not match a
line with any of these unless its pattern has them too."""
_SEGMENTS: Final = re.compile(r"&&|\|\||[;&|\n]")


class RuleError(ValueError):
    """A rule that cannot be parsed; the message is the reason."""


@attrs.frozen(repr=False, eq=False)
class Origin(Value):
    """Where a rule was found: its scope, and for a file its path and line."""

    scope: RuleScope
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        if self.file is None:
            return self.scope
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{self.scope} ({where})"


SESSION: Final = Origin("session")


@attrs.frozen(repr=False, eq=False)
class Rule(Value):
    """One rule: what it decides, for which tools (a name or a glob of names), and for which
    arguments (``None``: every call of the tools)."""

    verdict: Verdict
    tool: str
    pattern: str | None = None
    origin: Origin = attrs.field(default=SESSION, eq=False)
    """Where it was found (not part of its identity: the same rule in two files is one rule)."""
    risk: tuple[bool, bool] | None = None
    """For a rule an "always … in this session" answer made: what the tool declared then
    (may change things, reaches outside the machine); it matches only while the tool still
    declares that, so a tool re-listed as riskier under the same name is asked about again.
    Not part of :attr:`text` (a file's rule is by name: the user reads it)."""

    @property
    def text(self) -> str:
        """The rule as it is written (``deny bash rm -rf *``)."""
        parts = (
            (self.verdict, self.tool)
            if self.pattern is None
            else (
                self.verdict,
                self.tool,
                self.pattern,
            )
        )
        return " ".join(parts)

    def __str__(self) -> str:
        return self.text


def parse_rule(text: str, origin: Origin = SESSION) -> Rule:
    """The rule ``text`` writes (words separated by blanks; the pattern is the rest of the
    line, its runs of blanks made one).

    Raises:
        RuleError: the reason it is no rule.
    """
    words = text.split()
    if not words:
        raise RuleError("a rule is `allow|ask|deny TOOL [PATTERN]`; this one is empty")
    verdict = next((known for known in VERDICTS if known == words[0]), None)
    if verdict is None:
        raise RuleError(f"a rule starts with allow, ask or deny, not {words[0]!r}")
    if len(words) == 1:
        raise RuleError(f"`{words[0]}` needs a tool name (or a glob of names) after it")
    tool = words[1]
    if _TOOL.fullmatch(tool) is None:
        raise RuleError(
            f"{tool!r} is no tool name: letters, digits, _ - . and the globs * ? [ ] only"
        )
    pattern = " ".join(words[2:]) or None
    if pattern is not None and not _is_command_tool(tool):
        problem = _path_pattern_problem(pattern)
        if problem is not None:
            raise RuleError(f"{pattern!r} is no path pattern: {problem}")
    return Rule(verdict, tool, pattern, origin)


def _is_command_tool(tool: str) -> bool:
    return tool == "bash"


def _path_pattern_problem(pattern: str) -> str | None:
    try:
        _path_spec(pattern)
    except Exception as exc:  # pathspec raises several types for a bad pattern
        return str(exc) or type(exc).__name__
    return None


@functools.lru_cache(maxsize=256)
def _path_spec(pattern: str) -> object:
    import pathspec  # only when a path rule is used: off the cold start

    return pathspec.GitIgnoreSpec.from_lines([pattern])


def _path_matches(pattern: str, relative: str) -> bool:
    spec = _path_spec(pattern)
    return bool(spec.match_file(relative))  # type: ignore[attr-defined]


@attrs.frozen(repr=False, eq=False)
class CallFacts(Value):
    """What a rule sees of a call: the tool's name, its path arguments (absolute, normalised)
    and its command line, if it has one."""

    tool: str
    paths: tuple[str, ...] = ()
    command: str | None = None
    risk: tuple[bool, bool] | None = None
    """What the tool declares (may change things, reaches outside the machine)."""


def call_facts(
    tool: str, arguments: object, cwd: str, risk: tuple[bool, bool] | None = None
) -> CallFacts:
    """The facts of a call of ``tool`` with ``arguments`` in a session working in ``cwd``,
    its tool declaring ``risk``."""
    if not isinstance(arguments, Mapping):
        return CallFacts(tool, risk=risk)
    paths: list[str] = []
    for key in PATH_ARGUMENTS:
        value = arguments.get(key)
        named = [value] if isinstance(value, str) else value
        if isinstance(named, Sequence) and not isinstance(named, str):
            paths.extend(
                os.path.normpath(os.path.join(cwd, os.path.expanduser(item)))
                for item in named
                if isinstance(item, str) and item
            )
    command = arguments.get(COMMAND_ARGUMENT)
    return CallFacts(tool, tuple(paths), command if isinstance(command, str) else None, risk)


def _relative(path: str, roots: Iterable[WorkspaceRoot]) -> str | None:
    """``path`` relative to the first root holding it (``None``: outside every root)."""
    for root in roots:
        for base in dict.fromkeys((root.path, root.real)):
            inside = os.path.relpath(path, base)
            if inside != "." and not inside.startswith(".."):
                return inside.replace(os.sep, "/")
    return None


def rule_matches(rule: Rule, facts: CallFacts, roots: Sequence[WorkspaceRoot]) -> bool:
    """Whether ``rule`` applies to the call ``facts`` describes (see the module docstring).

    A command pattern is a glob of the whole command line (blanks made one); a ``deny`` or
    ``ask`` also matches any one command of a line chained with ``;``, ``&&``, ``||``, ``|``
    or ``&``. A path pattern is gitignore-style, relative to the session's roots: ``deny`` and
    ``ask`` match when any path argument does, ``allow`` only when every one does.
    """
    if not fnmatch.fnmatchcase(facts.tool, rule.tool):
        return False
    if rule.risk is not None and rule.risk != facts.risk:
        return False
    if rule.pattern is None:
        return True
    if facts.command is not None:
        return _command_matches(rule, facts.command)
    if not facts.paths:
        return False
    relative = [_relative(path, roots) for path in facts.paths]
    matched = [where is not None and _path_matches(rule.pattern, where) for where in relative]
    return all(matched) if rule.verdict == "allow" else any(matched)


def _command_matches(rule: Rule, command: str) -> bool:
    assert rule.pattern is not None
    line = " ".join(command.split())
    if rule.verdict == "allow":
        chained = _CONTROL.search(line) is not None and _CONTROL.search(rule.pattern) is None
        return not chained and fnmatch.fnmatchcase(line, rule.pattern)
    if fnmatch.fnmatchcase(line, rule.pattern):
        return True
    segments = (" ".join(part.split()) for part in _SEGMENTS.split(command))
    return any(segment and fnmatch.fnmatchcase(segment, rule.pattern) for segment in segments)


def deciding_rule(
    rules: Iterable[Rule], facts: CallFacts, roots: Sequence[WorkspaceRoot]
) -> Rule | None:
    """The rule that decides the call (module docstring), or ``None``: the mode decides."""
    first: dict[Verdict, Rule] = {}
    for rule in rules:
        if rule.verdict not in first and rule_matches(rule, facts, roots):
            first[rule.verdict] = rule
            if rule.verdict == "deny":
                return rule
    return first.get("ask") or first.get("allow")


@attrs.frozen(repr=False, eq=False)
class RuleProblem(Value):
    """A line of a rules file that is no rule (or a file that could not be used)."""

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.reason}"


@attrs.frozen(repr=False, eq=False)
class RuleSet(Value):
    """The rules in force for a session, in the order they are tried (session, project, user),
    and what could not be used."""

    rules: tuple[Rule, ...] = ()
    problems: tuple[str, ...] = ()
    """Bad lines (``file:line: reason``) and files left out (untrusted, unreadable)."""
    name: str = "none"
    """What the set is called where the user sees it (the config option)."""


class SessionRules(Protocol):
    """A session's rules as the permission policy reaches them (the server implements it)."""

    def rule_set(self) -> RuleSet:
        """The rules in force now."""
        ...

    def scopes(self) -> tuple[RuleScope, ...]:
        """The scopes an "always" answer can write a rule to now."""
        ...

    def remember(self, rule: Rule, scope: RuleScope) -> None:
        """Keep ``rule`` in ``scope`` (a file scope writes its file).

        Raises:
            OSError, ValueError: it could not be kept (nothing changed).
        """
        ...
