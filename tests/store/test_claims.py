"""Claims: a session stays this process's while its log is closed; another process (or a
second claim here) can neither continue nor delete it, until the claim is let go or its
process dies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_sidecar.store import (
    LOCK_FILE,
    LockFileError,
    SessionLockedError,
    SessionStore,
)
from acp_sidecar.store import claims as claims_module
from tests.store.samples import CWD

ROOT = Path(__file__).resolve().parents[2]

_OTHER_PROCESS = """
import os, sys
from acp_sidecar.store import SessionStore, SessionLockedError
store = SessionStore(sys.argv[1])
action = sys.argv[2]
try:
    if action == "reopen":
        store.reopen("s1").close()
    elif action == "delete":
        store.delete("s1")
    elif action == "claim-and-die":
        store.claim("s1")
        os._exit(0)  # no release: the kernel drops the lock with the process
except SessionLockedError as exc:
    print("locked:", exc)
else:
    print("done")
"""


def other_process(store: SessionStore, action: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS, str(store.directory), action],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        timeout=30,
    )
    return done.stdout.strip()


def prompted(store: SessionStore, claim: object = None) -> None:
    with store.create("s1", CWD, **({} if claim is None else {"claim": claim})) as log:
        log.user_message([{"type": "text", "text": "hi"}])


@pytest.mark.process
def test_a_claim_outlives_the_log_it_was_written_under(store: SessionStore) -> None:
    claim = store.claim("s1")
    prompted(store, claim)  # the writer is closed: its flock is gone, the claim is not
    for action in ("reopen", "delete"):
        answer = other_process(store, action)
        assert answer.startswith("locked: session log ") and "another acp-sidecar" in answer
    with store.reopen("s1", claim=claim) as log:  # this process goes on with it
        log.agent_text("still mine")
    claim.release()
    assert other_process(store, "reopen") == "done"
    assert other_process(store, "delete") == "done" and not store.exists("s1")
    # Nothing of the session is left: the lock file holds no byte.
    assert [p.name for p in store.directory.iterdir()] == [LOCK_FILE]
    assert (store.directory / LOCK_FILE).stat().st_size == 0


@pytest.mark.process
def test_a_writer_without_a_claim_holds_its_own_until_it_closes(store: SessionStore) -> None:
    with store.create("s1", CWD):
        assert other_process(store, "delete").startswith("locked:")
        with pytest.raises(SessionLockedError):
            store.claim("s1")
    store.claim("s1").release()  # closed: the writer's claim went with it


def test_a_second_claim_in_this_process_is_refused_too(store: SessionStore) -> None:
    prompted(store)
    twin = SessionStore(store.directory)
    with store.claim("s1"):
        for attempt in (twin.claim, twin.reopen, twin.delete, store.claim):
            with pytest.raises(SessionLockedError) as caught:
                attempt("s1")
            assert caught.value.path == store.path_of("s1")
        with twin.claim("s2"):  # another session is another byte
            pass
    twin.delete("s1")


@pytest.mark.process
def test_a_process_that_dies_drops_its_claims(store: SessionStore) -> None:
    prompted(store)
    assert other_process(store, "claim-and-die") == ""
    store.claim("s1").release()


def test_a_claim_of_another_session_does_not_open_a_log(store: SessionStore) -> None:
    with store.claim("s2") as other, pytest.raises(ValueError, match="not a claim held on"):
        store.create("s1", CWD, claim=other)
    released = store.claim("s1")
    released.release()
    with pytest.raises(ValueError, match="not a claim held on"):
        store.create("s1", CWD, claim=released)
    assert not store.exists("s1")


def test_a_link_at_the_lock_files_name_is_refused(store: SessionStore, tmp_path: Path) -> None:
    store.directory.mkdir(parents=True)
    target = tmp_path / "elsewhere"
    (store.directory / LOCK_FILE).symlink_to(target)
    with pytest.raises(LockFileError, match="is a symbolic link; no session can be written"):
        store.create("s1", CWD)
    assert not target.exists() and not store.exists("s1")


@pytest.mark.process
def test_record_locks_where_there_are_no_description_locks(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fallback (POSIX lockf, for systems without Linux's OFD locks) excludes the other
    # process too; that process takes OFD locks, which Linux checks against record locks.
    monkeypatch.setattr(claims_module, "_OFD", False)
    prompted(store)
    with store.claim("s1"):
        assert other_process(store, "reopen").startswith("locked:")
        with pytest.raises(SessionLockedError):
            SessionStore(store.directory).claim("s1")
    assert other_process(store, "reopen") == "done"


def test_a_lock_file_root_creates_is_the_store_owners(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can create a file for another user")
    directory = tmp_path / "users-store"
    directory.mkdir()
    os.chown(directory, 65534, 65534)  # the user's store; a sidecar run with sudo uses it
    with SessionStore(directory).claim("s1"):
        owned = (directory / LOCK_FILE).stat()
    assert (owned.st_uid, owned.st_gid) == (65534, 65534)
