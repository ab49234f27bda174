"""The tree as a client shows it, kept up to date as entries are appended.

Label entries and leaf markers are folded away (a label is a field of the node it names, a
marker is invisible), so every entry hangs under its nearest visible ancestor. The grouping
under visible parents, the depths and the rows' text are built once, on the first request,
and then extended by each append; a request only walks the groups in order and joins rows
that are already encoded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import orjson

from rpc_agent.io.background import SLICE_PAUSE
from rpc_agent.protocol.base import JsonDict

from .context import iso_to_ms
from .decoding import StoredMessage
from .index import PLAIN_TYPES, EntryIndex, is_bookkeeping, link
from .preview import preview_of, preview_of_stored

PREPARE_SLICE = 2000
"""Nodes previewed per hold of the lock (and between two pauses) when the tree is prepared in
the background."""
SETTLE = 0.01
"""Seconds the background build of a big tree waits, once the request that opened the session
is answered, for the client's next request to arrive."""
SETTLE_ABOVE = 20_000
"""Entries above which the build waits for that: a smaller tree is grouped in less time than
the wait, and is better ready when the client asks for it."""

TreeFilter = Literal["default", "no-custom", "user-only", "labeled-only"]
"""``default``: every visible node; ``no-custom``: without extension entries (``custom`` and
``custom_message``); ``user-only``: user messages; ``labeled-only``: nodes with a label."""


@dataclass(frozen=True, slots=True)
class TreeQuery:
    """The rows a client asks for: the subtree of ``root`` (None: the whole tree), down to
    ``max_depth`` levels below it, filtered by ``keep``; with ``since`` (a cursor from an
    earlier request) only the rows added or changed after it, in file order."""

    root: str | None = None
    max_depth: int | None = None
    keep: TreeFilter = "default"
    since: int | None = None


@dataclass(slots=True)
class TreeNode:
    """One row of the flattened tree: depth-first, children oldest first."""

    entry: JsonDict
    depth: int
    parentId: str | None
    childCount: int
    label: str | None


FREE_SLICE = 2000
"""Objects freed between two pauses (see ``free_dict``)."""


def free_dict(container: dict[Any, Any], pause: Callable[[], None]) -> None:
    """Empty a dict one item at a time, pausing every ``FREE_SLICE`` items: freeing 100,000
    items at once holds the GIL throughout, and a thread that never sleeps makes the others
    wait for it (see ``rpc_agent.io.background``)."""
    for n in range(len(container)):
        if n % FREE_SLICE == 0:
            pause()
        container.popitem()


def _take(groups: dict[str | None, str | list[str]], parent: str | None, child: str) -> None:
    """Remove ``child`` from the group under ``parent`` (a group of one is a plain string)."""
    group = groups.get(parent)
    if group == child:
        del groups[parent]
    elif isinstance(group, list) and child in group:
        group.remove(child)
        if len(group) == 1:
            groups[parent] = group[0]
        elif not group:
            del groups[parent]


