"""Reading a session: entries, paths, the model's context and the tree, never changing them.

``SessionView`` is what readers get; ``SessionManager`` (store.py) adds appends, leaf moves
and the file's lifetime on top. Readers that send what they read on as JSON (the wire's
``get_messages``, ``get_entries``, ``get_tree``) ask for ``*_json`` bytes: a message that is
still a stored line goes out as the bytes it was stored as, never parsed and encoded again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import orjson

from rpc_agent.errors import EntryNotFoundError
from rpc_agent.io.background import Background
from rpc_agent.protocol.shapes import EntryDict
from rpc_agent.store.context import (
    SessionContext,
    StoredContext,
    build_session_context,
    build_stored_context,
    path_to_root,
)
from rpc_agent.store.files import LoadReport
from rpc_agent.store.freeing import free_dict, free_list
from rpc_agent.store.index import EntryIndex, is_bookkeeping
from rpc_agent.store.place import SessionPlace
from rpc_agent.store.tree import SessionTree, TreeFilter, TreeNode, TreeQuery, sort_key

PIECE_BYTES = 1 << 20
"""About this much of a big JSON array per piece (see ``array_pieces``)."""


def array_pieces(items: list[bytes]) -> list[bytes]:
    """The JSON array of encoded ``items`` as pieces of about a megabyte that joined are it.

    One join of a 75 MB array, and the copy that puts brackets around it, hold the GIL for a
    tenth of a second or more: a server's event loop answers nothing meanwhile. Pieces are
    joined a megabyte at a time and the writer sends them one after the other.
    """
    groups: list[list[bytes]] = []
    start = size = 0
    for end, item in enumerate(items, 1):
        size += len(item)
        if size >= PIECE_BYTES:
            groups.append(items[start:end])
            start, size = end, 0
    if start < len(items) or not groups:
        groups.append(items[start:])
    pieces = [(b"," if n else b"[") + b",".join(group) for n, group in enumerate(groups)]
    pieces[-1] += b"]"
    return pieces


PREPARE_TREE_ENTRIES = 256
"""From this many entries on, ``warm_up`` builds the tree in the background (a thread costs
less than building a tree of this size on the request); a shorter session builds it then."""


class SessionView:
    """One session's entries, leaf, labels and name, read-only."""

    def __init__(self, place: SessionPlace, index: EntryIndex) -> None:
        self.cwd = place.cwd
        self.header = place.header
        self.session_dir = place.session_dir
        self.session_file = place.session_file
        self.blobs = place.blobs
        self._index = index
        self._tree = SessionTree(index)
        self._leaf: str | None = index.leaf_from_file()
        self._context: SessionContext | None = None
        self._context_key: tuple[str | None, int] | None = None
        self._reader: tuple[tuple[str | None, int], StoredContext] | None = None
        self._preparing: threading.Thread | None = None

    @property
    def load_report(self) -> LoadReport:
        return self._index.report

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
    def session_name(self) -> str | None:
        return self._index.name

    # --- entries ---------------------------------------------------------------------------

    @property
    def entries(self) -> list[EntryDict]:
        """Every entry in file order (not a copy: do not mutate)."""
        index = self._index
        if index.stored:
            index.load_all(index.entries)
        return index.entries

    def get_entry(self, entry_id: str) -> EntryDict | None:
        entry = self._index.by_id.get(entry_id)
        return self._index.load(entry) if entry is not None else None

    def require_entry(self, entry_id: str) -> EntryDict:
        entry = self._index.by_id.get(entry_id)
        if entry is None:
            raise EntryNotFoundError(entry_id)
        return self._index.load(entry)

    def get_leaf_entry(self) -> EntryDict | None:
        return self.get_entry(self._leaf) if self._leaf is not None else None

    def get_label(self, entry_id: str) -> str | None:
        return self._index.labels.get(entry_id)

    @property
    def labels(self) -> dict[str, str]:
        return dict(self._index.labels)

    def _start_after(self, entry_id: str | None) -> int:
        if entry_id is None:
            return 0
        position = self._index.position.get(entry_id)
        if position is None:
            raise EntryNotFoundError(entry_id)
        return position + 1

    def entries_since(self, entry_id: str | None) -> list[EntryDict]:
        """Entries after ``entry_id`` in file order (all of them for None): a catch-up cursor."""
        start = self._start_after(entry_id)
        return self._index.load_all(self._index.entries[start:])

    def entries_json(self, entry_id: str | None = None) -> bytes:
        """``entries_since`` as a JSON array: stored lines as they are, the rest encoded."""
        return b"".join(self.entries_pieces(entry_id))

    def entries_pieces(self, entry_id: str | None = None) -> list[bytes]:
        """``entries_json`` in pieces (see ``array_pieces``)."""
        start = self._start_after(entry_id)
        index = self._index
        entries = index.entries[start:]
        stored, dumps = index.stored.lines, orjson.dumps
        parts: list[Any] = []
        append = parts.append
        for position, entry in enumerate(entries, start):
            line = stored.get(position) if stored else None
            append(line if line is not None and "message" not in entry else dumps(entry))
        return array_pieces(parts)

    def get_children(self, parent_id: str | None) -> list[EntryDict]:
        """Direct children as the tree shows them (leaf markers are see-through), oldest first."""
        index = self._index
        by_id = index.by_id
        result: list[str] = []
        pending = index.children_of(parent_id)[::-1]
        while pending:
            child = pending.pop()
            if is_bookkeeping(by_id[child]):
                pending.extend(index.children_of(child)[::-1])
            else:
                result.append(child)
        if len(result) > 1:
            result.sort(key=lambda i: (sort_key(by_id[i].get("timestamp")), index.position[i]))
        return [index.load(by_id[i]) for i in result]

    def get_branch(self, from_id: str | None = None) -> list[EntryDict]:
        """The path from the root to ``from_id`` (default: the leaf)."""
        start = self._leaf if from_id is None else from_id
        if start is None:
            return []
        if start not in self._index.by_id:
            raise EntryNotFoundError(start)
        return self._index.load_all(path_to_root(self._index.by_id, start))

    # --- the model's context ---------------------------------------------------------------

    def build_session_context(self) -> SessionContext:
        """The model's context for the current leaf.

        Cached until the next append or leaf move: every turn asks for it, and walking a long
        branch each time would dominate. The message list is a fresh copy; the messages
        themselves are shared and must not be mutated.
        """
        cached = self._cached_context()
        return SessionContext(
            list(cached.messages), cached.thinkingLevel, cached.model, cached.thinkingLevelRecorded
        )

    def _key(self) -> tuple[str | None, int]:
        """What the context depends on: the path from the leaf to the root, which appends
        never change (entries are immutable) unless one fills in a parent that was missing."""
        return (self._leaf, self._index.filled)

    def _cached_context(self) -> SessionContext:
        key = self._key()
        if self._context_key != key or self._context is None:
            index = self._index
            self._context = build_session_context(index.entries, self._leaf, index.by_id, load=index.load)
            self._context_key = key
            self._reader = None  # its stored bytes were let go by the parse; don't keep them
        return self._context

    def _fresh(self) -> SessionContext | StoredContext | None:
        """A context already built for the current path (parsed, or as a JSON reader gets it)."""
        key = self._key()
        if self._context_key == key and self._context is not None:
            return self._context
        if self._reader is not None and self._reader[0] == key:
            return self._reader[1]
        return None

    def _reader_context(self) -> StoredContext:
        """The context as a JSON reader gets it: a stored message as its bytes, the others as
        dicts. One walk gives ``get_messages`` its bytes and ``get_state`` its model, thinking
        level and count, so that a long session just opened is walked once, not three times."""
        key = self._key()
        if self._reader is None or self._reader[0] != key:
            index = self._index
            context = build_stored_context(
                index.entries, self._leaf, index.by_id, load=index.load, message_of=index.message_to_send
            )
            self._reader = (key, context)
        return self._reader[1]

    def context_settings(self) -> SessionContext:
        """Thinking level and model of the current leaf (``messages`` is empty)."""
        cached = self._fresh() or self._reader_context()
        return SessionContext([], cached.thinkingLevel, cached.model, cached.thinkingLevelRecorded)

    def warm_up(self, background: Background | None = None) -> None:
        """Walk the current path once for what every ``get_state`` asks (in a worker thread,
        right after a long session is opened, so that the event loop never does), and, given
        a ``background`` (the server's), start building the tree there: an editor asks for the
        tree next, and the request then finds it ready (see ``SessionTree.prepare``)."""
        self._reader_context()
        if background is not None and len(self._index.entries) >= PREPARE_TREE_ENTRIES:
            tree = self._tree
            self._preparing = background.start(lambda: tree.prepare(background.pause), "tree-rows")

    def free_in_pieces(self, pause: Callable[[], None]) -> None:
        """Let go of everything the session holds, a few thousand objects at a time.

        For a closed session nobody reads any more, in a worker thread: freeing a 100,000-entry
        session when its last reference goes is one long C call that holds the GIL (a quarter
        of a second), and so keeps the event loop from answering anything meanwhile.
        """
        if self._preparing is not None:
            self._tree.abandon()
            self._preparing.join()  # it reads the index (until its current slice ends)
        contexts = [c for c in (self._context, self._reader[1] if self._reader else None) if c is not None]
        self._context, self._reader = None, None
        self._tree.free_in_pieces(pause)
        index = self._index
        containers: list[dict[Any, Any]] = [
            index.by_id,
            index.position,
            index.children.single,
            index.children.several,
            index.stored.lines,
            index.stored.messages,
            index.labels,
        ]
        for container in containers:
            free_dict(container, pause)
        index.hidden.clear()  # a few ids
        index.odd.clear()
        for items in (*(c.messages for c in contexts), index.entries):
            free_list(items, pause)

    def context_message_count(self) -> int:
        """How many messages the model would get, without reading them."""
        return len((self._fresh() or self._reader_context()).messages)

    def messages_json(self) -> bytes:
        """The context's messages as a JSON array; stored messages are copied as they are."""
        return b"".join(self.messages_pieces())

    def messages_pieces(self) -> list[bytes]:
        """``messages_json`` in pieces (see ``array_pieces``)."""
        dumps = orjson.dumps
        if self._context_key == self._key() and self._context is not None:
            messages = self._context.messages
            # A few hundred at a time: each slice's items, without its brackets.
            return array_pieces([dumps(messages[i : i + 256])[1:-1] for i in range(0, len(messages), 256)])
        parts: list[Any] = [
            m if m.__class__ is not dict else dumps(m) for m in self._reader_context().messages
        ]
        return array_pieces(parts)

    # --- the tree --------------------------------------------------------------------------

    def get_tree(self) -> list[TreeNode]:
        """The whole tree, flattened depth-first, children oldest first."""
        return self._tree.nodes()

    @property
    def tree_cursor(self) -> int:
        """A position to pass back as ``since``: what was appended after it is "changed"."""
        return len(self._index.entries)

    def tree_json(
        self,
        *,
        root: str | None = None,
        max_depth: int | None = None,
        keep: TreeFilter = "default",
        since: int | None = None,
        columns: bool = False,
    ) -> bytes:
        """The rows asked for as a JSON array (see ``SessionTree.select``); with ``columns``,
        the same nodes as one object of columns (see ``SessionTree.columns``)."""
        if root is not None and root not in self._index.by_id:
            raise EntryNotFoundError(root)
        tree = self._tree
        if root is not None and root not in tree.order_set():
            raise EntryNotFoundError(root)
        query = TreeQuery(root, max_depth, keep, since)
        if query == TreeQuery():  # the whole tree: kept encoded until the next append
            return tree.columns() if columns else tree.encode_whole()
        ids = tree.select(query)
        return tree.columns(ids) if columns else tree.encode(ids)
