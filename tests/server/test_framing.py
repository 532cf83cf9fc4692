"""NDJSON framing: the bounded line splitter and the message encoder."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.server.framing import (
    PIPE_SIZE,
    WRITE_BATCH,
    YIELD_EVERY,
    LineSplitter,
    WireWriter,
    _PipeWriteProtocol,
    grow_pipe,
)
from acp_sidecar.server.messages import UpdateLines, encode_message


def splitter(limit: int = 64) -> tuple[LineSplitter, list[bytes], list[int]]:
    lines: list[bytes] = []
    refused: list[int] = []
    split = LineSplitter(lambda line: lines.append(bytes(line)), lambda: refused.append(1), limit)
    return split, lines, refused


def test_lines_are_cut_at_newlines_across_chunks() -> None:
    split, lines, refused = splitter()
    for chunk in [b"ab", b"c\nde", b"f\n\ngh", b"\n"]:
        split.feed(chunk)
    assert lines == [b"abc", b"def", b"", b"gh"]
    assert refused == []


def test_a_last_line_without_newline_counts_at_end_of_file() -> None:
    split, lines, _ = splitter()
    split.feed(b"one\ntwo")
    split.feed_eof()
    assert lines == [b"one", b"two"]


def test_a_line_over_the_limit_is_refused_once_and_skipped() -> None:
    split, lines, refused = splitter(limit=8)
    split.feed(b"short\n" + b"x" * 5)
    split.feed(b"y" * 100)  # over the limit: dropped as it arrives
    assert len(split._pending) == 0
    split.feed(b"z" * 100)
    split.feed(b"zz\nafter\n")
    assert lines == [b"short", b"after"]
    assert refused == [1]


def test_a_line_of_exactly_the_limit_is_accepted() -> None:
    split, lines, refused = splitter(limit=8)
    split.feed(b"12345678\n123456789\nok\n")
    assert lines == [b"12345678", b"ok"]
    assert refused == [1]


def test_an_oversized_line_in_one_chunk_is_refused() -> None:
    split, lines, refused = splitter(limit=4)
    split.feed(b"abcdefgh\nabcd\n")
    assert lines == [b"abcd"]
    assert refused == [1]


def test_an_oversized_unterminated_line_is_dropped_at_end_of_file() -> None:
    split, lines, refused = splitter(limit=4)
    split.feed(b"abcdefgh")
    split.feed_eof()
    assert lines == []
    assert refused == [1]


@given(
    st.lists(st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")), max_size=10),
    st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=10),
)
def test_any_chunking_yields_the_same_lines(lines: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    split, seen, refused = splitter(limit=64)
    position, index = 0, 0
    while position < len(stream):
        size = cuts[index % len(cuts)]
        split.feed(stream[position : position + size])
        position += size
        index += 1
    split.feed_eof()
    assert seen == lines
    assert refused == []


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_an_encoded_message_is_one_utf8_line_that_decodes_to_itself(value: object) -> None:
    message = {"jsonrpc": "2.0", "method": "x", "params": {"v": value}}
    line = encode_message(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line.decode("utf-8")) == message


WIRE_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),  # lone surrogates included
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
STDLIB = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)


def stdlib_line(message: object) -> bytes:
    """What the stdlib's encoder makes of ``message`` (lone surrogates escaped)."""
    try:
        return STDLIB.encode(message).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"


@given(WIRE_JSON)
def test_a_message_is_encoded_byte_for_byte_as_the_stdlib_encodes_it(value: object) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": value}
    assert encode_message(message) == stdlib_line(message)


@given(st.text(), WIRE_JSON)
def test_an_update_line_is_the_whole_notification_encoded(session_id: str, value: object) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": value}
    lines = UpdateLines()
    for _ in range(2):  # the envelope encoded anew, then kept
        line = lines.line(session_id, update)
        params = {"sessionId": session_id, "update": update}
        assert line == encode_message(
            {"jsonrpc": "2.0", "method": "session/update", "params": params}
        )
        assert line == stdlib_line({"jsonrpc": "2.0", "method": "session/update", "params": params})


def test_what_json_cannot_carry_is_refused_on_the_update_path_too() -> None:
    lines = UpdateLines()
    for bad in (float("nan"), float("inf"), -float("inf"), object()):
        with pytest.raises((ValueError, TypeError)):
            lines.line("s", {"sessionUpdate": "agent_message_chunk", "content": bad})
    assert (
        lines.line("s", {"v": -0.0, "n": 2**70})
        == b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"v":-0.0,"n":1180591620717411303424}}}\n'
    )


