"""Builders and the three-way context check shared by the pi 1.5.2 session tests (not a test module).

``contexts`` checks each case three ways, which must agree: ``build_session_context`` on the entry
dicts, a store opened on the file (message lines kept as stored bytes until read), and that
store's JSON reader (``messages_json``, what ``get_messages`` sends).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from session_testlib import assistant, entry, write_jsonl

from rpc_agent.protocol.entries import parse_message
from rpc_agent.protocol.shapes import EntryDict, MessageDict
from rpc_agent.store import SessionManager, build_session_context

JsonDict = dict[str, Any]


def system(content: Any = "", *, at: int = 0, **fields: Any) -> JsonDict:
    message: JsonDict = {"role": "system", "content": content}
    message.update(fields)
    message["timestamp"] = at
    return message


def tool_call(call_id: str) -> MessageDict:
    message = assistant("")
    message["content"] = [{"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "a"}}]
    message["stopReason"] = "toolUse"
    return message


def edit(entry_id: str, parent: str, at: float, target: str, replacement: Any) -> EntryDict:
    return entry("context_edit", entry_id, parent, at, targetId=target, replacement=replacement)


def contexts(
    tmp_path: Path, lines: Sequence[Mapping[str, Any]], leaf: str | None = None
) -> list[MessageDict]:
    """The context's messages, after checking that the three ways of building it agree."""
    entries = cast("Sequence[EntryDict]", lines[1:])  # hand-written lines, odd ones included
    direct = build_session_context(entries, leaf, leaf_is_explicit=leaf is not None).messages
    path = tmp_path / "session.jsonl"
    write_jsonl(path, lines)
    with SessionManager.open(path) as manager:
        if leaf is not None:
            manager.branch(leaf)
        as_json = json.loads(manager.messages_json())
    with SessionManager.open(path) as manager:
        if leaf is not None:
            manager.branch(leaf)
        stored = manager.build_session_context().messages
    assert as_json == direct
    assert stored == direct
    for message in direct:
        parse_message(message)
    return direct
