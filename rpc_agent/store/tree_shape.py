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
        self.single: dict[str | None, str] = {}
        """The visible child of a visible parent that has one."""
        self.several: dict[str | None, list[str]] = {}
        """The visible children of a visible parent that has more than one, oldest first.

        Most parents have one child: a list for each would be 100,000 more objects for the
        cyclic collector to walk in a long session (and their making sets off collections)."""
        self.parent: dict[str, str | None] = {}
        self.depth: dict[str, int] = {}
        self.order: list[str] | None = None
        """Depth-first order of every node; None when an append re-sorted siblings."""

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
        order = self.order
        if order is None or not in_order:
            self.order = None
        elif parent is None:
            order.append(entry_id)
        else:
            # The newest child goes last under its parent: right after the parent's subtree.
            at, depth = order.index(parent) + 1, self.depth
            level = depth[parent]
            while at < len(order) and depth[order[at]] > level:
                at += 1
            order.insert(at, entry_id)
        return parent

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
        siblings = self._add_child(visible, entry_id)
        if self.built and siblings is not None and self._key(siblings[-2]) > self._key(entry_id):
            siblings.sort(key=self._key)
            return False
        return True

    def _add_child(self, parent: str | None, child: str) -> list[str] | None:
        """Add ``child`` last under ``parent``; its siblings with it when it has any."""
        siblings = self.several.get(parent)
        if siblings is not None:
            siblings.append(child)
            return siblings
        first = self.single.pop(parent, None)
        if first is None:
            self.single[parent] = child
            return None
        siblings = self.several[parent] = [first, child]
        return siblings

    def _remove_child(self, parent: str | None, child: str) -> None:
        if self.single.get(parent) == child:
            del self.single[parent]
            return
        siblings = self.several.get(parent)
        if siblings is None or child not in siblings:
            return
        siblings.remove(child)
        if len(siblings) == 1:
            self.single[parent] = self.several.pop(parent)[0]

    def _take_children(self, parent: str | None) -> list[str]:
        """Remove and return every child of ``parent``."""
        first = self.single.pop(parent, None)
        return [first] if first is not None else self.several.pop(parent, [])

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
        for siblings in self.several.values():
            siblings.sort(key=self._key)
        # Depths in file order can see a child before its parent (an odd file): set them again
        # from the walk, which is the definition.
        self.order = self.walk()
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
        # The index keeps a group of one as the id itself, as this does.
        self.single, self.several = {}, {}
        for parent, ids in list(self.index.children.items()):
            if isinstance(ids, str):
                self.single[parent] = ids
            else:
                self.several[parent] = list(ids)
        hidden = list(self.index.hidden)
        for entry_id in hidden:
            parent = by_id[entry_id].get("parentId")
            self._remove_child(parent if isinstance(parent, str) else None, entry_id)
        moves = [(entry_id, self._visible_parent(entry_id, by_id[entry_id])) for entry_id in hidden]
        moves += [
            (parent, None)
            for parent in [*self.single, *self.several]
            if parent is not None and parent not in by_id
        ]
        for source, target in moves:
            for child in self._take_children(source):
                self._add_child(target, child)
        self.parent = {child: parent for parent, child in self.single.items()}
        self.parent.update((child, parent) for parent, group in self.several.items() for child in group)

    def walk(self) -> list[str]:
        """Depth-first from the roots. Every node sits in exactly one parent's list (``_place``
        places an id once), so no node is met twice and a cycle is never reached."""
        order: list[str] = []
        stack = self.children(None)[::-1]
        for root in stack:
            self.depth[root] = 0
        while stack:
            entry_id = stack.pop()
            order.append(entry_id)
            only = self.single.get(entry_id)
            if only is not None:
                self.depth[only] = self.depth[entry_id] + 1
                stack.append(only)
                continue
            children = self.several.get(entry_id)
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
        only = self.single.get(parent)
        return [only] if only is not None else self.several.get(parent, [])

    def count(self, entry_id: str) -> int:
        siblings = self.several.get(entry_id)
        if siblings is not None:
            return len(siblings)
        return 1 if entry_id in self.single else 0

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
