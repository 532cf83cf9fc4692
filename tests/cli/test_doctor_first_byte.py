"""``doctor`` judges how long the model's answer took to begin against the first-byte
timeout the sidecar would give it, and suggests a longer one when it came close (a local
server that loads the model on first use). In process, against the scripted endpoint; the
probe's clock is the test's, moved on by ``held`` seconds while the answer is held, so the
judgement is exact and never depends on the machine's speed."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from types import SimpleNamespace

import attrs
import pytest

from acp_sidecar.agent.model import probe
from acp_sidecar.checks import Check
from acp_sidecar.cli import build_parser, with_config_file
from acp_sidecar.doctor import diagnose
from tests.agent.model.fake_openai import Pause, ScriptedOpenAI, call, calling, listed, think

CLEARED = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ACP_SIDECAR_MODEL", "ACP_SIDECAR_CONFIG")


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*CLEARED, "ACP_SIDECAR_FIRST_BYTE_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


async def first_byte_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, waited: float, held: float
) -> Check:
    """Doctor's finding on the first byte, for a model whose answer is held ``held`` seconds
    (of the probe's clock) and a sidecar that would wait ``waited`` seconds for it."""
    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(probe, "time", SimpleNamespace(perf_counter=lambda: clock.now))
    async with ScriptedOpenAI() as endpoint:
        endpoint.models = listed("test-model")
        pause = Pause()
        working = calling(
            *think("Time: call get_time."),
            call(0, call_id="call_1", name="get_time", arguments='{"timezone": "UTC"}'),
        )
        endpoint.script(attrs.evolve(working, before=pause))

        async def release() -> None:
            await pause.reached.wait()
            clock.now += held
            pause.release.set()

        releasing = asyncio.ensure_future(release())
        argv = ["doctor", "--model", "test-model", "--base-url", endpoint.base_url]
        args = with_config_file(
            build_parser().parse_args([*argv, "--first-byte-timeout", str(waited)])
        )
        findings = await diagnose(args, os.environ, offline=False, timeout=10)
        await releasing
    [finding] = [f.check for f in findings if f.check.name == "first byte"]
    assert [f.check.status for f in findings if f.section == "endpoint"].count("failed") == 0
    return finding


async def test_an_answer_slow_to_begin_gets_a_longer_first_byte_timeout_suggested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    finding = await first_byte_finding(tmp_path, monkeypatch, waited=600, held=400)

    assert finding.status == "warning"
    assert finding.detail == (
        "The answer took 400.0 s to begin: acp-sidecar gives up on an answer that has not "
        "begun after 600 s (the first-byte timeout)."
    )
    assert finding.fix == (
        "Give it longer: first_byte_timeout = 1200 in the config file, --first-byte-timeout "
        "1200 or ACP_SIDECAR_FIRST_BYTE_TIMEOUT=1200. A local server that loads the model on first "
        "use is slow to begin until the model is loaded."
    )


async def test_an_answer_quick_to_begin_is_within_the_first_byte_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    finding = await first_byte_finding(tmp_path, monkeypatch, waited=600, held=200)

    assert finding.status == "ok"
    assert finding.detail == "The answer began after 200.0 s; acp-sidecar waits up to 600 s."
