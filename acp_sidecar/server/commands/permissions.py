"""``/permissions``: the session's rules in force with where each comes from; ``add [project|user]
RULE`` and ``remove [project|user] RULE`` (default: the session); ``trust`` / ``untrust`` the
workspace's rules file as it is now. A bad rule is refused with its reason; nothing changes."""

from __future__ import annotations

from acp_sidecar.bridge.rules import RuleError, RuleScope, parse_rule
from acp_sidecar.server.commands.base import CommandAnswer, CommandContext

USAGE = (
    "Usage: `/permissions` (list), `/permissions add [project|user] RULE`, "
    "`/permissions remove [project|user] RULE`, `/permissions trust`, `/permissions untrust`. "
    "A rule is `allow|ask|deny TOOL [PATTERN]`."
)


async def permissions(context: CommandContext) -> CommandAnswer:
    """List, add or remove the session's permission rules, or trust the workspace's file."""
    book = context.connection.rules_of(context.session)
    verb, _, rest = context.argument.partition(" ")
    rest = rest.strip()
    try:
        match verb:
            case "":
                return CommandAnswer(listing(context))
            case "add" | "remove":
                scope: RuleScope = "session"
                first, _, after = rest.partition(" ")
                if first in ("project", "user", "session"):
                    scope, rest = first, after.strip()  # type: ignore[assignment]
                try:
                    rule = parse_rule(rest)
                except RuleError as exc:
                    return CommandAnswer(f"Not a rule: {exc}. {USAGE}")
                if verb == "add":
                    book.remember(rule, scope)
                    return CommandAnswer(f"Added `{rule}` ({scope}).\n\n{listing(context)}")
                if book.remove(rule, scope):
                    return CommandAnswer(f"Removed `{rule}` ({scope}).\n\n{listing(context)}")
                return CommandAnswer(f"There is no `{rule}` in the {scope} rules.")
            case "trust" | "untrust":
                project = book.trust_project(verb == "trust")
                done = "Trusted" if verb == "trust" else "No longer trusting"
                return CommandAnswer(f"{done} {project.path}.\n\n{listing(context)}")
            case _:
                return CommandAnswer(USAGE)
    except (OSError, ValueError) as exc:
        return CommandAnswer(f"Nothing changed: {exc}")


def listing(context: CommandContext) -> str:
    """The rules in force, tried in order, each with its source; then what is left out."""
    book = context.connection.rules_of(context.session)
    rules = book.rule_set()
    lines = [f"Permission rules in force: {rules.name}; mode `{context.session.policy.mode}`."]
    if not rules.rules:
        lines.append("No rules: the mode decides every call.")
    for number, rule in enumerate(rules.rules, 1):
        risk = "" if rule.risk is None else " (while the tool declares what it did)"
        lines.append(f"{number}. `{rule}` — {rule.origin}{risk}")
    lines.extend(f"- left out: {problem}" for problem in rules.problems)
    lines.append("The first matching deny wins, then ask, then allow; read-only still refuses.")
    return "\n".join(lines)
