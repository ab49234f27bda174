"""SessionManager: one session's tree, its leaf pointer, and its file.

The manager owns the in-memory index (entries in file order, by id, by parent), the leaf, the
labels and the session name, and hands every line to the write chain. Context building and
migrations are pure functions elsewhere; this class decides *when* things reach the disk:

* nothing is written until the session has an assistant message (a prompt that never got an
  answer leaves no file behind); then the header and every entry are written at once, and
  after that each append adds its line;
* an append updates memory when it is called and returns an awaitable that completes once its
  line is fsynced (``entry_id = await manager.append_message(...)``);
* moving the leaf without appending (``branch``, ``reset_leaf``) writes a small ``custom``
  marker entry whose parent is the new leaf, so that reopening the file puts the leaf back
  where it was, and so that the reference agent, which takes the last line as the leaf, builds
  the same context from the same file. Markers never reach the model and are hidden from the
  tree.
"""

from __future__ import annotations

import gc
import os
import random
import secrets
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from rpc_agent.errors import EntryNotFoundError, InvalidSessionFileError, SessionNotFoundError

from ..protocol.entries import CURRENT_SESSION_VERSION, dump_message, parse_message
from . import files
from .blobs import MAX_PERSIST_CHARS, BlobStore, prepare_for_disk, restore_blobs
from .context import SessionContext, build_session_context, iso_to_ms, path_to_root
from .files import LoadReport, SessionLock
from .migrations import file_version, migrate
from .writer import WriteChain

JsonDict = dict[str, Any]

LEAF_MARKER = "rpc-agent.leaf"
"""``customType`` of the entries that record a leaf move which appended nothing."""


def is_bookkeeping(entry: JsonDict) -> bool:
    """Label entries and leaf markers: part of the chain, but not steps of the conversation.

    The tree shows through them (their children hang under their parent, the label itself is
    a field of the node it names), and the leaf recorded in a file looks through trailing ones.
    """
    return entry.get("type") == "label" or is_leaf_marker(entry)


_PLAIN_TYPES = frozenset(
    {
        "message",
        "compaction",
        "branch_summary",
        "custom_message",
        "model_change",
        "thinking_level_change",
        "session_info",
    }
)
"""Entry types that are never bookkeeping (a fast path for the tree walk)."""


def is_leaf_marker(entry: JsonDict) -> bool:
    return entry.get("type") == "custom" and entry.get("customType") == LEAF_MARKER


def new_entry_id(taken: Iterable[str] | dict[str, Any] | set[str]) -> str:
    """8 hex characters, unique in the file (retried on collision).

    Ids only need to be unique within one file, not unpredictable: a seeded PRNG is enough
    and costs a fraction of a system call per append.
    """
    for _ in range(100):
        candidate = f"{_ids.getrandbits(32):08x}"
        if candidate not in taken:
            return candidate
    return secrets.token_hex(16)


_ids = random.Random(secrets.randbits(64))


class PendingAppend:
    """The result of an append: the id at once, durability when awaited.

    ``await`` returns the entry id after its line is fsynced (or at once while the session is
    not yet written, or in memory). ``.id`` is there without awaiting, for callers that do
    not need to wait for the disk.
    """

    __slots__ = ("_chain", "_ticket", "id")

    def __init__(self, entry_id: str | None, chain: WriteChain | None, ticket: int | None) -> None:
        self.id = entry_id
        self._chain = chain
        self._ticket = ticket

    def __await__(self) -> Generator[Any, None, str | None]:
        if self._chain is not None and self._ticket is not None:
            yield from self._chain.wait(self._ticket).__await__()
        return self.id


@dataclass(frozen=True, slots=True)
class Savepoint:
    """What ``rollback`` puts back: how many entries there were, the leaf, the name, the labels."""

    count: int
    leaf: str | None
    name: str | None
    labels: dict[str, str]


@dataclass(slots=True)
class TreeNode:
    """One row of the flattened tree: depth-first, children oldest first."""

    entry: JsonDict
    depth: int
    parentId: str | None
    childCount: int
    label: str | None


