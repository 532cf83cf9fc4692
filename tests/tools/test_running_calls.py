"""The running-calls table: each call runs under a child of its turn's signal, which can be
cancelled alone (the turn goes on); a cancel of a call not running is refused; listeners hear
a call start and close, with whether it was cancelled alone."""

from __future__ import annotations

import pytest

from acp_sidecar.tools.cancel import CancelSignal, RunningCalls


def heard(calls: RunningCalls) -> list[tuple[str, ...]]:
    events: list[tuple[str, ...]] = []
    calls.listen(
        lambda call_id: events.append(("started", call_id)),
        lambda call_id, alone: events.append(("closing", call_id, str(alone))),
    )
    return events


def test_a_call_runs_under_its_own_child_signal_and_is_cancelled_alone() -> None:
    calls, turn = RunningCalls(), CancelSignal()
    events = heard(calls)
    with calls.running("c1", turn) as signal:
        assert "c1" in calls and signal is not turn
        assert calls.cancel("c1", "tool_call/cancel")
        assert signal.reason == "tool_call/cancel"
        assert not turn.cancelled  # the turn goes on
        assert not calls.cancel("c1", "again")  # already cancelled: not twice
    assert "c1" not in calls
    calls.closing("c1")
    assert events == [("started", "c1"), ("closing", "c1", "True")]


def test_a_turn_cancel_reaches_the_call_but_is_not_a_cancel_alone() -> None:
    calls, turn = RunningCalls(), CancelSignal()
    events = heard(calls)
    with calls.running("c1", turn) as signal:
        turn.cancel("session/cancel")
        assert signal.reason == "session/cancel"
    calls.closing("c1")
    assert events[-1] == ("closing", "c1", "False")


def test_calls_not_running_cannot_be_cancelled_and_close_silently() -> None:
    calls, turn = RunningCalls(), CancelSignal()
    events = heard(calls)
    assert not calls.cancel("never", "tool_call/cancel")
    calls.closing("never")  # answered without running (refused, denied): nothing to hear
    with calls.running("c1", turn):
        pass
    assert not calls.cancel("c1", "tool_call/cancel")  # ended: final
    calls.closing("c1")
    calls.closing("c1")  # heard once only
    assert events == [("started", "c1"), ("closing", "c1", "False")]


def test_a_failing_listener_is_logged_and_the_call_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls, turn = RunningCalls(), CancelSignal()

    def broken(call_id: str) -> None:
        raise RuntimeError("listener bug")

    calls.listen(broken, lambda call_id, alone: None)
    events = heard(calls)
    stop = calls.listen(lambda call_id: events.append(("second", call_id)), lambda *_: None)
    stop()
    with calls.running("c1", turn):
        assert "c1" in calls
    assert events == [("started", "c1")]  # the stopped listener heard nothing
    assert "a running-calls listener raised" in caplog.text
