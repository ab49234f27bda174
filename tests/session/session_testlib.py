"""Helpers shared by the session store tests (imported by them; not a test module).

Everything that reads a session file back does it with a separate ``open`` and the standard
library's ``json``, independently of the store's own reader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from pi_lines import BASE_MS as BASE_MS
from pi_lines import EPOCH
from pi_lines import USAGE as USAGE
from pi_lines import iso as iso
from pi_lines import write_jsonl as write_jsonl
from rpc_agent.protocol.shapes import BlockDict, EntryDict, MessageDict
from rpc_agent.store import PendingAppend, SessionManager

JsonDict = dict[str, Any]

ISO_MS_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
HEX8 = re.compile(r"^[0-9a-f]{8}$")


# --- values ------------------------------------------------------------------------------


def ms(timestamp: str) -> int:
    """Epoch milliseconds of an ISO timestamp, exactly (integer arithmetic, like JS Date)."""
    moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    return (moment - EPOCH) // timedelta(milliseconds=1)


def user(text: str, ts: int = BASE_MS) -> MessageDict:
    return {"role": "user", "content": text, "timestamp": ts}


def assistant(
    text: str, *, provider: str = "anthropic", model: str = "claude-sonnet-4-5", ts: int = BASE_MS
) -> MessageDict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "usage": USAGE,
        "stopReason": "stop",
        "timestamp": ts,
    }


def blocks_of(holder: MessageDict | EntryDict) -> list[BlockDict]:
    """The content blocks of a message or a custom message entry that the test knows holds a list."""
    content = holder.get("content")
    assert isinstance(content, list)
    return content


def header(
    *, version: int | None = 3, session_id: str = "5b0e8e4c-2d7a-4c36-9a57-0d2f4a1c9e11", **extra: Any
) -> JsonDict:
    line: JsonDict = {"type": "session"}
    if version is not None:
        line["version"] = version
    line.update({"id": session_id, "timestamp": iso(0), "cwd": "/project"})
    line.update(extra)
    return line


def entry(kind: str, entry_id: str, parent: str | None, at: float, **fields: Any) -> EntryDict:
    """A hand-written v3 entry line (its fields as given: any JSON)."""
    line: JsonDict = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": iso(at)}
    line.update(fields)
    return cast("EntryDict", line)


def write_session(path: Path, *entries: Mapping[str, Any]) -> bytes:
    """A session file as pi writes one: the default header, then these entries (the bytes written)."""
    return write_jsonl(path, [header(), *entries])


def message_entry(entry_id: str, parent: str | None, at: float, message: Mapping[str, Any]) -> EntryDict:
    return entry("message", entry_id, parent, at, message=message)


def chain(*messages: Mapping[str, Any]) -> list[EntryDict]:
    """Message entries in one line of descent: ids 00000001, 00000002, ..., a second apart."""
    entries: list[EntryDict] = []
    parent: str | None = None
    for number, message in enumerate(messages, start=1):
        entry_id = f"{number:08x}"
        entries.append(message_entry(entry_id, parent, number, message))
        parent = entry_id
    return entries


def compaction_entry(
    entry_id: str, parent: str | None, at: float, summary: str, first_kept: str, tokens_before: int
) -> EntryDict:
    return entry(
        "compaction",
        entry_id,
        parent,
        at,
        summary=summary,
        firstKeptEntryId=first_kept,
        tokensBefore=tokens_before,
    )


# --- files -------------------------------------------------------------------------------


def read_lines(path: Path) -> list[JsonDict]:
    """Every line of the file, parsed with the standard library; fails on any bad line."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert text.endswith("\n"), "a session file must end with a newline"
    return [json.loads(line) for line in text.split("\n")[:-1]]


def raw_lines(path: Path) -> list[bytes]:
    with open(path, "rb") as handle:
        return handle.read().split(b"\n")[:-1]


