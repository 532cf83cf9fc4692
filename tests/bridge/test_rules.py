"""Permission rules as values: parsing (a bad rule says why), matching and precedence."""

from __future__ import annotations

import pytest

from acp_sidecar.bridge.rules import (
    RuleError,
    call_facts,
    deciding_rule,
    parse_rule,
    rule_matches,
)
from acp_sidecar.tools.context import WorkspaceRoot

ROOTS = (WorkspaceRoot("/w", "/w"),)


def facts(tool: str, **arguments: object):  # type: ignore[no-untyped-def]
    return call_facts(tool, arguments, "/w")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "this one is empty"),
        ("permit edit", "starts with allow, ask or deny, not 'permit'"),
        ("allow", "`allow` needs a tool name"),
        ("deny ed/it", "'ed/it' is no tool name"),
    ],
)
def test_a_bad_rule_is_refused_with_its_reason(text: str, reason: str) -> None:
    with pytest.raises(RuleError, match=reason):
        parse_rule(text)


def test_a_rule_reads_back_as_written() -> None:
    rule = parse_rule("deny  bash   rm -rf *")
    assert (rule.verdict, rule.tool, rule.pattern, rule.text) == (
        "deny",
        "bash",
        "rm -rf *",
        "deny bash rm -rf *",
    )


@pytest.mark.parametrize(
    ("rule", "path", "matches"),
    [
        ("allow edit src/**", "src/a/b.py", True),
        ("allow edit src/**", "/w/src/x.py", True),
        ("allow edit src/**", "docs/x.md", False),
        ("allow edit src/**", "../outside/src/x.py", False),  # outside every root
        ("allow edit *.md", "docs/deep/x.md", True),  # gitignore: at any depth
        ("allow edit /top.md", "docs/top.md", False),  # anchored
        ("allow edit", "anything", True),
        ("allow write src/**", "src/a.py", False),  # another tool
    ],
)
def test_path_patterns_are_gitignore_style_relative_to_the_roots(
    rule: str, path: str, matches: bool
) -> None:
    assert rule_matches(parse_rule(rule), facts("edit", path=path), ROOTS) is matches


def test_a_path_pattern_never_matches_a_call_without_a_path() -> None:
    assert not rule_matches(parse_rule("allow edit src/**"), facts("edit"), ROOTS)


@pytest.mark.parametrize(
    ("rule", "command", "matches"),
    [
        ("deny bash rm -rf *", "rm -rf /", True),
        ("deny bash rm -rf *", "rm  -rf   build", True),  # blanks made one
        ("deny bash rm -rf *", "cd x && rm -rf /", True),  # one command of a chain
        ("deny bash rm -rf *", "echo rm -rf", False),
        ("ask bash git push*", "git push origin main", True),
        ("allow bash git status*", "git status", True),
        ("allow bash git status*", "git status; rm -rf /", False),  # no chains allowed
        ("allow bash git status*", "git status > /etc/x", False),
        ("allow bash", "anything; at all", True),  # no pattern: every call
    ],
)
def test_command_patterns_glob_the_command_line(rule: str, command: str, matches: bool) -> None:
    assert rule_matches(parse_rule(rule), facts("bash", command=command), ROOTS) is matches


def test_tool_names_are_globs() -> None:
    rule = parse_rule("allow mcp__time__*")
    assert rule_matches(rule, facts("mcp__time__now"), ROOTS)
    assert not rule_matches(rule, facts("mcp__git__log"), ROOTS)


@pytest.mark.parametrize(
    ("rules", "decided"),
    [
        (["allow bash", "ask bash git*", "deny bash git push*"], "deny bash git push*"),
        (["allow bash", "ask bash git*"], "ask bash git*"),
        (["allow bash git*", "allow bash"], "allow bash git*"),  # the first of its verdict
        (["deny edit", "allow bash"], "allow bash"),
        (["deny edit"], None),  # no match: the mode decides
    ],
)
def test_deny_wins_then_ask_then_allow(rules: list[str], decided: str | None) -> None:
    parsed = [parse_rule(text) for text in rules]
    rule = deciding_rule(parsed, facts("bash", command="git push -f"), ROOTS)
    assert (None if rule is None else rule.text) == decided


def test_a_session_rule_with_a_risk_holds_only_while_the_tool_declares_it() -> None:
    import attrs

    rule = attrs.evolve(parse_rule("allow fetch"), risk=(False, True))
    same = call_facts("fetch", {}, "/w", (False, True))
    riskier = call_facts("fetch", {}, "/w", (True, True))
    assert rule_matches(rule, same, ROOTS) and not rule_matches(rule, riskier, ROOTS)
