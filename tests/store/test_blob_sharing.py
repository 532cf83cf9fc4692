"""A fork's before-images: linked from its parent's, put anew where a link cannot be made, and
nothing left behind when sharing fails."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from acp_sidecar.store import blobs
from acp_sidecar.store.blobs import BlobStore, blobs_path, share_blobs


def parent_with_blobs(tmp_path: Path) -> tuple[Path, list[str]]:
    log = tmp_path / "parent.jsonl"
    store = BlobStore(blobs_path(log))
    return log, [store.put(b"one\n"), store.put(b"two\n" * 1000)]


def test_a_fork_gets_its_parents_blobs_as_links(tmp_path: Path) -> None:
    parent, names = parent_with_blobs(tmp_path)
    fork = tmp_path / "fork.jsonl"
    assert share_blobs(parent, fork)
    for name in names:
        assert os.path.samefile(blobs_path(parent) / name, blobs_path(fork) / name)


def test_where_no_link_can_be_made_each_blob_is_put_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent, names = parent_with_blobs(tmp_path)
    fork = tmp_path / "fork.jsonl"

    def no_link(source: object, target: object) -> None:
        raise OSError(errno.EXDEV, "cross-device link")

    monkeypatch.setattr(blobs.os, "link", no_link)
    assert share_blobs(parent, fork)
    copy = BlobStore(blobs_path(fork))
    assert [copy.get(name) for name in names] == [b"one\n", b"two\n" * 1000]
    assert not [p for p in blobs_path(fork).iterdir() if p.name.startswith(".")]


def test_a_failed_sharing_leaves_no_directory_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent, _names = parent_with_blobs(tmp_path)
    fork = tmp_path / "fork.jsonl"

    def full(source: object, target: object) -> None:
        raise OSError(errno.ENOSPC, "no space left on device")

    monkeypatch.setattr(blobs.os, "link", full)
    monkeypatch.setattr(BlobStore, "put", lambda self, data: full(None, None))
    with pytest.raises(OSError):
        share_blobs(parent, fork)
    assert not blobs_path(fork).exists()