def sort_key(timestamp: Any) -> str:
    """Canonical ISO string for ordering siblings; odd formats are normalised, not trusted."""
    if isinstance(timestamp, str) and len(timestamp) == 24 and timestamp.endswith("Z"):
        return timestamp
    millis = iso_to_ms(timestamp)
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class SessionTree:
    """Visible parents, children in order, depths and encoded rows of one index."""

    def __init__(self, index: EntryIndex) -> None:
        self._index = index
        self._built = False
        self._kids: dict[str | None, str | list[str]] = {}
        """Visible children by visible parent: one as a plain string, several as a list."""
        self._parent: dict[str, str | None] = {}
        self._depth: dict[str, int] = {}
        self._order: list[str] | None = None
        self._full: dict[str, bytes] = {}
        """Each node's whole JSON, dropped when its label or child count changes."""
        self._roles: dict[str, str | None] = {}
        self._previews: dict[str, str] = {}
        """Role and preview by node: an entry never changes, so neither do they."""
        self._version = 0
        """Counts the appends: a cached encoding of the whole tree is good for one version."""
        self._columns: tuple[int, bytes] | None = None
        self._rows: tuple[int, bytes] | None = None
        self._lock = threading.Lock()
        """Between readers: the rows may be built in a background thread right after an open
        while a request's worker thread asks for them; the second waits and finds them built."""
        self._abandoned = threading.Event()

    # --- keeping it up to date -----------------------------------------------------------

    def added(self, entry: JsonDict) -> None:
        """Called for each entry appended (after it is in the index).

        Under the lock: a build in a background thread may have taken its snapshot of the ids
        before this entry (then it is placed here, once the build is done) or after it (then
        it is already placed), and no row is encoded from a state half-way through an append.
        """
        with self._lock:
            self._version += 1
            self._added(entry)

    def _added(self, entry: JsonDict) -> None:
        if not self._built:
            return
        entry_id = entry.get("id")
        if not isinstance(entry_id, str) or entry_id in self._parent:
            return
        if is_bookkeeping(entry):
            target = entry.get("targetId")
            if entry.get("type") == "label" and isinstance(target, str):
                self._full.pop(target, None)
            return
        in_order = self._place(entry_id, entry)
        parent = self._parent[entry_id]
        if parent is not None:
            self._full.pop(parent, None)  # its childCount changed
        order = self._order
        if order is None or not in_order:
            self._order = None
        elif parent is None:
            order.append(entry_id)
        else:
            # The newest child goes last under its parent: right after the parent's subtree.
            at, depth = order.index(parent) + 1, self._depth
            level = depth[parent]
            while at < len(order) and depth[order[at]] > level:
                at += 1
            order.insert(at, entry_id)

    def _place(self, entry_id: str, entry: JsonDict) -> bool:
        """Put an entry under its visible parent; False when that re-sorted its siblings."""
        by_id = self._index.by_id
        parent = entry.get("parentId")
        parent_entry = by_id.get(parent) if isinstance(parent, str) else None
        if parent_entry is not None and parent != entry_id and parent_entry.get("type") in PLAIN_TYPES:
            visible: str | None = parent  # the common case: a plain parent, no walk
        else:
            visible = self._visible_parent(entry_id, entry)
        self._parent[entry_id] = visible
        self._depth[entry_id] = 0 if visible is None else self._depth.get(visible, -1) + 1
        link(self._kids, visible, entry_id)
        siblings = self._kids[visible]
        if isinstance(siblings, str):
            return True
        if self._built and self._key(siblings[-2]) > self._key(entry_id):
            siblings.sort(key=self._key)
            return False
        return True

    def _key(self, entry_id: str) -> tuple[str, int]:
        return sort_key(self._index.by_id[entry_id].get("timestamp")), self._index.position[entry_id]

    def _visible_parent(self, entry_id: str, entry: JsonDict) -> str | None:
        """The nearest ancestor the tree shows (None for a root or an orphan)."""
        by_id = self._index.by_id
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

    def _build(self) -> None:
        """Group every visible entry under its visible parent, then set depths from the roots."""
        if self._index.odd:
            self._place_each()
        else:
            self._regroup()
        for siblings in self._kids.values():
            if not isinstance(siblings, str):
                siblings.sort(key=self._key)
        # Depths in file order can see a child before its parent (an odd file): set them again
        # from the walk, which is the definition.
        self._order = self._walk()
        self._built = True

    def _place_each(self) -> None:
        """Entry by entry: for a file with an id named twice or an entry that is its own parent."""
        # A snapshot: a reader in a worker thread may build while the loop appends.
        by_id, place = self._index.by_id, self._place
        for entry_id in list(by_id):  # ids only: 100,000 (id, entry) pairs would wake the collector
            entry = by_id[entry_id]
            if entry.get("type") not in PLAIN_TYPES and is_bookkeeping(entry):
                continue
            place(entry_id, entry)

    def _regroup(self) -> None:
        """The index's children by parent, with only what the tree shows differently moved.

        The index groups entries under their parents as they arrive, and in most files that
        already is the tree: only the hidden entries (labels, leaf markers) leave their groups,
        and the groups under a hidden entry or a missing parent move up to the nearest visible
        ancestor or to the roots. Copying the groups and moving those few costs a fraction of
        placing every entry again.
        """
        index = self._index
        by_id = index.by_id
        # The groups before the hidden ids: an entry the loop appends meanwhile is then either
        # in no group copied or known to be hidden (it is placed on its append otherwise).
        kids = {p: (c if c.__class__ is str else list(c)) for p, c in list(index.children.items())}
        hidden = list(index.hidden)
        for entry_id in hidden:
            parent = by_id[entry_id].get("parentId")
            _take(kids, parent if isinstance(parent, str) else None, entry_id)
        moves = [(entry_id, self._visible_parent(entry_id, by_id[entry_id])) for entry_id in hidden]
        moves += [(p, None) for p in list(kids) if p is not None and p not in by_id]
        for source, target in moves:
            group = kids.pop(source, None)
            for child in [group] if isinstance(group, str) else group or []:
                link(kids, target, child)
        self._kids = kids
        self._parent = {
            child: parent
            for parent, group in kids.items()
            for child in ((group,) if group.__class__ is str else group)
        }

    def _walk(self) -> list[str]:
        """Depth-first from the roots. Every node sits in exactly one parent's list (``_place``
        places an id once), so no node is met twice and a cycle is never reached."""
        kids, depth = self._kids, self._depth
        order: list[str] = []
        append = order.append
        stack = self._children(None)[::-1]
        for root in stack:
            depth[root] = 0
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            entry_id = pop()
            append(entry_id)
            children = kids.get(entry_id)
            if children is None:
                continue
            level = depth[entry_id] + 1
            if children.__class__ is str:
                depth[children] = level
                push(children)
            else:
                for child in children:
                    depth[child] = level
                extend(children[::-1])
        if len(order) < len(self._parent):  # a cycle no root reaches: not in the order
            for entry_id in self._parent:
                depth.setdefault(entry_id, 0)
        return order

    def order(self) -> list[str]:
        if not self._built:
            with self._lock:
                if not self._built:
                    self._build()
        if self._order is None:
            self._order = self._walk()
        return self._order

    def _children(self, parent: str | None) -> list[str]:
        siblings = self._kids.get(parent)
        if siblings is None:
            return []
        return [siblings] if isinstance(siblings, str) else siblings

    def _count(self, entry_id: str) -> int:
        siblings = self._kids.get(entry_id)
        if siblings is None:
            return 0
        return 1 if isinstance(siblings, str) else len(siblings)

    def order_set(self) -> dict[str, str | None]:
        """The visible nodes (a mapping to their visible parents)."""
        self.order()
        return self._parent

    def prepare(self, pause: Callable[[], None]) -> None:
        """Build the tree, cut every node's preview and encode the whole tree's columns now,
        so that a later ``get_tree`` in columns only copies them.

        Called in a background thread right after a long session is opened: the tree is what
        an editor asks for next. The one-object-per-node rows are encoded on their first
        request (and kept): building both shapes up front would double the background work
        and the memory for a shape a big tree's client does not want.
        """
        if len(self._index.entries) > SETTLE_ABOVE:
            # First let the request that opened the session be answered, and the one a client
            # sends on reading that answer (its context, most likely) arrive and be served:
            # the grouping below is one long stretch of Python that would share the GIL with it.
            pause()
            time.sleep(SETTLE)
            pause()
        else:
            time.sleep(SLICE_PAUSE)  # let the thread that started this one go on first
        if self._abandoned.is_set():
            return
        order = self.order()
        for start in range(0, len(order), PREPARE_SLICE):
            if self._abandoned.is_set():
                return
            with self._lock:  # in slices: an append waits for one slice, not for the whole tree
                self._fill(order[start : start + PREPARE_SLICE])
            # A lock is not fair: without a pause here a request waiting for it would wait
            # for every slice.
            pause()
        if not self._abandoned.is_set():
            self.columns()

    def abandon(self) -> None:
        """Stop a ``prepare`` under way at its next slice: nobody will read this tree."""
        self._abandoned.set()

    def free_in_pieces(self, pause: Callable[[], None]) -> None:
        """Let go of the rows a few thousand at a time (see ``SessionView.free_in_pieces``)."""
        with self._lock:
            self._built, self._order, self._columns, self._rows = False, None, None, None
            containers: list[dict[Any, Any]] = [
                self._full,
                self._previews,
                self._roles,
                self._kids,
                self._parent,
                self._depth,
            ]
        for container in containers:
            free_dict(container, pause)

    # --- reading -------------------------------------------------------------------------

    def nodes(self) -> list[TreeNode]:
        """The whole tree, flattened depth-first, children oldest first (entries complete)."""
        order = self.order()
        by_id, labels, load = self._index.by_id, self._index.labels, self._index.load
        return [
            TreeNode(load(by_id[i]), self._depth[i], self._parent[i], self._count(i), labels.get(i))
            for i in order
        ]

    @staticmethod
    def _complete(entry: JsonDict, stored: StoredMessage | None) -> JsonDict:
        """The entry with its message, parsed for this once and not kept (the line is kept)."""
        if stored is None:
            return entry
        full = stored.parse()
        return full if full is not None else entry

    def select(self, query: TreeQuery) -> list[str]:
        """Ids of the nodes asked for, depth-first (with ``since``: new or relabelled, file order)."""
        root, max_depth, keep, since = query.root, query.max_depth, query.keep, query.since
        order = self.order()
        if since is not None:
            order = self._changed_since(since)
        elif root is not None:
            order = self._subtree(root)
        if max_depth is not None:
            base = self._depth[root] if root is not None and since is None else 0
            limit = base + max_depth
            depth = self._depth
            order = [i for i in order if depth[i] <= limit]
        if keep != "default":
            test = self._filter(keep)
            order = [i for i in order if test(i)]
        return order

    def _subtree(self, root: str) -> list[str]:
        result: list[str] = []
        stack = [root]
        seen: set[str] = set()
        while stack:
            entry_id = stack.pop()
            if entry_id in seen:
                continue
            seen.add(entry_id)
            result.append(entry_id)
            stack.extend(reversed(self._children(entry_id)))
        return result

    def _changed_since(self, cursor: int) -> list[str]:
        index = self._index
        changed: dict[str, None] = {}
        for entry in index.entries[max(cursor, 0) :]:
            entry_id = entry.get("id")
            if not isinstance(entry_id, str):
                continue
            if entry.get("type") == "label":
                target = entry.get("targetId")
                if isinstance(target, str) and target in self._parent:
                    changed[target] = None
                continue
            if entry_id in self._parent:
                parent = self._parent[entry_id]
                if parent is not None:
                    changed[parent] = None  # its childCount changed
                changed[entry_id] = None
        return list(changed)

    def _filter(self, keep: TreeFilter) -> Callable[[str], bool]:
        by_id, labels = self._index.by_id, self._index.labels
        if keep == "labeled-only":
            return lambda i: i in labels
        if keep == "no-custom":
            return lambda i: by_id[i].get("type") not in ("custom", "custom_message")

        def is_user(entry_id: str) -> bool:
            if by_id[entry_id].get("type") != "message":
                return False
            if entry_id not in self._roles:
                with self._lock:
                    self._fill([entry_id])
            return self._roles.get(entry_id) == "user"

        return is_user

    def encode(self, ids: list[str]) -> bytes:
        """The JSON array of the rows of ``ids``."""
        full = self._full
        try:
            rows = [full[i] for i in ids]
        except KeyError:
            with self._lock:
                self._prepare(ids)
                rows = [full[i] for i in ids]
        return b"[" + b",".join(rows) + b"]"

    def encode_whole(self) -> bytes:
        """The JSON array of every row, kept until the next append.

        Made from the columns, a slice of rows per ``dumps``: one ``dumps`` per row (what
        ``encode`` keeps for the small reads) would cost several times as much for a
        100,000-node tree.
        """
        cached = self._rows
        if cached is not None and cached[0] == self._version:
            return cached[1]
        self.order()
        with self._lock:
            cached = self._rows
            if cached is not None and cached[0] == self._version:
                return cached[1]
            lists = self._column_lists(self.order())
            names, columns, dumps = list(lists), list(lists.values()), orjson.dumps
            pieces = []
            for at in range(0, len(columns[0]), PREPARE_SLICE):
                rows = zip(*(column[at : at + PREPARE_SLICE] for column in columns), strict=True)
                pieces.append(dumps([dict(zip(names, row, strict=True)) for row in rows])[1:-1])
            encoded = b"[" + b",".join(pieces) + b"]"
            self._rows = (self._version, encoded)
            return encoded

    def columns(self, ids: list[str] | None = None) -> bytes:
        """The nodes of ``ids`` (default: the whole tree) as one JSON object of columns, one
        list per field.

        The compact shape of a big tree: no field name repeated per node, no object per node
        for the client to build, and each column is one ``dumps`` of a list. The whole tree's
        encoding is kept until the next append.
        """
        whole = ids is None
        cached = self._columns
        if whole and cached is not None and cached[0] == self._version:
            return cached[1]  # no lock: the background build may hold it for a slice
        self.order()  # built (that takes the lock itself)
        with self._lock:  # one consistent state: an append waits for the copy
            cached = self._columns
            if whole and cached is not None and cached[0] == self._version:
                return cached[1]
            if ids is None:
                ids = self.order()
            encoded = orjson.dumps(self._column_lists(ids))
            if whole:
                self._columns = (self._version, encoded)
            return encoded

    def _column_lists(self, ids: list[str]) -> dict[str, list[Any]]:
        """Every field of the nodes of ``ids``, one list per field (under the lock)."""
        self._fill(ids)
        by_id, labels, kids = self._index.by_id, self._index.labels, self._kids
        entries = list(map(by_id.__getitem__, ids))
        counts = [
            0 if children is None else 1 if children.__class__ is str else len(children)
            for children in map(kids.get, ids)
        ]
        return {
            "id": ids,
            "parentId": list(map(self._parent.__getitem__, ids)),
            "type": [entry.get("type") for entry in entries],
            "role": list(map(self._roles.__getitem__, ids)),
            "preview": list(map(self._previews.__getitem__, ids)),
            "label": list(map(labels.get, ids)),
            "timestamp": [entry.get("timestamp", "") for entry in entries],
            "depth": list(map(self._depth.__getitem__, ids)),
            "childCount": counts,
        }

    def _fill(self, ids: list[str]) -> None:
        """Cut the role and preview of the nodes of ``ids`` that have none yet.

        A stored message is previewed from its bytes, found by position, without building it.
        """
        previews, roles, index = self._previews, self._roles, self._index
        by_id, position, entries = index.by_id, index.position, index.entries
        stored = index.stored.messages.get
        for i in [i for i in ids if i not in previews] if previews else ids:
            at = position[i]
            message = stored(at)
            # A position holds stored bytes only while its entry is a stub (loading it lets
            # them go); the identity check guards an id that a corrupt file names twice.
            role_preview = (
                preview_of_stored(message) if message is not None and entries[at] is by_id[i] else None
            )
            if role_preview is None:
                entry = by_id[i]
                role_preview = preview_of(self._complete(entry, index.stored_of(entry)))
            roles[i], previews[i] = role_preview

    def _prepare(self, ids: list[str]) -> None:
        """Encode the rows of ``ids`` not encoded yet: one ``dumps`` per row."""
        full, dumps = self._full, orjson.dumps
        missing = [i for i in ids if i not in full]
        lists = self._column_lists(missing)
        names = list(lists)
        for entry_id, row in zip(missing, zip(*lists.values(), strict=True), strict=True):
            full[entry_id] = dumps(dict(zip(names, row, strict=True)))
