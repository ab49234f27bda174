"""The index of where sessions were last opened (``workspaces.json``), beside pi's files."""

from __future__ import annotations

import json
from pathlib import Path

from rpc_agent.store.workspaces import WorkspaceIndex


def session_file(folder: Path, session_id: str, cwd: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2026_{session_id}.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": cwd,
    }
    path.write_text(json.dumps(header) + "\n")
    return path


def test_an_entry_is_kept_only_while_the_session_is_elsewhere(tmp_path: Path) -> None:
    index = WorkspaceIndex(tmp_path)
    path = session_file(tmp_path / "sessions", "s1", "/old")
    index.record("s1", path, "/old", "/old", [])
    assert not index.path.exists()  # nothing to remember: nothing written
    index.record("s1", path, "/old", "/new", ["/lib"])
    (entry,) = index.entries().values()
    assert (entry.cwd, entry.additional_directories) == ("/new", ("/lib",))
    assert entry.covers("/new")
    assert entry.covers("/lib")
    assert not entry.covers("/old")
    assert index.live("s1", entry)
    written = index.path.stat().st_mtime_ns
    index.record("s1", path, "/old", "/new", ["/lib"])
    assert index.path.stat().st_mtime_ns == written  # unchanged: not rewritten
    index.record("s1", path, "/old", "/old", [])
    assert index.entries() == {}


def test_entries_for_files_gone_or_reused_are_not_live_and_bad_ones_are_skipped(tmp_path: Path) -> None:
    index = WorkspaceIndex(tmp_path)
    path = session_file(tmp_path / "sessions", "s1", "/old")
    index.record("s1", path, "/old", "/new", [])
    entry = index.entries()["s1"]
    session_file(tmp_path / "sessions", "other", "/old").rename(path)  # another session now
    assert not index.live("s1", entry)
    path.unlink()
    assert not index.live("s1", entry)
    index.path.write_text(json.dumps({"s1": {"path": 3}, "s2": "x", "s3": {"path": "/p", "cwd": "/c"}}))
    assert list(index.entries()) == ["s3"]
    index.path.write_text("{damaged")
    assert index.entries() == {}
