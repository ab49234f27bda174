"""A new shadow repository: made by one ``git init`` in the store's own environment and without
git's template, it is not bare and its work tree is the folder; the first snapshot of an empty
folder is git's empty tree (taken without git writing it), and what comes after is diffed
against it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rpc_agent.checkpoints import EMPTY_TREE, WorkspaceStore


def snap(store: WorkspaceStore) -> str:
    return store.snapshot(exclude=[], max_file_size=1 << 20, max_files=1000).tree


def test_a_new_repository_is_not_bare_and_starts_from_the_empty_tree(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    store = WorkspaceStore(tmp_path / "home", work)
    assert snap(store) == EMPTY_TREE
    assert store.git.head_tree() == EMPTY_TREE
    assert store.git.run(["config", "core.bare"]).strip() == b"false"
    assert store.git.run(["rev-parse", "--show-toplevel"]).decode().strip() == str(work)
    assert not (store.git.git_dir / "hooks").exists()  # no template: no sample hooks copied

    (work / "a.txt").write_text("a\n")
    second = store.snapshot(exclude=[], max_file_size=1 << 20, max_files=1000)
    assert second.previous == EMPTY_TREE
    assert second.changed == 1
    assert [(c.path, c.status) for c in store.diff(EMPTY_TREE, second.tree)] == [("a.txt", "A")]
    assert snap(store) == second.tree  # unchanged: the last snapshot again
    git_dir = store.git.git_dir
    fsck = subprocess.run(["git", "--git-dir", str(git_dir), "fsck", "--no-dangling"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_a_folder_with_files_at_the_first_snapshot_records_them(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "b.txt").write_text("b\n")
    store = WorkspaceStore(tmp_path / "home", work)
    tree = snap(store)
    assert tree != EMPTY_TREE
    assert store.git.run(["ls-tree", "--name-only", tree]) == b"b.txt\n"
