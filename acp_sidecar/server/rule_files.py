"""The files permission rules live in: the config file's ``[permissions]`` table, the workspace's
``.acp-sidecar/permissions.toml``, and the record of which workspace files the user trusts.

A bad line is a problem naming ``file:line``, never a reason to drop the file's other rules.
Every write is whole and atomic (a temporary synced, then renamed over), so a failed write
leaves the old file as it was. A workspace file is trusted only for the exact bytes the user
trusted (their SHA-256), so a changed file is untrusted again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from acp_sidecar.bridge.rules import Origin, Rule, RuleError, RuleProblem, RuleScope, parse_rule
from acp_sidecar.values import State, Value

PROJECT_FILE: Final = Path(".acp-sidecar") / "permissions.toml"
"""The workspace's rules file, relative to the session's cwd."""
TABLE: Final = "permissions"
"""The config file's table of rules (``[permissions]`` with ``rules = [...]``)."""
KEY: Final = "rules"
TRUST_FILE: Final = ".permissions-trust.json"
"""In the session store's directory: the workspace rules files trusted, with their hashes."""
PROJECT_HEADER: Final = (
    "# Permission rules for this workspace (acp-sidecar): `allow|ask|deny TOOL [PATTERN]`.\n"
    "# Used only once trusted with /permissions trust (a changed file must be trusted again).\n"
)

_LINE: Final = re.compile(r"line (\d+)")


@attrs.frozen(repr=False, eq=False)
class RuleFile(Value):
    """What one rules file holds: its rules, its bad lines, and its bytes' hash."""

    path: Path
    rules: tuple[Rule, ...] = ()
    problems: tuple[RuleProblem, ...] = ()
    digest: str | None = None
    """SHA-256 of its bytes (``None``: no such file)."""

    @property
    def exists(self) -> bool:
        return self.digest is not None


def read_rule_file(path: Path, scope: RuleScope, table: str | None) -> RuleFile:
    """The rules of the file at ``path`` (its ``rules`` array, inside ``table`` if given)."""
    shown = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return RuleFile(path)
    except OSError as exc:
        return RuleFile(path, problems=(RuleProblem(shown, None, f"cannot be read: {exc}"),))
    import hashlib  # only for a file that exists: OpenSSL's loading is a cold-start cost
    import tomllib

    digest = hashlib.sha256(data).hexdigest()

    try:
        text = data.decode("utf-8")
        document: Any = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        found = _LINE.search(str(exc))
        line = int(found.group(1)) if found else None
        problem = RuleProblem(shown, line, f"not a TOML file: {exc}")
        return RuleFile(path, problems=(problem,), digest=digest)
    if table is not None:
        document = document.get(table, {})
        if not isinstance(document, dict):
            problem = RuleProblem(shown, None, f"`{table}` must be a table holding `{KEY}`")
            return RuleFile(path, problems=(problem,), digest=digest)
    entries = document.get(KEY, [])
    if not isinstance(entries, list):
        problem = RuleProblem(shown, None, f"`{KEY}` must be an array of strings")
        return RuleFile(path, problems=(problem,), digest=digest)
    lines = text.splitlines()
    rules: list[Rule] = []
    problems: list[RuleProblem] = []
    cursor = 0
    for entry in entries:
        line, cursor = _line_of(lines, entry, cursor)
        if not isinstance(entry, str):
            problems.append(RuleProblem(shown, line, f"a rule is a string, not {entry!r}"))
            continue
        try:
            rules.append(parse_rule(entry, Origin(scope, shown, line)))
        except RuleError as exc:
            problems.append(RuleProblem(shown, line, f"`{entry}`: {exc}"))
    return RuleFile(path, tuple(rules), tuple(problems), digest)


def _line_of(lines: Sequence[str], entry: object, cursor: int) -> tuple[int | None, int]:
    """The 1-based line holding ``entry`` at or after ``cursor`` (0-based), and where to go on
    looking; the text of a string is looked for, anything else by its TOML-ish spelling."""
    needle = entry if isinstance(entry, str) else json.dumps(entry)
    for index in range(cursor, len(lines)):
        if needle in lines[index]:
            return index + 1, index + 1
    return None, cursor


