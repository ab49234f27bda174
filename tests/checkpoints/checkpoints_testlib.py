"""What the checkpoint tests share: an engine over a fresh work folder."""

from __future__ import annotations

from pathlib import Path

from rpc_agent.checkpoints import CheckpointMap, Limits, SessionCheckpoints, WorkspaceStore


def new_engine(tmp_path: Path) -> SessionCheckpoints:
    """Checkpoints of ``tmp_path/work`` (made empty), stored under ``tmp_path/home``, outside
    the folder it snapshots, with no session file beside it."""
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    return SessionCheckpoints(
        WorkspaceStore(home, work), CheckpointMap(None), "test", exclude=[home], limits=Limits()
    )
