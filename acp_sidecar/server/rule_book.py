"""A session's permission rules in force: its own, the workspace's (once trusted), the user's.

The files are read again whenever their stamp changes, so an edit, or a write by another
session or sidecar, applies from the next call. A workspace file is used only for the bytes the
user trusted; otherwise its rules are left out and the set's problems say why. Which sources
apply is the session's choice (its ``permission_rules`` option: all, without the project's, or
its own only).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal, TypeAlias, get_args

import attrs

from acp_sidecar.bridge.modes import SessionPolicy
from acp_sidecar.bridge.rules import SESSION, Rule, RuleScope, RuleSet
from acp_sidecar.server.rule_files import (
    PROJECT_FILE,
    TABLE,
    RuleFile,
    TrustRecord,
    read_rule_file,
    save_project_rules,
    save_user_rules,
)
from acp_sidecar.settings.reading import file_stamp
from acp_sidecar.values import State

Selection: TypeAlias = Literal["all", "user", "session"]
"""Which sources a session's rules come from: all three, all but the workspace's, its own."""
SELECTIONS: Final[tuple[Selection, ...]] = get_args(Selection)
SOURCES: Final[dict[Selection, tuple[RuleScope, ...]]] = {
    "all": ("session", "project", "user"),
    "user": ("session", "user"),
    "session": ("session",),
}
_NAMES: Final[dict[RuleScope, str]] = {"session": "session", "project": "project", "user": "user"}


@attrs.define(repr=False, eq=False)
class _Cached(State):
    name: str
    """The file's path as ``str`` (stamped each turn: a ``Path`` is converted each time)."""
    stamp: object = None
    file: RuleFile | None = None


