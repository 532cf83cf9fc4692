"""Glob syntax shared by grep's filter and the glob tool."""

from __future__ import annotations

import pytest

from acp_sidecar.tools.builtin.errors import PatternTooSlowError
from acp_sidecar.tools.builtin.search import glob_patterns as globs_module
from acp_sidecar.tools.builtin.search.glob_patterns import (
    GlobMatcher,
    expand_braces,
    literal_prefix,
)


def test_braces_expand_nested_and_literal() -> None:
    assert expand_braces("*.{ts,tsx}") == ["*.ts", "*.tsx"]
    assert expand_braces("{a,b{1,2}}/x") == ["a/x", "b1/x", "b2/x"]
    assert expand_braces("{single}") == ["{single}"]
    with pytest.raises(ValueError, match="more than 256"):
        expand_braces("{a,b}" * 9)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("src/**", "src/a/b", True),
        ("src/**", "srcx/a", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("?.md", "a.md", True),
        ("?.md", "ab.md", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "c.txt", True),
        ("[!ab].txt", "a.txt", False),
        ("*", ".env", True),
        ("[oops", "[oops", True),
        ("a\\*b", "a*b", True),
        ("a\\*b", "axb", False),
        ("*.{js,ts}", "x.ts", True),
    ],
)
def test_whole_path_matching(pattern: str, path: str, expected: bool) -> None:
    assert GlobMatcher(pattern).matches(path) is expected


def test_a_glob_without_a_slash_can_match_names_at_any_depth() -> None:
    matcher = GlobMatcher("*.py", basename_without_slash=True)
    assert matcher.matches("a/b/c.py")
    assert not matcher.matches("a/b/c.pyc")
    anchored = GlobMatcher("/src/*.py", basename_without_slash=True)
    assert anchored.matches("src/a.py") and not anchored.matches("x/src/a.py")


def test_the_literal_prefix_is_where_a_walk_can_start() -> None:
    assert literal_prefix("src/lib/**/*.rs") == "src/lib"
    assert literal_prefix("**/*.rs") == ""
    assert literal_prefix("*.rs") == ""
    assert literal_prefix("a/{b,c}/d") == "a"


def test_a_glob_that_takes_too_long_on_a_path_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(globs_module, "MATCH_TIMEOUT_S", 1e-9)
    matcher = GlobMatcher("*a*a*a*a*a*a*b")
    with pytest.raises(PatternTooSlowError, match=r"took more than 1e-09 s to match 'aaa"):
        matcher.matches("a" * 100)


@pytest.mark.parametrize(
    "pattern", ["*a*a*a*a*a*a*b", "**/*a*b", "src/**/x/**/*.py", "**/**", "{*.py,a*b*c}"]
)
def test_a_glob_that_can_backtrack_is_matched_under_the_timeout(
    pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(globs_module, "MATCH_TIMEOUT_S", 1e-9)
    matcher = GlobMatcher(pattern)
    with pytest.raises(PatternTooSlowError):
        matcher.matches("/".join(["a" * 60] * 30) + "a")


@pytest.mark.parametrize(
    ("pattern", "path"),
    [("**/*.py", "src/pkg/mod.py"), ("src/**/t?st_*.py", "src/a/b/test_x.py"), ("*/*/*", "a/b/c")],
)
def test_a_glob_that_cannot_backtrack_is_matched_without_the_timeout(
    pattern: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The timeout costs ten times the match (the ``regex`` package, the lock released)."""
    monkeypatch.setattr(globs_module, "MATCH_TIMEOUT_S", 1e-9)
    matcher = GlobMatcher(pattern)
    for _ in range(20):
        assert matcher.matches(path)
        assert not matcher.matches(path + "/x")
