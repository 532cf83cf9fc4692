"""``probe_endpoint`` against the scripted OpenAI-compatible server: a working endpoint, one
that cannot be reached, a refused key, servers that do not call tools, and the rest of what
an endpoint can get wrong. The key never appears in a report."""

from __future__ import annotations

import socket

import attrs
import pytest

from acp_sidecar.agent.model.probe import (
    CHECK_NAMES,
    PROBE_MAX_TOKENS,
    TOOL_FIX,
    EndpointReport,
    probe_endpoint,
)
from tests.agent.model.fake_openai import (
    Pause,
    Reply,
    ScriptedOpenAI,
    answer,
    call,
    calling,
    chunk,
    listed,
    say,
    stop,
    think,
    tool_call,
)

KEY = "sk-probe-secret-0123456789"


def statuses(report: EndpointReport) -> dict[str, str]:
    return {check.name: check.status for check in report.checks}


def text_of(report: EndpointReport) -> str:
    return repr(report) + "".join(f"{c.detail}\n{c.fix}\n" for c in report.checks)


def refused_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_a_working_endpoint_passes_every_check(endpoint: ScriptedOpenAI) -> None:
    endpoint.models = listed("test-model", "other-model")
    endpoint.script(
        Reply(
            [
                *think("The user wants ", "the time."),
                call(0, call_id="call_1", name="get_time", arguments='{"timez'),
                call(0, arguments='one": "UTC"}'),
                stop("tool_calls"),
            ]
        )
    )
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    assert report.ok
    assert [check.name for check in report.checks] == list(CHECK_NAMES)
    assert statuses(report) == dict.fromkeys(CHECK_NAMES, "ok")
    assert report.models == ("test-model", "other-model")
    assert report.base_url == endpoint.base_url
    assert (
        report.check("tool calls").detail == 'The model called get_time with {"timezone": "UTC"}.'
    )
    assert report.check("reasoning").detail == (
        "24 characters of reasoning streamed in reasoning_content."
    )
    assert report.check("streaming").detail == "The answer came in 5 chunks."
    assert all(check.fix is None for check in report.checks)
    (request,) = endpoint.requests
    body = request.body
    assert body["model"] == "test-model" and body["stream"] is True
    assert [tool["function"]["name"] for tool in body["tools"]] == ["get_time"]
    assert body["temperature"] == 0 and body["max_tokens"] == PROBE_MAX_TOKENS
    assert "tool_choice" not in body  # as the driver asks: a server that needs it must show
    assert request.headers["authorization"] == f"Bearer {KEY}"


async def test_an_endpoint_that_cannot_be_reached_fails_with_a_fix() -> None:
    url = f"http://127.0.0.1:{refused_port()}/v1"
    report = await probe_endpoint(url, KEY, "test-model", timeout=5)
    assert not report.ok
    reachable = report.check("reachable")
    assert reachable.status == "failed"
    assert reachable.detail.startswith(f"Could not reach the model endpoint {url} (")
    assert reachable.fix is not None and "--base-url" in reachable.fix
    assert statuses(report) == {"reachable": "failed"} | dict.fromkeys(CHECK_NAMES[1:], "skipped")
    assert report.check("tool calls").detail == "The endpoint is not reachable."


async def test_a_base_url_that_is_not_http_fails_without_a_request() -> None:
    report = await probe_endpoint("localhost:11434", None, "qwen3", timeout=5)
    assert report.check("reachable").status == "failed"
    assert (
        report.check("reachable").detail == "'localhost:11434' is not an http:// or https:// URL."
    )


async def test_a_refused_key_fails_the_key_and_asks_nothing_more(endpoint: ScriptedOpenAI) -> None:
    endpoint.key = "sk-the-right-key-000000"
    endpoint.models = listed("test-model")
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    key = report.check("key")
    assert key.status == "failed"
    assert key.detail.startswith(f"The model endpoint {endpoint.base_url} rejected the API key")
    assert "Incorrect API key provided: [API key]" in key.detail  # the server quoted it
    assert key.fix == "Check the value of $OPENAI_API_KEY: the endpoint refused it."
    assert report.check("reachable").status == "ok"
    assert report.check("model answers").status == "skipped"
    assert endpoint.requests == []  # no chat request after a 401
    assert KEY not in text_of(report)


