"""The HTML export in a real browser: headless Chromium opens what ``acp-sidecar replay
SESSION --html OUT`` wrote and the tests read the DOM the export contract names.

What a page must do: load with no console error and no network request, hold no
``<script>``, show one card per tool call with the status the editor showed, diffs with
added lines, terminal output as text with its exit pill, collapse and clip long output, and
render non-blank at 360 and 1440 px, light and dark. A session full of hostile strings must
run nothing, keep the page's structure (the same counts as a harmless twin) and show every
string as text.

Expectations come from ``replay --json`` (the stream an editor gets), not from the export.
The first test shows that the checks themselves can fail, on a page made to fail them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.browser import Browser, BrowserError, Page, png_size
from tests.export.conftest import keep_artifact
from tests.export.sessions import (
    CWD,
    HOSTILE,
    write_hostile_session,
    write_sample_session,
)
from tests.in_process import Ran, run_cli

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "export" / "recorded.jsonl"
"""A session recorded from ``acp-sidecar serve`` (see ``tests/fixtures/export``)."""

STATUS_SHOWN = {"completed": "completed", "failed": "failed", "in_progress": "running"}
"""ACP status → the status the card shows (``pending`` stays ``pending``)."""


def _sidecar(*args: str) -> Ran:
    """``acp-sidecar ARGS``, in process."""
    return run_cli(*args)


def export_html(log: Path, out: Path) -> Path:
    """``acp-sidecar replay LOG --html OUT``; skips when this branch has no HTML export."""
    done = _sidecar("replay", str(log), "--html", str(out))
    if done.returncode == 2 and "--html" in done.stderr:
        pytest.skip(
            f"replay --html is not on this branch yet ({done.stderr.strip().splitlines()[-1]})"
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout_bytes == b"", "the page goes to OUT, nothing to stdout"
    return out


def editor_cards(log: Path) -> dict[str, str]:
    """Tool call id → the last status ``session/load`` gives it (from ``replay --json``)."""
    done = _sidecar("replay", str(log), "--json")
    assert done.returncode == 0, done.stderr
    statuses: dict[str, str] = {}
    for line in done.stdout.splitlines():
        update = json.loads(line)["params"]["update"]
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            call_id = update["toolCallId"]
            statuses[call_id] = update.get("status") or statuses.get(call_id, "pending")
    return statuses


def open_clean(browser: Browser, path: Path) -> Page:
    """A fresh tab on ``path``, checked: no error, no request, no script."""
    page = browser.new_page()
    seconds = page.open(path)
    print(f"{path.name}: {path.stat().st_size:,} bytes, loaded and painted in {seconds:.2f} s")
    assert page.errors() == []
    assert page.network_requests() == []
    assert page.evaluate("document.querySelectorAll('script').length") == 0
    return page


def cards(page: Page) -> dict[str, dict[str, Any]]:
    """Each card of the page by call id: its status, kind, title and what it holds."""
    found = page.evaluate(
        """[...document.querySelectorAll('section.card')].map(card => ({
            id: card.dataset.callId,
            status: card.dataset.status,
            kind: card.dataset.kind,
            shown: card.querySelector('.card-head .status')?.textContent.trim(),
            icon: card.querySelector('.card-head svg.kind-icon use')?.getAttribute('href'),
            title: card.querySelector('.card-head .card-title')?.textContent,
            added: card.querySelectorAll('.diff-lines tr.add').length,
            deleted: card.querySelectorAll('.diff-lines tr.del').length,
            diffPath: card.querySelector('.diff-path')?.textContent,
            command: card.querySelector('.terminal .term-command')?.textContent,
            output: [...card.querySelectorAll('.terminal .term-output')].map(
                pre => pre.textContent).join('\\n'),
            pill: card.querySelector('.exit-pill')?.className,
            more: card.querySelectorAll('details.more').length,
            clipped: card.querySelector('.clipped')?.textContent,
        }))"""
    )
    assert isinstance(found, list)
    by_id = {card["id"]: card for card in found}
    assert len(by_id) == len(found), "one card per call id"
    return by_id


# -- the checks can fail ---------------------------------------------------------------------


def test_the_client_sees_scripts_errors_and_requests(browser: Browser, tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!doctype html><title>bad</title><p>bad</p>"
        "<img src='http://127.0.0.1:9/pixel.png'>"
        "<script>window.__pwned = 1; console.error('said'); null.boom;</script>"
    )
    page = browser.new_page()
    page.open(bad)
    assert page.evaluate("window.__pwned") == 1
    assert page.evaluate("document.querySelectorAll('script').length") == 1
    errors = [(entry.source, entry.text) for entry in page.errors()]
    assert ("console", "said") in errors
    assert any(source == "exception" and "null" in text for source, text in errors)
    assert page.network_requests() == ["http://127.0.0.1:9/pixel.png"]
    assert page.requests[0] == bad.as_uri()
    noisy = page.screenshot()
    white = tmp_path / "white.html"
    white.write_text("<!doctype html><title>white</title><body style='background:#fff'>")
    page.set_viewport(300, 200)
    page.open(white)
    shot = page.screenshot()
    assert png_size(shot) == (300, 200)
    assert browser.distinct_colours(shot) == 1, "a blank page is blank"
    assert browser.distinct_colours(noisy) == 2
    page.close()


@pytest.mark.timeout(60)  # the hang guard: a wait without its deadline never returns
def test_every_wait_has_a_deadline(browser: Browser) -> None:
    page = browser.new_page()
    with pytest.raises(BrowserError, match=r"timed out waiting for event Never\.happens"):
        page.wait_event("Never.happens", timeout=0.3)
    with pytest.raises(BrowserError, match="threw"):
        page.evaluate("null.boom")
    page.close()


def test_the_browser_and_its_children_are_gone_after_the_context(browser: Browser) -> None:
    with Browser(browser.executable) as own:
        own.new_page().open("about:blank")
        process = own._process
        assert process is not None
        group = process.pid
        assert len(_living(group)) > 1, "the browser and its renderers"
    assert _living(group) == []


def _living(group: int) -> list[int]:
    """Processes of process group ``group`` that are not zombies (a container's init may
    never reap the browser's killed children)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


# -- the sample session ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample session's log and its exported page."""
    directory = tmp_path_factory.mktemp("sample")
    log = write_sample_session(directory / "sessions")
    return log, export_html(log, directory / "sample.html")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The session ``acp-sidecar serve`` recorded for the exports, and its page."""
    directory = tmp_path_factory.mktemp("recorded")
    log = directory / "recorded.jsonl"
    shutil.copyfile(RECORDED, log)
    return log, export_html(log, directory / "recorded.html")


@pytest.mark.parametrize("session", ["sample", "recorded"])
def test_every_card_is_there_with_its_status(
    browser: Browser, request: pytest.FixtureRequest, session: str
) -> None:
    log, html = request.getfixturevalue(session)
    page = open_clean(browser, html)
    shown = cards(page)
    expected = editor_cards(log)
    assert sorted(shown) == sorted(expected)
    for call_id, status in expected.items():
        card = shown[call_id]
        assert card["status"] in (status, STATUS_SHOWN.get(status, status)), call_id
        assert card["shown"] == STATUS_SHOWN.get(status, status), call_id
        assert card["icon"] == f"#k-{card['kind']}", call_id
        assert card["title"], call_id
    assert page.evaluate("document.querySelectorAll('svg symbol[id^=\"k-\"]').length") >= len(
        {card["kind"] for card in shown.values()}
    )
    page.close()


def test_diffs_and_terminals_are_drawn(browser: Browser, sample: tuple[Path, Path]) -> None:
    page = open_clean(browser, sample[1])
    shown = cards(page)
    edit, created = shown["edit-1"], shown["write-1"]
    assert (edit["added"], edit["deleted"]) == (1, 1)
    assert edit["diffPath"].strip().startswith("src/app.py"), "relative to the cwd"
    assert CWD not in edit["diffPath"]
    assert created["added"] == 1 and created["deleted"] == 0
    assert "new file" in created["diffPath"]
    highlighted = page.evaluate(
        "document.querySelectorAll('.card[data-call-id=\"edit-1\"] td.code span[class]').length"
    )
    assert highlighted > 0, "Pygments spans in the code cells"
    assert page.evaluate("document.querySelectorAll('[style*=\"color\"]').length") == 0

    ok, fail, killed = shown["run-ok"], shown["run-fail"], shown["run-killed"]
    assert ok["command"].strip() == "pytest -q"
    assert "12 passed" in ok["output"] and "\x1b" not in ok["output"]
    assert "progress 100%" in ok["output"] and "progress 10%" not in ok["output"], "\\r"
    assert page.evaluate(
        "document.querySelectorAll('.card[data-call-id=\"run-ok\"] .term-output span').length"
    ), "ANSI colours become spans"
    assert "exit-ok" in ok["pill"].split()
    assert "exit-fail" in fail["pill"].split()
    assert "exit-signal" in killed["pill"].split()

    assert shown["run-long"]["more"] == 1, "60 lines collapse behind a 'show all'"
    assert (
        page.evaluate(
            "document.querySelector('.card[data-call-id=\"run-long\"] details.more').open"
        )
        is False
    )
    assert "lines left out" in (shown["run-huge"]["clipped"] or "")
    huge = shown["run-huge"]["output"] or ""
    assert "huge line 1\n" in huge and "huge line 1000" in huge
    assert "huge line 500\n" not in huge, "the middle is left out"
    page.close()


def test_messages_plan_and_events(browser: Browser, sample: tuple[Path, Path]) -> None:
    page = open_clean(browser, sample[1])
    found = page.evaluate(
        """({
            user: [...document.querySelectorAll('.msg.msg-user')].map(e => e.textContent),
            agent: document.querySelectorAll('.msg.msg-agent').length,
            strong: document.querySelectorAll('.msg.msg-agent strong').length,
            code: document.querySelectorAll('.msg.msg-agent pre code').length,
            thoughts: [...document.querySelectorAll('details.thought')].map(d => d.open),
            plan: [...document.querySelectorAll('section.plan ol li')].map(li => li.className),
            events: [...document.querySelectorAll('.event')].map(e => e.className),
            times: [...document.querySelectorAll('.entry time[datetime]')].length,
            entries: document.querySelectorAll('.entry').length,
            csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content,
        })"""
    )
    assert len(found["user"]) == 2 and "Fix the failing test" in found["user"][0]
    assert found["agent"] >= 2 and found["strong"] >= 1 and found["code"] >= 1
    assert found["thoughts"] == [False], "thoughts start closed"
    assert found["plan"][:2] == ["plan-completed", "plan-in_progress"]
    events = " ".join(found["events"])
    for kind in ("event-mode", "event-model", "event-permission"):
        assert kind in events, kind
    assert found["times"] > 0 and found["times"] <= found["entries"]
    assert "default-src 'none'" in found["csp"]
    page.close()


@pytest.mark.parametrize("width", [360, 1440])
def test_screenshots_light_and_dark(
    browser: Browser, sample: tuple[Path, Path], artifacts: Path, width: int
) -> None:
    page = open_clean(browser, sample[1])
    backgrounds = {}
    for scheme in ("light", "dark"):
        page.set_viewport(width, 900, mobile=width < 600)
        page.set_color_scheme(scheme)
        page.evaluate(
            "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
        )
        backgrounds[scheme] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than {width} px"
        shot = page.screenshot()
        assert png_size(shot) == (width, 900)
        assert browser.distinct_colours(shot) > 1, f"blank at {width} px, {scheme}"
        kept = keep_artifact(artifacts, f"sample-{width}-{scheme}.png", shot)
        print(f"screenshot: {kept}")
    assert backgrounds["light"] != backgrounds["dark"], "prefers-color-scheme is followed"
    if width == 1440:
        assert page.pdf().startswith(b"%PDF"), "printable"
    page.close()


# -- hostile content -------------------------------------------------------------------------

STRUCTURE = """({
    cards: document.querySelectorAll('section.card').length,
    details: document.querySelectorAll('details').length,
    sections: document.querySelectorAll('section').length,
    entries: document.querySelectorAll('.entry').length,
    messages: document.querySelectorAll('.msg').length,
    links: document.querySelectorAll('a').length,
    images: document.querySelectorAll('img').length,
    handlers: [...document.querySelectorAll('*')].filter(
        e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
    scriptLinks: [...document.querySelectorAll('[href],[src]')].filter(
        e => /^\\s*javascript:/i.test(e.getAttribute('href') || e.getAttribute('src'))).length,
    pwned: typeof window.__pwned,
})"""


def test_hostile_content_stays_text(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = export_html(write_hostile_session(tmp_path / "a"), tmp_path / "hostile.html")
    # The twin: the same session with every hostile string replaced by harmless text of the
    # same shape (one line each), so both pages must have the same structure.
    monkeypatch.setattr(
        "tests.export.sessions.HOSTILE_TEXT", " ".join(f"harmless{n}" for n in range(len(HOSTILE)))
    )
    twin = export_html(write_hostile_session(tmp_path / "b"), tmp_path / "twin.html")

    page = open_clean(browser, hostile)
    structure = page.evaluate(STRUCTURE)
    text = page.evaluate("document.body.textContent")
    title = page.evaluate("document.title")
    shown = cards(page)
    tool, edit, run = shown["h-tool"], shown["h-edit"], shown["h-run"]
    page.close()
    page = open_clean(browser, twin)
    expected = page.evaluate(STRUCTURE)
    page.close()

    assert structure["pwned"] == "undefined"
    assert structure["handlers"] == 0 and structure["scriptLinks"] == 0
    assert structure == expected
    assert structure["cards"] == len(editor_cards(tmp_path / "a" / "hostile.jsonl"))
    for shown in HOSTILE[:4]:
        assert shown in text, shown
    assert HOSTILE[0] in title and HOSTILE[0] in tool["title"] and HOSTILE[1] in tool["title"]
    assert HOSTILE[2] in edit["diffPath"] and HOSTILE[2] in run["command"]
    assert "\x1b" not in text and "\x00" not in text
    assert "\ufffd" in text