def write_atomically(path: Path, text: str, mode: int, check: Callable[[Path], object]) -> None:
    """Replace ``path`` with ``text`` by the settings writer (module invariants); ``check``
    reads the temporary first and raises to leave the old file in place."""
    from acp_sidecar.settings.writing import replace_whole  # tomlkit: only when writing

    replace_whole(path, text, mode, check)


def with_rules(current: str, rules: Sequence[str], table: str | None) -> str:
    """The text of a rules file ``current`` with its ``rules`` array made ``rules`` (comments
    and the other keys kept)."""
    import tomlkit

    document = tomlkit.parse(current) if current.strip() else tomlkit.document()
    if not current.strip() and table is None:
        document.add(tomlkit.comment(PROJECT_HEADER.splitlines()[0].lstrip("# ")))
        document.add(tomlkit.comment(PROJECT_HEADER.splitlines()[1].lstrip("# ")))
    array = tomlkit.array()
    array.extend(rules)
    array.multiline(True)
    if table is None:
        document[KEY] = array
    else:
        container = document.get(table)
        if container is None:
            container = tomlkit.table()
            document[table] = container
        container[KEY] = array
    return tomlkit.dumps(document)


def _current(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def save_project_rules(path: Path, rules: Sequence[str]) -> RuleFile:
    """Write the workspace's rules file with ``rules``; what it now holds.

    Raises:
        OSError: it could not be written (the old file is intact).
        ValueError: the result would not read back as the same rules (nothing is written).
    """

    def check(temporary: Path) -> None:
        _same_rules(read_rule_file(temporary, "project", None), rules)

    write_atomically(path, with_rules(_current(path), rules, None), 0o644, check)
    return read_rule_file(path, "project", None)


def save_user_rules(path: Path, rules: Sequence[str]) -> RuleFile:
    """Write ``rules`` into the config file's ``[permissions]`` table (the file stays a config
    file :func:`~acp_sidecar.settings.read_settings` accepts, and private); what it now holds.

    Raises:
        OSError: it could not be written (the old file is intact).
        ValueError: the result would not be a valid config file (nothing is written).
    """
    from acp_sidecar.settings import ConfigLocation, read_settings

    def check(temporary: Path) -> None:
        read_settings(ConfigLocation(temporary, explicit=True))
        _same_rules(read_rule_file(temporary, "user", TABLE), rules)

    write_atomically(path, with_rules(_current(path), rules, TABLE), 0o600, check)
    return read_rule_file(path, "user", TABLE)


def _same_rules(read: RuleFile, rules: Sequence[str]) -> None:
    if read.problems or [rule.text for rule in read.rules] != list(rules):
        raise ValueError(f"{read.path} would not hold these rules: {read.problems}")


@attrs.define(repr=False, eq=False)
class TrustRecord(State):
    """Which workspace rules files the user trusts, by path, with the hash trusted."""

    locate: Callable[[], Path]
    """Where the record is, found when first needed (a workspace without a rules file never
    needs it: the store stays off the cold start)."""

    @property
    def path(self) -> Path:
        return self.locate()

    def read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, str)}

    def trusted(self, file: Path, digest: str) -> bool:
        return self.read().get(str(file)) == digest

    def known(self, file: Path) -> bool:
        """Whether ``file`` was ever trusted (with any bytes)."""
        return str(file) in self.read()

    def trust(self, file: Path, digest: str | None) -> None:
        """Trust ``file`` with the bytes of ``digest`` (``None``: trust it no more).

        Raises:
            OSError: the record could not be written (it is as it was).
        """
        entries = self.read()
        if digest is None:
            entries.pop(str(file), None)
        else:
            entries[str(file)] = digest
        text = json.dumps(entries, indent=2, sort_keys=True) + "\n"
        write_atomically(self.path, text, 0o600, lambda _: None)
