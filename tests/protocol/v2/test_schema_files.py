"""The vendored v2 schema files are the ones ``SOURCE.md`` names, and the validator judges by
them when asked for ``version=2`` (and by the v1 files otherwise)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from tests.acp_schema import (
    V2_SCHEMA_PATH,
    V2_UNSTABLE_SCHEMA_PATH,
    SchemaViolation,
    schema_methods,
    validate_agent_message,
)


@pytest.mark.parametrize("path", [V2_SCHEMA_PATH, V2_UNSTABLE_SCHEMA_PATH], ids=lambda p: p.name)
def test_vendored_file_is_the_one_source_names(path: Path) -> None:
    source = (path.parent / "SOURCE.md").read_text(encoding="utf-8")
    named = re.search(rf"`{re.escape(path.name)}` `([0-9a-f]{{64}})`", source)
    assert named is not None
    assert hashlib.sha256(path.read_bytes()).hexdigest() == named.group(1)


def test_each_version_has_its_own_methods() -> None:
    v1 = schema_methods("agent", "Request")
    v2 = schema_methods("agent", "Request", version=2)
    assert {"auth/login", "auth/logout", "tool_call/cancel", "terminal/cancel"} <= v2 - v1
    assert {"session/load", "session/set_mode", "authenticate", "logout"} <= v1 - v2


def test_v2_answer_is_judged_by_the_v2_file() -> None:
    v2_answer = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {"protocolVersion": 2, "info": {"name": "a", "version": "1"}},
    }
    validate_agent_message(v2_answer, request_method="initialize", version=2)
    v1_answer = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}
    validate_agent_message(v1_answer, request_method="initialize")
    with pytest.raises(SchemaViolation, match="'info' is a required property"):
        validate_agent_message(v1_answer, request_method="initialize", version=2)


def test_v1_only_method_is_refused_under_v2() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s",
            "toolCall": {"toolCallId": "c"},
            "options": [],
        },
    }
    validate_agent_message(request)
    with pytest.raises(SchemaViolation):
        validate_agent_message(request, version=2)