def count_headers(path: Path) -> int:
    return sum(1 for line in read_lines(path) if line.get("type") == "session")


# --- manager helpers ---------------------------------------------------------------------


def session_path(manager: SessionManager) -> Path:
    assert manager.session_file is not None
    return manager.session_file


async def first_exchange(folder: Path) -> SessionManager:
    """A new session in ``folder`` whose first exchange (u1, a1) is in its file."""
    manager = SessionManager.create("/p", folder)
    await manager.append_message(user("u1"))
    await manager.append_message(assistant("a1"))
    return manager


def written_session(folder: Path) -> Path:
    """The file of a closed session in ``folder`` that holds one exchange (u1, a1)."""
    manager = SessionManager.create("/p", folder)
    manager.append_message(user("u1"))
    manager.append_message(assistant("a1"))
    manager.close()
    return session_path(manager)


def eid(pending: PendingAppend) -> str:
    """The id of an append, for code that needs a ``str``."""
    assert pending.id is not None
    return pending.id


def summarize(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(role, text) of each context message: a compact, readable form to compare against."""
    result: list[tuple[str, str]] = []
    for message in messages:
        role = message["role"]
        if role in ("branchSummary", "compactionSummary"):
            text = message["summary"]
        else:
            content = message.get("content")
            if isinstance(content, str):
                text = content
            else:
                text = "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))
        result.append((role, text))
    return result


def context_of(manager: SessionManager) -> list[tuple[str, str]]:
    return summarize(manager.build_session_context().messages)


# --- the reference agent's rule, re-implemented independently ------------------------------


def pi_build_context(path: Path) -> list[JsonDict]:
    """The messages pi builds when it opens ``path``: its leaf is the last entry of the file.

    A deliberately small copy of pi's ``buildSessionContext`` (session-manager.ts): walk the
    parents from the last line, apply the last compaction on the path, turn ``message``,
    ``custom_message`` and non-empty ``branch_summary`` entries into messages.
    """
    lines = read_lines(path)
    entries = [line for line in lines if line.get("type") != "session"]
    if not entries:
        return []
    by_id = {e["id"]: e for e in entries if "id" in e}
    path_entries: list[JsonDict] = []
    current: JsonDict | None = entries[-1]
    while current is not None:
        path_entries.insert(0, current)
        parent = current.get("parentId")
        current = by_id.get(parent) if parent else None

    def as_message(e: JsonDict) -> JsonDict | None:
        if e["type"] == "message":
            message: JsonDict = e["message"]
            return message
        if e["type"] == "custom_message":
            custom: JsonDict = {
                "role": "custom",
                "customType": e["customType"],
                "content": e["content"],
                "display": e["display"],
                "timestamp": ms(e["timestamp"]),
            }
            if "details" in e:  # pi copies the field: null stays null, only a missing one is left out
                custom["details"] = e["details"]
            return custom
        if e["type"] == "branch_summary" and e.get("summary"):
            return {
                "role": "branchSummary",
                "summary": e["summary"],
                "fromId": e["fromId"],
                "timestamp": ms(e["timestamp"]),
            }
        return None

    compaction_at = max((i for i, e in enumerate(path_entries) if e["type"] == "compaction"), default=-1)
    if compaction_at < 0:
        selected = path_entries
        messages: list[JsonDict] = []
    else:
        compaction = path_entries[compaction_at]
        messages = [
            {
                "role": "compactionSummary",
                "summary": compaction["summary"],
                "tokensBefore": compaction["tokensBefore"],
                "timestamp": ms(compaction["timestamp"]),
            }
        ]
        before = path_entries[:compaction_at]
        ids = [e["id"] for e in before]
        first = compaction["firstKeptEntryId"]
        kept = before[ids.index(first) :] if first in ids else []
        selected = kept + path_entries[compaction_at + 1 :]
    for e in selected:
        message = as_message(e)
        if message is not None:
            messages.append(message)
    return messages
