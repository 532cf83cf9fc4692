"""What the endpoint module decides without a server: the token-cap field, error details."""

from __future__ import annotations

import httpx2
import openai
import pytest

from acp_sidecar.agent.model.config import ModelConfig
from acp_sidecar.agent.model.endpoint import CUT, explain, first_line, token_limit_field
from acp_sidecar.agent.model.shown import redact


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("https://API.OpenAI.com/v1/", "max_completion_tokens"),
        ("https://team.openai.azure.com/openai/v1", "max_completion_tokens"),
        ("https://api.deepseek.com/v1", "max_tokens"),
        ("http://localhost:11434/v1", "max_tokens"),
        ("https://openrouter.ai/api/v1", "max_tokens"),
        ("https://notapi.openai.com.example/v1", "max_tokens"),
        ("https://evilopenai.azure.com/v1", "max_tokens"),
    ],
)
def test_openais_own_api_gets_max_completion_tokens_every_other_server_max_tokens(
    url: str, field: str
) -> None:
    assert token_limit_field(url) == field


def test_a_detail_is_its_first_line_bounded() -> None:
    assert first_line("  model not found  ") == "model not found"
    assert first_line("\n\nbad request:\n  at line 3") == "bad request" + CUT
    assert first_line("x" * 400) == "x" * 300 + CUT
    assert first_line("") == ""


def test_redact_replaces_the_key_only_when_there_is_one() -> None:
    assert redact("key sk-abcdefgh rejected", "sk-abcdefgh") == "key [API key] rejected"
    assert redact("nothing", None) == "nothing"
    assert redact("no key: none given", "none") == "no key: none given"  # a placeholder


@pytest.mark.parametrize(
    "error",
    [
        openai.AuthenticationError,
        openai.PermissionDeniedError,
        openai.NotFoundError,
        openai.RateLimitError,
        openai.InternalServerError,
        openai.BadRequestError,
    ],
)
@pytest.mark.parametrize("api_key", [None, "sk-wrong-0123456789"])
def test_a_servers_sentence_that_ends_in_a_period_gets_no_second_one(
    error: type[openai.APIStatusError], api_key: str | None
) -> None:
    status = {
        openai.AuthenticationError: 401,
        openai.PermissionDeniedError: 403,
        openai.NotFoundError: 404,
        openai.RateLimitError: 429,
        openai.InternalServerError: 500,
        openai.BadRequestError: 400,
    }[error]
    request = httpx2.Request("POST", "http://localhost:9/v1/chat/completions")
    response = httpx2.Response(status, request=request, headers={"x-should-retry": "false"})
    body = {"message": "Incorrect API key provided."}
    failure = error("Incorrect API key provided.", response=response, body=body)
    config = ModelConfig(model="m", base_url="http://localhost:9/v1", api_key=api_key)

    said = explain(failure, config)
    assert "Incorrect API key provided" in said
    assert ".." not in said, said
