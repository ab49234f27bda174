"""One writer per session file: a second manager or a second process is refused."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest
from session_testlib import read_lines, user, written_session

from child_python import run_python
from rpc_agent.store import SessionLockedError, SessionManager

# Exit 0 when the session opened (and was closed again), 3 with the owner's pid when locked.
OPENER = """
import sys
from rpc_agent.store import SessionLockedError, SessionManager
try:
    manager = SessionManager.open(sys.argv[1])
except SessionLockedError as error:
    print(f"locked {error.pid}")
    print(error)
    sys.exit(3)
manager.close()
print("opened")
"""


def open_in_another_process(path: Path) -> subprocess.CompletedProcess[str]:
    return run_python(OPENER, path)


def opened_session(tmp_path: Path) -> SessionManager:
    return SessionManager.open(written_session(tmp_path))


def test_second_manager_in_the_same_process_is_refused_with_our_pid(tmp_path: Path) -> None:
    with opened_session(tmp_path) as manager:
        assert manager.session_file is not None
        with pytest.raises(SessionLockedError) as caught:
            SessionManager.open(manager.session_file)
        assert caught.value.pid == os.getpid()
        assert f"pid {os.getpid()}" in str(caught.value)
        assert caught.value.path == str(manager.session_file)
        # The refused open did not disturb the owner, who can still write.
        manager.append_message(user("u2"))
    assert manager.session_file is not None
    assert len(read_lines(manager.session_file)) == 4


def test_lock_is_free_again_after_close(tmp_path: Path) -> None:
    manager = opened_session(tmp_path)
    assert manager.session_file is not None
    manager.close()
    assert not Path(str(manager.session_file) + ".lock").exists()
    with SessionManager.open(manager.session_file) as again:
        assert len(again.entries) == 2


def test_new_session_is_locked_before_its_file_exists(tmp_path: Path) -> None:
    with SessionManager.create("/p", tmp_path) as manager:
        assert manager.session_file is not None
        assert not manager.session_file.exists()
        with pytest.raises(SessionLockedError):
            SessionManager.open(manager.session_file)


def test_second_process_is_refused_while_we_hold_the_lock_and_admitted_after(tmp_path: Path) -> None:
    manager = opened_session(tmp_path)
    assert manager.session_file is not None
    path = manager.session_file
    before = path.read_bytes()

    refused = open_in_another_process(path)
    assert refused.returncode == 3, refused.stderr
    first_line, message = refused.stdout.splitlines()[:2]
    assert first_line == f"locked {os.getpid()}"
    assert f"locked by pid {os.getpid()}" in message
    assert path.read_bytes() == before

    manager.close()
    admitted = open_in_another_process(path)
    assert admitted.returncode == 0, admitted.stderr
    assert admitted.stdout.strip() == "opened"
    assert path.read_bytes() == before


def test_lock_is_released_even_when_closing_the_session_file_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = opened_session(tmp_path)
    manager.append_message(user("u2"))
    chain = manager.write_chain
    assert chain is not None
    real_close = chain.close

    def failing_close() -> None:
        real_close()  # the descriptor is gone either way, as with a failed close(2)
        raise OSError(errno.EIO, "close failed")

    monkeypatch.setattr(chain, "close", failing_close)
    with pytest.raises(OSError, match="close failed"):
        manager.close()
    assert manager.session_file is not None
    assert not Path(str(manager.session_file) + ".lock").exists()
    with SessionManager.open(manager.session_file) as again:
        assert len(again.entries) == 3  # what was queued was written before the close
