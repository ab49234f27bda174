"""Older files (v1: no ids; v2: hookMessage) are migrated to v3 on load and rewritten atomically."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from session_testlib import HEX8, context_of, raw_lines, read_lines

from rpc_agent.store import SessionManager

USAGE = (
    '"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,'
    '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}'
)


def v1_assistant(text: str, ms: int) -> str:
    return (
        f'{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"anthropic-messages",'
        f'"provider":"anthropic","model":"claude-sonnet-4-5",{USAGE},"stopReason":"stop","timestamp":{ms}}}'
    )


# A v1 file as the old writer produced it: no version, no ids, and a compaction that keeps
# from line 3 of the file (0 is the header, so line 3 is the message "u2").
V1_FILE = (
    "\n".join(
        [
            '{"type":"session","id":"0c0ffee0-1111-4222-8333-444455556666","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/project"}',
            '{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"u1","timestamp":1733234401000}}',
            '{"type":"message","timestamp":"2024-12-03T14:00:02.000Z","message":'
            + v1_assistant("a1", 1733234402000)
            + "}",
            '{"type":"message","timestamp":"2024-12-03T14:00:03.000Z","message":{"role":"user","content":"u2","timestamp":1733234403000}}',
            '{"type":"message","timestamp":"2024-12-03T14:00:04.000Z","message":'
            + v1_assistant("a2", 1733234404000)
            + "}",
            '{"type":"compaction","timestamp":"2024-12-03T14:00:05.000Z","summary":"u1 and a1 were discussed","firstKeptEntryIndex":3,"tokensBefore":50000}',
            '{"type":"thinking_level_change","timestamp":"2024-12-03T14:00:06.000Z","thinkingLevel":"high"}',
            '{"type":"message","timestamp":"2024-12-03T14:00:07.000Z","message":{"role":"user","content":"u3","timestamp":1733234407000}}',
            '{"type":"message","timestamp":"2024-12-03T14:00:08.000Z","message":'
            + v1_assistant("a3", 1733234408000)
            + "}",
        ]
    )
    + "\n"
)

V2_FILE = (
    "\n".join(
        [
            '{"type":"session","version":2,"id":"0c0ffee0-1111-4222-8333-777788889999","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/project","title":"kept"}',
            '{"type":"message","id":"00000001","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"u1","timestamp":1733234401000}}',
            '{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2024-12-03T14:00:02.000Z","message":{"role":"hookMessage","customType":"my-hook","content":"hook says hi","display":true,"timestamp":1733234402000}}',
            '{"type":"message","id":"00000003","parentId":"00000002","timestamp":"2024-12-03T14:00:03.000Z","message":'
            + v1_assistant("a1", 1733234403000)
            + "}",
        ]
    )
    + "\n"
)


def leftovers(folder: Path, session: Path) -> list[str]:
    """Files in the folder other than the session file and its lock."""
    return sorted(p.name for p in folder.iterdir() if p.name not in (session.name, session.name + ".lock"))


def test_v1_file_gets_chained_ids_and_first_kept_entry_id(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(V1_FILE)
    inode_before = os.stat(path).st_ino

    with SessionManager.open(path) as manager:
        assert manager.load_report.migrated_from == 1
        entries = manager.entries
        migrated: list[Mapping[str, Any]] = [manager.header, *entries]
        context = context_of(manager)
        thinking = manager.build_session_context().thinkingLevel
        assert leftovers(tmp_path, path) == []

    ids = [e["id"] for e in entries]
    assert all(HEX8.match(i) for i in ids)
    assert len(set(ids)) == len(ids) == 8
    assert [e["parentId"] for e in entries] == [None, *ids[:-1]]
    compaction = entries[4]
    assert compaction["type"] == "compaction"
    assert compaction["firstKeptEntryId"] == ids[2]
    assert entries[2]["message"]["content"] == "u2"
    assert "firstKeptEntryIndex" not in compaction
    assert migrated[0]["version"] == 3
    assert migrated[0]["id"] == "0c0ffee0-1111-4222-8333-444455556666"
    assert context == [
        ("compactionSummary", "u1 and a1 were discussed"),
        ("user", "u2"),
        ("assistant", "a2"),
        ("user", "u3"),
        ("assistant", "a3"),
    ]
    assert thinking == "high"

    # Rewritten atomically: a new inode (temp file renamed over), no temp file left behind,
    # and what is on disk now is exactly the migrated session.
    assert os.stat(path).st_ino != inode_before
    assert leftovers(tmp_path, path) == []
    assert read_lines(path) == migrated


def test_migrated_file_is_not_rewritten_again(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(V1_FILE)
    SessionManager.open(path).close()
    data = path.read_bytes()
    inode = os.stat(path).st_ino
    with SessionManager.open(path) as manager:
        assert manager.load_report.migrated_from is None
    assert path.read_bytes() == data
    assert os.stat(path).st_ino == inode


def test_v2_hook_message_role_becomes_custom(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    path.write_text(V2_FILE)
    original = raw_lines(path)

    with SessionManager.open(path) as manager:
        assert manager.load_report.migrated_from == 2
        context = manager.build_session_context().messages

    lines = read_lines(path)
    assert lines[0]["version"] == 3
    assert lines[0]["title"] == "kept"  # unknown header fields survive the rewrite
    assert lines[2]["message"]["role"] == "custom"
    assert lines[2]["message"]["customType"] == "my-hook"
    assert [m["role"] for m in context] == ["user", "custom", "assistant"]
    # Lines the migration had no reason to touch are byte-for-byte the same.
    rewritten = raw_lines(path)
    assert rewritten[1] == original[1]
    assert rewritten[3] == original[3]
    assert leftovers(tmp_path, path) == []


def test_v1_compaction_index_pointing_at_the_header_keeps_nothing_before_it(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(V1_FILE.replace('"firstKeptEntryIndex":3', '"firstKeptEntryIndex":0'))
    with SessionManager.open(path) as manager:
        compaction = manager.entries[4]
        context = context_of(manager)
    assert "firstKeptEntryIndex" not in compaction
    assert "firstKeptEntryId" not in compaction
    assert context == [
        ("compactionSummary", "u1 and a1 were discussed"),
        ("user", "u3"),
        ("assistant", "a3"),
    ]


def test_current_version_file_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "v3.jsonl"
    path.write_text(
        V2_FILE.replace('"version":2', '"version":3').replace('"role":"hookMessage"', '"role":"custom"')
    )
    data = path.read_bytes()
    with SessionManager.open(path) as manager:
        assert manager.load_report.migrated_from is None
    assert path.read_bytes() == data
