"""The tree's structure: every visible entry under its nearest visible ancestor, in order.

Label entries and leaf markers are folded away (a label is a field of the node it names, a
marker is invisible), so every entry hangs under its nearest visible ancestor. The grouping
under visible parents and the depths are built once, on the first request, and then extended
by each append.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from rpc_agent.protocol.shapes import EntryDict
from rpc_agent.store.context import iso_to_ms
from rpc_agent.store.groups import ChildGroups
from rpc_agent.store.index import PLAIN_TYPES, EntryIndex, is_bookkeeping

TreeFilter = Literal["default", "no-custom", "user-only", "labeled-only"]
"""``default``: every visible node; ``no-custom``: without extension entries (``custom`` and
``custom_message``); ``user-only``: user messages; ``labeled-only``: nodes with a label."""


def sort_key(timestamp: Any) -> str:
    """Canonical ISO string for ordering siblings; odd formats are normalised, not trusted."""
    if isinstance(timestamp, str) and len(timestamp) == 24 and timestamp.endswith("Z"):
        return timestamp
    millis = iso_to_ms(timestamp)
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class TreeShape:
    """Visible parents, children in order and depths of one index's entries."""

    def __init__(self, index: EntryIndex) -> None:
        self.index = index
        self.built = False
        self.groups = ChildGroups()
        """The visible children of each visible parent, oldest first."""
        self.parent: dict[str, str | None] = {}
        self.depth: dict[str, int] = {}
        self.order: tuple[str, ...] | None = None
        """Depth-first order of every node as last walked (None: to be walked again). A tuple
        of strings: the collector stops visiting it after the first collection that meets it
        (see ``groups``)."""
        self.tail: list[str] = []
        """Nodes appended since the walk that go last in the order (the common append: a
        child of the last node, or a new root); ``ordered`` joins them to ``order``."""

    def added(self, entry: EntryDict) -> str | None:
        """Place an appended entry; the id of the node whose row it changed (its parent, or
        the node a label names), else None."""
        entry_id = entry.get("id")
        if not isinstance(entry_id, str) or entry_id in self.parent:
            return None
        if is_bookkeeping(entry):
            target = entry.get("targetId")
            return target if entry.get("type") == "label" and isinstance(target, str) else None
        in_order = self._place(entry_id, entry)
        parent = self.parent[entry_id]
        order, tail = self.order, self.tail
        last = tail[-1] if tail else order[-1] if order else None
        if order is not None and in_order and (parent is None or parent == last):
            tail.append(entry_id)
        else:
            # Anywhere else its place is after its parent's subtree: finding that would search
            # the whole order on an append; the next read walks the order again instead.
            self.order = None
            tail.clear()
        return parent

    def ordered(self) -> tuple[str, ...]:
        """The depth-first order of every node, walked if an append left it to be (the caller
        holds the tree's lock)."""
        order = self.order
        if order is None:
            order = tuple(self.walk())
            self.tail.clear()
        elif self.tail:
            order += tuple(self.tail)
            self.tail.clear()
        self.order = order
        return order

    def _place(self, entry_id: str, entry: EntryDict) -> bool:
        """Put an entry under its visible parent; False when that re-sorted its siblings."""
        by_id = self.index.by_id
        parent = entry.get("parentId")
        parent_entry = by_id.get(parent) if isinstance(parent, str) else None
        if parent_entry is not None and parent != entry_id and parent_entry.get("type") in PLAIN_TYPES:
            visible: str | None = parent  # the common case: a plain parent, no walk
        else:
            visible = self._visible_parent(entry_id, entry)
        self.parent[entry_id] = visible
        self.depth[entry_id] = 0 if visible is None else self.depth.get(visible, -1) + 1
        siblings = self.groups.add(visible, entry_id)
        if self.built and siblings is not None and self._key(siblings[-2]) > self._key(entry_id):
            siblings.sort(key=self._key)
            return False
        return True

    def _key(self, entry_id: str) -> tuple[str, int]:
        return sort_key(self.index.by_id[entry_id].get("timestamp")), self.index.position[entry_id]

    def _visible_parent(self, entry_id: str, entry: EntryDict) -> str | None:
        """The nearest ancestor the tree shows (None for a root or an orphan)."""
        by_id = self.index.by_id
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

    def build(self) -> None:
        """Group every visible entry under its visible parent, then set depths from the roots."""
        if self.index.odd:
            self._place_each()
        else:
            self._regroup()
        for siblings in self.groups.several.values():
            siblings.sort(key=self._key)
        # Depths in file order can see a child before its parent (an odd file): set them again
        # from the walk, which is the definition.
        self.order = tuple(self.walk())
        self.tail.clear()
        self.built = True

    def _place_each(self) -> None:
        """Entry by entry: for a file with an id named twice or an entry that is its own parent."""
        # A snapshot: a reader in a worker thread may build while the loop appends.
        by_id = self.index.by_id
        for entry_id in list(by_id):  # ids only: 100,000 (id, entry) pairs would wake the collector
            entry = by_id[entry_id]
            if entry.get("type") not in PLAIN_TYPES and is_bookkeeping(entry):
                continue
            self._place(entry_id, entry)

    def _regroup(self) -> None:
        """The index's children by parent, with only what the tree shows differently moved.

        The index groups entries under their parents as they arrive, and in most files that
        already is the tree: only the hidden entries (labels, leaf markers) leave their groups,
        and the groups under a hidden entry or a missing parent move up to the nearest visible
        ancestor or to the roots. Copying the groups and moving those few costs a fraction of
        placing every entry again.
        """
        by_id = self.index.by_id
        # The groups before the hidden ids: an entry the loop appends meanwhile is then either
        # in no group copied or known to be hidden (it is placed on its append otherwise).
        groups = self.groups = self.index.children.copy()
        hidden = list(self.index.hidden)
        for entry_id in hidden:
            parent = by_id[entry_id].get("parentId")
            groups.remove(parent if isinstance(parent, str) else None, entry_id)
        moves = [(entry_id, self._visible_parent(entry_id, by_id[entry_id])) for entry_id in hidden]
        moves += [
            (parent, None) for parent in list(groups.parents()) if parent is not None and parent not in by_id
        ]
        for source, target in moves:
            for child in groups.take(source):
                groups.add(target, child)
        self.parent = {child: parent for parent, child in groups.single.items()}
        self.parent.update((child, parent) for parent, group in groups.several.items() for child in group)

    def walk(self) -> list[str]:
        """Depth-first from the roots. Every node sits in exactly one parent's list (``_place``
        places an id once), so no node is met twice and a cycle is never reached."""
        order: list[str] = []
        stack = self.children(None)[::-1]
        for root in stack:
            self.depth[root] = 0
        single, several = self.groups.single, self.groups.several
        while stack:
            entry_id = stack.pop()
            order.append(entry_id)
            only = single.get(entry_id)
            if only is not None:
                self.depth[only] = self.depth[entry_id] + 1
                stack.append(only)
                continue
            children = several.get(entry_id)
            if children is None:
                continue
            level = self.depth[entry_id] + 1
            for child in children:
                self.depth[child] = level
            stack.extend(reversed(children))
        if len(order) < len(self.parent):  # a cycle no root reaches: not in the order
            for entry_id in self.parent:
                self.depth.setdefault(entry_id, 0)
        return order

    def children(self, parent: str | None) -> list[str]:
        return self.groups.of(parent)

    def count(self, entry_id: str) -> int:
        groups = self.groups  # inline: called for every node of a tree's columns
        siblings = groups.several.get(entry_id)
        if siblings is not None:
            return len(siblings)
        return 1 if entry_id in groups.single else 0

    # --- what a request selects ----------------------------------------------------------

    def subtree(self, root: str) -> list[str]:
        result: list[str] = []
        stack = [root]
        seen: set[str] = set()
        while stack:
            entry_id = stack.pop()
            if entry_id in seen:
                continue
            seen.add(entry_id)
            result.append(entry_id)
            stack.extend(reversed(self.children(entry_id)))
        return result

    def changed_since(self, cursor: int) -> list[str]:
        changed: dict[str, None] = {}
        for entry in self.index.entries[max(cursor, 0) :]:
            entry_id: object = entry.get("id")  # as read: a damaged line may lack it
            if not isinstance(entry_id, str):
                continue
            if entry.get("type") == "label":
                target = entry.get("targetId")
                if isinstance(target, str) and target in self.parent:
                    changed[target] = None
                continue
            if entry_id in self.parent:
                parent = self.parent[entry_id]
                if parent is not None:
                    changed[parent] = None  # its childCount changed
                changed[entry_id] = None
        return list(changed)

    def keeps(self, keep: TreeFilter, role_of: Callable[[str], str | None]) -> Callable[[str], bool]:
        """Whether a node passes the filter ``keep`` (``role_of`` gives a message's role)."""
        by_id, labels = self.index.by_id, self.index.labels
        if keep == "labeled-only":
            return lambda i: i in labels
        if keep == "no-custom":
            return lambda i: by_id[i].get("type") not in ("custom", "custom_message")
        return lambda i: by_id[i].get("type") == "message" and role_of(i) == "user"
