"""A restore never writes outside the working directory: stored paths with ``..``, absolute
paths, ``.git`` and the session store's files are refused, a folder on the way that is a
symlink stops its path, and a stored symlink comes back as a link, never followed. The states
are real git trees made with git's own plumbing in a real shadow repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from checkpoints_testlib import new_engine

from rpc_agent.checkpoints import SessionCheckpoints
from rpc_agent.checkpoints.restore import Restorer, UnsafePathError
from rpc_agent.checkpoints.store import Change


@pytest.fixture
def engine(tmp_path: Path) -> SessionCheckpoints:
    return new_engine(tmp_path)


def blob(engine: SessionCheckpoints, content: bytes) -> str:
    with engine.store.git.locked():
        return engine.store.git.run(["hash-object", "-w", "--stdin"], input=content).decode().strip()


def added(path: str, sha: str, mode: str = "100644") -> Change:
    return Change(path, "A", "000000", mode, "0" * 40, sha)


@pytest.mark.parametrize(
    "path", ["../evil.txt", "/tmp/evil.txt", "a/../../evil.txt", ".git/config", "a//b", "./x"]
)
def test_unsafe_stored_paths_are_refused(engine: SessionCheckpoints, path: str) -> None:
    restorer = Restorer(engine.store, engine.exclude)
    with pytest.raises(UnsafePathError):
        restorer.check_path(path)
    report = restorer.apply([added(path, blob(engine, b"evil\n"))])
    assert report.changed == []
    assert [s.path for s in report.skipped] == [path]
    assert not (engine.store.cwd.parent / "evil.txt").exists()


def test_the_session_store_is_never_written(engine: SessionCheckpoints, tmp_path: Path) -> None:
    store_inside = engine.store.cwd / "sessions"
    restorer = Restorer(engine.store, [store_inside])
    report = restorer.apply([added("sessions/x.jsonl", blob(engine, b"{}\n"))])
    assert report.changed == []
    assert not (store_inside / "x.jsonl").exists()


def test_a_symlinked_folder_on_the_way_stops_the_path(engine: SessionCheckpoints, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (engine.store.cwd / "linked").symlink_to(outside)
    report = Restorer(engine.store, []).apply([added("linked/file.txt", blob(engine, b"through the link\n"))])
    assert report.changed == []
    assert "symlink" in report.skipped[0].reason
    assert list(outside.iterdir()) == []


def test_a_stored_link_is_restored_as_a_link(engine: SessionCheckpoints, tmp_path: Path) -> None:
    target = tmp_path / "secret.txt"
    target.write_text("secret\n")
    (engine.store.cwd / "link").write_text("a regular file now\n")
    sha = blob(engine, os.fsencode(str(target)))
    change = Change("link", "T", "100644", "120000", "0" * 40, sha)
    report = Restorer(engine.store, []).apply([change])
    assert [c.path for c in report.changed] == ["link"]
    assert os.readlink(engine.store.cwd / "link") == str(target)
    assert target.read_text() == "secret\n"


def test_modes_and_nested_folders_come_back(engine: SessionCheckpoints) -> None:
    sha = blob(engine, b"#!/bin/sh\necho hi\n")
    report = Restorer(engine.store, []).apply([added("deep/er/run.sh", sha, "100755")])
    assert [c.path for c in report.changed] == ["deep/er/run.sh"]
    script = engine.store.cwd / "deep" / "er" / "run.sh"
    assert os.access(script, os.X_OK)
    assert subprocess.run([str(script)], capture_output=True, text=True, check=True).stdout == "hi\n"


def test_the_users_git_is_never_touched(engine: SessionCheckpoints) -> None:
    work = engine.store.cwd
    subprocess.run(
        ["git", "init", "-q"], cwd=work, check=True, env={"PATH": os.environ["PATH"], "HOME": str(work)}
    )
    (work / "tracked.txt").write_text("v1\n")
    before = {p.relative_to(work): p.read_bytes() for p in (work / ".git").rglob("*") if p.is_file()}
    first, _ = engine.take("e1", None)
    (work / "tracked.txt").write_text("v2\n")
    engine.take("e2", first.tree)
    engine.restore(first.tree)
    assert (work / "tracked.txt").read_text() == "v1\n"
    after = {p.relative_to(work): p.read_bytes() for p in (work / ".git").rglob("*") if p.is_file()}
    assert after == before


def test_a_full_disk_stops_the_restore_with_a_clear_error_and_leaves_the_rest(
    engine: SessionCheckpoints, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from rpc_agent.errors import CheckpointError

    work = engine.store.cwd
    for name in ("a", "b", "c", "d"):
        (work / name).write_text(f"old {name}\n")
    changes = [
        Change(name, "M", "100644", "100644", "0" * 40, blob(engine, f"new {name}\n".encode()))
        for name in "abcd"
    ]
    real_write = Restorer._write
    calls = 0

    def fill_up(self: Restorer, target: Path, change: Change, content: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:  # the disk fills up on the third file
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(self, target, change, content)

    monkeypatch.setattr(Restorer, "_write", fill_up)
    with pytest.raises(CheckpointError, match="the disk is full: 2 of 4 files were written, c and the rest"):
        Restorer(engine.store, []).apply(changes)
    assert [(work / n).read_text() for n in "abcd"] == ["new a\n", "new b\n", "old c\n", "old d\n"]
    assert sorted(p.name for p in work.iterdir()) == ["a", "b", "c", "d"]
