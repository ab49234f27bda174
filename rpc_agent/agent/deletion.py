"""Deleting a session for a front (``delete_session``, ACP ``session/delete``): the session
store's deletion with what lives above the store freed as well.

The session layer deletes the file and its unused blobs; the file checkpoints of issue 20 are
kept by a layer above it, so their freeing is handed in from here, the one place both fronts
go through. Until that store is on this branch, ``FREE_CHECKPOINTS`` is None: the seam the
merge fills with ``rpc_agent.checkpoints.free_session_checkpoints``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from rpc_agent.session import deleting

FREE_CHECKPOINTS: Callable[[Path], None] | None = None
"""Frees a deleted session file's checkpoints (see the module doc)."""


def delete_session(
    path: Path, *, home: Path, session_dir: Path | None, live: Iterable[Path]
) -> deleting.DeletedSession:
    """Blocking: run it in a worker thread."""
    return deleting.delete_session(
        path, home=home, session_dir=session_dir, live=live, free_checkpoints=FREE_CHECKPOINTS
    )
