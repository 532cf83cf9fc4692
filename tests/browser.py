"""A small DevTools-protocol client for headless Chromium: the export's browser tests and
``benchmarks/bench_export.py`` drive a real browser through it.

It talks over ``--remote-debugging-pipe``: the browser reads commands on its fd 3 and writes
answers and events on its fd 4, each message one JSON text ended by a NUL byte — no
websocket, no dependency. A page is a target attached in flat mode (commands carry its
``sessionId``).

Invariants:
- every wait has a deadline: past it, :class:`BrowserError` says what was awaited;
- the browser and every process it started (its own process group) are killed when the
  :class:`Browser` context exits, whatever happened inside it; its fresh
  ``--user-data-dir`` is removed;
- a :class:`Page` records, from the moment it exists, every console message, uncaught
  exception, log entry and network request of the page — a test reads them, never misses
  one that came before it looked.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import attrs

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""Executables looked for on ``PATH`` when ``$CHROMIUM`` does not name one."""

DEFAULT_TIMEOUT = 30.0
"""Seconds any one command or event may take, unless the call says otherwise."""


class BrowserError(Exception):
    """The browser failed, answered with an error, or did not answer in time."""


def find_chromium() -> str | None:
    """The Chromium executable: ``$CHROMIUM`` if set, else the first of :data:`CANDIDATES`
    on ``PATH``; ``None`` when there is none."""
    named = os.environ.get("CHROMIUM")
    if named:
        return shutil.which(named)
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@attrs.frozen
class ConsoleEntry:
    """One thing the page said: a console call, an uncaught exception or a log entry."""

    source: Literal["console", "exception", "log"]
    level: str
    """``error``, ``warning``, ``info``, ``log``, … (an exception is ``error``)."""
    text: str


def _console_text(args: list[dict[str, Any]]) -> str:
    parts = []
    for arg in args:
        if "value" in arg:
            parts.append(str(arg["value"]))
        else:
            parts.append(str(arg.get("description", arg.get("type", "?"))))
    return " ".join(parts)


