"""The running-calls table: each call runs under a child of its turn's signal, which can be
cancelled alone (the turn goes on) until its result card is drawn; a cancel of a call not
running is refused; listeners hear a call start and close, with whether it was cancelled
alone."""

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
    calls.closing("c1")
    assert "c1" not in calls
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
    calls.closing("c1")
    assert not calls.cancel("c1", "tool_call/cancel")  # its result card is drawn: final
    calls.closing("c1")  # heard once only
    assert events == [("started", "c1"), ("closing", "c1", "False")]


def test_a_cancel_racing_the_end_of_a_call_is_taken_and_changes_nothing() -> None:
    calls, turn = RunningCalls(), CancelSignal()
    events = heard(calls)
    with calls.running("c1", turn) as signal:
        pass  # the tool returned; its card still offers cancel until the result card
    assert "c1" in calls
    assert calls.cancel("c1", "tool_call/cancel")  # the schema's "finished first": accepted
    assert signal.cancelled
    calls.closing("c1")
    assert "c1" not in calls
    assert events[-1] == ("closing", "c1", "False")  # not cancelled: its final patch says how


def test_a_call_that_ended_is_detached_from_its_turn() -> None:
    calls, turn = RunningCalls(), CancelSignal()
    with calls.running("c1", turn) as first:
        pass
    calls.closing("c1")
    with calls.running("c2", turn) as second:
        turn.cancel("session/cancel")
        assert second.reason == "session/cancel"
    assert not first.cancelled  # its callback on the turn was removed when it ended


def test_a_call_whose_block_raises_is_no_longer_cancellable() -> None:
    calls, turn = RunningCalls(), CancelSignal()
    with pytest.raises(RuntimeError), calls.running("c1", turn):
        raise RuntimeError("the turn broke off")
    assert "c1" not in calls and not calls.cancel("c1", "tool_call/cancel")


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


def test_a_call_knows_the_session_its_card_is_drawn_in_until_it_closes() -> None:
    calls, turn = RunningCalls(), CancelSignal()
    with calls.running("c1", turn, session_id="parent~task~call_a") as signal:
        assert calls.session_of("c1") == "parent~task~call_a"
        assert calls.signal_of("c1") is signal
    assert calls.session_of("c1") == "parent~task~call_a"  # its final patch is still due
    calls.closing("c1")
    assert calls.session_of("c1") is None and calls.signal_of("c1") is None


def test_a_call_torn_down_before_its_card_closes_is_forgotten_and_cannot_be_cancelled() -> None:
    calls, turn = RunningCalls(), CancelSignal()
    with calls.running("c1", turn):
        pass  # the tool returned; then the driver's task is stopped before its card closes
    calls.forget("c1")
    assert "c1" not in calls and not calls.cancel("c1", "tool_call/cancel")
    with pytest.raises(RuntimeError), calls.running("c2", turn):
        raise RuntimeError("the turn broke off")
    heard_closing: list[str] = []
    calls.listen(lambda call_id: None, lambda call_id, alone: heard_closing.append(call_id))
    calls.closing("c1")
    calls.closing("c2")
    assert heard_closing == []  # neither left anything behind to close
