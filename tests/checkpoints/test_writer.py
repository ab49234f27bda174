"""Snapshots written by ``git fast-import``: the stored tree is what git itself makes of the
folder (compared with a plain repository's ``git add -A`` + ``write-tree``), names of any kind
survive, the shadow index follows, and a snapshot of many changed files writes one pack
instead of a loose object per file and folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from checkpoints_testlib import new_engine

from rpc_agent.checkpoints import SessionCheckpoints
from rpc_agent.checkpoints.writer import quote

PLAIN_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "HOME": "/nonexistent",
}
ODD_NAMES = ["plain.txt", "with space.txt", 'quote".txt', "back\\slash.txt", "new\nline.txt", "tab\t.txt"]


@pytest.fixture
def engine(tmp_path: Path) -> SessionCheckpoints:
    return new_engine(tmp_path)


def git_tree_of(folder: Path, scratch: Path) -> str:
    """The tree git's own ``add -A`` + ``write-tree`` makes of ``folder`` (a separate repository)."""
    env = {**PLAIN_ENV, "GIT_DIR": str(scratch), "GIT_WORK_TREE": str(folder)}
    if not scratch.exists():
        subprocess.run(["git", "init", "-q", "--bare", str(scratch)], env=PLAIN_ENV, check=True)
    (scratch / "info").mkdir(exist_ok=True)
    (scratch / "info" / "exclude").write_text(".rpc-agent-restore-*\n")
    subprocess.run(["git", "add", "-A"], env=env, check=True, cwd=folder)
    return (
        subprocess.run(["git", "write-tree"], env=env, check=True, capture_output=True, cwd=folder)
        .stdout.decode()
        .strip()
    )


def loose_objects(engine: SessionCheckpoints) -> int:
    objects = engine.store.git.git_dir / "objects"
    return sum(len(os.listdir(d)) for d in objects.iterdir() if len(d.name) == 2)


def test_quote_escapes_what_fast_import_reads_specially() -> None:
    assert quote("a b") == b'"a b"'
    assert quote('q"\\') == b'"q\\"\\\\"'
    assert quote("n\nt\t") == b'"n\\012t\\011"'
    assert quote("caf\xe9") == b'"caf\xc3\xa9"'


def test_snapshots_equal_git_add_and_write_tree(engine: SessionCheckpoints, tmp_path: Path) -> None:
    work = engine.store.cwd
    for name in ODD_NAMES:
        (work / name).write_text(f"content of {name!r}\n")
    (work / "deep" / "er").mkdir(parents=True)
    (work / "deep" / "er" / "run.sh").write_text("#!/bin/sh\n")
    (work / "deep" / "er" / "run.sh").chmod(0o755)
    (work / "link").symlink_to("deep/er/run.sh")
    (work / "outside").symlink_to("/etc/hostname")
    (work / os.fsdecode(b"latin\xe9.txt")).write_bytes(b"not utf-8 in the name")
    (work / "empty.txt").write_bytes(b"")
    first, _ = engine.take("e1", None)
    assert first.tree == git_tree_of(work, tmp_path / "plain")

    # Changes of every kind: content, mode, file -> link, file -> folder, folder -> file, deletions.
    (work / "plain.txt").write_text("changed\n")
    (work / "with space.txt").chmod(0o755)
    (work / "empty.txt").unlink()
    (work / "empty.txt").symlink_to("plain.txt")
    (work / 'quote".txt').unlink()
    (work / 'quote".txt').mkdir()
    (work / 'quote".txt' / "inside").write_text("now a folder\n")
    (work / "deep" / "er" / "run.sh").unlink()
    (work / "deep" / "er").rmdir()
    (work / "deep" / "er").write_text("now a file\n")
    (work / "new\nline.txt").unlink()
    second, changed = engine.take("e2", first.tree)
    assert second.tree == git_tree_of(work, tmp_path / "plain")
    assert changed == len(engine.store.diff(first.tree, second.tree))

    # The shadow index followed: nothing is listed as changed, so nothing more is written.
    third, _ = engine.take("e3", second.tree)
    assert third.tree == second.tree
    status = engine.store.git.run(["status", "--porcelain", "-z", "--untracked-files=all"])
    assert status == b""

    # And the states restore exactly.
    engine.restore(first.tree, force=True)
    assert git_tree_of(work, tmp_path / "plain") == first.tree
    assert (work / "deep" / "er" / "run.sh").stat().st_mode & 0o100
    assert os.readlink(work / "outside") == "/etc/hostname"


def test_a_hundred_changed_files_make_one_pack_not_loose_objects(engine: SessionCheckpoints) -> None:
    work = engine.store.cwd
    for folder in range(20):
        (work / f"d{folder}").mkdir()
        for i in range(10):
            (work / f"d{folder}" / f"f{i}.txt").write_text(f"{folder} {i}\n")
    first, _ = engine.take("e1", None)
    for folder in range(20):
        for i in range(5):
            (work / f"d{folder}" / f"f{i}.txt").write_text(f"changed {folder} {i}\n")
    second, changed = engine.take("e2", first.tree)
    assert changed == 100
    assert loose_objects(engine) == 0  # 100 blobs, 21 trees, 2 commits: all packed
    engine.restore(first.tree)
    assert (work / "d3" / "f2.txt").read_text() == "3 2\n"
    assert loose_objects(engine) == 0
    assert engine.store.diff(first.tree, second.tree)


def test_small_snapshots_are_packed_too_and_packs_are_rolled_up(engine: SessionCheckpoints) -> None:
    """fast-import would loosen a pack of under 100 objects (one more process, a file per
    object); a session's snapshots are mostly one file each. Packs are rolled up, so they stay
    few, and every state stays readable."""
    from rpc_agent.checkpoints.writer import MAX_PACKS

    work = engine.store.cwd
    pack_dir = engine.store.git.git_dir / "objects" / "pack"
    trees: list[str] = []
    for i in range(MAX_PACKS + 6):
        (work / f"f{i:02d}.txt").write_text(f"{i}\n")
        trees.append(engine.take(f"e{i}", None)[0].tree)
        assert loose_objects(engine) == 0
        assert sum(1 for p in pack_dir.iterdir() if p.suffix == ".idx") <= MAX_PACKS + 1
    assert all(engine.store.has_tree(tree) for tree in trees)
    engine.restore(trees[2])
    assert sorted(p.name for p in work.iterdir()) == ["f00.txt", "f01.txt", "f02.txt"]
