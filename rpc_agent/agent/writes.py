"""Persist first, apply after: how a change to a session reaches its file.

A latched write error is raised before anything is computed or moved; entries appended inside a
``mutation`` are awaited to the disk, and if they cannot be stored the session's memory is
rolled back to where it was. Callers change their own state (model, thinking level) only after
the block, so a mutation that fails changes nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

from rpc_agent.errors import PersistenceError
from rpc_agent.store.durability import Savepoint
from rpc_agent.store.manager import SessionManager

__all__ = ["mutation", "queue_label"]


@contextlib.asynccontextmanager
async def mutation(manager: SessionManager) -> AsyncIterator[None]:
    """The one way every mutation of the session goes (``AgentSession.mutation``)."""
    point = _savepoint(manager)
    with _undone_on_failure(manager, point):
        yield
        await manager.flush()


def queue_label(
    manager: SessionManager, entry_id: str, label: str | None
) -> tuple[str, Callable[[], Awaitable[None]]]:
    """A label change with the wait for the disk handed to the caller: the label entry is
    appended now, and ``stored()`` returns once its line is fsynced (or rolls the session
    back and raises PersistenceError, as ``mutation`` does). A front answering a pipelined
    burst of labels then waits once per fsync for all of them, not in a task per label."""
    point = _savepoint(manager)
    pending = manager.append_label_change(entry_id, label, move_leaf=False)
    label_id = pending.id
    assert label_id is not None

    async def stored() -> None:
        with _undone_on_failure(manager, point):
            await pending

    return label_id, stored


def _savepoint(manager: SessionManager) -> Savepoint:
    """Where a failed write rolls the session back to; a latched write error first."""
    manager.check_writable()
    return manager.savepoint()


@contextlib.contextmanager
def _undone_on_failure(manager: SessionManager, point: Savepoint) -> Iterator[None]:
    """A write that could not be stored leaves the session's memory as it was at ``point``."""
    try:
        yield
    except PersistenceError:
        manager.rollback(point)
        raise
