"""Snapshots of a working directory as git trees in a shadow repository.

A snapshot is ``git status`` against the shadow index (HEAD is the last snapshot, so it lists
only what changed), then the listed files recorded by ``writer`` (one pack through ``git
fast-import``): content addressed, so a file that did not change costs a ``stat`` and nothing
is stored twice. Before recording, the changed and new files git reports are measured, so a
file over the size limit never reaches the object store (and is reported), and a folder with more files than the limit
is refused early. Everything here is blocking and meant to run in a worker thread.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from rpc_agent.checkpoints.git import ShadowGit
from rpc_agent.checkpoints.writer import EMPTY_TREE, record
from rpc_agent.errors import CheckpointError
from rpc_agent.store.files import read_header

TEMP_PREFIX = ".rpc-agent-restore-"
"""Temporary files of a restore: never part of a snapshot."""


class TooManyFilesError(CheckpointError):
    """The working directory holds more files than a checkpoint may cover."""


@dataclass(slots=True)
class Skipped:
    path: str
    reason: str


@dataclass(slots=True)
class Snapshot:
    tree: str
    skipped: list[Skipped] = field(default_factory=list)
    previous: str | None = None
    """The snapshot of the folder before this one (the last HEAD)."""
    changed: int = 0
    """How many paths differ from ``previous``."""


@dataclass(slots=True)
class Change:
    """One path that differs between two trees (git's raw diff, renames off)."""

    path: str
    status: str
    """``A`` (added in the target), ``D`` (deleted), ``M`` (content), ``T`` (type: file/link)."""
    old_mode: str
    new_mode: str
    old_sha: str
    new_sha: str


def repository_for(home: Path, cwd: Path) -> Path:
    digest = hashlib.sha256(str(cwd).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return home / "checkpoints" / digest


def _glob_escape(path: str) -> str:
    return "".join("\\" + c if c in "*?[]\\!#" else c for c in path)


def _split_nul(data: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p]


class WorkspaceStore:
    """The shadow repository of one working directory."""

    def __init__(self, home: Path, cwd: Path, *, git_dir: Path | None = None) -> None:
        self.cwd = cwd
        self.git = ShadowGit(git_dir or repository_for(home, cwd), cwd)

    # --- taking snapshots ----------------------------------------------------------------

    def snapshot(self, *, exclude: list[Path], max_file_size: int, max_files: int) -> Snapshot:
        with self.git.locked():
            return self.snapshot_locked(exclude=exclude, max_file_size=max_file_size, max_files=max_files)

    def snapshot_locked(self, *, exclude: list[Path], max_file_size: int, max_files: int) -> Snapshot:
        self.git.write_exclude(self._exclude_patterns(exclude))
        listed, staged = self._changed_paths(max_files)
        skipped: list[Skipped] = []
        add: list[str] = []
        uncache: list[str] = []
        for tag, path in listed:
            if path.endswith("/"):
                skipped.append(Skipped(path, "a nested git repository"))
                continue
            if tag == "R":
                add.append(path)
                continue
            try:
                st = os.lstat(self.cwd / path)
            except OSError:
                add.append(path)  # gone meanwhile: git records the deletion
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > max_file_size:
                skipped.append(Skipped(path, f"larger than {max_file_size} bytes"))
                if tag == "C":
                    uncache.append(path)
                continue
            if (
                path.endswith(".jsonl")
                and stat.S_ISREG(st.st_mode)
                and read_header(self.cwd / path) is not None
            ):
                skipped.append(Skipped(path, "a session file"))  # the store's, or a link to it
                if tag == "C":
                    uncache.append(path)
                continue
            add.append(path)
        head = self.git.head_tree()
        base = head
        if staged or (head is None and self.git.index_entry_count()):
            base = self.git.run(["write-tree"]).decode().strip()  # the index as a cut-short snapshot left it
        if not (add or uncache):
            if head is not None and base == head:
                return Snapshot(head, skipped, head)  # the disk is the last snapshot: nothing to write
            # No snapshot yet and an empty index (else base is set): git's empty tree, which
            # every repository knows without storing it, as ``write-tree`` would answer.
            tree = base if base is not None else EMPTY_TREE
            if tree != head:
                self.git.set_head(tree)
            return Snapshot(tree, skipped, head, 0)
        recorded = record(self.git, self.cwd, base, add, uncache)
        skipped += [Skipped(p, "unreadable") for p in recorded.unreadable]
        changed = 0 if base != head else len(add) + len(uncache) - len(recorded.unreadable)
        return Snapshot(recorded.tree, skipped, head, changed)

    def update_paths(self, paths: list[str]) -> str:
        """The state after a restore wrote ``paths`` (and nothing else changed): recorded from
        the last snapshot without walking the whole folder again."""
        head = self.git.head_tree()
        if not paths and head is not None:
            return head
        return record(self.git, self.cwd, head, paths, []).tree

    def _exclude_patterns(self, exclude: list[Path]) -> list[str]:
        patterns = [TEMP_PREFIX + "*"]
        for path in exclude:
            try:
                relative = path.relative_to(self.cwd)
            except ValueError:
                continue
            if str(relative) in ("", "."):
                continue
            patterns.append("/" + _glob_escape(relative.as_posix()))
        return patterns

    def _changed_paths(self, max_files: int) -> tuple[list[tuple[str, str]], bool]:
        """(tag, path) of what differs from the shadow index: ``C`` changed, ``R`` removed,
        ``?`` new; and whether the index differs from the last snapshot (HEAD).

        ``git status`` with the untracked cache, so an unchanged folder costs about what
        ``git status`` costs; read as it comes, stopped once the folder is known too big."""
        indexed = self.git.index_entry_count()
        if indexed > max_files:
            raise TooManyFilesError(f"more than {max_files} files in {self.cwd}")
        proc = self.git.popen(
            [
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--no-renames",
                "--ignore-submodules=all",
            ]
        )
        assert proc.stdout is not None
        assert proc.stdin is not None
        proc.stdin.close()
        chunks: list[bytes] = []
        listed = 0  # changed files counted twice at worst: the limit is a guard, not a census
        try:
            while chunk := os.read(proc.stdout.fileno(), 1 << 16):
                chunks.append(chunk)
                listed += chunk.count(b"\0")
                if indexed + listed > max_files:
                    raise TooManyFilesError(f"more than {max_files} files in {self.cwd}")
        finally:
            if proc.poll() is None and indexed + listed > max_files:
                proc.kill()
            proc.stdout.close()
            code = proc.wait()
        if code != 0:
            raise CheckpointError(f"git status failed with status {code} in {self.cwd}")
        found: list[tuple[str, str]] = []
        staged = False
        for item in _split_nul(b"".join(chunks)):
            index, tree, path = item[0], item[1], item[3:]
            if index == "?":
                found.append(("?", path))
            elif tree == "D":
                found.append(("R", path))
            elif tree != " ":
                found.append(("C", path))
            else:
                staged = True  # in the index, not yet in HEAD (a snapshot cut short)
        return found, staged

    def keep(self, key: str, tree: str) -> None:
        self.git.keep(key, tree)

    # --- reading states ------------------------------------------------------------------

    def has_tree(self, tree: str) -> bool:
        if tree == EMPTY_TREE:
            return True
        out = self.git.run(["cat-file", "-t", tree], ok=(0, 1, 128)).strip()
        return out == b"tree"

    def diff(self, old: str, new: str, paths: list[str] | None = None) -> list[Change]:
        """What turns ``old`` into ``new``, path by path."""
        args = ["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", old, new]
        if paths:
            args += ["--", *paths]
        parts = self.git.run(args).split(b"\0")
        changes: list[Change] = []
        i = 0
        while i + 1 < len(parts):
            meta = parts[i].decode()
            if not meta.startswith(":"):
                i += 1
                continue
            old_mode, new_mode, old_sha, new_sha, status = meta[1:].split(" ")
            path = parts[i + 1].decode("utf-8", "surrogateescape")
            changes.append(Change(path, status[0], old_mode, new_mode, old_sha, new_sha))
            i += 2
        return changes

    def patch(self, old: str, new: str, paths: list[str] | None = None) -> bytes:
        args = ["diff-tree", "-r", "-p", "--no-renames", "--no-color", "--full-index", old, new]
        if paths:
            args += ["--", *paths]
        return self.git.run(args)
