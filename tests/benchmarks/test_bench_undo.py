"""``benchmarks/bench_undo.py`` at a smoke size: both figures are still printed (not asserted);
the bench itself checks every file came back byte for byte."""

from __future__ import annotations

import pytest

from benchmarks import bench_undo


async def test_the_undo_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    await bench_undo.main(["--files", "3", "--kib", "4", "--rounds", "1"])
    out = capsys.readouterr().out
    assert "bytes/edited byte" in out and "ratio:" in out
