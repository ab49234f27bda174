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

from rpc_agent.protocol.base import JsonDict

from .context import iso_to_ms
from .index import PLAIN_TYPES, EntryIndex, is_bookkeeping

TreeFilter = Literal["default", "no-custom", "user-only", "labeled-only"]
"""``default``: every visible node; ``no-custom``: without extension entries (``custom`` and
``custom_message``); ``user-only``: user messages; ``labeled-only``: nodes with a label."""


def sort_key(timestamp: Any) -> str:
    """Canonical ISO string for ordering siblings; odd formats are normalised, not trusted."""
    if isinstance(timestamp, str) and len(timestamp) == 24 and timestamp.endswith("Z"):
        return timestamp
    millis = iso_to_ms(timestamp)
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _group(ids: str | list[str]) -> list[str]:
    """A group of the index (one id as a string, several as a list) as a list of its own."""
    return [ids] if isinstance(ids, str) else list(ids)


class TreeShape:
    """Visible parents, children in order and depths of one index's entries."""

    def __init__(self, index: EntryIndex) -> None:
        self.index = index
        self.built = False
        self.kids: dict[str | None, list[str]] = {}
        """Visible children by visible parent, oldest first."""
        self.parent: dict[str, str | None] = {}
        self.depth: dict[str, int] = {}
        self.order: list[str] | None = None
        """Depth-first order of every node; None when an append re-sorted siblings."""

    def added(self, entry: JsonDict) -> str | None:
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

    def _place(self, entry_id: str, entry: JsonDict) -> bool:
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
        siblings = self.kids.setdefault(visible, [])
        siblings.append(entry_id)
        if self.built and len(siblings) > 1 and self._key(siblings[-2]) > self._key(entry_id):
            siblings.sort(key=self._key)
            return False
        return True

    def _key(self, entry_id: str) -> tuple[str, int]:
        return sort_key(self.index.by_id[entry_id].get("timestamp")), self.index.position[entry_id]

    def _visible_parent(self, entry_id: str, entry: JsonDict) -> str | None:
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
        for siblings in self.kids.values():
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
        kids = {parent: _group(ids) for parent, ids in list(self.index.children.items())}
        hidden = list(self.index.hidden)
        for entry_id in hidden:
            parent = by_id[entry_id].get("parentId")
            group = kids.get(parent if isinstance(parent, str) else None)
            if group is not None and entry_id in group:
                group.remove(entry_id)
        moves = [(entry_id, self._visible_parent(entry_id, by_id[entry_id])) for entry_id in hidden]
        moves += [(parent, None) for parent in list(kids) if parent is not None and parent not in by_id]
        for source, target in moves:
            kids.setdefault(target, []).extend(kids.pop(source, []))
        self.kids = {parent: group for parent, group in kids.items() if group}
        self.parent = {child: parent for parent, group in self.kids.items() for child in group}

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
            children = self.kids.get(entry_id)
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
        return self.kids.get(parent, [])

    def count(self, entry_id: str) -> int:
        return len(self.kids.get(entry_id, ()))

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
            entry_id = entry.get("id")
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
