"""Workspace checkpoints: the files of the working directory at every entry of the tree.

``store`` (snapshots in a shadow git repository) and ``git`` (how git is run) at the bottom,
``restore`` (writing a state back), ``mapping`` (the sidecar: entry -> state), ``engine`` (one
session's checkpoints) on top. Everything here blocks; the agent calls it in worker threads.
"""

from __future__ import annotations

from pathlib import Path

from rpc_agent.checkpoints.engine import Limits, RestoreOutcome, SessionCheckpoints
from rpc_agent.checkpoints.git import ShadowGit
from rpc_agent.checkpoints.mapping import CheckpointMap, sidecar_path
from rpc_agent.checkpoints.store import EMPTY_TREE, Skipped, Snapshot, TooManyFilesError, WorkspaceStore

__all__ = [
    "EMPTY_TREE",
    "CheckpointMap",
    "Limits",
    "RestoreOutcome",
    "SessionCheckpoints",
    "Skipped",
    "Snapshot",
    "TooManyFilesError",
    "WorkspaceStore",
    "free_session_checkpoints",
    "sidecar_path",
]


def free_session_checkpoints(session_file: Path | str) -> None:
    """Forget a deleted session's checkpoints: its sidecar, its refs, and the stored files no
    other session keeps. Blocking; a session without checkpoints is a no-op."""
    sidecar = sidecar_path(Path(session_file))
    header = CheckpointMap.load(sidecar).header
    if header is not None:
        repository, cwd, key = header.get("repository"), header.get("cwd"), header.get("session")
        if isinstance(repository, str) and isinstance(cwd, str) and isinstance(key, str) and key:
            git = ShadowGit(Path(repository), Path(cwd))
            if (git.git_dir / "HEAD").exists() and Path(cwd).is_dir():
                with git.locked():
                    git.forget(key)
    sidecar.unlink(missing_ok=True)