class SessionManager:
    """Use the class methods (``create``, ``open``, ``in_memory``, ...) to make one."""

    def __init__(
        self,
        *,
        cwd: str,
        session_dir: Path | None,
        session_file: Path | None,
        blobs: BlobStore | None,
        header: JsonDict,
        entries: list[JsonDict],
        on_disk: bool,
        report: LoadReport | None = None,
        lock: SessionLock | None = None,
        deferred: dict[int, bytes] | None = None,
        read_only: bool = False,
    ) -> None:
        self.cwd = cwd
        self.session_dir = session_dir
        self.session_file = session_file
        self.blobs = blobs
        self.header = header
        self.load_report = report or LoadReport()
        self._lock = lock
        self._read_only = read_only
        self._chain = (
            WriteChain(session_file, on_open=lock.follow if lock is not None else None)
            if session_file is not None and not read_only
            else None
        )
        self._on_disk = on_disk
        self._has_assistant = on_disk
        self._entries: list[JsonDict] = []
        self._by_id: dict[str, JsonDict] = {}
        self._position: dict[str, int] = {}
        self._children: dict[str | None, list[str]] = {}
        self._labels: dict[str, str] = {}
        self._name: str | None = None
        self._leaf: str | None = None
        self._closed = False
        self._context: SessionContext | None = None
        self._context_key: tuple[str | None, int] | None = None
        self._hidden: set[str] = set()
        self._deferred: dict[int, bytes] = deferred or {}
        """Raw lines of message entries still held as stubs (see ``files.parse_lines``)."""
        self._index_all(entries)
        self._leaf = self._leaf_from_file()

    # --- construction -----------------------------------------------------------------

    @classmethod
    def create(
        cls,
        cwd: str,
        session_dir: Path | str | None = None,
        *,
        parent_session: str | None = None,
        home: Path | None = None,
    ) -> SessionManager:
        """A new session in ``session_dir`` (default: the folder of ``cwd`` under the home)."""
        folder = Path(session_dir) if session_dir is not None else files.default_session_dir(cwd, home)
        header = cls._new_header(cwd, parent_session)
        path = folder / files.session_file_name(header["timestamp"], header["id"])
        return cls._fresh(cwd, folder, path, header, home)

    @classmethod
    def open(
        cls,
        path: Path | str,
        session_dir: Path | str | None = None,
        *,
        cwd: str | None = None,
        home: Path | None = None,
        must_exist: bool = False,
    ) -> SessionManager:
        """Open a session file for writing; a missing (or empty) file becomes a new session.

        Raises InvalidSessionFileError for a non-empty file that is not a session (it is left
        as it is), SessionLockedError when another writer holds it.
        """
        path = Path(path).absolute()
        folder = Path(session_dir) if session_dir is not None else path.parent
        # Before the lock, which would create folders (and a sidecar beside a device).
        if not files.check_session_path(path) and must_exist:
            raise SessionNotFoundError(path)
        lock = SessionLock(path)
        lock.acquire()
        try:
            with _gc_paused(freeze=True):
                return cls._open_locked(path, folder, lock, cwd, home, must_exist)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _open_locked(
        cls, path: Path, folder: Path, lock: SessionLock, cwd: str | None, home: Path | None, must_exist: bool
    ) -> SessionManager:
        raw = files.read_session_file(path)
        if raw is None:
            if must_exist:
                raise SessionNotFoundError(path)
            files.clear_blank_file(path)
            header = cls._new_header(cwd or os.getcwd(), None)
            return cls._fresh(header["cwd"], folder, path, header, home, lock=lock)
        blobs = BlobStore(cls._blob_folder(folder, home))
        files.repair_tail(path, raw)
        lines = raw.lines
        from_version = migrate_lines(lines)
        if from_version is not None:
            raw.report.migrated_from = from_version
            # Only what the migration changed: history keeps every field it had (the rules
            # for what we write, such as dropping transient fields, are not for old lines).
            files.atomic_write(path, files.encode_lines(lines))
            lock.follow_path()
        header, entries = lines[0], lines[1:]
        if raw.mentions_blobs:
            for entry in entries:
                restore_blobs(entry, blobs)
        header_cwd = header.get("cwd")
        return cls._expecting_file(
            cwd=header_cwd if isinstance(header_cwd, str) and header_cwd else (cwd or os.getcwd()),
            session_dir=folder,
            session_file=path,
            blobs=blobs,
            header=header,
            entries=entries,
            on_disk=True,
            report=raw.report,
            lock=lock,
            deferred=raw.deferred,
        )

    @classmethod
    def open_read_only(cls, path: Path | str, *, home: Path | None = None) -> SessionManager:
        """A session file as it is, for code that only reads it (export, inspection).

        No lock is taken, so a session another process is writing can be read; nothing is
        repaired or migrated on disk (an old file is migrated in memory only), and appending
        raises. Raises SessionNotFoundError for a missing or empty file.
        """
        path = Path(path).absolute()
        raw = files.read_session_file(path, defer_messages=False)
        if raw is None:
            raise SessionNotFoundError(path)
        lines = raw.lines
        migrate_lines(lines)
        blobs = BlobStore(cls._blob_folder(path.parent, home))
        header, entries = lines[0], lines[1:]
        if raw.mentions_blobs:
            for entry in entries:
                restore_blobs(entry, blobs)
        header_cwd = header.get("cwd")
        return cls(
            cwd=header_cwd if isinstance(header_cwd, str) else "",
            session_dir=path.parent,
            session_file=path,
            blobs=blobs,
            header=header,
            entries=entries,
            on_disk=True,
            report=raw.report,
            read_only=True,
        )

    @classmethod
    def in_memory(cls, cwd: str | None = None) -> SessionManager:
        """A session that is never written (``--no-session``)."""
        cwd = cwd or os.getcwd()
        return cls(
            cwd=cwd,
            session_dir=None,
            session_file=None,
            blobs=None,
            header=cls._new_header(cwd, None),
            entries=[],
            on_disk=False,
        )

    @classmethod
    def continue_recent(
        cls, cwd: str, session_dir: Path | str | None = None, *, home: Path | None = None
    ) -> SessionManager:
        """The most recently modified session of ``cwd``, or a new one if there is none."""
        folder = Path(session_dir) if session_dir is not None else files.default_session_dir(cwd, home)
        recent = files.most_recent_session(folder)
        if recent is not None:
            return cls.open(recent, folder, cwd=cwd, home=home)
        return cls.create(cwd, folder, home=home)

    @classmethod
    def fork_from(
        cls,
        source: Path | str,
        target_cwd: str,
        session_dir: Path | str | None = None,
        *,
        home: Path | None = None,
    ) -> SessionManager:
        """Copy another session (for example another project's) into a new file here."""
        source = Path(source).absolute()
        raw = files.read_session_file(source, defer_messages=False)  # every line is copied
        if raw is None:
            raise SessionNotFoundError(source)
        lines = raw.lines
        migrate_lines(lines)
        source_blobs = BlobStore(cls._blob_folder(source.parent, home))
        entries = lines[1:]
        for entry in entries:
            restore_blobs(entry, source_blobs)
        folder = Path(session_dir) if session_dir is not None else files.default_session_dir(target_cwd, home)
        header = cls._new_header(target_cwd, str(source))
        path = folder / files.session_file_name(header["timestamp"], header["id"])
        return cls._fresh(target_cwd, folder, path, header, home, entries=entries, write_now=True)

    @classmethod
    def _fresh(
        cls,
        cwd: str,
        folder: Path,
        path: Path,
        header: JsonDict,
        home: Path | None,
        *,
        lock: SessionLock | None = None,
        entries: list[JsonDict] | None = None,
        write_now: bool = False,
    ) -> SessionManager:
        """A new session at ``path``; written at once when ``write_now`` (copies), else deferred."""
        if lock is None:
            lock = SessionLock(path)
            lock.acquire()
        try:
            blobs = BlobStore(cls._blob_folder(folder, home))
            entries = entries or []
            if write_now:
                files.atomic_write(path, _encode_for_disk([header, *entries], blobs))
                lock.follow_path()
            return cls._expecting_file(
                cwd=cwd,
                session_dir=folder,
                session_file=path,
                blobs=blobs,
                header=header,
                entries=entries,
                on_disk=write_now,
                lock=lock,
            )
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _expecting_file(cls, **kwargs: Any) -> SessionManager:
        """A manager whose write chain knows the file now at its path as the session's own."""
        manager = cls(**kwargs)
        if manager._chain is not None:
            manager._chain.expect_file()
        return manager

    @staticmethod
    def _new_header(cwd: str, parent_session: str | None) -> JsonDict:
        header: JsonDict = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": files.new_session_id(),
            "timestamp": files.now_iso(),
            "cwd": cwd,
        }
        if parent_session is not None:
            header["parentSession"] = parent_session
        return header

    @staticmethod
    def _blob_folder(session_dir: Path, home: Path | None) -> Path:
        """Blobs live beside ``sessions/`` in the agent home: ``<home>/blobs``.

        For a session folder outside any home (a custom ``--session-dir``), the blobs go in
        ``<session_dir>/blobs`` so that the folder stays self-contained.
        """
        root = files.sessions_root(home)
        try:
            session_dir.absolute().relative_to(root.absolute())
        except ValueError:
            return session_dir / "blobs"
        return root.parent / "blobs"

    # --- index ------------------------------------------------------------------------

    def _index(self, entry: JsonDict) -> None:
        entry_id = entry.get("id")
        if not isinstance(entry_id, str):
            # Not a tree node (damaged or foreign line): kept in the file order, never indexed.
            self._entries.append(entry)
            return
        self._position[entry_id] = len(self._entries)
        self._entries.append(entry)
        self._by_id[entry_id] = entry
        parent = entry.get("parentId")
        self._children.setdefault(parent if isinstance(parent, str) else None, []).append(entry_id)
        kind = entry.get("type")
        if is_bookkeeping(entry):
            self._hidden.add(entry_id)
        if kind == "label":
            target, label = entry.get("targetId"), entry.get("label")
            if isinstance(target, str):
                if isinstance(label, str) and label:
                    self._labels[target] = label
                else:
                    self._labels.pop(target, None)
        elif kind == "session_info":
            # The latest session_info is the name, and an empty one clears it (as in pi).
            name = entry.get("name")
            self._name = (name.strip() or None) if isinstance(name, str) else None
        elif kind == "message" and not self._has_assistant:
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                self._has_assistant = True

    def _index_all(self, entries: Iterable[JsonDict]) -> None:
        """``_index`` for many entries, with the common case (a message) kept short."""
        all_entries, by_id, position, children = self._entries, self._by_id, self._position, self._children
        index = self._index
        for entry in entries:
            entry_id = entry.get("id")
            if entry.get("type") != "message" or entry_id.__class__ is not str:
                index(entry)
                continue
            position[entry_id] = len(all_entries)
            all_entries.append(entry)
            by_id[entry_id] = entry
            parent = entry.get("parentId")
            if parent.__class__ is not str:
                parent = None
            siblings = children.get(parent)
            if siblings is None:
                children[parent] = [entry_id]
            else:
                siblings.append(entry_id)

    def _leaf_from_file(self) -> str | None:
        """The leaf as the file says it: the last entry, looking through trailing bookkeeping.

        A trailing leaf marker or label points at the conversation's position with its
        ``parentId``; the reference agent, which takes the last line as its leaf, reaches the
        same context through it because neither kind ever reaches the model.
        """
        for entry in reversed(self._entries):
            entry_id = entry.get("id")
            if not isinstance(entry_id, str):
                continue
            if is_bookkeeping(entry):
                parent = entry.get("parentId")
                if parent is None:
                    return None
                if parent in self._by_id:
                    return self._through_bookkeeping(parent)
            return entry_id
        return None

    def _through_bookkeeping(self, entry_id: str) -> str | None:
        """The nearest ancestor-or-self of ``entry_id`` that is a conversation step."""
        current: str | None = entry_id
        seen: set[str] = set()
        while current is not None and current not in seen:
            seen.add(current)
            entry = self._by_id.get(current)
            if entry is None or not is_bookkeeping(entry):
                return current
            parent = entry.get("parentId")
            current = parent if isinstance(parent, str) else None
        return current

    # --- reading ----------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return str(self.header["id"])

    @property
    def leaf_id(self) -> str | None:
        return self._leaf

    @property
    def is_persisted(self) -> bool:
        return self.session_file is not None

    @property
    def is_on_disk(self) -> bool:
        """False until the first assistant message made the session worth a file."""
        return self._on_disk

    @property
    def session_name(self) -> str | None:
        return self._name

    def _load(self, entry: JsonDict) -> JsonDict:
        """Complete a stub entry from its raw line, in place, so every reference sees it.

        A line whose prefix looked right but whose JSON is damaged stays a stub (type, id,
        parent, timestamp) and is counted in ``load_report.damaged_entries``; it never reaches
        the model, like an unparsable line at load.
        """
        raw = self._deferred.pop(id(entry), None) if self._deferred else None
        if raw is None:
            return entry
        try:
            full = orjson.loads(raw)
        except orjson.JSONDecodeError:
            full = None
        if not isinstance(full, dict) or full.get("id") != entry.get("id"):
            self.load_report.damaged_entries.append(str(entry.get("id")))
            return entry
        entry.update(full)
        if self.blobs is not None and b"blob:sha256:" in raw:
            restore_blobs(entry, self.blobs)
        return entry

    def _load_all(self, entries: Iterable[JsonDict]) -> list[JsonDict]:
        if not self._deferred:
            return entries if isinstance(entries, list) else list(entries)
        load = self._load
        return [load(entry) for entry in entries]

    @property
    def entries(self) -> list[JsonDict]:
        """Every entry in file order (not a copy: do not mutate)."""
        if self._deferred:
            with _gc_paused():
                self._load_all(self._entries)
        return self._entries

    def get_entry(self, entry_id: str) -> JsonDict | None:
        entry = self._by_id.get(entry_id)
        return self._load(entry) if entry is not None else None

    def require_entry(self, entry_id: str) -> JsonDict:
        entry = self._by_id.get(entry_id)
        if entry is None:
            raise EntryNotFoundError(entry_id)
        return self._load(entry)

    def get_leaf_entry(self) -> JsonDict | None:
        return self.get_entry(self._leaf) if self._leaf is not None else None

    def get_label(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    @property
    def labels(self) -> dict[str, str]:
        return dict(self._labels)

    def entries_since(self, entry_id: str | None) -> list[JsonDict]:
        """Entries after ``entry_id`` in file order (all of them for None): a catch-up cursor."""
        if entry_id is None:
            return list(self.entries)
        position = self._position.get(entry_id)
        if position is None:
            raise EntryNotFoundError(entry_id)
        return self._load_all(self._entries[position + 1 :])

    def get_children(self, parent_id: str | None) -> list[JsonDict]:
        """Direct children as the tree shows them (leaf markers are see-through), oldest first."""
        return [self._load(self._by_id[i]) for i in self._visible_children(parent_id)]

    def get_branch(self, from_id: str | None = None) -> list[JsonDict]:
        """The path from the root to ``from_id`` (default: the leaf)."""
        start = self._leaf if from_id is None else from_id
        if start is None:
            return []
        if start not in self._by_id:
            raise EntryNotFoundError(start)
        return self._load_all(path_to_root(self._by_id, start))

    def build_session_context(self) -> SessionContext:
        """The model's context for the current leaf.

        Cached until the next append or leaf move: ``get_state`` and every turn ask for it,
        and walking a long branch each time would dominate those calls. The message list is
        a fresh copy; the messages themselves are shared and must not be mutated.
        """
        cached = self._cached_context()
        return SessionContext(
            messages=list(cached.messages), thinkingLevel=cached.thinkingLevel, model=cached.model
        )

    def _cached_context(self) -> SessionContext:
        key = (self._leaf, len(self._entries))
        if self._context_key != key or self._context is None:
            with _gc_paused():  # parsing deferred lines allocates a lot, and none of it is cyclic
                self._context = build_session_context(self._entries, self._leaf, self._by_id, load=self._load)
            self._context_key = key
        return self._context

    def context_message_count(self) -> int:
        """How many messages the model would get (the cached context, without copying it)."""
        return len(self._cached_context().messages)

    def _visible_children(self, parent_id: str | None) -> list[str]:
        result: list[str] = []
        pending = list(reversed(self._children.get(parent_id, [])))
        while pending:
            child = pending.pop()
            if is_bookkeeping(self._by_id[child]):
                pending.extend(reversed(self._children.get(child, [])))
            else:
                result.append(child)
        if len(result) > 1:
            result.sort(key=lambda i: (_sort_key(self._by_id[i].get("timestamp")), self._position[i]))
        return result

    def _visible_parent(self, entry_id: str, entry: JsonDict) -> str | None:
        """The nearest ancestor the tree shows (None for a root or an orphan)."""
        by_id = self._by_id
        parent = entry.get("parentId")
        for _ in range(len(by_id)):
            if not isinstance(parent, str) or parent == entry_id:
                return None
            parent_entry = by_id.get(parent)
            if parent_entry is None:
                return None
            if not is_bookkeeping(parent_entry):
                return parent
            parent = parent_entry.get("parentId")
        return None

    def get_tree(self) -> list[TreeNode]:
        """The whole tree, flattened depth-first, children oldest first.

        One pass groups the visible entries under their visible parents, then an explicit
        stack walks it: no recursion (any depth is fine) and no per-node rescans, so a
        100,000-entry session costs a few hundred milliseconds at most.
        """
        kids: dict[str | None, list[str]] = {}
        by_id = self._by_id
        plain = _PLAIN_TYPES
        for entry_id, entry in by_id.items():
            kind = entry.get("type")
            if kind not in plain and is_bookkeeping(entry):
                continue
            parent = entry.get("parentId")
            parent_entry = by_id.get(parent) if isinstance(parent, str) else None
            if parent_entry is not None and parent != entry_id and parent_entry.get("type") in plain:
                visible: str | None = parent  # the common case: a plain parent, no walk
            else:
                visible = self._visible_parent(entry_id, entry)
            siblings = kids.get(visible)
            if siblings is None:
                kids[visible] = [entry_id]
            else:
                siblings.append(entry_id)
        position = self._position
        for siblings in kids.values():
            if len(siblings) > 1:
                siblings.sort(key=lambda i: (_sort_key(by_id[i].get("timestamp")), position[i]))
        labels = self._labels
        if self._deferred:
            with _gc_paused():
                self._load_all(self._entries)
        nodes: list[TreeNode] = []
        stack: list[tuple[str, int, str | None]] = [(r, 0, None) for r in reversed(kids.get(None, []))]
        seen: set[str] = set()
        while stack:
            entry_id, depth, parent = stack.pop()
            if entry_id in seen:
                continue
            seen.add(entry_id)
            children = kids.get(entry_id, [])
            nodes.append(TreeNode(by_id[entry_id], depth, parent, len(children), labels.get(entry_id)))
            for child in reversed(children):
                stack.append((child, depth + 1, entry_id))
        return nodes

    def iter_path_ids(self, from_id: str | None = None) -> Iterator[str]:
        for entry in self.get_branch(from_id):
            yield entry["id"]

    # --- appending --------------------------------------------------------------------

    def _append(
        self, fields: JsonDict, *, parent_id: str | None = None, move_leaf: bool = True
    ) -> PendingAppend:
        """Add one entry as a child of the leaf (or ``parent_id``) and queue its line."""
        self._check_open()
        if self._chain is not None:
            self._chain.check()
        entry: JsonDict = {
            "type": fields.pop("type"),
            "id": new_entry_id(self._by_id),
            "parentId": self._leaf if move_leaf else parent_id,
            "timestamp": files.now_iso(),
        }
        entry.update(fields)
        if entry["type"] == "message" and self._has_assistant:
            self._index_all((entry,))  # the short path: nothing but the tree to update
        else:
            self._index(entry)
        if move_leaf:
            self._leaf = entry["id"]
        return PendingAppend(entry["id"], self._chain, self._persist(entry))

    def _persist(self, entry: JsonDict) -> int | None:
        if self._chain is None:
            return None
        if self._on_disk:
            return self._chain.enqueue(_encode_for_disk([entry], self.blobs))
        if not self._has_assistant:
            return None
        # First assistant message: the whole session so far goes out in one batch.
        self._on_disk = True
        return self._chain.enqueue(_encode_for_disk([self.header, *self.entries], self.blobs))

    def append_message(self, message: BaseModel | JsonDict) -> PendingAppend:
        if isinstance(message, BaseModel):
            data = dump_message(message)
        else:
            parse_message(message)  # raises pydantic.ValidationError on a malformed message
            data = message
        return self._append({"type": "message", "message": data})

    def append_thinking_level_change(self, thinking_level: str) -> PendingAppend:
        return self._append({"type": "thinking_level_change", "thinkingLevel": thinking_level})

    def append_model_change(self, provider: str, model_id: str) -> PendingAppend:
        return self._append({"type": "model_change", "provider": provider, "modelId": model_id})

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
    ) -> PendingAppend:
        fields: JsonDict = {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
        if details is not None:
            fields["details"] = details
        if from_hook is not None:
            fields["fromHook"] = from_hook
        return self._append(fields)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> PendingAppend:
        fields: JsonDict = {"type": "custom", "customType": custom_type}
        if data is not None:
            fields["data"] = data
        return self._append(fields)

    def append_custom_message_entry(
        self, custom_type: str, content: str | list[JsonDict], display: bool = True, details: Any = None
    ) -> PendingAppend:
        fields: JsonDict = {
            "type": "custom_message",
            "customType": custom_type,
            "content": content,
            "display": display,
        }
        if details is not None:
            fields["details"] = details
        return self._append(fields)

    def append_label_change(
        self, target_id: str, label: str | None, *, move_leaf: bool = True
    ) -> PendingAppend:
        """Set (or, with None or "", clear) the label of an entry; the latest label entry wins.

        Like every append it becomes the leaf, as in the reference implementation; with
        ``move_leaf=False`` it hangs under the leaf and the leaf stays where it is (what a
        client expects when it only bookmarks an entry). Either way the context is the same.
        """
        self.require_entry(target_id)
        fields: JsonDict = {"type": "label", "targetId": target_id}
        if label:
            fields["label"] = label
        return self._append(fields, parent_id=self._leaf, move_leaf=move_leaf)

    def append_session_info(self, name: str) -> PendingAppend:
        return self._append({"type": "session_info", "name": name.strip()})

    # --- moving the leaf ----------------------------------------------------------------

    def branch(self, entry_id: str) -> PendingAppend:
        """Move the leaf to an existing entry; the next append becomes its child."""
        self.require_entry(entry_id)
        return self._move_leaf(entry_id)

    def reset_leaf(self) -> PendingAppend:
        """Move the leaf before the first entry; the next append starts a new root."""
        return self._move_leaf(None)

    def _move_leaf(self, target: str | None) -> PendingAppend:
        self.check_writable()
        self._leaf = target
        if not self._entries or self._leaf_from_file() == target:
            return PendingAppend(None, None, None)
        return self._append({"type": "custom", "customType": LEAF_MARKER}, parent_id=target, move_leaf=False)

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
    ) -> PendingAppend:
        """Move the leaf to ``entry_id`` (None: the root) and add a summary of the branch left."""
        if entry_id is not None:
            self.require_entry(entry_id)
        self.check_writable()
        self._leaf = entry_id
        fields: JsonDict = {
            "type": "branch_summary",
            "fromId": entry_id if entry_id is not None else "root",
            "summary": summary,
        }
        if details is not None:
            fields["details"] = details
        if from_hook is not None:
            fields["fromHook"] = from_hook
        return self._append(fields)

    # --- new files from this one --------------------------------------------------------

    def create_branched_session(self, leaf_id: str, *, home: Path | None = None) -> SessionManager:
        """A new session holding just the root-to-``leaf_id`` path, ids unchanged.

        Labels of entries on the path are carried over as fresh label entries after it, each
        with the timestamp of the label entry it copies. The new file is written once, header
        first, when the path holds an assistant message; otherwise it is deferred like any new
        session.
        """
        entries = _path_without_labels(self.get_branch(leaf_id))
        stamps = self._label_timestamps()
        header = self._new_header(self.cwd, str(self.session_file) if self.session_file else None)
        taken = {e["id"] for e in entries}
        parent = entries[-1]["id"] if entries else None
        for target, label in self._labels.items():
            if target not in taken:
                continue
            label_id = new_entry_id(taken)
            taken.add(label_id)
            entries.append(
                {
                    "type": "label",
                    "id": label_id,
                    "parentId": parent,
                    "timestamp": stamps.get(target) or files.now_iso(),
                    "targetId": target,
                    "label": label,
                }
            )
            parent = label_id
        if self.session_file is None or self.session_dir is None:
            manager = SessionManager.in_memory(self.cwd)
            manager.header = header
            for entry in entries:
                manager._index(entry)
            manager._leaf = manager._leaf_from_file()
            return manager
        target_path = self.session_dir / files.session_file_name(header["timestamp"], header["id"])
        has_assistant = any(
            e.get("type") == "message"
            and isinstance(e.get("message"), dict)
            and e["message"].get("role") == "assistant"
            for e in entries
        )
        return SessionManager._fresh(
            self.cwd, self.session_dir, target_path, header, home, entries=entries, write_now=has_assistant
        )

    def _label_timestamps(self) -> dict[str, str]:
        """The timestamp of the label entry that set each current label (the latest one)."""
        stamps: dict[str, str] = {}
        for entry in self._entries:
            if entry.get("type") == "label" and isinstance(entry.get("targetId"), str):
                stamp = entry.get("timestamp")
                if isinstance(stamp, str):
                    stamps[entry["targetId"]] = stamp
        return stamps

    # --- durability and lifetime -------------------------------------------------------

    async def flush(self) -> None:
        """Wait until every queued line is fsynced (raises the latched error, if any)."""
        if self._chain is not None:
            await self._chain.wait()

    @property
    def write_chain(self) -> WriteChain | None:
        return self._chain

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("session manager is closed")
        if self._read_only:
            raise RuntimeError("session was opened read-only")

    def check_writable(self) -> None:
        """Raise the latched write error (or that the manager is closed) before anything moves."""
        self._check_open()
        if self._chain is not None:
            self._chain.check()

    def savepoint(self) -> Savepoint:
        return Savepoint(len(self._entries), self._leaf, self._name, dict(self._labels))

    def rollback(self, point: Savepoint) -> None:
        """Forget the entries appended since ``point`` and put the leaf, name and labels back.

        For a mutation whose lines failed to reach the file: after a write error nothing behind
        the failed line is written, so memory then says what the file says.
        """
        while len(self._entries) > point.count:
            entry = self._entries.pop()
            entry_id = entry.get("id")
            if not isinstance(entry_id, str) or self._by_id.get(entry_id) is not entry:
                continue
            del self._by_id[entry_id]
            self._position.pop(entry_id, None)
            self._hidden.discard(entry_id)
            parent = entry.get("parentId")
            key = parent if isinstance(parent, str) else None
            siblings = self._children.get(key)
            if siblings and entry_id in siblings:
                siblings.remove(entry_id)
                if not siblings:
                    del self._children[key]
        self._leaf = point.leaf
        self._name = point.name
        self._labels = dict(point.labels)
        self._context = None
        self._context_key = None

    async def aclose(self) -> None:
        if self._closed:
            return
        try:
            await self.flush()
        finally:
            self._release()

    def close(self) -> None:
        """Synchronous close: writes what is queued, then releases the file and the lock."""
        if self._closed:
            return
        try:
            if self._chain is not None and self._chain.error is None:
                self._chain.flush_sync()
        finally:
            self._release()

    def _release(self) -> None:
        self._closed = True
        try:
            if self._chain is not None:
                self._chain.close()
        finally:
            # A failing close(2) of the session file must not keep the file locked for the
            # rest of the process's life.
            if self._lock is not None:
                self._lock.release()

    def __enter__(self) -> SessionManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _path_without_labels(path: list[JsonDict]) -> list[JsonDict]:
    """Copies of a root-to-leaf path without its label entries and leaf markers, re-chained.

    Labels (and markers) are nodes of the chain like any entry: dropping one must hand its
    place to the next kept entry, or that entry would point at a parent the new file does not
    hold and the context would stop there. Ids stay as they are; only ``parentId`` changes
    (and a compaction that kept "from" a dropped entry keeps from the next kept one), as the
    reference implementation does.
    """
    kept: list[JsonDict] = []
    replacement: dict[str, str] = {}
    dropped: list[str] = []
    parent: str | None = None
    for entry in path:
        if entry.get("type") == "label" or is_leaf_marker(entry):
            dropped.append(entry["id"])
            continue
        for dropped_id in dropped:
            replacement[dropped_id] = entry["id"]
        dropped.clear()
        copy = dict(entry)
        copy["parentId"] = parent
        kept.append(copy)
        parent = entry["id"]
    for copy in kept:
        first_kept = copy.get("firstKeptEntryId")
        if copy.get("type") == "compaction" and isinstance(first_kept, str) and first_kept in replacement:
            copy["firstKeptEntryId"] = replacement[first_kept]
    return kept


