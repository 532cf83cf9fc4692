"""Benchmark: the HTML export's fragments for a 10,000-call session vs ``replay --json``.

Run: ``.venv/bin/python benchmarks/bench_export_fragments.py [--calls 10000] [--runs 3]
[--terminal-output]``

The synthetic session of ``bench_store.py`` (terminal-like output, edits, grep output) is
written once; then, alternately and ``--runs`` times each, in this process:

- ``json``: the baseline, what ``acp-sidecar replay --json`` does — the log replayed through
  the bridge's translator (``load_notifications``) and every message ``json.dumps``-ed;
- ``html``: the same replay, each update folded (messages joined, cards folded with
  ``apply_tool_update``) and drawn with :mod:`acp_sidecar.export.cards`, the page's parts
  joined into one string inside one ``highlight_budget()``, as the HTML writer does (the
  document's shell is not included: it is a few kilobytes);
- ``html+diffs``: the same, but each edit card keeps the diff its ``tool_call`` showed (the
  synthetic edits end with a text result that replaces it; the real ``edit`` tool's cards keep
  their diff), so 3,333 diffs of 900-character texts are drawn.

Medians are printed with the ratio to ``json`` and the HTML's size. Goal (issue 16): the whole
export ≤ 2× ``replay --json``. The machine is shared and noisy: trust the ratio of one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _messages(path: Path, terminal_output: bool) -> Iterator[dict[str, Any]]:
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.bridge.context import CardContext
    from acp_sidecar.bridge.replay import load_notifications
    from acp_sidecar.store import SessionLog

    lookup = ToolsProvider(()).registry.get
    with SessionLog(path) as log:
        header = log.header
        ctx = CardContext(cwd=header.cwd, terminal_output=terminal_output)
        yield from load_notifications(header.session_id, header, log, lookup, ctx)


def run_json(path: Path, terminal_output: bool) -> int:
    size = 0
    for message in _messages(path, terminal_output):
        size += len(json.dumps(message, ensure_ascii=False)) + 1
    return size


def run_html(path: Path, terminal_output: bool, *, keep_diffs: bool = False) -> int:
    from acp_sidecar.export.highlight import highlight_budget
    from acp_sidecar.render.fold import CardState, apply_tool_update

    blocks: list[Any] = []  # [role, blocks] for messages, CardState for cards
    cards: dict[str, CardState] = {}
    cwd = "/work/project"
    for message in _messages(path, terminal_output):
        update: Mapping[str, Any] = message["params"]["update"]
        tag = update["sessionUpdate"]
        if tag in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk"):
            tail = blocks[-1] if blocks else None
            if isinstance(tail, list) and tail[0] == tag:
                tail[1].append(update["content"])
            else:
                blocks.append([tag, [update["content"]]])
        elif tag in ("tool_call", "tool_call_update"):
            card = cards.get(update["toolCallId"])
            if card is None:
                card = cards[update["toolCallId"]] = CardState(update["toolCallId"])
                blocks.append(card)
            if keep_diffs and any(item.get("type") == "diff" for item in card.content):
                update = {k: v for k, v in update.items() if k != "content"}
            apply_tool_update(card, update)
        elif tag == "plan":
            blocks.append(("plan", update["entries"]))
    with highlight_budget():
        page = _draw(blocks, cwd)
    return len(page.encode())


def run_html_diffs(path: Path, terminal_output: bool) -> int:
    return run_html(path, terminal_output, keep_diffs=True)


def _draw(blocks: list[Any], cwd: str) -> str:
    from acp_sidecar.export.cards import card_html, message_html, plan_html, thought_html
    from acp_sidecar.render.fold import CardState

    parts = []
    for block in blocks:
        if isinstance(block, CardState):
            parts.append(card_html(block, cwd))
        elif block[0] == "plan":
            parts.append(plan_html(block[1]))
        elif block[0] == "agent_thought_chunk":
            parts.append(thought_html(block[1]))
        else:
            role = "user" if block[0] == "user_message_chunk" else "agent"
            parts.append(message_html(role, block[1]))
    return "".join(f'<div class="entry">{part}</div>' for part in parts)


def main() -> None:
    from bench_store import build_session

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--terminal-output", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = build_session(Path(tmp), args.calls)
        print(f"session: {args.calls} calls, {path.stat().st_size / 1e6:.1f} MB log")
        times: dict[str, list[float]] = {"json": [], "html": [], "html+diffs": []}
        sizes: dict[str, int] = {}
        for _ in range(args.runs):
            for mode, run in (
                ("json", run_json),
                ("html", run_html),
                ("html+diffs", run_html_diffs),
            ):
                start = time.perf_counter()
                sizes[mode] = run(path, args.terminal_output)
                times[mode].append(time.perf_counter() - start)
    base = statistics.median(times["json"])
    for mode, values in times.items():
        median = statistics.median(values)
        print(
            f"{mode:10} median {median:6.2f} s  ×{median / base:4.2f}  "
            f"output {sizes[mode] / 1e6:6.1f} MB  runs {', '.join(f'{v:.2f}' for v in values)}"
        )


if __name__ == "__main__":
    main()