class Page:
    """One tab: navigate, evaluate, emulate, capture. Get one from :meth:`Browser.new_page`."""

    def __init__(self, browser: Browser, target_id: str, session_id: str) -> None:
        self.browser = browser
        self.target_id = target_id
        self.session_id = session_id
        self.url: str | None = None
        """The last URL opened."""
        self.console: list[ConsoleEntry] = []
        """Console calls, uncaught exceptions and log entries, in order."""
        self.requests: list[str] = []
        """The URL of every request the page made (``Network.requestWillBeSent``)."""
        self.events: list[dict[str, Any]] = []
        """Every event of this page, in order (see :meth:`wait_event`)."""

    # -- events ------------------------------------------------------------------------

    def on_event(self, message: dict[str, Any]) -> None:
        """Record one event of this page (called by the browser's reader)."""
        self.events.append(message)
        method, params = message["method"], message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            kind = params.get("type", "log")
            level = "error" if kind in ("error", "assert") else kind
            self.console.append(ConsoleEntry("console", level, _console_text(params["args"])))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.console.append(ConsoleEntry("exception", "error", str(text)))
        elif method == "Log.entryAdded":
            entry = params["entry"]
            self.console.append(ConsoleEntry("log", entry["level"], entry.get("text", "")))
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])

    def wait_event(
        self,
        method: str,
        *,
        since: int = 0,
        timeout: float = DEFAULT_TIMEOUT,
        predicate: Callable[[dict[str, Any]], bool] | None = None,
    ) -> dict[str, Any]:
        """The first event ``method`` of this page at or after index ``since`` of
        :attr:`events` (waiting for it up to ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        index = since
        while True:
            while index < len(self.events):
                event = self.events[index]
                index += 1
                if event["method"] == method and (predicate is None or predicate(event)):
                    return event
            self.browser.pump(deadline, f"event {method}")

    def errors(self) -> list[ConsoleEntry]:
        """What the page reported at level ``error`` (exceptions included)."""
        return [entry for entry in self.console if entry.level == "error"]

    def network_requests(self) -> list[str]:
        """Requests other than the page's own document (``data:`` URLs load nothing and are
        left out)."""
        return [url for url in self.requests if url != self.url and not url.startswith("data:")]

    # -- commands ----------------------------------------------------------------------

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """One command to this page; its result."""
        return self.browser.send(method, params, session_id=self.session_id, timeout=timeout)

    def open(self, target: str | Path, *, timeout: float = 60.0) -> float:
        """Navigate to ``target`` (a URL, or a file path opened as ``file://``) and wait until
        it has loaded and painted: the load event, then two animation frames (so layout and
        a first paint are done). Returns the seconds from navigation to that point."""
        url = target.resolve().as_uri() if isinstance(target, Path) else target
        self.url = url
        since = len(self.events)
        start = time.perf_counter()
        answer = self.send("Page.navigate", {"url": url}, timeout=timeout)
        if answer.get("errorText"):
            raise BrowserError(f"could not open {url}: {answer['errorText']}")
        self.wait_event("Page.loadEventFired", since=since, timeout=timeout)
        self.evaluate(
            "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))",
            timeout=timeout,
        )
        return time.perf_counter() - start

    def evaluate(self, expression: str, *, timeout: float | None = None) -> Any:
        """The JSON value of ``expression`` evaluated in the page (promises are awaited).

        Raises:
            BrowserError: the expression threw (its description is in the message).
        """
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"evaluating {expression[:80]!r} threw: {text}")
        return result["result"].get("value")

    def set_viewport(self, width: int, height: int = 900, *, mobile: bool = False) -> None:
        """Lay the page out ``width`` CSS pixels wide (scale factor 1). ``mobile`` also
        emulates a phone: the page's ``<meta name="viewport">`` then decides its layout
        width, as on a real phone."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )

    def set_color_scheme(self, scheme: Literal["light", "dark"]) -> None:
        """Emulate ``prefers-color-scheme: scheme``."""
        self.send(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
        )

    def screenshot(self, *, full_page: bool = False) -> bytes:
        """A PNG of the viewport (or of the whole page, ``full_page``)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        return base64.b64decode(self.send("Page.captureScreenshot", params)["data"])

    def pdf(self) -> bytes:
        """The page printed to PDF (print media, backgrounds as the page's CSS asks)."""
        return base64.b64decode(self.send("Page.printToPDF", {}, timeout=60.0)["data"])

    def close(self) -> None:
        """Close this tab."""
        self.browser.send("Target.closeTarget", {"targetId": self.target_id})


class Browser:
    """A headless Chromium driven over its DevTools pipe; a context manager.

    ``with Browser(find_chromium()) as browser: page = browser.new_page(); page.open(path)``.
    """

    def __init__(self, executable: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.executable = executable
        self.timeout = timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._profile: str | None = None
        self._stderr: Any = None
        self._to_browser = -1
        self._from_browser = -1
        self._buffer = b""
        self._next_id = 0
        self._answers: dict[int, dict[str, Any]] = {}
        self._pages: dict[str, Page] = {}
        self._blank: Page | None = None

    # -- life --------------------------------------------------------------------------

    def arguments(self) -> list[str]:
        """The command line (without the executable)."""
        assert self._profile is not None
        args = [
            "--headless",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile}",
        ]
        if os.geteuid() == 0:
            # Chromium refuses to start its sandbox as root (CI runs as root).
            args.insert(1, "--no-sandbox")
        return [*args, "about:blank"]

    def __enter__(self) -> Browser:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        """Start the browser (see :meth:`arguments`)."""
        self._profile = tempfile.mkdtemp(prefix="acp-sidecar-chromium-")
        commands_read, self._to_browser = os.pipe()
        self._from_browser, events_write = os.pipe()
        # Kept open while the browser runs (closed by close()): its output, for errors.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        # The browser wants the pipe on fds 3 and 4 exactly: a small Python shim moves the
        # ends there and execs the browser (one pid, one process group to kill). Not a shell
        # redirection: dash only knows single-digit fds, and /usr/bin/chromium is itself a
        # shell script on Debian.
        try:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _SHIM,
                    str(commands_read),
                    str(events_write),
                    self.executable,
                    *self.arguments(),
                ],
                stdin=subprocess.DEVNULL,
                stdout=self._stderr,
                stderr=self._stderr,
                pass_fds=(commands_read, events_write),
                start_new_session=True,
            )
        finally:
            os.close(commands_read)
            os.close(events_write)
        try:
            self.send("Target.setDiscoverTargets", {"discover": False})
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Ask the browser to quit, then kill its process group; remove its profile."""
        process = self._process
        if process is not None:
            if process.poll() is None:
                try:
                    self.send("Browser.close", timeout=5.0)
                    process.wait(timeout=5.0)
                except (BrowserError, OSError, subprocess.TimeoutExpired):
                    pass
            self._process = None
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10.0)
        for fd in (self._to_browser, self._from_browser):
            if fd >= 0:
                os.close(fd)
        self._to_browser = self._from_browser = -1
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    def stderr_tail(self, limit: int = 2000) -> str:
        """The end of what the browser wrote on stdout and stderr (for error messages)."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return str(self._stderr.read()[-limit:].decode("utf-8", "replace"))

    # -- the wire ----------------------------------------------------------------------

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send one command and wait for its answer; its ``result``.

        Raises:
            BrowserError: an error answer, the browser gone, or no answer in time.
        """
        if self._process is None:
            raise BrowserError("the browser is not running")
        self._next_id += 1
        message_id = self._next_id
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        data = json.dumps(message).encode() + b"\0"
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while data:
            _, writable, _ = select.select([], [self._to_browser], [], self._left(deadline))
            if not writable:
                raise BrowserError(f"timed out sending {method}")
            try:
                data = data[os.write(self._to_browser, data) :]
            except BrokenPipeError:
                raise BrowserError(f"the browser is gone: {self.stderr_tail()}") from None
        while message_id not in self._answers:
            self.pump(deadline, f"the answer to {method}")
        answer = self._answers.pop(message_id)
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error'].get('message', answer['error'])}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    @staticmethod
    def _left(deadline: float) -> float:
        return max(0.0, deadline - time.monotonic())

    def pump(self, deadline: float, awaited: str) -> None:
        """Read what the browser has sent (waiting until ``deadline`` for something) and
        route it: answers by id, events to their page."""
        readable, _, _ = select.select([self._from_browser], [], [], self._left(deadline))
        if not readable:
            raise BrowserError(f"timed out waiting for {awaited}")
        chunk = os.read(self._from_browser, 1 << 20)
        if not chunk:
            raise BrowserError(f"the browser is gone: {self.stderr_tail()}")
        self._buffer += chunk
        *messages, self._buffer = self._buffer.split(b"\0")
        for raw in messages:
            message = json.loads(raw)
            if "id" in message:
                self._answers[message["id"]] = message
                continue
            page = self._pages.get(message.get("sessionId", ""))
            if page is not None:
                page.on_event(message)
            elif message.get("method") == "Target.detachedFromTarget":
                self._pages.pop(message["params"].get("sessionId", ""), None)

    # -- pages -------------------------------------------------------------------------

    def new_page(self, *, background: bool = False) -> Page:
        """A new tab with the Page, Runtime, Log and Network domains on; in front of the
        others unless ``background`` (a tab behind another gets no animation frames)."""
        created = self.send("Target.createTarget", {"url": "about:blank", "background": background})
        target_id = created["targetId"]
        session_id = self.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, target_id, session_id)
        self._pages[session_id] = page
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(f"{domain}.enable")
        return page

    def distinct_colours(self, png: bytes, *, limit: int = 2) -> int:
        """How many distinct colours the PNG holds, counted up to ``limit``: decoded and
        drawn on a canvas in a blank tab of this browser (never the page under test)."""
        if self._blank is None:  # behind the page under test, which must keep its frames
            self._blank = self.new_page(background=True)
        encoded = base64.b64encode(png).decode()
        count = self._blank.evaluate(
            f"""(async () => {{
                const bytes = Uint8Array.from(atob("{encoded}"), c => c.charCodeAt(0));
                const image = await createImageBitmap(new Blob([bytes], {{type: "image/png"}}));
                const canvas = new OffscreenCanvas(image.width, image.height);
                const context = canvas.getContext("2d");
                context.drawImage(image, 0, 0);
                const pixels = new Uint32Array(
                    context.getImageData(0, 0, image.width, image.height).data.buffer);
                const seen = new Set();
                for (const pixel of pixels) {{
                    seen.add(pixel);
                    if (seen.size >= {limit}) break;
                }}
                return seen.size;
            }})()""",
            timeout=60.0,
        )
        assert isinstance(count, int)
        return count


_SHIM = """
import fcntl, os, sys
ends = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3]]
for fd in sys.argv[1:3]:
    os.close(int(fd))
for target, end in zip((3, 4), ends):
    os.dup2(end, target)
    os.close(end)
os.execv(sys.argv[3], sys.argv[3:])
"""
"""Put the pipe's ends (argv 1 and 2) on fds 3 and 4, then exec argv 3 onwards. Each end
is first copied above fd 9: an end may itself be fd 3 or 4."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """The width and height of a PNG, from its IHDR chunk (checked with its CRC).

    Raises:
        ValueError: not a PNG.
    """
    if data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    (length,) = struct.unpack(">I", data[8:12])
    body = data[16 : 16 + length]
    (crc,) = struct.unpack(">I", data[16 + length : 20 + length])
    if zlib.crc32(b"IHDR" + body) != crc:
        raise ValueError("a PNG with a damaged header")
    width, height = struct.unpack(">II", body[:8])
    return width, height