async def test_a_key_refused_only_by_the_chat_request(endpoint: ScriptedOpenAI) -> None:
    endpoint.script(
        Reply(
            status=401,
            body={"error": {"message": f"invalid key {KEY}"}},
            headers={"x-should-retry": "false"},
        )
    )
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    assert report.check("models listed").status == "warning"  # no /models here
    assert report.check("key").status == "failed"
    assert KEY not in text_of(report)


async def test_a_missing_key_says_one_is_needed(endpoint: ScriptedOpenAI) -> None:
    endpoint.key = "sk-the-right-key-000000"
    report = await probe_endpoint(endpoint.base_url, None, "test-model", timeout=5)
    key = report.check("key")
    assert key.status == "failed" and "needs an API key" in key.detail


async def test_a_model_that_answers_in_text_fails_tool_calls_with_the_known_fixes(
    endpoint: ScriptedOpenAI,
) -> None:
    endpoint.models = listed("test-model")
    endpoint.script(answer("It is ", "about noon in UTC."))
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    assert not report.ok
    tools = report.check("tool calls")
    assert tools.status == "failed"
    assert tools.detail == (
        "The model answered in text instead of calling the tool: It is about noon in UTC."
    )
    assert tools.fix == TOOL_FIX
    for known in ("tool_choice", "--jinja", "Ollama", "--enable-auto-tool-choice"):
        assert known in TOOL_FIX
    assert report.check("model answers").status == "ok"
    assert report.check("streaming").status == "ok"
    assert report.check("reasoning").status == "skipped"


async def test_a_call_written_as_text_is_told_apart(endpoint: ScriptedOpenAI) -> None:
    endpoint.script(answer('<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'))
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    tools = report.check("tool calls")
    assert tools.status == "failed"
    assert tools.detail.startswith("The model wrote the call as text, and the server did not")


async def test_a_server_that_refuses_tools_fails_tool_calls(endpoint: ScriptedOpenAI) -> None:
    refusal = "registry.ollama.ai/library/gemma:2b does not support tools"
    endpoint.script(Reply(status=400, body={"error": {"message": refusal}}))
    report = await probe_endpoint(endpoint.base_url, KEY, "gemma:2b", timeout=5)
    assert report.check("tool calls").status == "failed"
    assert report.check("tool calls").fix == TOOL_FIX
    answers = report.check("model answers")
    assert answers.status == "failed" and refusal in answers.detail
    assert report.check("key").status == "ok"  # the server answered past the key


async def test_arguments_that_are_not_json_fail(endpoint: ScriptedOpenAI) -> None:
    endpoint.script(calling(tool_call(0, "call_1", "get_time", "{timezone: UTC")))
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    tools = report.check("tool calls")
    assert tools.status == "failed"
    assert (
        tools.detail == "The model called get_time, but its arguments are not JSON: {timezone: UTC"
    )


async def test_a_refused_temperature_is_asked_again_without_it(endpoint: ScriptedOpenAI) -> None:
    endpoint.script(
        Reply(
            status=400,
            body={"error": {"message": "Unsupported value: 'temperature' does not support 0."}},
        ),
        calling(tool_call(0, "call_1", "get_time", '{"timezone": "UTC"}')),
    )
    report = await probe_endpoint(endpoint.base_url, KEY, "o4-mini", timeout=5)
    assert report.ok, report
    first, second = endpoint.requests
    assert first.body["temperature"] == 0 and "temperature" not in second.body


async def test_an_unknown_model_names_the_listed_ones(endpoint: ScriptedOpenAI) -> None:
    endpoint.models = listed("deepseek-chat", "deepseek-reasoner")
    endpoint.script(Reply(status=404, body={"error": {"message": "Model Not Exist"}}))
    report = await probe_endpoint(endpoint.base_url, KEY, "deepseek-chatt", timeout=5)
    assert report.check("models listed").status == "warning"
    answers = report.check("model answers")
    assert answers.status == "failed" and "Model Not Exist" in answers.detail
    assert answers.fix is not None
    assert answers.fix.endswith("The endpoint lists: deepseek-chat, deepseek-reasoner.")


