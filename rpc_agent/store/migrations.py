"""Bring older session files up to version 3, in memory.

v1 files are a linear list with no ids; v2 added the ``id``/``parentId`` tree; v3 renamed the
message role ``hookMessage`` to ``custom``. The functions mutate the parsed lines in place and
say whether anything changed, so the caller knows to rewrite the file (atomically).
"""

from __future__ import annotations

from collections.abc import Callable

from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.entries import CURRENT_SESSION_VERSION


def file_version(lines: list[JsonDict]) -> int:
    header = lines[0] if lines and lines[0].get("type") == "session" else None
    version = header.get("version") if header else None
    return version if isinstance(version, int) else 1


def migrate_v1_to_v2(lines: list[JsonDict], new_id: Callable[[set[str]], str]) -> None:
    """Chain the entries in file order and turn compaction indexes into ids.

    ``firstKeptEntryIndex`` counts lines of the whole file, header included, as the v1 writer
    did. One pass, as the reference does it: an index that points at a later line (which has
    no id yet) gives no ``firstKeptEntryId``; only a number is converted (and removed),
    anything else under that name stays as it is.
    """
    ids: set[str] = set()
    previous: str | None = None
    for line in lines:
        if line.get("type") == "session":
            line["version"] = 2
            continue
        entry_id = new_id(ids)
        ids.add(entry_id)
        line["id"] = entry_id
        line["parentId"] = previous
        previous = entry_id
        index = line.get("firstKeptEntryIndex")
        if line.get("type") != "compaction" or isinstance(index, bool) or not isinstance(index, int | float):
            continue
        del line["firstKeptEntryIndex"]
        if index == int(index) and 0 <= index < len(lines):
            target = lines[int(index)]
            if target.get("type") != "session" and "id" in target:
                line["firstKeptEntryId"] = target["id"]


def migrate_v2_to_v3(lines: list[JsonDict]) -> None:
    for line in lines:
        if line.get("type") == "session":
            line["version"] = 3
            continue
        message = line.get("message")
        if (
            line.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            message["role"] = "custom"


def migrate(lines: list[JsonDict], new_id: Callable[[set[str]], str]) -> bool:
    """Apply every migration the file needs; True when something changed."""
    version = file_version(lines)
    if version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        migrate_v1_to_v2(lines, new_id)
    if version < 3:
        migrate_v2_to_v3(lines)
    return True
