"""One session's checkpoints: its shadow repository, its mapping, its limits (blocking calls).

The AgentSession reaches this through ``rpc_agent.agent.checkpointing`` (off the event loop);
``rpc-agent rewind`` calls it directly.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rpc_agent.checkpoints.mapping import CheckpointMap
from rpc_agent.checkpoints.restore import Restorer
from rpc_agent.checkpoints.store import EMPTY_TREE, TEMP_PREFIX, Change, Skipped, Snapshot, WorkspaceStore
from rpc_agent.errors import CheckpointError, RestoreConflictError

STATUS_WORDS = {"A": "added", "D": "deleted", "M": "modified", "T": "modified"}
MAX_DIFF = 256 * 1024


@dataclass(slots=True)
class Limits:
    max_file_size: int = 10 * 1024 * 1024
    max_files: int = 100_000


@dataclass(slots=True)
class RestoreOutcome:
    checkpoint: str
    """The disk before the restore."""
    changes: list[Change]
    skipped: list[Skipped] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    tree: str | None = None
    """The disk after it (None on a dry run)."""


@dataclass(slots=True)
class FileDiff:
    path: str
    status: str
    diff: str
    binary: bool
    truncated: bool


class SessionCheckpoints:
    def __init__(
        self,
        store: WorkspaceStore,
        mapping: CheckpointMap,
        key: str,
        *,
        exclude: list[Path],
        limits: Limits,
    ) -> None:
        self.store = store
        self.mapping = mapping
        self.key = key
        """Names the session's refs in the shadow repository (its session id)."""
        self.exclude = exclude
        """The session store's files and folders: never snapshotted, never written."""
        self.limits = limits

    def _snapshot(self) -> Snapshot:
        snap = self.store.snapshot_locked(
            exclude=self.exclude, max_file_size=self.limits.max_file_size, max_files=self.limits.max_files
        )
        self.store.keep(self.key, snap.tree)
        return snap

    # --- taking --------------------------------------------------------------------------

    def take(self, entry_id: str, parent_tree: str | None) -> tuple[Snapshot, int]:
        """Snapshot the disk as the state of ``entry_id``; returns it and how many files differ
        from ``parent_tree``."""
        with self.store.git.locked():
            snap = self._snapshot()
            changed = 0
            if parent_tree is not None and parent_tree != snap.tree:
                if parent_tree == snap.previous and snap.changed:
                    changed = snap.changed  # what git status listed: no second diff needed
                else:
                    changed = len(self.store.diff(parent_tree, snap.tree))
            self.mapping.append({"entry": entry_id, "tree": snap.tree, "files": changed})
            self.store.git.set_last_state(snap.tree)
        return snap, changed

    def adopt(self, other: SessionCheckpoints, entry_ids: set[str]) -> None:
        """A fork or clone of ``other``'s session: its copied entries keep their states."""
        with self.store.git.locked():
            for tree in self.mapping.adopt(other.mapping, entry_ids):
                self.store.keep(self.key, tree)

    # --- restoring -----------------------------------------------------------------------

    def is_kept(self, tree: str) -> bool:
        """A state this session may restore: one it recorded (a ref of its own keeps it)."""
        ref = self.store.git.git_dir / "refs" / "rpc-agent" / self.key / tree
        return tree in self.mapping.trees() or ref.is_file()

    def restore(
        self, target: str, *, paths: list[str] | None = None, dry_run: bool = False, force: bool = False
    ) -> RestoreOutcome:
        """Make the disk ``target`` (or only ``paths`` of it), checkpointing the disk first.

        A file that differs from the folder's last checkpoint (taken by any session), and that
        the restore would change, was changed by someone else: a conflict, refused unless
        ``force`` (on a dry run, listed)."""
        with self.store.git.locked():
            if not self.store.has_tree(target):
                raise CheckpointError(f"the state {target} is missing from the checkpoint repository")
            if self.mapping.restoring is not None:
                self._remove_temp_files()
            last = self.store.git.last_state()
            now = self._snapshot()
            changes = self.store.diff(now.tree, target, paths)
            touched = {c.path for c in changes}
            conflicts: list[str] = []
            if last is not None and last != now.tree:
                conflicts = sorted(c.path for c in self.store.diff(last, now.tree) if c.path in touched)
            if dry_run:
                return RestoreOutcome(now.tree, changes, [], conflicts)
            if conflicts and not force:
                raise RestoreConflictError(conflicts, now.tree)
            self.mapping.append({"checkpoint": now.tree}, {"restoring": target, "from": now.tree})
            self.store.git.set_last_state(now.tree)
            report = Restorer(self.store, self.exclude).apply(changes)
            after = self.store.update_paths([c.path for c in report.changed])
            self.store.keep(self.key, after)
            self.mapping.append({"restored": after})
            self.store.git.set_last_state(after)
        return RestoreOutcome(now.tree, report.changed, report.skipped, conflicts, after)

    def _remove_temp_files(self) -> None:
        """What a restore killed midway left: its temporary files (never part of a state)."""
        listed = self.store.git.run(
            ["ls-files", "-z", "-o", "-i", f"--exclude={TEMP_PREFIX}*"],
        )
        for path in listed.split(b"\0"):
            name = os.fsdecode(path)
            if name and os.path.basename(name).startswith(TEMP_PREFIX):
                with contextlib.suppress(OSError):
                    os.unlink(self.store.cwd / name)

    # --- looking -------------------------------------------------------------------------

    def file_changes(self, old: str | None, new: str) -> list[FileDiff]:
        base = old if old is not None else new
        changes = self.store.diff(base, new)
        if not changes:
            return []
        patches = _split_patch(self.store.patch(base, new))
        result: list[FileDiff] = []
        for index, change in enumerate(changes):
            patch = patches[index] if index < len(patches) else b""
            binary = b"\nBinary files " in patch or patch.startswith(b"Binary files ")
            truncated = len(patch) > MAX_DIFF
            text = patch[:MAX_DIFF].decode("utf-8", "replace")
            result.append(
                FileDiff(change.path, STATUS_WORDS.get(change.status, "modified"), text, binary, truncated)
            )
        return result


def changes_by_entry(
    engine: SessionCheckpoints, parent_of: Callable[[str], str | None]
) -> dict[str, list[dict[str, object]]]:
    """The files each entry's snapshot changed, with diffs (for the HTML export): only the
    entries that changed files. Blocking."""
    found: dict[str, list[dict[str, object]]] = {}
    mapping = engine.mapping
    for entry_id, count in mapping.files_changed.items():
        if not count:
            continue
        parent = parent_of(entry_id)
        old = mapping.state_of(parent, parent_of)
        if old is None:
            continue
        try:
            diffs = engine.file_changes(old, mapping.states[entry_id])
        except CheckpointError:
            continue  # a state pruned or lost: the page goes without it
        found[entry_id] = [
            {"path": d.path, "status": d.status, "diff": d.diff, "binary": d.binary, "truncated": d.truncated}
            for d in diffs
        ]
    return found


def _split_patch(patch: bytes) -> list[bytes]:
    """``git diff-tree -p`` output cut into one piece per file (in the raw diff's order)."""
    pieces: list[bytes] = []
    start = -1
    position = 0
    for line in patch.splitlines(keepends=True):
        if line.startswith(b"diff --git "):
            if start >= 0:
                pieces.append(patch[start:position])
            start = position
        position += len(line)
    if start >= 0:
        pieces.append(patch[start:])
    return pieces


__all__ = ["EMPTY_TREE", "Limits", "RestoreOutcome", "SessionCheckpoints"]
