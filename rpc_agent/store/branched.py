"""The entries of a branched copy: one root-to-leaf path of a session, with its labels.

``SessionManager.create_branched_session`` writes them as a new session; pi's
``createBranchedSession`` makes the same copy, so either agent opens the other's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpc_agent.protocol.shapes import EntryDict
from rpc_agent.store import files
from rpc_agent.store.index import is_leaf_marker, new_entry_id

if TYPE_CHECKING:
    from rpc_agent.store.index import EntryIndex


def path_entries(path: list[EntryDict], index: EntryIndex) -> list[EntryDict]:
    """The root-to-leaf ``path``, ids unchanged, then its labels as fresh label entries.

    Labels of entries on the path are carried over after it, each with the timestamp of the
    label entry it copies (label entries are never stubs: the index's entries serve as they are).
    """
    entries = _path_without_labels(path)
    stamps = _label_timestamps(index.entries)
    taken = {e["id"] for e in entries}
    parent = entries[-1]["id"] if entries else None
    for target, label in index.labels.items():
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
    return entries


def _label_timestamps(entries: list[EntryDict]) -> dict[str, str]:
    """The timestamp of the label entry that set each current label (the latest one)."""
    stamps: dict[str, str] = {}
    for entry in entries:
        if entry.get("type") == "label" and isinstance(entry.get("targetId"), str):
            stamp = entry.get("timestamp")
            if isinstance(stamp, str):
                stamps[entry["targetId"]] = stamp
    return stamps


def _path_without_labels(path: list[EntryDict]) -> list[EntryDict]:
    """Copies of a root-to-leaf path without its label entries and leaf markers, re-chained.

    Labels (and markers) are nodes of the chain like any entry: dropping one must hand its
    place to the next kept entry, or that entry would point at a parent the new file does not
    hold and the context would stop there. Ids stay as they are; only ``parentId`` changes
    (and a compaction that kept "from" a dropped entry keeps from the next kept one), as the
    reference implementation does.
    """
    kept: list[EntryDict] = []
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
        copy = entry.copy()
        copy["parentId"] = parent
        kept.append(copy)
        parent = entry["id"]
    for copy in kept:
        first_kept = copy.get("firstKeptEntryId")
        if copy.get("type") == "compaction" and isinstance(first_kept, str) and first_kept in replacement:
            copy["firstKeptEntryId"] = replacement[first_kept]
    return kept
