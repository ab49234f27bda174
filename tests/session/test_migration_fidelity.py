"""Migrating a v1/v2 file changes what the migrations change (ids and parents, the header's
version, ``firstKeptEntryIndex`` -> ``firstKeptEntryId``, role ``hookMessage`` -> ``custom``)
and nothing else: fields of old tool calls such as ``partialJson``, unknown fields at every
level, inline images and long strings all stay as the file had them.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from session_testlib import HEX8, read_lines

from rpc_agent.session import SessionManager

pytestmark = pytest.mark.usefixtures("agent_home")

JsonDict = dict[str, Any]

USAGE: JsonDict = {
    "input": 1,
    "output": 1,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 2,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}
BIG_IMAGE = base64.b64encode(bytes(range(256)) * 8).decode("ascii")  # far over the blob threshold
LONG_TEXT = "l" * 600_000  # over the length we cut our own lines at


def old_lines(version: int | None) -> list[JsonDict]:
    """An old session whose lines carry what a v1/v2 writer (or a fork of it) put there."""
    header: JsonDict = {
        "type": "session",
        "id": "0c0ffee0-1111-4222-8333-444455556666",
        "timestamp": "2024-12-03T14:00:00.000Z",
        "cwd": "/project",
        "provider": "anthropic",
        "modelId": "claude-sonnet-4-5",
        "thinkingLevel": "off",
        "branchedFrom": "/old/file.jsonl",
    }
    if version is not None:
        header["version"] = version
    lines: list[JsonDict] = [
        header,
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look at this"},
                    {"type": "image", "data": BIG_IMAGE, "mimeType": "image/png"},
                ],
                "timestamp": 1733234401000,
                "attachments": [{"name": "shot.png"}],
            },
            "origin": "cli",
        },
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Reading.", "thinkingSignature": "sig"},
                    {
                        "type": "toolCall",
                        "id": "call_1",
                        "name": "read",
                        "arguments": {"path": "a.txt"},
                        "partialJson": '{"path": "a.txt"}',
                        "streamIndex": 1,
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": USAGE,
                "stopReason": "toolUse",
                "timestamp": 1733234402000,
                "jsonlEvents": ["kept as the file had it"],
            },
        },
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:03.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "content": [{"type": "text", "text": LONG_TEXT}],
                "details": {"lines": 1, "jsonlEvents": [{"e": 1}]},
                "isError": False,
                "timestamp": 1733234403000,
            },
        },
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:04.000Z",
            "message": {
                "role": "hookMessage",
                "customType": "my-hook",
                "content": "hook says hi",
                "display": True,
                "timestamp": 1733234404000,
            },
        },
        {
            "type": "compaction",
            "timestamp": "2024-12-03T14:00:05.000Z",
            "summary": "Looked at a.txt.",
            "firstKeptEntryIndex": 3,
            "tokensBefore": 5000,
            "fromExtension": True,
        },
        {"type": "mystery", "timestamp": "2024-12-03T14:00:06.000Z", "payload": {"x": [1, 2]}},
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:07.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Done."}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": USAGE,
                "stopReason": "stop",
                "timestamp": 1733234407000,
            },
        },
    ]
    if version == 2:
        previous = None
        for number, line in enumerate(lines[1:], start=1):
            line["id"] = f"{number:08x}"
            line["parentId"] = previous
            previous = line["id"]
            if line["type"] == "compaction":
                line["firstKeptEntryId"] = lines[line.pop("firstKeptEntryIndex")]["id"]
    return lines


def write_jsonl(path: Path, lines: list[JsonDict]) -> None:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def expected_after_migration(original: list[JsonDict], ids: list[str]) -> list[JsonDict]:
    """The original lines with exactly the changes the migrations make."""
    lines = copy.deepcopy(original)
    lines[0]["version"] = 3
    previous: str | None = None
    for line, entry_id in zip(lines[1:], ids, strict=True):
        if "id" not in line:  # v1: chained in file order
            line["id"] = entry_id
            line["parentId"] = previous
        previous = line["id"]
        if line["type"] == "compaction" and "firstKeptEntryIndex" in line:
            line["firstKeptEntryId"] = lines[line.pop("firstKeptEntryIndex")]["id"]
        message = line.get("message")
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
    return lines


@pytest.mark.parametrize("version", [None, 2], ids=["v1", "v2"])
def test_migration_keeps_every_field_it_has_no_reason_to_change(tmp_path: Path, version: int | None) -> None:
    path = tmp_path / "old.jsonl"
    original = old_lines(version)
    write_jsonl(path, original)

    with SessionManager.open(path) as manager:
        assert manager.load_report.migrated_from == (version or 1)
        in_memory = [manager.header, *manager.entries]
        context = manager.build_session_context().messages

    on_disk = read_lines(path)
    ids = [line["id"] for line in on_disk[1:]]
    assert all(HEX8.match(i) for i in ids)
    assert on_disk == expected_after_migration(original, ids)
    assert json.loads(json.dumps(in_memory)) == on_disk  # what get_entries reports is what is stored

    tool_call = on_disk[2]["message"]["content"][1]
    assert tool_call["partialJson"] == '{"path": "a.txt"}'
    assert tool_call["streamIndex"] == 1
    assert on_disk[1]["message"]["content"][1]["data"] == BIG_IMAGE  # still inline: not our line
    assert on_disk[3]["message"]["content"][0]["text"] == LONG_TEXT  # not cut either
    assert not (tmp_path / "blobs").exists()
    # The context is built from the lines as they are (the compaction keeps from the tool result).
    assert [m["role"] for m in context] == ["compactionSummary", "toolResult", "custom", "assistant"]


def test_only_a_numeric_first_kept_index_is_converted(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    lines = old_lines(None)
    lines[5]["firstKeptEntryIndex"] = "3"  # not a number: somebody else's data
    lines.append(
        {
            "type": "compaction",
            "timestamp": "2024-12-03T14:00:08.000Z",
            "summary": "forward",
            "firstKeptEntryIndex": 20,
            "tokensBefore": 1,
        }
    )
    write_jsonl(path, lines)
    SessionManager.open(path).close()
    on_disk = read_lines(path)
    assert on_disk[5]["firstKeptEntryIndex"] == "3"
    assert "firstKeptEntryId" not in on_disk[5]
    assert "firstKeptEntryIndex" not in on_disk[-1]  # a number is consumed, as the reference does
    assert "firstKeptEntryId" not in on_disk[-1]  # but points nowhere
