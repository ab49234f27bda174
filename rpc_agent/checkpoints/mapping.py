"""Which workspace state belongs to which entry: a sidecar file beside the session.

The session file stays what pi reads and writes (no entry is added for checkpoints); the
sidecar ``<session>.jsonl.checkpoints`` is append-only JSON lines, each fsynced, read back on
open. Its first line names the shadow repository and the session; then one line per event:

- ``{"entry": id, "tree": sha, "files": n}``: the state of an entry (``files``: how many files
  differ from its parent's state);
- ``{"checkpoint": sha}``: the disk as a restore found it (a restore can be undone with it);
- ``{"restoring": sha, "from": sha}`` then ``{"restored": sha}``: a restore started, ended.

A session with ``additionalDirectories`` adds ``"roots": {absolute folder: sha}`` to the entry,
checkpoint and restored lines: the states of those folders at the same moment, each in the
folder's own shadow repository. An entry without a line of its own shares its nearest
ancestor's state. (What the folder last
looked like, for telling others' edits apart, is kept with the shadow repository, shared by
every session of the folder: ``ShadowGit.last_state``.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rpc_agent.fileio import write_all

SUFFIX = ".checkpoints"


def sidecar_path(session_file: Path) -> Path:
    return session_file.with_name(session_file.name + SUFFIX)


class CheckpointMap:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.header: dict[str, Any] | None = None
        self.header_pending: dict[str, Any] | None = None
        """What the first line will say (repository, cwd, session key), written with the first record."""
        self.states: dict[str, str] = {}
        self.files_changed: dict[str, int] = {}
        self.roots: dict[str, dict[str, str]] = {}
        """Entry id -> the states of the session's additional folders (absolute path -> tree)."""
        self.checkpoint_roots: dict[str, dict[str, str]] = {}
        """A working directory's tree -> the additional folders' states recorded with it last."""
        self.checkpoints: set[str] = set()
        self.last_disk: str | None = None
        """The last tree this session recorded (a fork or clone starts from it)."""
        self.restoring: tuple[str, str] | None = None
        """(target, the disk before) of a restore that started and never said it ended."""

    @classmethod
    def load(cls, path: Path | None) -> CheckpointMap:
        mapping = cls(path)
        if path is None:
            return mapping
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return mapping
        for line in data.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn last line from a crash
            if isinstance(record, dict):
                mapping._apply(record)
        return mapping

    def _apply(self, record: dict[str, Any]) -> None:
        roots = _roots(record.get("roots"))
        tree = record.get("tree") if "entry" in record else record.get("checkpoint") or record.get("restored")
        if roots and isinstance(tree, str):
            self.checkpoint_roots[tree] = roots
            if isinstance(record.get("entry"), str):
                self.roots[record["entry"]] = roots
        if record.get("type") == "rpc-agent.checkpoints":
            self.header = record
        elif isinstance(record.get("entry"), str) and isinstance(record.get("tree"), str):
            self.states[record["entry"]] = record["tree"]
            files = record.get("files")
            self.files_changed[record["entry"]] = files if isinstance(files, int) else 0
            self.last_disk = record["tree"]
        elif isinstance(record.get("checkpoint"), str):
            self.checkpoints.add(record["checkpoint"])
            self.last_disk = record["checkpoint"]
        elif isinstance(record.get("restoring"), str) and isinstance(record.get("from"), str):
            self.restoring = (record["restoring"], record["from"])
        elif isinstance(record.get("restored"), str):
            self.restoring = None
            self.last_disk = record["restored"]

    def append(self, *records: dict[str, Any]) -> None:
        """Apply records and write them durably, one fsync (blocking: from a worker thread)."""
        if self.header is None and self.header_pending is not None:
            records = ({"type": "rpc-agent.checkpoints", "version": 1, **self.header_pending}, *records)
        for record in records:
            self._apply(record)
        if self.path is None or self.header is None:
            return
        data = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def state_of(self, entry_id: str | None, parent_of: Callable[[str], str | None]) -> str | None:
        """The state of an entry: its own, or its nearest ancestor's; None before any."""
        holder = self._holder(entry_id, parent_of)
        return self.states[holder] if holder is not None else None

    def roots_of(self, entry_id: str | None, parent_of: Callable[[str], str | None]) -> dict[str, str]:
        """The additional folders' states that go with ``state_of`` (empty when none)."""
        holder = self._holder(entry_id, parent_of)
        return dict(self.roots.get(holder, {})) if holder is not None else {}

    def _holder(self, entry_id: str | None, parent_of: Callable[[str], str | None]) -> str | None:
        seen = 0
        while entry_id is not None:
            if entry_id in self.states:
                return entry_id
            entry_id = parent_of(entry_id)
            seen += 1
            if seen > 10_000_000:  # a cycle in a damaged file
                return None
        return None

    def adopt(self, other: CheckpointMap, entry_ids: set[str]) -> list[str]:
        """Take the states of ``entry_ids`` from another session's mapping (a fork or clone
        keeps the ids of what it copies), and its knowledge of the disk; returns the trees."""
        records: list[dict[str, Any]] = [
            {"entry": entry_id, "tree": tree, "files": other.files_changed.get(entry_id, 0)}
            | ({"roots": other.roots[entry_id]} if entry_id in other.roots else {})
            for entry_id, tree in other.states.items()
            if entry_id in entry_ids
        ]
        if other.last_disk is not None:
            last = {"checkpoint": other.last_disk}
            roots = other.checkpoint_roots.get(other.last_disk)
            records.append(last | ({"roots": roots} if roots else {}))
        if records:
            self.append(*records)
        return [str(r.get("tree") or r.get("checkpoint")) for r in records]

    def root_trees(self) -> dict[str, set[str]]:
        """Folder -> every tree recorded for it (what a fork's refs must keep)."""
        found: dict[str, set[str]] = {}
        for roots in self.checkpoint_roots.values():
            for root, tree in roots.items():
                found.setdefault(root, set()).add(tree)
        return found

    def trees(self) -> set[str]:
        return {*self.states.values(), *self.checkpoints}


def _roots(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
