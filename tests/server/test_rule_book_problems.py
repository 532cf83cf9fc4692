"""A turn asks only for the rules' problems: they are the rule set's, in its order."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_sidecar.bridge.modes import SessionPolicy
from acp_sidecar.server.rule_book import SELECTIONS, RuleBook, Selection
from acp_sidecar.server.rule_files import PROJECT_FILE, TrustRecord


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("trusted", [False, True, None])
def test_the_problems_told_are_the_rule_sets_in_its_order(
    tmp_path: Path, selection: Selection, trusted: bool | None
) -> None:
    project = tmp_path / PROJECT_FILE
    project.parent.mkdir()
    project.write_text('rules = ["allow bash", "frobnicate everything", "deny nothing at all"]\n')
    user = tmp_path / "config.toml"
    user.write_text('[permissions]\nrules = ["ask read_file", "not a rule"]\n')
    trust = None if trusted is None else TrustRecord(lambda: tmp_path / "trust.json")
    book = RuleBook(SessionPolicy(), str(tmp_path), user, trust, selection=selection)
    if trusted:
        book.trust_project(True)
    expected = list(book.rule_set().problems)
    assert book.untold() == expected
    assert (selection == "session") == (expected == [])
    if selection == "all":  # the workspace's first, then the user's
        assert expected[0].startswith(str(project)) and str(user) in expected[-1]
    assert book.untold() == []  # each told once
    project.write_text('rules = ["allow bash", "still not a rule"]\n')
    fresh = [p for p in book.rule_set().problems if p not in expected]
    assert book.untold() == fresh