def test_a_lone_surrogate_is_escaped_rather_than_breaking_utf8() -> None:
    line = encode_message({"text": "a\ud800b"})
    line.decode("utf-8")
    assert json.loads(line) == {"text": "a\ud800b"}


def test_non_ascii_text_is_sent_as_utf8() -> None:
    assert encode_message({"text": "héllo ✓"}) == '{"text":"héllo ✓"}\n'.encode()


class _CountingTransport:
    """A write transport that keeps each ``write`` it is given."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True


async def test_lines_written_in_one_turn_of_the_loop_reach_the_transport_in_one_write() -> None:
    transport = _CountingTransport()
    wire = WireWriter(transport, None)
    lines = [b'{"n":%d}\n' % n for n in range(100)]
    for line in lines:
        wire.write(line)
    assert transport.writes == []
    await asyncio.sleep(0)
    assert transport.writes == [b"".join(lines)]


async def test_an_answer_leaves_at_once_after_the_lines_gathered_before_it() -> None:
    transport = _CountingTransport()
    wire = WireWriter(transport, None)
    wire.write(b'{"update":1}\n')
    wire.write(b'{"update":2}\n')
    wire.write_now(b'{"answer":1}\n')
    assert transport.writes == [b'{"update":1}\n{"update":2}\n{"answer":1}\n']
    wire.write(b'{"update":3}\n')  # the loop's turn goes on gathering after it
    wire.write_now(b'{"answer":2}\n')
    await asyncio.sleep(0)
    assert transport.writes[1:] == [b'{"update":3}\n{"answer":2}\n']


async def test_a_batch_is_written_early_once_it_is_large() -> None:
    transport = _CountingTransport()
    wire = WireWriter(transport, None)
    line = b"x" * 1023 + b"\n"
    for _ in range(WRITE_BATCH // len(line) + 1):
        wire.write(line)
    assert transport.writes == [line * (WRITE_BATCH // len(line))]
    await asyncio.sleep(0)
    assert b"".join(transport.writes) == line * (WRITE_BATCH // len(line) + 1)


async def test_must_drain_says_when_drain_would_yield_and_counts_as_drain_does() -> None:
    protocol = _PipeWriteProtocol(lambda: None)
    wire = WireWriter(_CountingTransport(), protocol)
    # A sender awaiting drain only when told yields on the same message as one awaiting it
    # after every message: the YIELD_EVERY-th.
    said = [wire.must_drain() for _ in range(YIELD_EVERY)]
    assert said == [False] * (YIELD_EVERY - 1) + [True]
    await wire.drain()  # the yield, which starts the count again
    assert not wire.must_drain()
    protocol.pause_writing()  # the client is behind: every message must wait
    assert wire.must_drain() and wire.must_drain()
    protocol.resume_writing()
    assert not wire.must_drain()


async def test_close_writes_what_is_gathered_in_order() -> None:
    read_fd, write_fd = os.pipe()
    wire = await WireWriter.open(write_fd, on_lost=lambda: None)
    lines = [b'{"n":%d}\n' % n for n in range(1000)]
    for line in lines:
        wire.write(line)
    assert await wire.flush(5)
    wire.close()
    await asyncio.sleep(0.01)  # the pipe transport closes on the loop's next turn
    received = b""
    while chunk := os.read(read_fd, 1 << 16):
        received += chunk
    os.close(read_fd)
    assert received == b"".join(lines)


async def test_close_writes_what_is_gathered_without_a_flush() -> None:
    read_fd, write_fd = os.pipe()
    wire = await WireWriter.open(write_fd, on_lost=lambda: None)
    lines = [b'{"n":%d}\n' % n for n in range(3)]
    for line in lines:
        wire.write(line)
    wire.close()  # straight away: the batch of this loop turn is not written yet
    await asyncio.sleep(0.01)
    received = b""
    while chunk := os.read(read_fd, 1 << 16):
        received += chunk
    os.close(read_fd)
    assert received == b"".join(lines)


def test_an_output_pipe_is_grown_and_anything_else_left_alone(tmp_path: Path) -> None:
    import fcntl

    read_end, write_end = os.pipe()
    try:
        grow_pipe(write_end)
        size = fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)
        limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        assert size >= min(PIPE_SIZE, limit)
    finally:
        os.close(read_end)
        os.close(write_end)
    with open(tmp_path / "out", "wb") as regular:
        grow_pipe(regular.fileno())  # not a pipe: nothing asked, nothing raised
