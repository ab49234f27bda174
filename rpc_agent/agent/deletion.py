"""Deleting a session for a front (``delete_session``, ACP ``session/delete``): the session
store's deletion with what lives above the store freed as well.

The session layer deletes the file and its unused blobs; the file checkpoints are kept by a
layer above it (``rpc_agent.checkpoints``), so their freeing is handed in from here, the one
place both fronts go through.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rpc_agent.store import deleting


def delete_session(
    path: Path, *, home: Path, session_dir: Path | None, live: Iterable[Path]
) -> deleting.DeletedSession:
    """Blocking: run it in a worker thread."""
    # Both imported by the first deletion: start-up, which imports this module, needs neither.
    from rpc_agent.checkpoints import free_session_checkpoints
    from rpc_agent.store import deleting

    return deleting.delete_session(
        path, home=home, session_dir=session_dir, live=live, free_checkpoints=free_session_checkpoints
    )
