"""The index of one session: entries in file order, by id, by parent, and their stored bytes.

Entries are plain dicts. A message entry read from disk may still be a stub (type, id,
parent, timestamp) whose line is held in ``stored``; ``load`` completes it in place from
those bytes and lets the bytes go, so that nothing is kept twice.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable
from typing import Any

import msgspec

from rpc_agent.protocol.shapes import EntryDict, MessageDict
from rpc_agent.store.blobs import BlobStore, restore_blobs
from rpc_agent.store.decoding import StoredLines, StoredMessage, sendable
from rpc_agent.store.files import LoadReport
from rpc_agent.store.groups import ChildGroups
from rpc_agent.store.projection import normalized

LEAF_MARKER = "rpc-agent.leaf"
"""``customType`` of the entries that record a leaf move which appended nothing."""

PLAIN_TYPES = frozenset(
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


def is_leaf_marker(entry: EntryDict) -> bool:
    return entry.get("type") == "custom" and entry.get("customType") == LEAF_MARKER


def is_bookkeeping(entry: EntryDict) -> bool:
    """Label entries and leaf markers: part of the chain, but not steps of the conversation.

    The tree shows through them (their children hang under their parent, the label itself is
    a field of the node it names), and the leaf recorded in a file looks through trailing ones.
    """
    return entry.get("type") == "label" or is_leaf_marker(entry)


_ids = random.Random(secrets.randbits(64))


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


class EntryIndex:
    """Entries, their ids and parents, labels and the session name, kept as entries arrive."""

    def __init__(
        self,
        *,
        stored: StoredLines | None = None,
        blobs: BlobStore | None = None,
        report: LoadReport | None = None,
        has_assistant: bool = False,
    ) -> None:
        self.entries: list[EntryDict] = []
        self.by_id: dict[str, EntryDict] = {}
        self.position: dict[str, int] = {}
        self.children = ChildGroups()
        """Child ids by parent (None: the roots), in file order."""
        self.labels: dict[str, str] = {}
        self.name: str | None = None
        self.has_assistant = has_assistant
        self.stored = stored if stored is not None else StoredLines()
        """Lines of stub entries, by position in ``entries``."""
        self.blobs = blobs
        self.report = report or LoadReport()
        self.filled = 0
        """Entries added whose id an earlier entry already named as its parent: only these can
        change the path from an existing entry to the root (which a cached context relies on)."""
        self.hidden: dict[str, None] = {}
        """Ids of the bookkeeping entries, which the tree does not show (a dict of strings:
        untracked by the collector, as a set would not be; see ``groups``)."""
        self.odd: set[str] = set()
        """Ids that are not simply a child of their parent: named twice, or their own parent."""

    def add(self, entry: EntryDict) -> None:
        entry_id: object = entry.get("id")  # as read: a damaged line may lack it
        if not isinstance(entry_id, str):
            # Not a tree node (damaged or foreign line): kept in the file order, never indexed.
            self.entries.append(entry)
            return
        if entry_id in self.children:
            self.filled += 1
        parent = entry.get("parentId")
        if entry_id in self.by_id or parent == entry_id:
            self.odd.add(entry_id)
        self.position[entry_id] = len(self.entries)
        self.entries.append(entry)
        self.by_id[entry_id] = entry
        self.children.add(parent if isinstance(parent, str) else None, entry_id)
        if is_bookkeeping(entry):
            self.hidden[entry_id] = None
        kind = entry.get("type")
        if kind == "label":
            target, label = entry.get("targetId"), entry.get("label")
            if isinstance(target, str):
                if isinstance(label, str) and label:
                    self.labels[target] = label
                else:
                    self.labels.pop(target, None)
        elif kind == "session_info":
            # The latest session_info is the name, and an empty one clears it (as in pi).
            name = entry.get("name")
            self.name = (name.strip() or None) if isinstance(name, str) else None
        elif kind == "message" and not self.has_assistant:
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                self.has_assistant = True

    def add_all(self, entries: Iterable[EntryDict]) -> None:
        """``add`` for many entries, with the common case (a message) kept short."""
        all_entries, by_id, position, children = self.entries, self.by_id, self.position, self.children
        single, several = children.single, children.several
        add = self.add
        for entry in entries:
            entry_id = entry.get("id")
            if entry.get("type") != "message" or entry_id.__class__ is not str or not self.has_assistant:
                add(entry)
                continue
            if entry_id in single or entry_id in several:
                self.filled += 1
            parent = entry.get("parentId")
            if entry_id in by_id or parent == entry_id:
                self.odd.add(entry_id)
            position[entry_id] = len(all_entries)
            all_entries.append(entry)
            by_id[entry_id] = entry
            if parent.__class__ is not str:
                parent = None
            # Operators, not method calls: this runs once per line of a long file.
            if parent not in single and parent not in several:
                single[parent] = entry_id
            else:
                children.add(parent, entry_id)  # a sibling

    def children_of(self, parent: str | None) -> list[str]:
        """Child ids of ``parent`` in file order (None: the roots)."""
        return self.children.of(parent)

    # --- the leaf a file records -----------------------------------------------------------

    def leaf_from_file(self) -> str | None:
        """The leaf as the file says it: the last entry, looking through trailing bookkeeping.

        A trailing leaf marker or label points at the conversation's position with its
        ``parentId``; the reference agent, which takes the last line as its leaf, reaches the
        same context through it because neither kind ever reaches the model.
        """
        for entry in reversed(self.entries):
            entry_id: object = entry.get("id")
            if not isinstance(entry_id, str):
                continue
            if is_bookkeeping(entry):
                parent = entry.get("parentId")
                if parent is None:
                    return None
                if parent in self.by_id:
                    return self.through_bookkeeping(parent)
            return entry_id
        return None

    def through_bookkeeping(self, entry_id: str) -> str | None:
        """The nearest ancestor-or-self of ``entry_id`` that is a conversation step."""
        current: str | None = entry_id
        seen: set[str] = set()
        while current is not None and current not in seen:
            seen.add(current)
            entry = self.by_id.get(current)
            if entry is None or not is_bookkeeping(entry):
                return current
            parent = entry.get("parentId")
            current = parent if isinstance(parent, str) else None
        return current

    # --- stored lines ----------------------------------------------------------------------

    def position_of(self, entry: EntryDict) -> int | None:
        """Where ``entry`` (this very dict) sits in file order."""
        entry_id = entry.get("id")
        position = self.position.get(entry_id) if isinstance(entry_id, str) else None
        if position is not None and self.entries[position] is entry:
            return position
        for index, candidate in enumerate(self.entries):  # a duplicated id: rare, corrupt files
            if candidate is entry:
                return index
        return None

    def stored_of(self, entry: EntryDict) -> StoredMessage | None:
        """The line of a stub entry, None for an entry that is complete."""
        if not self.stored or entry.get("type") != "message" or "message" in entry:
            return None
        position = self.position_of(entry)
        return self.stored.get(position) if position is not None else None

    def message_to_send(self, entry: EntryDict) -> MessageDict | msgspec.Raw | None:
        """What a message entry gives a reader that sends the context on as JSON: a stub's
        stored message (a view into its line) when it can go out as it is (``sendable``), else
        the message parsed and as pi's context reads it; None for a line without a message.

        One call per message of a long path, so the usual case (an indexed stub) is looked up
        here directly.
        """
        message = entry.get("message")
        if message is None:
            at = self.position.get(entry["id"])
            if at is not None and self.entries[at] is entry:
                stored = self.stored.messages.get(at)
            else:
                found = self.stored_of(entry)  # an id named twice: look the hard way
                stored = found.message if found is not None else None
            if stored is not None and sendable(stored):
                return stored
            message = self.load(entry).get("message")  # one pi normalises, or none at all
        return normalized(message) if isinstance(message, dict) else None

    def load(self, entry: EntryDict) -> EntryDict:
        """Complete a stub entry from its stored line, in place, so every reference sees it."""
        if not self.stored or "message" in entry or entry.get("type") != "message":
            return entry
        position = self.position_of(entry)
        stored = self.stored.pop(position) if position is not None else None
        if stored is None:
            return entry
        full = stored.parse()
        if full is None or full.get("id") != entry.get("id"):
            self.report.damaged_entries.append(str(entry.get("id")))
            return entry
        entry.update(full)
        return entry

    def complete(self, entry: EntryDict) -> EntryDict:
        """The entry with its message, for a caller that reads it once: a stub's line is
        parsed into a new dict and stays stored, so the index is left as it was.

        ``load`` keeps the parse instead, for the entries read again and again (the context's
        path); one that hands out every entry (``get_tree``) would otherwise leave a long
        session's every message built, for each full collection of the process to walk.
        """
        stored = self.stored_of(entry)
        if stored is None:
            return entry
        full = stored.parse()
        if full is None or full.get("id") != entry.get("id"):
            return self.load(entry)  # reports the damage once, and lets the bad bytes go
        return {**entry, **full}  # the keys in the order ``load`` would leave them

    def load_all(self, entries: Iterable[EntryDict]) -> list[EntryDict]:
        if not self.stored:
            return entries if isinstance(entries, list) else list(entries)
        load = self.load
        return [load(entry) for entry in entries]


__all__ = [
    "LEAF_MARKER",
    "PLAIN_TYPES",
    "EntryIndex",
    "is_bookkeeping",
    "is_leaf_marker",
    "new_entry_id",
    "restore_blobs",
]