@attrs.define(eq=False)
class RuleBook:
    """The rules of one session (implements :class:`~acp_sidecar.bridge.rules.SessionRules`)."""

    policy: SessionPolicy
    """The session's own rules live in its policy."""
    cwd: str
    user_file: Path | None = None
    """The config file (``None``: no user rules, and none can be written)."""
    trust: TrustRecord | None = None
    """Where trusted workspace files are recorded (``None``: none is ever trusted)."""
    selection: Selection = "all"
    changed: Callable[[], None] | None = None
    """Called after this book changed a rule (the session's option shows the count)."""
    logged: Callable[[Rule, bool], None] | None = None
    """Called with a session rule added (``False``) or removed (``True``): the session's log
    keeps them, so a load has them again."""
    told: set[str] = attrs.field(factory=set)
    """The problems the user was told of already (each once per session)."""
    _cache: dict[Path, _Cached] = attrs.field(factory=dict)
    project_file: Path = attrs.field(init=False)
    """The workspace's rules file (made once: every turn checks it)."""

    def __attrs_post_init__(self) -> None:
        self.project_file = Path(self.cwd) / PROJECT_FILE

    def untold(self) -> list[str]:
        """The problems of the rules in force the user was not told of yet (now told)."""
        sources = SOURCES[self.selection]
        project = self.project()
        reason = self.untrusted_reason(project) if "project" in sources else None
        found = self._problems(project, reason, self.user(), sources)
        fresh = [problem for problem in found if problem not in self.told]
        self.told.update(fresh)
        return fresh

    def _read(self, path: Path, scope: RuleScope) -> RuleFile:
        cached = self._cache.get(path)
        if cached is None:
            cached = self._cache[path] = _Cached(str(path))
        stamp = file_stamp(cached.name)
        if cached.file is None or cached.stamp != stamp:
            cached.file = read_rule_file(path, scope, TABLE if scope == "user" else None)
            cached.stamp = stamp
        return cached.file

    def project(self) -> RuleFile:
        return self._read(self.project_file, "project")

    def user(self) -> RuleFile | None:
        return None if self.user_file is None else self._read(self.user_file, "user")

    def project_trusted(self, project: RuleFile) -> bool:
        """Whether the workspace file's bytes are the ones the user trusted."""
        if project.digest is None or self.trust is None:
            return False
        return self.trust.trusted(project.path, project.digest)

    def untrusted_reason(self, project: RuleFile) -> str | None:
        """Why the workspace file is left out (``None``: it is used, or there is none)."""
        if not project.exists or self.project_trusted(project):
            return None
        count = len(project.rules)
        if self.trust is None:
            return f"{project.path} is ignored: this sidecar keeps no record of trusted files"
        before = "changed since it was trusted" if self.trust.known(project.path) else "not trusted"
        return (
            f"{project.path} is {before}: its {count} rule(s) are ignored until you read it "
            "and run `/permissions trust`"
        )

    def rule_set(self, selection: Selection | None = None) -> RuleSet:
        """The rules in force now (module docstring), tried in this order; ``selection``:
        those a choice of sources would put in force instead."""
        sources = SOURCES[selection or self.selection]
        rules: list[Rule] = list(self.policy.rules)
        project = self.project()
        reason = self.untrusted_reason(project) if "project" in sources else None
        if "project" in sources and reason is None and project.exists:
            rules.extend(project.rules)
        user = self.user()
        if user is not None and "user" in sources:
            rules.extend(user.rules)
        named = " + ".join(_NAMES[source] for source in sources)
        problems = self._problems(project, reason, user, sources)
        return RuleSet(tuple(rules), problems, f"{named} ({len(rules)} rules)")

    @staticmethod
    def _problems(
        project: RuleFile,
        reason: str | None,
        user: RuleFile | None,
        sources: tuple[RuleScope, ...],
    ) -> tuple[str, ...]:
        """What in the files of ``sources`` cannot be used, in :meth:`rule_set`'s order
        (``reason``: why the workspace file is left out, as :meth:`untrusted_reason` says)."""
        problems: list[str] = []
        if "project" in sources:
            if reason is not None:
                problems.append(reason)
            elif project.exists:
                problems.extend(str(problem) for problem in project.problems)
        if user is not None and "user" in sources:
            problems.extend(str(problem) for problem in user.problems)
        return tuple(problems)

    def scopes(self) -> tuple[RuleScope, ...]:
        """Where an "always" answer can write now: the session; the workspace file when it is
        used and trusted (or absent, and trust can be recorded); the config file when known."""
        sources = SOURCES[self.selection]
        scopes: list[RuleScope] = ["session"]
        project = self.project()
        writable = not project.exists or self.project_trusted(project)
        if "project" in sources and self.trust is not None and writable and not project.problems:
            scopes.append("project")
        user = self.user()
        if "user" in sources and user is not None and not user.problems:
            scopes.append("user")
        return tuple(scopes)

    def remember(self, rule: Rule, scope: RuleScope) -> None:
        """Keep ``rule`` in ``scope``; nothing changes when it is there already.

        Raises:
            OSError: its file could not be written (it is as it was).
            ValueError: the scope cannot be written now (see :meth:`scopes`).
        """
        if scope not in self.scopes():
            raise ValueError(f"rules cannot be written to the {scope} scope now")
        match scope:
            case "session":
                if rule in self.policy.rules:
                    return
                self.policy.rules.append(attrs.evolve(rule, origin=SESSION))  # risk kept
                self._logged(rule, removed=False)
            case "project":
                project = self.project()
                if rule.text in (kept.text for kept in project.rules):
                    return
                written = save_project_rules(
                    project.path, [*(kept.text for kept in project.rules), rule.text]
                )
                assert self.trust is not None and written.digest is not None
                self.trust.trust(written.path, written.digest)  # the user's own write
            case "user":
                user = self.user()
                assert user is not None
                if rule.text in (kept.text for kept in user.rules):
                    return
                save_user_rules(user.path, [*(kept.text for kept in user.rules), rule.text])
        self._changed()

    def remove(self, rule: Rule, scope: RuleScope) -> bool:
        """Take ``rule`` out of ``scope``; whether it was there.

        Raises:
            OSError: its file could not be written (it is as it was).
        """
        match scope:
            case "session":
                kept = [other for other in self.policy.rules if other.text != rule.text]
                if len(kept) == len(self.policy.rules):
                    return False
                self.policy.rules[:] = kept
                self._logged(rule, removed=True)
            case "project":
                project = self.project()
                texts = [other.text for other in project.rules]
                if rule.text not in texts or not self.project_trusted(project):
                    return False
                left = [text for text in texts if text != rule.text]
                written = save_project_rules(project.path, left)
                assert self.trust is not None and written.digest is not None
                self.trust.trust(written.path, written.digest)
            case "user":
                user = self.user()
                texts = [] if user is None else [other.text for other in user.rules]
                if user is None or rule.text not in texts:
                    return False
                save_user_rules(user.path, [text for text in texts if text != rule.text])
        self._changed()
        return True

    def trust_project(self, trusted: bool) -> RuleFile:
        """Trust the workspace file as it is now (``trusted``), or no more.

        Raises:
            OSError: the record could not be written.
            ValueError: there is no record, or no file to trust.
        """
        if self.trust is None:
            raise ValueError("this sidecar keeps no record of trusted files (no session store)")
        project = self.project()
        if trusted and project.digest is None:
            raise ValueError(f"there is no {self.project_file} to trust")
        self.trust.trust(project.path, project.digest if trusted else None)
        self._changed()
        return project

    def choose(self, selection: Selection) -> bool:
        """Use the sources of ``selection``; whether it changed."""
        if selection == self.selection:
            return False
        self.selection = selection
        return True

    def _logged(self, rule: Rule, *, removed: bool) -> None:
        if self.logged is not None:
            self.logged(rule, removed)

    def _changed(self) -> None:
        if self.changed is not None:
            self.changed()
