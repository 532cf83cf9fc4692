"""The shapes of the extension methods the sidecar serves, which the ACP schema does not
define: pinned here as the leading agents speak them (codex-acp ``src/AcpExtensions.ts``:
``SessionSteerRequest {sessionId, prompt: ContentBlock[]}``, ``SessionSteeringResponse
{outcome}``; the ``promptRequired`` outcome and the request's
``_meta.steering.idleBehavior`` as clients of the extension send and read them)."""

from __future__ import annotations

from typing import Any

STEERING_OUTCOMES = frozenset({"injected", "startedNewTurn", "promptRequired", "failed"})


def check_steering_answer(result: Any) -> None:
    """Raise ``AssertionError`` unless ``result`` is a ``_session/steering`` answer."""
    assert isinstance(result, dict), result
    assert set(result) <= {"outcome", "_meta"}, result
    assert result.get("outcome") in STEERING_OUTCOMES, result


def check_steering_advertised(result: Any) -> None:
    """Raise unless an ``initialize`` answer advertises steering as the leading agents do."""
    assert result["_meta"]["steering"] == {"supported": True}, result


EXTENSION_RESULTS = {"_session/steering": check_steering_answer}
"""Each extension method's answer check (an extension method not here is not checked)."""
