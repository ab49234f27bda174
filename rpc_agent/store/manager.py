"""SessionManager: one session's tree, its leaf pointer, and its file.

The manager is a ``SessionView`` (view.py: reading) that also appends, moves the leaf and owns
the file; the index is in index.py, the tree in tree.py, the constructors in opening.py,
the entries of a branched copy in branched.py, the disk encoding in encoding.py, what an
append hands back in durability.py. Context building and migrations are pure functions
elsewhere; this class decides *when* things reach the disk:

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

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rpc_agent.protocol.entries import dump_message, parse_message
from rpc_agent.protocol.shapes import Content, EntryDict, MessageDict, UsageDict
from rpc_agent.store import branched, files, opening
from rpc_agent.store.durability import PendingAppend, Savepoint
from rpc_agent.store.encoding import encode_for_disk
from rpc_agent.store.index import (
    LEAF_MARKER,
    EntryIndex,
    new_entry_id,
)
from rpc_agent.store.projection import with_system_checkpoint
from rpc_agent.store.tree import SessionTree
from rpc_agent.store.view import SessionView
from rpc_agent.store.writer import WriteChain


class SessionManager(SessionView):
    """Use the class methods (``create``, ``open``, ``in_memory``, ...) to make one."""

    def __init__(self, opened: opening.Opened) -> None:
        """Use the constructors below (``opening`` finds or makes what a manager is made of)."""
        place, lock = opened.place, opened.lock
        index = EntryIndex(
            stored=opened.stored, blobs=place.blobs, report=opened.report, has_assistant=opened.on_disk
        )
        index.add_all(opened.entries)
        super().__init__(place, index)
        self._lock = lock
        self._read_only = opened.read_only
        self._chain = (
            WriteChain(place.session_file, on_open=lock.follow if lock is not None else None)
            if place.session_file is not None and not opened.read_only
            else None
        )
        if opened.owns_file and self._chain is not None:
            self._chain.expect_file()
        self._on_disk = opened.on_disk
        self._closed = False

    # --- construction (see opening.py) -------------------------------------------------

    @classmethod
    def made_of(cls, opened: opening.Opened) -> SessionManager:
        """The manager of what ``opening`` found or made; its lock is released if this fails."""
        try:
            return cls(opened)
        except BaseException:
            if opened.lock is not None:
                opened.lock.release()
            raise

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
        return cls.made_of(opening.create(cwd, session_dir, parent_session, home))

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
        return cls.made_of(opening.open_file(path, session_dir, cwd, home, must_exist))

    @classmethod
    def open_read_only(cls, path: Path | str, *, home: Path | None = None) -> SessionManager:
        """A session file as it is, for code that only reads it (export, inspection).

        No lock is taken, so a session another process is writing can be read; nothing is
        repaired or migrated on disk (an old file is migrated in memory only), and appending
        raises. Raises SessionNotFoundError for a missing or empty file.
        """
        return cls.made_of(opening.open_read_only(path, home))

    @classmethod
    def in_memory(cls, cwd: str | None = None) -> SessionManager:
        """A session that is never written (``--no-session``)."""
        return cls.made_of(opening.in_memory(cwd))

    @classmethod
    def continue_recent(
        cls, cwd: str, session_dir: Path | str | None = None, *, home: Path | None = None
    ) -> SessionManager:
        """The most recently modified session of ``cwd``, or a new one if there is none."""
        return cls.made_of(opening.continue_recent(cwd, session_dir, home))

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
        return cls.made_of(opening.fork_from(source, target_cwd, session_dir, home))

    @property
    def is_on_disk(self) -> bool:
        """False until the first assistant message made the session worth a file."""
        return self._on_disk

    # --- appending --------------------------------------------------------------------

    def _add(self, entry: EntryDict) -> None:
        index = self._index
        if entry.get("type") == "message" and index.has_assistant:
            index.add_all((entry,))  # the short path: nothing but the tree to update
        else:
            index.add(entry)
        self._tree.added(entry)

    def _new(self, kind: str, *, parent_id: str | None = None, move_leaf: bool = True) -> EntryDict:
        """The head of a new entry of type ``kind``, a child of the leaf (or of ``parent_id``):
        its fresh id and the time. The append methods add its fields and pass it to ``_append``.

        Checks first that the session can still be appended to. The head's keys come first in
        the line, in this order, as the reference agent writes them (and ``files`` reads them).
        """
        self._check_open()
        if self._chain is not None:
            self._chain.check()
        return {
            "type": kind,
            "id": new_entry_id(self._index.by_id),
            "parentId": self._leaf if move_leaf else parent_id,
            "timestamp": files.now_iso(),
        }

    def _append(self, entry: EntryDict, *, move_leaf: bool = True) -> PendingAppend:
        """Add an entry made by ``_new`` and queue its line."""
        self._add(entry)
        if move_leaf:
            self._leaf = entry["id"]
        return PendingAppend(entry["id"], self._chain, self._persist(entry))

    def _persist(self, entry: EntryDict) -> int | None:
        if self._chain is None:
            return None
        if self._on_disk:
            return self._chain.enqueue(encode_for_disk([entry], self.blobs))
        if not self._index.has_assistant:
            return None
        # First assistant message: the whole session so far goes out in one batch.
        self._on_disk = True
        return self._chain.enqueue(encode_for_disk([self.header, *self.entries], self.blobs))

    def append_message(self, message: BaseModel | MessageDict) -> PendingAppend:
        if isinstance(message, BaseModel):
            data = dump_message(message)
        else:
            parse_message(message)  # raises pydantic.ValidationError on a malformed message
            data = message
        entry = self._new("message")
        entry["message"] = data
        return self._append(entry)

    def append_thinking_level_change(self, thinking_level: str) -> PendingAppend:
        entry = self._new("thinking_level_change")
        entry["thinkingLevel"] = thinking_level
        return self._append(entry)

    def append_model_change(self, provider: str, model_id: str) -> PendingAppend:
        entry = self._new("model_change")
        entry["provider"], entry["modelId"] = provider, model_id
        return self._append(entry)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: UsageDict | None = None,
    ) -> PendingAppend:
        entry = self._new("compaction")
        entry["summary"], entry["firstKeptEntryId"] = summary, first_kept_entry_id
        entry["tokensBefore"] = tokens_before
        _add_summary_extras(entry, details, usage, from_hook)
        return self._append(with_system_checkpoint(entry, self.build_session_context().messages))

    def append_custom_entry(self, custom_type: str, data: Any = None) -> PendingAppend:
        entry = self._new("custom")
        entry["customType"] = custom_type
        if data is not None:  # pi writes no ``null`` for it
            entry["data"] = data
        return self._append(entry)

    def append_custom_message_entry(
        self, custom_type: str, content: Content, display: bool = True, details: Any = None
    ) -> PendingAppend:
        entry = self._new("custom_message")
        entry["customType"], entry["content"], entry["display"] = custom_type, content, display
        if details is not None:  # pi writes no ``null`` for it
            entry["details"] = details
        return self._append(entry)

    def append_label_change(
        self, target_id: str, label: str | None, *, move_leaf: bool = True
    ) -> PendingAppend:
        """Set (or, with None or "", clear) the label of an entry; the latest label entry wins.

        Like every append it becomes the leaf, as in the reference implementation; with
        ``move_leaf=False`` it hangs under the leaf and the leaf stays where it is (what a
        client expects when it only bookmarks an entry). Either way the context is the same.
        """
        self.require_entry(target_id)
        entry = self._new("label", parent_id=self._leaf, move_leaf=move_leaf)
        entry["targetId"] = target_id
        if label:
            entry["label"] = label
        return self._append(entry, move_leaf=move_leaf)

    def append_session_info(self, name: str) -> PendingAppend:
        entry = self._new("session_info")
        entry["name"] = name.strip()
        return self._append(entry)

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
        if not self._index.entries or self._index.leaf_from_file() == target:
            return PendingAppend(None, None, None)
        entry = self._new("custom", parent_id=target, move_leaf=False)
        entry["customType"] = LEAF_MARKER
        return self._append(entry, move_leaf=False)

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: UsageDict | None = None,
    ) -> PendingAppend:
        """Move the leaf to ``entry_id`` (None: the root) and add a summary of the branch left."""
        if entry_id is not None:
            self.require_entry(entry_id)
        self.check_writable()
        self._leaf = entry_id
        entry = self._new("branch_summary")
        entry["fromId"] = entry_id if entry_id is not None else "root"
        entry["summary"] = summary
        _add_summary_extras(entry, details, usage, from_hook)
        return self._append(entry)

    # --- new files from this one --------------------------------------------------------

    def create_branched_session(self, leaf_id: str, *, home: Path | None = None) -> SessionManager:
        """A new session holding just the root-to-``leaf_id`` path, ids unchanged.

        Labels of entries on the path are carried over as fresh label entries after it, each
        with the timestamp of the label entry it copies. The new file is written once, header
        first, when the path holds an assistant message; otherwise it is deferred like any new
        session.
        """
        entries = branched.path_entries(self.get_branch(leaf_id), self._index)
        header = opening.new_header(self.cwd, str(self.session_file) if self.session_file else None)
        if self.session_file is None or self.session_dir is None:
            manager = SessionManager.in_memory(self.cwd)
            manager.header = header
            for entry in entries:
                manager._add(entry)
            manager._leaf = manager._index.leaf_from_file()
            return manager
        target_path = self.session_dir / files.session_file_name(header["timestamp"], header["id"])
        has_assistant = any(
            e.get("type") == "message"
            and isinstance(e.get("message"), dict)
            and e["message"].get("role") == "assistant"
            for e in entries
        )
        return SessionManager.made_of(
            opening.fresh(
                self.cwd,
                self.session_dir,
                target_path,
                header,
                home,
                entries=entries,
                write_now=has_assistant,
            )
        )

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
        return Savepoint(len(self._index.entries), self._leaf, self._index.has_assistant)

    def rollback(self, point: Savepoint) -> None:
        """Forget the entries appended since ``point`` and put the leaf back.

        For a mutation whose lines failed to reach the file: after a write error nothing behind
        the failed line is written, so memory then says what the file says. Rare, so the index
        and the tree are simply rebuilt from the entries that stay.
        """
        old = self._index
        if len(old.entries) > point.count:
            index = EntryIndex(
                stored=old.stored, blobs=old.blobs, report=old.report, has_assistant=point.has_assistant
            )
            index.add_all(old.entries[: point.count])
            self._index = index
            self._tree = SessionTree(index)
        self._leaf = point.leaf
        self._context = None
        self._context_key = None
        self._reader = None

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


def _add_summary_extras(
    entry: EntryDict, details: Any, usage: UsageDict | None, from_hook: bool | None
) -> None:
    """The optional fields of a compaction or a branch summary, only when given: pi writes no
    ``null`` for them."""
    if details is not None:
        entry["details"] = details
    if usage is not None:
        entry["usage"] = usage
    if from_hook is not None:
        entry["fromHook"] = from_hook


__all__ = ["SessionManager"]
