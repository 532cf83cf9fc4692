"""Benchmark: exporting a 10,000-call session as HTML and Markdown vs ``replay --json``, and
opening the HTML page in headless Chromium.

Run: ``.venv/bin/python benchmarks/bench_export.py [--calls 10000] [--runs 5] [--loads 3]
[--keep DIR]``

The session is :func:`bench_store.build_session`'s (about 50 MB of log: a command with 2.5 KB
of output, an edit, a grep of 20 matches, in turn). Each mode is a real ``acp-sidecar
replay`` subprocess, timed from start to exit (the interpreter's start is in every figure
alike):

- ``json``: the baseline — ``replay PATH --json > /dev/null``, the update stream
  ``session/load`` sends;
- ``html``: ``replay PATH --html OUT``;
- ``markdown``: ``replay PATH --markdown OUT``.

Modes run alternately, ``--runs`` times each; medians are printed with the ratio to
``json`` and the size of what each wrote. Then the HTML page is opened ``--loads`` times in
headless Chromium (``tests/browser.py``, a fresh tab each time): the time from navigation
to the load event and two animation frames after it (layout and a first paint done), with
the page's element and card counts.

Goals (issue 16): export ≤ 2× the ``json`` baseline; the page loads in ≤ 5 s. The machine
is shared and noisy: trust the medians and ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_store import build_session  # noqa: E402

from tests.browser import Browser, find_chromium  # noqa: E402

MODES = ("json", "html", "markdown")
EXPORT_GOAL = 2.0
"""Export time ≤ this × the ``json`` baseline."""
LOAD_GOAL = 5.0
"""Seconds for the page to load and paint."""


def command(mode: str, log: Path, out: Path) -> list[str]:
    """The ``acp-sidecar replay`` command line of one mode."""
    base = [sys.executable, "-m", "acp_sidecar", "replay", str(log)]
    if mode == "json":
        return [*base, "--json"]
    return [*base, f"--{mode}", str(out)]


def run_once(mode: str, log: Path, out: Path) -> float:
    """Seconds one export took (``json`` writes to ``/dev/null``; the others to a file in
    ``out``)."""
    start = time.perf_counter()
    done = subprocess.run(
        command(mode, log, out / f"export.{mode}"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=out,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"replay --{mode} failed ({done.returncode}): {done.stderr.decode()}")
    return seconds


def json_size(log: Path) -> int:
    """The bytes ``replay --json`` writes (counted once, untimed)."""
    size = 0
    with subprocess.Popen(command("json", log, log), stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        while chunk := process.stdout.read(1 << 20):
            size += len(chunk)
    return size


def measure(log: Path, out: Path, runs: int) -> dict[str, tuple[list[float], int]]:
    """Every mode ``runs`` times, alternating the order each round; with each one's output
    size."""
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for round_ in range(runs):
        order = MODES if round_ % 2 == 0 else tuple(reversed(MODES))
        for mode in order:
            times[mode].append(run_once(mode, log, out))
    sizes = {mode: (out / f"export.{mode}").stat().st_size for mode in MODES if mode != "json"}
    sizes["json"] = json_size(log)
    return {mode: (times[mode], sizes[mode]) for mode in MODES}


def page_loads(page_path: Path, loads: int) -> tuple[list[float], dict[str, int]] | str:
    """Load times of the HTML page in headless Chromium, and what it holds; or why not."""
    executable = find_chromium()
    if executable is None:
        return "no Chromium on PATH (apt-get install chromium, or set $CHROMIUM)"
    seconds: list[float] = []
    with Browser(executable, timeout=120.0) as browser:
        counts: dict[str, int] = {}
        for _ in range(loads):
            page = browser.new_page()
            page.set_viewport(1440, 900)
            seconds.append(page.open(page_path, timeout=120.0))
            counts = page.evaluate(
                """({
                    elements: document.getElementsByTagName('*').length,
                    cards: document.querySelectorAll('section.card').length,
                })"""
            )
            counts["errors"] = len(page.errors())
            counts["requests"] = len(page.network_requests())
            page.close()
    return seconds, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the session and exports here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        log = build_session(directory / "sessions", args.calls)
        size = log.stat().st_size
        print(
            f"session: {args.calls:,} calls, {size / 1e6:.1f} MB "
            f"(written in {time.perf_counter() - start:.1f} s) — {log}"
        )
        print(f"runs: {args.runs} per mode, alternating; each a fresh acp-sidecar process\n")
        results = measure(log, directory, args.runs)
        base = statistics.median(results["json"][0])
        print(f"{'mode':<10} {'median s':>9} {'× json':>7} {'output MB':>10}")
        for mode, (times, written) in results.items():
            median = statistics.median(times)
            print(f"{mode:<10} {median:>9.2f} {median / base:>7.2f} {written / 1e6:>10.1f}")
        worst = max(statistics.median(results[m][0]) / base for m in ("html", "markdown"))
        verdict = "met" if worst <= EXPORT_GOAL else "NOT met"
        print(f"goal: export ≤ {EXPORT_GOAL:g}× json — {verdict} ({worst:.2f}×)\n")

        loaded = page_loads(directory / "export.html", args.loads)
        if isinstance(loaded, str):
            print(f"page load: skipped — {loaded}")
            return
        seconds, counts = loaded
        median = statistics.median(seconds)
        print(
            f"page load in headless Chromium (navigation → load event + 2 frames), "
            f"{args.loads} loads: median {median:.2f} s "
            f"(min {min(seconds):.2f}, max {max(seconds):.2f})"
        )
        print(
            f"page: {counts['elements']:,} elements, {counts['cards']:,} cards, "
            f"{counts['errors']} console errors, {counts['requests']} network requests"
        )
        verdict = "met" if median <= LOAD_GOAL else "NOT met"
        print(f"goal: page load ≤ {LOAD_GOAL:g} s — {verdict}")


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    main()
