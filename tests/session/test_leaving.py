"""A session left by a switch is freed in pieces in a thread when nobody else holds it.

The agent hands the session it leaves to ``Background.free_when_unread`` from a function that
holds it by one name. Freed there at once instead, a long session's dict and list frees would
run on the event loop inside the switch (the answer waits for them); handed to the thread
while someone still reads it, they would be emptied under the reader.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from session_testlib import assistant, user

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.io.background import Background
from rpc_agent.providers.faux import FauxProvider
from rpc_agent.store import SessionManager
from rpc_agent.store.index import EntryIndex


def _session(folder: Path) -> Path:
    manager = SessionManager.create("/p", folder)
    for turn in range(20):
        manager.append_message(user(f"u{turn}"))
        manager.append_message(assistant(f"a{turn}"))
    manager.close()
    assert manager.session_file is not None
    return manager.session_file


def _emptied(index: EntryIndex, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while index.entries and time.monotonic() < deadline:
        time.sleep(0.01)
    return not index.entries


def test_a_session_held_by_one_name_is_freed_in_a_thread(tmp_path: Path) -> None:
    path = _session(tmp_path)
    background = Background()

    def leave() -> tuple[bool, EntryIndex]:
        """As the agent leaves a session: one local name, then the hand-over."""
        old = SessionManager.open(path)
        old.close()
        return background.free_when_unread(old), old._index

    taken, index = leave()
    assert taken
    assert _emptied(index)


def test_a_session_someone_else_holds_is_left_alone(tmp_path: Path) -> None:
    path = _session(tmp_path)
    background = Background()
    reader: list[SessionManager] = []

    def leave() -> bool:
        old = SessionManager.open(path)
        old.close()
        reader.append(old)  # a request still reading it
        return background.free_when_unread(old)

    assert not leave()
    [held] = reader
    time.sleep(0.05)
    assert len(held._index.entries) == 40


@pytest.mark.anyio
async def test_the_session_a_switch_leaves_is_freed_in_pieces_in_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the agent's own switch: the session it leaves is handed to the thread."""
    first, second = _session(tmp_path / "a"), _session(tmp_path / "b")
    freed: list[str] = []
    done = threading.Event()
    free_in_pieces = SessionManager.free_in_pieces

    def recorded(self: SessionManager, pause: Callable[[], None]) -> None:
        freed.append(str(self.session_file))
        free_in_pieces(self, pause)
        done.set()

    monkeypatch.setattr(SessionManager, "free_in_pieces", recorded)
    agent = AgentSession(manager=SessionManager.open(first), provider=FauxProvider([]), emit=lambda _e: None)
    agent.background = Background()
    await agent.switch_session(str(second))
    assert done.wait(10)  # in the thread: the loop is not needed for it
    assert freed == [str(first)]
    await agent.shutdown()
