"""A message line kept as stored bytes goes out as it is only when pi would read it unchanged.

pi 1.5.2 reads a message whose own ``content`` is null or missing as "" (system) or [] (user,
assistant, tool result). The store keeps message lines as bytes at open without looking at
their content, and asks when it sends one; these lines are the shapes that a look at a
line's first bytes would judge wrongly. Each is written as raw bytes (key order, spacing and
escapes as given), and every reader must agree with a parse of the file by the standard
library followed by pi's rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from session_testlib import assistant, header, user

from rpc_agent.store import SessionManager

LONG = "x" * 5000
"""Longer than any window a reader might look at a line's start through."""

EDGES: dict[str, bytes] = {
    "null with spaces": b'{"role":"user","content" :\t null ,"timestamp":1}',
    "missing": b'{"role":"assistant","api":"anthropic-messages","provider":"anthropic",'
    b'"model":"claude-sonnet-4-5","stopReason":"stop","timestamp":1}',
    "only nested, in details": b'{"role":"toolResult","toolCallId":"c1","toolName":"write",'
    b'"details":{"content":"the file"},"isError":false,"timestamp":1}',
    "only nested, before a missing own": b'{"role":"user","meta":{"content":[{"type":"text","text":"n"}]},'
    b'"timestamp":1}',
    "null after a long nested value": b'{"role":"toolResult","toolCallId":"c2","toolName":"read",'
    b'"details":{"pad":"' + LONG.encode() + b'"},"content":null,"isError":false,"timestamp":1}',
    "missing in a long line with a nested content": b'{"role":"toolResult","toolCallId":"c3",'
    b'"toolName":"read","details":{"content":"' + LONG.encode() + b'"},"isError":false,"timestamp":1}',
    "present after a nested null in a long line": b'{"role":"toolResult","toolCallId":"c4",'
    b'"toolName":"read","details":{"content":null,"pad":"' + LONG.encode() + b'"},'
    b'"content":[{"type":"text","text":"kept"}],"isError":false,"timestamp":1}',
    "present far into a long line": b'{"role":"user","pad":"'
    + LONG.encode()
    + b'","content":"late","timestamp":1}',
    "a later duplicate null wins": b'{"role":"user","content":"first","content":null,"timestamp":1}',
    "a later duplicate value wins": b'{"role":"user","content":null,"content":"second","timestamp":1}',
    "escaped key": b'{"role":"user","c\\u006fntent":null,"timestamp":1}',
    "system null": b'{"role":"system","content":null,"timestamp":1}',
    "other role keeps its null": b'{"role":"bashExecution","command":"ls","content":null,"timestamp":1}',
}


def _as_pi_reads(message: dict[str, Any]) -> dict[str, Any]:
    """pi 1.5.2's rule, written out here on its own (not the store's)."""
    if message.get("content") is not None:
        return message
    if message.get("role") == "system":
        return {**message, "content": ""}
    if message.get("role") in ("user", "assistant", "toolResult"):
        return {**message, "content": []}
    return message


def _line(entry_id: str, parent: str, message: bytes) -> bytes:
    head = (
        f'{{"type":"message","id":"{entry_id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:02.000Z",'
    )
    return head.encode() + b'"message":' + message + b"}\n"


def _write(path: Path, message: bytes) -> None:
    before = {"type": "message", "id": "00000001", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z"}
    after = {
        "type": "message",
        "id": "00000003",
        "parentId": "00000002",
        "timestamp": "2026-01-01T00:00:03.000Z",
    }
    path.write_bytes(
        orjson.dumps(header(), option=orjson.OPT_APPEND_NEWLINE)
        + orjson.dumps({**before, "message": user("before")}, option=orjson.OPT_APPEND_NEWLINE)
        + _line("00000002", "00000001", message)
        # An assistant message last: the walk that looks for the model parses it and stops
        # there, so the others are read as stored bytes.
        + orjson.dumps({**after, "message": assistant("after")}, option=orjson.OPT_APPEND_NEWLINE)
    )


@pytest.mark.parametrize("message", list(EDGES.values()), ids=list(EDGES))
def test_every_reader_gives_the_message_as_pi_reads_it(tmp_path: Path, message: bytes) -> None:
    path = tmp_path / "edge.jsonl"
    _write(path, message)
    expected = [_as_pi_reads(json.loads(line)["message"]) for line in path.read_text().splitlines()[1:]]
    with SessionManager.open(path) as manager:
        assert manager._index.stored, "the lines are read as stored bytes at open"
        assert json.loads(manager.messages_json()) == expected
        assert manager.context_message_count() == 3
    with SessionManager.open(path) as manager:
        manager.warm_up()  # the walk a switch does first, then a reader after it
        assert json.loads(manager.messages_json()) == expected
    with SessionManager.open(path) as manager:
        assert manager.build_session_context().messages == expected


@pytest.mark.parametrize("message", list(EDGES.values()), ids=list(EDGES))
def test_entries_and_tree_read_the_line_as_it_is_stored(
    tmp_path: Path, message: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule is the context's: entries keep the stored content, and a tree row's preview
    is the same whether the line was kept as bytes or parsed at open."""
    path = tmp_path / "edge.jsonl"
    _write(path, message)
    stored = [json.loads(line) for line in path.read_text().splitlines()[1:]]

    def readers() -> tuple[object, ...]:
        with SessionManager.open(path) as manager:
            return (
                json.loads(manager.entries_json()),
                json.loads(manager.tree_json()),
                json.loads(manager.tree_json(columns=True)),
            )

    lazy = readers()
    assert lazy[0] == stored
    monkeypatch.setenv("RPC_AGENT_EAGER_LOAD", "1")
    assert readers() == lazy


def test_a_message_that_is_not_an_object_is_left_out_by_every_reader(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    _write(path, b'"just a string"')
    with SessionManager.open(path) as manager:
        assert [m["role"] for m in json.loads(manager.messages_json())] == ["user", "assistant"]
    with SessionManager.open(path) as manager:
        assert [m["role"] for m in manager.build_session_context().messages] == ["user", "assistant"]
