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

import pi_lines
from rpc_agent.store import SessionManager

JsonDict = dict[str, Any]

BIG_IMAGE = base64.b64encode(bytes(range(256)) * 8).decode("ascii")  # far over the blob threshold
LONG_TEXT = "l" * 600_000  # over the length we cut our own lines at


def old_lines(version: int | None) -> list[JsonDict]:
    """An old session whose lines carry what a v1/v2 writer (or a fork of it) put there."""
    header = pi_lines.old_header(
        version=version,
        provider="anthropic",
        modelId="claude-sonnet-4-5",
        thinkingLevel="off",
        branchedFrom="/old/file.jsonl",
    )
    image = {"type": "image", "data": BIG_IMAGE, "mimeType": "image/png"}
    thinking = {"type": "thinking", "thinking": "Reading.", "thinkingSignature": "sig"}
    tool_call = pi_lines.read_call('{"path": "a.txt"}', streamIndex=1)
    lines: list[JsonDict] = [
        header,
        pi_lines.old_message(
            1,
            pi_lines.user_message(
                [{"type": "text", "text": "look at this"}, image], 1, attachments=[{"name": "shot.png"}]
            ),
            origin="cli",
        ),
        pi_lines.old_message(
            2,
            pi_lines.assistant_message(
                [thinking, tool_call], 2, "toolUse", jsonlEvents=["kept as the file had it"]
            ),
        ),
        pi_lines.old_message(
            3, pi_lines.read_result_message(LONG_TEXT, 3, details={"lines": 1, "jsonlEvents": [{"e": 1}]})
        ),
        pi_lines.old_hook_message(4),
        pi_lines.old_compaction(5, "Looked at a.txt.", 3, 5000, fromExtension=True),
        pi_lines.old_line("mystery", 6, payload={"x": [1, 2]}),
        pi_lines.old_message(7, pi_lines.assistant_message([{"type": "text", "text": "Done."}], 7)),
    ]
    return pi_lines.as_v2(lines) if version == 2 else lines


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
    pi_lines.write_jsonl(path, original)

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
    lines.append(pi_lines.old_compaction(8, "forward", 20, 1))
    pi_lines.write_jsonl(path, lines)
    SessionManager.open(path).close()
    on_disk = read_lines(path)
    assert on_disk[5]["firstKeptEntryIndex"] == "3"
    assert "firstKeptEntryId" not in on_disk[5]
    assert "firstKeptEntryIndex" not in on_disk[-1]  # a number is consumed, as the reference does
    assert "firstKeptEntryId" not in on_disk[-1]  # but points nowhere