async def test_without_a_model_only_the_listing_is_asked(endpoint: ScriptedOpenAI) -> None:
    endpoint.models = listed(*(f"m{n}" for n in range(10)))
    report = await probe_endpoint(endpoint.base_url, KEY, None, timeout=5)
    assert report.ok and endpoint.requests == []
    assert report.models == tuple(f"m{n}" for n in range(10))
    assert (
        report.check("models listed").detail
        == "10 listed: m0, m1, m2, m3, m4, m5, m6, m7 and 2 more."
    )
    assert report.check("tool calls").status == "skipped"
    assert report.check("tool calls").detail.startswith("No model was named, so none was asked")


async def test_an_answer_that_is_not_a_stream_fails_streaming(endpoint: ScriptedOpenAI) -> None:
    endpoint.script(Reply([]))  # nothing but [DONE]
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    assert report.check("streaming").status == "failed"
    assert report.check("model answers").status == "failed"


async def test_one_chunk_is_a_warning(endpoint: ScriptedOpenAI) -> None:
    whole = chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                }
            ]
        },
        "tool_calls",
    )
    endpoint.script(Reply([whole]))
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    assert report.check("streaming").status == "warning"
    assert report.check("tool calls").status == "ok" and report.ok


async def test_reasoning_inside_the_text_is_a_warning(endpoint: ScriptedOpenAI) -> None:
    endpoint.script(Reply([*say("<think>", "the time", "</think>", "Noon."), stop()]))
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    reasoning = report.check("reasoning")
    assert reasoning.status == "warning" and reasoning.fix is not None
    assert "--reasoning-format" in reasoning.fix


async def test_an_answer_cut_at_the_cap_before_a_call_is_a_warning(
    endpoint: ScriptedOpenAI,
) -> None:
    endpoint.script(Reply([*think("Hmm, ", "let me think"), stop("length")]))
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    assert report.check("tool calls").status == "warning"
    assert report.check("reasoning").status == "ok"
    assert report.ok


async def test_a_model_that_does_not_answer_in_time(endpoint: ScriptedOpenAI) -> None:
    endpoint.script(Reply([*say("It is"), Pause()]))
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=0.5)
    answers = report.check("model answers")
    assert answers.status == "failed"
    assert answers.detail == "'test-model' did not answer within 0.5 seconds."


@pytest.mark.parametrize("status", [500, 403])
async def test_the_key_is_redacted_from_an_echoing_server(
    endpoint: ScriptedOpenAI, status: int
) -> None:
    echo = {"error": {"message": f"request with key {KEY} failed"}}
    endpoint.models = attrs.evolve(listed("test-model"), status=status)
    endpoint.script(Reply(status=status, body=echo, headers={"x-should-retry": "false"}))
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    assert not report.ok
    assert KEY not in text_of(report)
    assert "[API key]" in report.check("model answers").detail


async def test_a_stream_that_does_not_parse_is_a_failure_not_an_exception(
    endpoint: ScriptedOpenAI,
) -> None:
    endpoint.script(Reply([*say("It is"), "{not json"]))
    report = await probe_endpoint(endpoint.base_url, KEY, "test-model", timeout=5)
    answers = report.check("model answers")
    assert answers.status == "failed"
    assert answers.detail.startswith(f"The answer of {endpoint.base_url} could not be read (")
    assert answers.fix is not None and "OpenAI-compatible" in answers.fix


async def test_a_key_that_cannot_go_in_a_header_is_a_failed_check_not_a_crash() -> None:
    report = await probe_endpoint("http://127.0.0.1:9/v1", "sk-tést-secret123", "m", timeout=2)
    assert not report.ok
    assert report.check("reachable").status == "failed"
    assert all("tést" not in c.detail + (c.fix or "") for c in report.checks)
