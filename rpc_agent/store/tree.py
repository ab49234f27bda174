"""The tree as a client shows it, kept up to date as entries are appended.

Its structure is ``tree_shape``, its rows ``tree_rows``; this is the one object a session view
holds, with the lock between its readers: the tree may be built in a background thread
(``prepare``) right after an open while a request's worker thread asks for it. A request only
walks the groups in order and joins rows that are already encoded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rpc_agent.io.background import SLICE_PAUSE
from rpc_agent.protocol.shapes import EntryDict
from rpc_agent.store.freeing import free_dict
from rpc_agent.store.index import EntryIndex
from rpc_agent.store.tree_rows import TreeRows
from rpc_agent.store.tree_shape import TreeFilter, TreeShape, sort_key

__all__ = ["SessionTree", "TreeFilter", "TreeNode", "TreeQuery", "sort_key"]

PREPARE_SLICE = 2000
"""Nodes previewed per hold of the lock (and between two pauses) when the tree is prepared in
the background."""
SETTLE = 0.01
"""Seconds the background build of a big tree waits, once the request that opened the session
is answered, for the client's next request to arrive."""
SETTLE_ABOVE = 20_000
"""Entries above which the build waits for that: a smaller tree is grouped in less time than
the wait, and is better ready when the client asks for it."""


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

    entry: EntryDict
    depth: int
    parentId: str | None
    childCount: int
    label: str | None


class SessionTree:
    """The shape and the rows of one index's tree, behind one lock."""

    def __init__(self, index: EntryIndex) -> None:
        self._index = index
        self.shape = TreeShape(index)
        self.rows = TreeRows(self.shape)
        self._lock = threading.Lock()
        """Between readers: the rows may be built in a background thread right after an open
        while a request's worker thread asks for them; the second waits and finds them built."""
        self._abandoned = threading.Event()

    def added(self, entry: EntryDict) -> None:
        """Called for each entry appended (after it is in the index).

        Under the lock: a build in a background thread may have taken its snapshot of the ids
        before this entry (then it is placed here, once the build is done) or after it (then
        it is already placed), and no row is encoded from a state half-way through an append.
        """
        with self._lock:
            changed = self.shape.added(entry) if self.shape.built else None
            self.rows.changed(changed)

    def order(self) -> tuple[str, ...]:
        """Every node, depth-first: built on the first call, walked again after an append that
        does not go last (see ``TreeShape.added``)."""
        shape = self.shape
        order = shape.order
        if shape.built and order is not None and not shape.tail:
            return order
        with self._lock:
            return self._order()

    def _order(self) -> tuple[str, ...]:
        """``order`` for a caller that holds the lock."""
        return self._shape().ordered()

    def _shape(self) -> TreeShape:
        """The shape, built (the caller holds the lock)."""
        if not self.shape.built:
            self.shape.build()
        return self.shape

    def built(self) -> TreeShape:
        """The shape, built (by this call if it is not yet)."""
        if not self.shape.built:
            with self._lock:
                self._shape()
        return self.shape

    def order_set(self) -> dict[str, str | None]:
        """The visible nodes (a mapping to their visible parents)."""
        return self.built().parent

    # --- built ahead, let go --------------------------------------------------------------

    def prepare(self, pause: Callable[[], None]) -> None:
        """Build the tree, cut every node's preview and encode the whole tree's columns now,
        so that a later ``get_tree`` in columns only copies them; ``pause`` between slices.

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
                self.rows.fill(order[start : start + PREPARE_SLICE])
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
            shape, rows = self.shape, self.rows
            shape.built, shape.order, rows.whole_columns, rows.whole_rows = False, None, None, None
            shape.tail.clear()
            containers: list[dict[Any, Any]] = [
                rows.full,
                rows.previews,
                rows.roles,
                shape.groups.single,
                shape.groups.several,
                shape.parent,
                shape.depth,
            ]
        for container in containers:
            free_dict(container, pause)

    # --- reading -------------------------------------------------------------------------

    def nodes(self) -> list[TreeNode]:
        """The whole tree, flattened depth-first, children oldest first (entries complete,
        the stored ones parsed for the caller: the index keeps them as it had them)."""
        order = self.order()
        shape, index = self.shape, self._index
        return [
            TreeNode(
                index.complete(index.by_id[i]),
                shape.depth[i],
                shape.parent[i],
                shape.count(i),
                index.labels.get(i),
            )
            for i in order
        ]

    def select(self, query: TreeQuery) -> Sequence[str]:
        """Ids of the nodes asked for, depth-first (with ``since``: new or relabelled, file order)."""
        root, max_depth, keep, since = query.root, query.max_depth, query.keep, query.since
        shape = self.built()
        order: Sequence[str]
        if since is not None:
            order = shape.changed_since(since)
        elif root is not None:
            order = shape.subtree(root)
        else:
            order = self.order()
        if max_depth is not None:
            base = shape.depth[root] if root is not None and since is None else 0
            limit = base + max_depth
            order = [i for i in order if shape.depth[i] <= limit]
        if keep != "default":
            test = shape.keeps(keep, self._role)
            order = [i for i in order if test(i)]
        return order

    def _role(self, entry_id: str) -> str | None:
        if entry_id in self.rows.roles:
            return self.rows.roles[entry_id]
        with self._lock:
            return self.rows.role(entry_id)

    def encode(self, ids: Sequence[str]) -> bytes:
        """The JSON array of the rows of ``ids``."""
        rows = self.rows
        if all(i in rows.full for i in ids):
            return rows.rows(ids)
        with self._lock:
            return rows.rows(ids)

    def encode_whole(self) -> bytes:
        """The JSON array of every row, kept until the next append."""
        with self._lock:
            return self.rows.all_rows(self._order())

    def columns(self, ids: Sequence[str] | None = None) -> bytes:
        """The nodes of ``ids`` (default: the whole tree) as one JSON object of columns, one
        list per field.

        The compact shape of a big tree: no field name repeated per node, no object per node
        for the client to build, and each column is one ``dumps`` of a list. The whole tree's
        encoding is kept until the next append.
        """
        whole = ids is None
        if whole:
            kept = self.rows.kept_columns()
            if kept is not None:
                return kept  # no lock: the background build may hold it for a slice
        with self._lock:  # one consistent state: an append waits for the copy
            if whole:
                kept = self.rows.kept_columns()
                if kept is not None:
                    return kept
            return self.rows.columns(self._order() if ids is None else ids, whole)
