"""The version check before a load: a newer record anywhere is found, at its line, however the
log falls into the blocks it is read in; damage and a torn tail are left to iteration."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_sidecar.store import SessionStore, UnsupportedVersionError, codec
from acp_sidecar.store import reader as reader_module
from tests.store.samples import CWD

LINES: dict[str, bytes] = {
    "ours": b'{"v":1,"type":"agent_message","text":"plain"}\n',
    "ours-long": b'{"v":1,"type":"agent_message","text":"' + b"x" * 300 + b'"}\n',
    "ours-escaped": b'{"v":1,"type":"agent_message","text":"caf\\u00e9 \\"v\\""}\n',
    "ours-spaced": b'{"v": 1, "type": "agent_message", "text": "spaced"}\n',
    "text-v": b'{"v":1,"type":"agent_message","text":"\\\\u0076 is not a key"}\n',
    "damaged": b'{"v":1,"type":"agent_message","text":\n',
    "not-json": b"\x00\xff garbage\n",
    "empty": b"\n",
    "old-v": b'{"v":0,"type":"agent_message","text":"x"}\n',
    "ours-v2": b'{"v":2,"type":"agent_message","text":"x","t":"2025-01-02T03:04:05.000001Z"}\n',
    "ours-v2-last-key-v1": b'{"v":2,"type":"agent_message","text":"x","v":1}\n',
    "newer": b'{"v":3,"type":"agent_message","text":"x"}\n',
    "newer-last-key": b'{"v":1,"type":"agent_message","text":"x","v":3}\n',
    "newer-last-key-of-v2": b'{"v":2,"type":"agent_message","text":"x","v":3}\n',
    "newer-spaced": b'{"v":1,"type":"agent_message","text":"x","v" :3}\n',
    "newer-escaped": b'{"v":2,"type":"agent_message","text":"x","\\u0076":3}\n',
    "newer-first": b'{"v":30}\n',
    "newer-float": b'{"v":3.0,"type":"agent_message","text":"x"}\n',
    "newer-exponent": b'{"v":1e1,"type":"agent_message","text":"x"}\n',
    "newer-float-last-key": b'{"v":2,"type":"agent_message","text":"x","v":2.5}\n',
    "ours-float": b'{"v":2.0,"type":"agent_message","text":"x"}\n',
}
NEWER = {name for name in LINES if name.startswith("newer")}


def header(store: SessionStore) -> bytes:
    with store.create("s1", CWD):
        pass
    return store.path_of("s1").read_bytes()


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kinds=st.lists(st.sampled_from(sorted(LINES)), max_size=30),
    torn=st.sampled_from([b"", b'{"v":3,"type":"agent', b'{"v":1']),
    block=st.integers(min_value=1, max_value=400),
)
def test_the_first_newer_record_is_named_by_its_line_whatever_the_blocks(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    kinds: list[str],
    torn: bytes,
    block: int,
) -> None:
    store = SessionStore(tmp_path_factory.mktemp("sessions"), fsync="never")
    path = store.path_of("s1")
    path.write_bytes(header(store) + b"".join(LINES[kind] for kind in kinds) + torn)
    monkeypatch.setattr(reader_module, "CHECK_BLOCK", block, raising=False)
    first = next((n for n, kind in enumerate(kinds, start=2) if kind in NEWER), None)
    with store.open_log("s1") as log:
        if first is None:
            log.check_versions()  # a torn newer tail is not a record: iteration drops it
            assert len(list(log)) <= len(kinds)  # and the log is still read from its start
        else:
            with pytest.raises(UnsupportedVersionError, match=rf"line {first}\b"):
                log.check_versions()


def test_a_newer_record_after_a_line_longer_than_a_block_is_found(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store.path_of("s1")
    long = b'{"v":1,"type":"agent_message","text":"' + b"y" * 10_000 + b'"}\n'
    path.write_bytes(header(store) + long * 3 + LINES["newer"] + long)
    monkeypatch.setattr(reader_module, "CHECK_BLOCK", 4096, raising=False)
    with store.open_log("s1") as log, pytest.raises(UnsupportedVersionError, match=r"line 5\b"):
        log.check_versions()


def test_the_check_leaves_the_log_to_be_iterated_from_its_first_record(
    store: SessionStore, tmp_path: Path
) -> None:
    path = store.path_of("s1")
    path.write_bytes(header(store) + LINES["ours"] * 5000 + LINES["damaged"] + LINES["ours"])
    with store.open_log("s1") as log:
        log.check_versions()
        assert len(list(log)) == 5001


@pytest.mark.parametrize("version", [b"3.0", b"1e1"])
def test_a_header_of_a_newer_version_written_as_a_float_refuses_the_log(
    store: SessionStore, version: bytes
) -> None:
    line = header(store).replace(b'{"v":2,', b'{"v":' + version + b",", 1)
    store.path_of("s1").write_bytes(line)
    with pytest.raises(UnsupportedVersionError, match=r"schema version (3|10);"):
        store.open_log("s1")


_KEYS = [b'"v"', b'"\\u0076"', b'"type"', b'"text"', b'"s"']
_VALUES = [
    b"1",
    b"2",
    b"3",
    b"0",
    b"-1",
    b"2.0",
    b"3.0",
    b"1e1",
    b"true",
    b"null",
    b'"2"',
    b"18446744073709551616",
    b"1e400",
    b"NaN",
    b'"\\ud800"',
    b'"caf\\u00e9"',
    b"[1,{}]",
    b'{"v":3}',
    b'"agent_message"',
    b"\xff",
    b'"\\"v\\":3"',
]


@settings(max_examples=600, deadline=None)
@given(
    members=st.lists(
        st.tuples(st.sampled_from(_KEYS), st.sampled_from(_VALUES), st.sampled_from([b"", b" "])),
        max_size=6,
    ),
    shape=st.sampled_from([b"{%s}", b" {%s} ", b"[{%s}]", b"{%s} {}", b"\xef\xbb\xbf{%s}"]),
)
def test_a_line_the_check_does_not_decode_is_not_of_a_newer_version(
    members: list[tuple[bytes, bytes, bytes]], shape: bytes
) -> None:
    line = shape % b",".join(key + space + b":" + space + value for key, value, space in members)
    if codec.lines_in_doubt(line + b"\n", len(line) + 1)[1]:
        return
    try:
        record = codec.decode_line(line)
    except codec.RecordDecodeError:
        return
    except codec.NewerVersion:
        pytest.fail(f"{line!r} was taken for a readable line")
    assert record is not None


@pytest.mark.parametrize("name", sorted(LINES))
def test_the_check_reads_a_line_as_decoding_it_would(name: str) -> None:
    line = LINES[name]
    lines, doubtful = codec.lines_in_doubt(line, len(line))
    assert lines == 1
    if not doubtful:
        assert name not in NEWER
        codec.decode_line(line)  # no NewerVersion
