"""Credentials never travel from the endpoint's configuration or answers to the user, the
session log (which ``replay`` and every export read) or the process log: an error inside a
streamed 200 answer is redacted like any other, and a base URL's user name and password are
never shown (the request still carries them)."""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.agent.model.probe import probe_endpoint
from acp_sidecar.cli import build_parser, with_config_file
from acp_sidecar.configure.flags import ConfigureOptions, UsageError
from acp_sidecar.doctor import diagnose
from tests.agent.model.fake_openai import Reply, ScriptedOpenAI, listed, say
from tests.agent.model.harness import RecordedSession
from tests.fakes import Editor

KEY = "sk-streamed-secret-0123456789"
PASSWORD = "hunter2-PASSWORD-secret"

MakeDriver = Callable[..., ModelDriver]


def logged(tmp_path: Path) -> str:
    """Everything the session log holds (what ``replay`` and the exports show)."""
    return "".join(path.read_text() for path in tmp_path.glob("**/*.jsonl"))


async def test_an_error_inside_a_streamed_answer_is_redacted(
    make_driver: MakeDriver,
    endpoint: ScriptedOpenAI,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver = make_driver(api_key=KEY)
    revoked = {"error": {"message": f"key {KEY} was revoked\n  at billing.check()"}}
    endpoint.script(Reply([*say("Half"), revoked]))
    editor = Editor()

    with caplog.at_level(logging.DEBUG):
        assert await RecordedSession(tmp_path).run(driver, "hi", editor=editor) == "end_turn"

    assert editor.text() == (
        f"Half\n\nThe model endpoint {endpoint.base_url} reported an error while answering: "
        "key [API key] was revoked … (more in the log)"
    )
    assert "at billing.check()" in caplog.text  # the whole of it is logged, redacted
    for where in (editor.text(), logged(tmp_path), caplog.text):
        assert KEY not in where


def with_password(url: str) -> str:
    return url.replace("http://", f"http://proxy-user:{PASSWORD}@", 1)


async def test_a_base_url_s_credentials_are_never_shown_nor_logged(
    make_driver: MakeDriver,
    endpoint: ScriptedOpenAI,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver = make_driver(base_url=with_password(endpoint.base_url), max_retries=1)
    echoed = f"no route for {with_password(endpoint.base_url)} (password {PASSWORD})"
    endpoint.script(
        Reply(status=503, body={"error": {"message": "busy"}}, headers={"retry-after-ms": "10"}),
        Reply(status=500, body={"error": {"message": echoed}}, headers={"x-should-retry": "false"}),
    )
    editor = Editor()
    told: list[str] = []

    with caplog.at_level(logging.DEBUG):
        session = RecordedSession(tmp_path)
        stop = await session.run(driver, "hi", editor=editor, inform=told.append)
        assert stop == "end_turn"

    url = endpoint.base_url  # the same URL without its credentials
    assert told == [
        "The model request failed; retrying (1 of 1).\n\n"
        f"The model endpoint {url} answered HTTP 503 Service Unavailable; the request is sent "
        "again."
    ]
    assert editor.text() == (
        f"The model endpoint {url} failed with HTTP 500: no route for {url} (password [password])."
    )
    for where in (editor.text(), *told, logged(tmp_path), caplog.text):
        assert PASSWORD not in where
    # The request still carries them, as the URL said.
    expected = base64.b64encode(f"proxy-user:{PASSWORD}".encode()).decode()
    assert endpoint.requests[0].headers["authorization"] == f"Basic {expected}"
    assert endpoint.requests[0].path == "/v1/chat/completions"


async def test_the_probe_never_shows_a_base_url_s_credentials(
    endpoint: ScriptedOpenAI,
) -> None:
    endpoint.key = "sk-the-right-one-0123456789"
    endpoint.models = listed("test-model")

    report = await probe_endpoint(with_password(endpoint.base_url), None, "test-model", timeout=5)

    assert report.base_url == endpoint.base_url
    assert report.check("reachable").detail == f"{endpoint.base_url} answered."
    text = " ".join(f"{c.detail} {c.fix}" for c in report.checks)
    assert PASSWORD not in text and "proxy-user" not in text


def test_the_config_shows_its_url_without_credentials() -> None:
    config = ModelConfig(model="m", base_url=f"https://u:{PASSWORD}@llm.example.com:8443/v1?x=1")
    assert config.shown_url == "https://llm.example.com:8443/v1?x=1"
    assert config.endpoint_url.startswith("https://u:")  # what requests go to
    assert ModelConfig(model="m").shown_url == "https://api.openai.com/v1"
    assert PASSWORD not in repr(config)
    assert attrs.evolve(config, base_url="http://h/v1").shown_url == "http://h/v1"


async def test_doctor_shows_the_url_without_its_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ACP_SIDECAR_MODEL"):
        monkeypatch.delenv(name, raising=False)
    url = f"https://proxy-user:{PASSWORD}@llm.example.com/v1"
    argv = ["doctor", "--model", "m", "--base-url", url]
    args = with_config_file(build_parser().parse_args(argv))

    findings = await diagnose(args, os.environ, offline=True, timeout=5)

    [model] = [f.check for f in findings if f.check.name == "model"]
    assert model.detail.startswith("m (from --model) at https://llm.example.com/v1 (")
    assert PASSWORD not in " ".join(f"{f.check.detail} {f.check.fix}" for f in findings)


def test_configure_refuses_a_bad_url_without_showing_its_credentials() -> None:
    args = build_parser().parse_args(
        ["configure", "--base-url", f"ftp://proxy-user:{PASSWORD}@host/v1"]
    )
    with pytest.raises(UsageError) as refused:
        ConfigureOptions.from_args(args)
    assert str(refused.value).startswith("--base-url ftp://host/v1: expected an http")


async def test_a_failed_model_listing_is_logged_redacted(caplog: pytest.LogCaptureFixture) -> None:
    from acp_sidecar.agent.model.catalog import ModelCatalog

    config = ModelConfig(model="m", base_url=with_password("http://127.0.0.1:9/v1"), api_key=KEY)

    async def lister(timeout: float) -> list[object]:
        raise RuntimeError(f"HTTP 401: the key {KEY} is not valid at {config.endpoint_url}")

    with caplog.at_level(logging.DEBUG):
        await ModelCatalog(config, lister).list_models()  # type: ignore[arg-type]

    assert "listing the models of http://127.0.0.1:9/v1 failed" in caplog.text
    assert KEY not in caplog.text and PASSWORD not in caplog.text