def migrate_lines(lines: list[JsonDict]) -> int | None:
    """Migrate parsed lines in place; the version migrated from, or None when current."""
    version = file_version(lines)
    if not migrate(lines, new_entry_id):
        return None
    return version


def _encode_for_disk(lines: list[JsonDict], blobs: BlobStore | None) -> bytes:
    """The lines as written: blobs out, huge strings cut, transient fields dropped.

    ``prepare_for_disk`` walks the whole entry in Python; the encoded bytes tell more cheaply
    whether it can change anything: a string over the limit makes the line longer than the
    limit, a transient field or an image block shows its name. Otherwise the bytes are final.
    """
    dumps, option = orjson.dumps, orjson.OPT_APPEND_NEWLINE
    out: list[bytes] = []
    for line in lines:
        data = dumps(line, option=option)
        if (
            len(data) > MAX_PERSIST_CHARS
            or b'"partialJson"' in data
            or b'"jsonlEvents"' in data
            or (blobs is not None and b'"image"' in data)
        ):
            data = dumps(prepare_for_disk(line, blobs), option=option)
        out.append(data)
    return b"".join(out)


def _sort_key(timestamp: Any) -> str:
    """Canonical ISO string for ordering siblings; odd formats are normalised, not trusted."""
    if isinstance(timestamp, str) and len(timestamp) == 24 and timestamp.endswith("Z"):
        return timestamp
    millis = iso_to_ms(timestamp)
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


__all__ = [
    "LEAF_MARKER",
    "InvalidSessionFileError",
    "PendingAppend",
    "Savepoint",
    "SessionManager",
    "TreeNode",
    "is_bookkeeping",
    "is_leaf_marker",
    "new_entry_id",
]


@contextmanager
def _gc_paused(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic GC while many entries are built (plain JSON: no cycles); resumed after.

    With ``freeze``, what exists afterwards moves to the permanent generation: a whole file's
    entries live as long as the session, and the collector would otherwise walk them again and
    again (they are still freed by reference counting on close).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()
