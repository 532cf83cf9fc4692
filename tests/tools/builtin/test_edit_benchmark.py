"""``benchmarks/bench_edit.py`` at a smoke size: both cases still run (figures not asserted)."""

from __future__ import annotations

import pytest

from benchmarks import bench_edit


async def test_the_one_line_edit_case_runs(capsys: pytest.CaptureFixture[str]) -> None:
    await bench_edit.main(["--size-mb", "0.05", "--rounds", "1"])
    assert "ratio:" in capsys.readouterr().out


@pytest.mark.process
async def test_the_replace_all_case_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """Each round's child replaces every occurrence (the bench checks the file after it)."""
    await bench_edit.main(["--replace-all", "--size-mb", "0.05", "--rounds", "1"])
    out = capsys.readouterr().out
    assert "3,333 occurrences" in out
    assert "replace_all (preview, call, result card): median" in out
