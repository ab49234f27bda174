"""One session's checkpoints: its shadow repository, its mapping, its limits (blocking calls).

The AgentSession reaches this through ``rpc_agent.agent.checkpointing`` (off the event loop);
``rpc-agent rewind`` calls it directly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from rpc_agent.checkpoints.mapping import CheckpointMap
from rpc_agent.checkpoints.restore import Restorer
from rpc_agent.checkpoints.store import TEMP_PREFIX, Change, Skipped, Snapshot, WorkspaceStore
from rpc_agent.checkpoints.writer import EMPTY_TREE
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


@dataclass(eq=False)
class SessionCheckpoints:
    store: WorkspaceStore
    mapping: CheckpointMap
    key: str
    """Names the session's refs in the shadow repository (its session id)."""
    _: KW_ONLY
    exclude: list[Path]
    """The session store's files and folders: never snapshotted, never written."""
    limits: Limits
    roots: list[Path] = field(default_factory=list)
    """The session's additional folders, snapshotted with the working directory."""
    _stores: dict[str, WorkspaceStore] = field(default_factory=dict, init=False, repr=False)

    def store_for(self, root: str) -> WorkspaceStore:
        """An additional folder's shadow repository: the one it has as anyone's working
        directory (beside this session's, under the same home), so edits seen there count."""
        store = self._stores.get(root)
        if store is None:
            home = self.store.git.git_dir.parent.parent
            store = self._stores[root] = WorkspaceStore(home, Path(root))
        return store

    def _snapshot(self, store: WorkspaceStore | None = None) -> Snapshot:
        store = store or self.store
        snap = store.snapshot_locked(
            exclude=self.exclude, max_file_size=self.limits.max_file_size, max_files=self.limits.max_files
        )
        store.keep(self.key, snap.tree)
        return snap

    def _take_roots(self, parents: dict[str, str]) -> tuple[dict[str, str], int, list[Skipped]]:
        """Snapshot each additional folder under its own lock (never two locks at once here);
        returns their trees, how many files differ from ``parents``, and what was skipped."""
        trees: dict[str, str] = {}
        changed = 0
        skipped: list[Skipped] = []
        for root in map(str, self.roots):
            store = self.store_for(root)
            with store.git.locked():
                snap = self._snapshot(store)
                parent = parents.get(root)
                if parent is not None and parent != snap.tree:
                    same_base = parent == snap.previous and snap.changed
                    changed += snap.changed if same_base else len(store.diff(parent, snap.tree))
                store.git.set_last_state(snap.tree)
            trees[root] = snap.tree
            skipped += [Skipped(f"{root}/{s.path}", s.reason) for s in snap.skipped]
        return trees, changed, skipped

    # --- taking --------------------------------------------------------------------------

    def take(
        self, entry_id: str, parent_tree: str | None, parent_roots: dict[str, str] | None = None
    ) -> tuple[Snapshot, int]:
        """Snapshot the disk as the state of ``entry_id``; returns it and how many files differ
        from ``parent_tree`` (and ``parent_roots`` in the additional folders)."""
        roots, changed_roots, skipped_roots = self._take_roots(parent_roots or {})
        with self.store.git.locked():
            snap = self._snapshot()
            changed = 0
            if parent_tree is not None and parent_tree != snap.tree:
                if parent_tree == snap.previous and snap.changed:
                    changed = snap.changed  # what git status listed: no second diff needed
                else:
                    changed = len(self.store.diff(parent_tree, snap.tree))
            changed += changed_roots
            record: dict[str, object] = {"entry": entry_id, "tree": snap.tree, "files": changed}
            self.mapping.append(record | ({"roots": roots} if roots else {}))
            self.store.git.set_last_state(snap.tree)
        snap.skipped += skipped_roots
        return snap, changed

    def adopt(self, other: SessionCheckpoints, entry_ids: set[str]) -> None:
        """A fork or clone of ``other``'s session: its copied entries keep their states."""
        with self.store.git.locked():
            for tree in self.mapping.adopt(other.mapping, entry_ids):
                self.store.keep(self.key, tree)
        for root, trees in self.mapping.root_trees().items():
            store = self.store_for(root)
            with store.git.locked():
                for tree in trees:
                    store.keep(self.key, tree)

    # --- restoring -----------------------------------------------------------------------

    def is_kept(self, tree: str) -> bool:
        """A state this session may restore: one it recorded (a ref of its own keeps it)."""
        ref = self.store.git.git_dir / "refs" / "rpc-agent" / self.key / tree
        return tree in self.mapping.trees() or ref.is_file()

    def restore(
        self,
        target: str,
        *,
        roots: dict[str, str] | None = None,
        paths: list[str] | None = None,
        dry_run: bool = False,
        force: bool = False,
    ) -> RestoreOutcome:
        """Make the disk ``target`` (or only ``paths`` of it), and each additional folder its
        state in ``roots`` (not when ``paths`` are given), checkpointing the disk first.

        A file that differs from the folder's last checkpoint (taken by any session), and that
        the restore would change, was changed by someone else: a conflict, refused unless
        ``force`` (on a dry run, listed). Every folder is checked before any is written; their
        locks are taken in one order, so two restores never wait on each other. Files of the
        additional folders are named by their absolute paths."""
        parts: list[tuple[str | None, WorkspaceStore, str]] = [(None, self.store, target)]
        if not paths:
            parts += [(root, self.store_for(root), tree) for root, tree in sorted((roots or {}).items())]
        with contextlib.ExitStack() as held:
            for store in sorted({id(p[1]): p[1] for p in parts}.values(), key=lambda s: str(s.git.lock_file)):
                held.enter_context(store.git.locked())
            plans = [self._plan(root, store, tree, paths) for root, store, tree in parts]
            now = plans[0].now
            now_roots = {p.root: p.now.tree for p in plans if p.root is not None}
            changes = [c for p in plans for c in p.named(p.changes)]
            conflicts = sorted(_named(p.root, c) for p in plans for c in p.conflicts)
            if dry_run:
                return RestoreOutcome(now.tree, changes, [], conflicts)
            if conflicts and not force:
                raise RestoreConflictError(conflicts, now.tree)
            self.mapping.append(
                {"checkpoint": now.tree} | ({"roots": now_roots} if now_roots else {}),
                {"restoring": target, "from": now.tree},
            )
            for plan in plans:
                plan.store.git.set_last_state(plan.now.tree)
            done: list[Change] = []
            skipped: list[Skipped] = []
            after_roots: dict[str, str] = {}
            after = now.tree
            for plan in plans:
                report = Restorer(plan.store, self.exclude).apply(plan.changes)
                tree = plan.store.update_paths([c.path for c in report.changed])
                plan.store.keep(self.key, tree)
                plan.store.git.set_last_state(tree)
                done += plan.named(report.changed)
                skipped += [Skipped(_named(plan.root, s.path), s.reason) for s in report.skipped]
                if plan.root is None:
                    after = tree
                else:
                    after_roots[plan.root] = tree
            self.mapping.append({"restored": after} | ({"roots": after_roots} if after_roots else {}))
        return RestoreOutcome(now.tree, done, skipped, conflicts, after)

    def _plan(self, root: str | None, store: WorkspaceStore, target: str, paths: list[str] | None) -> _Plan:
        if not store.has_tree(target):
            raise CheckpointError(f"the state {target} is missing from the checkpoint repository")
        if self.mapping.restoring is not None:
            self._remove_temp_files(store)
        last = store.git.last_state()
        now = self._snapshot(store)
        changes = store.diff(now.tree, target, paths)
        touched = {c.path for c in changes}
        conflicts: list[str] = []
        if last is not None and last != now.tree:
            conflicts = sorted(c.path for c in store.diff(last, now.tree) if c.path in touched)
        return _Plan(root, store, now, changes, conflicts)

    def _remove_temp_files(self, store: WorkspaceStore) -> None:
        """What a restore killed midway left: its temporary files (never part of a state)."""
        listed = store.git.run(
            ["ls-files", "-z", "-o", "-i", f"--exclude={TEMP_PREFIX}*"],
        )
        for path in listed.split(b"\0"):
            name = os.fsdecode(path)
            if name and os.path.basename(name).startswith(TEMP_PREFIX):
                with contextlib.suppress(OSError):
                    os.unlink(store.cwd / name)

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


@dataclass(slots=True)
class _Plan:
    """One folder's part of a restore, before anything is written."""

    root: str | None
    """None for the working directory, else the additional folder (absolute)."""
    store: WorkspaceStore
    now: Snapshot
    changes: list[Change]
    conflicts: list[str]

    def named(self, changes: list[Change]) -> list[Change]:
        if self.root is None:
            return changes
        return [dataclasses.replace(c, path=_named(self.root, c.path)) for c in changes]


def _named(root: str | None, path: str) -> str:
    return path if root is None else f"{root}/{path}"


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
