"""The tree's rows as a client gets them: each node's role and preview, and encodings kept.

An entry never changes, so neither do its role and preview: they are cut once. A node's whole
row (its JSON object) is kept until its label or child count changes; the whole tree's
encodings (rows and columns) are kept until the next append.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from rpc_agent.protocol.shapes import EntryDict
from rpc_agent.store.decoding import StoredMessage
from rpc_agent.store.preview import preview_of, preview_of_stored
from rpc_agent.store.tree_shape import TreeShape

ENCODE_SLICE = 2000
"""Rows encoded per ``dumps`` when the whole tree is encoded as rows."""


def _complete(entry: EntryDict, stored: StoredMessage | None) -> EntryDict:
    """The entry with its message, parsed for this once and not kept (the line is kept)."""
    if stored is None:
        return entry
    full = stored.parse()
    return full if full is not None else entry


class TreeRows:
    """Roles, previews and encoded rows of one tree's nodes (the caller holds the tree's lock)."""

    def __init__(self, shape: TreeShape) -> None:
        self.shape = shape
        self.roles: dict[str, str | None] = {}
        self.previews: dict[str, str] = {}
        self.full: dict[str, bytes] = {}
        """Each node's whole JSON, dropped when its label or child count changes."""
        self.version = 0
        """Counts the appends: a kept encoding of the whole tree is good for one version."""
        self.whole_columns: tuple[int, bytes] | None = None
        self.whole_rows: tuple[int, bytes] | None = None

    def changed(self, entry_id: str | None) -> None:
        """An append: the whole tree's encodings are stale, and so is ``entry_id``'s row."""
        self.version += 1
        if entry_id is not None:
            self.full.pop(entry_id, None)

    def fill(self, ids: Sequence[str]) -> None:
        """Cut the role and preview of the nodes of ``ids`` that have none yet.

        A stored message is previewed from its bytes, found by position, without building it.
        """
        index = self.shape.index
        by_id, position, entries, stored = index.by_id, index.position, index.entries, index.stored.messages
        for entry_id in [i for i in ids if i not in self.previews] if self.previews else ids:
            at = position[entry_id]
            message = stored.get(at)
            # A position holds stored bytes only while its entry is a stub (loading it lets
            # them go); the identity check guards an id that a corrupt file names twice.
            entry = by_id[entry_id]
            role_preview = (
                preview_of_stored(message) if message is not None and entries[at] is entry else None
            )
            if role_preview is None:
                role_preview = preview_of(_complete(entry, index.stored_of(entry)))
            self.roles[entry_id], self.previews[entry_id] = role_preview

    def role(self, entry_id: str) -> str | None:
        if entry_id not in self.roles:
            self.fill([entry_id])
        return self.roles.get(entry_id)

    def column_lists(self, ids: Sequence[str]) -> dict[str, Sequence[Any]]:
        """Every field of the nodes of ``ids``, one list per field."""
        self.fill(ids)
        shape = self.shape
        by_id, labels = shape.index.by_id, shape.index.labels
        entries = [by_id[i] for i in ids]
        return {
            "id": ids,
            "parentId": [shape.parent[i] for i in ids],
            "type": [entry.get("type") for entry in entries],
            "role": [self.roles[i] for i in ids],
            "preview": [self.previews[i] for i in ids],
            "label": [labels.get(i) for i in ids],
            "timestamp": [entry.get("timestamp", "") for entry in entries],
            "depth": [shape.depth[i] for i in ids],
            "childCount": [shape.count(i) for i in ids],
        }

    def rows(self, ids: Sequence[str]) -> bytes:
        """The JSON array of the rows of ``ids``: one ``dumps`` per row, kept per node."""
        missing = [i for i in ids if i not in self.full]
        if missing:
            lists = self.column_lists(missing)
            names = list(lists)
            for entry_id, row in zip(missing, zip(*lists.values(), strict=True), strict=True):
                self.full[entry_id] = orjson.dumps(dict(zip(names, row, strict=True)))
        return b"[" + b",".join(self.full[i] for i in ids) + b"]"

    def all_rows(self, order: Sequence[str]) -> bytes:
        """The JSON array of every row, kept until the next append.

        Made from the columns, a slice of rows per ``dumps``: one ``dumps`` per row (what
        ``rows`` keeps for the small reads) would cost several times as much for a big tree.
        """
        kept = self.whole_rows
        if kept is not None and kept[0] == self.version:
            return kept[1]
        lists = self.column_lists(order)
        names, columns = list(lists), list(lists.values())
        pieces = []
        for at in range(0, len(order), ENCODE_SLICE):
            rows = zip(*(column[at : at + ENCODE_SLICE] for column in columns), strict=True)
            pieces.append(orjson.dumps([dict(zip(names, row, strict=True)) for row in rows])[1:-1])
        encoded = b"[" + b",".join(pieces) + b"]"
        self.whole_rows = (self.version, encoded)
        return encoded

    def kept_columns(self) -> bytes | None:
        """The whole tree's columns if they are up to date."""
        kept = self.whole_columns
        return kept[1] if kept is not None and kept[0] == self.version else None

    def columns(self, ids: Sequence[str], whole: bool) -> bytes:
        """The nodes of ``ids`` as one JSON object of columns, kept when they are the whole tree."""
        encoded = orjson.dumps(self.column_lists(ids))
        if whole:
            self.whole_columns = (self.version, encoded)
        return encoded
