"""``doctor`` in process: each section is shown as soon as it is checked, the endpoint's
with a spinner while it is asked (no clock: the endpoint itself looks at what was shown
when it is reached)."""

from __future__ import annotations

import io
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from acp_sidecar.cli import build_parser, with_config_file
from acp_sidecar.doctor import report


class Endpoint:
    """A port that accepts one connection, notes what the doctor had shown by then, and
    hangs up."""

    def __init__(self, shown: io.StringIO) -> None:
        self._shown = shown
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen()
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"
        self.seen: str | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        connection, _ = self._socket.accept()
        self.seen = self._shown.getvalue()
        connection.close()

    def close(self) -> None:
        self._socket.close()
        self._thread.join(5)


@pytest.fixture
def shown() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def endpoint(shown: io.StringIO) -> Iterator[Endpoint]:
    running = Endpoint(shown)
    yield running
    running.close()


async def test_sections_are_shown_as_they_complete_with_a_spinner_on_the_endpoint(
    tmp_path: Path,
    shown: io.StringIO,
    endpoint: Endpoint,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-doctor-progress-0123456789")
    argv = ["doctor", "--model", "m", "--base-url", endpoint.url, "--store", str(tmp_path)]
    args = with_config_file(build_parser().parse_args(argv))
    console = Console(file=shown, force_terminal=True, width=120, color_system=None)

    findings = await report(args, {"OPENAI_API_KEY": "x"}, console, offline=False, timeout=20)

    assert endpoint.seen is not None  # the endpoint was asked
    # By then the config file and model sections were on the screen, the machine's not yet,
    # and a spinner said what was being waited for.
    assert "Config file" in endpoint.seen and "Model" in endpoint.seen
    assert "key present" in endpoint.seen
    assert "This machine" not in endpoint.seen
    assert f"Asking {endpoint.url}" in endpoint.seen
    assert "This machine" in shown.getvalue()
    assert {finding.section for finding in findings} == {"config", "model", "endpoint", "machine"}
