"""pi 1.5.2's entry types in the file format: they validate, dump back and survive a reopen unchanged;
what our own compaction, new sessions and the tree write or show for them.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from pi15_testlib import JsonDict, edit, system
from session_testlib import (
    assistant,
    chain,
    compaction_entry,
    entry,
    header,
    ms,
    user,
    write_jsonl,
    write_session,
)

from pi15_lines import pi15_session
from rpc_agent.protocol.entries import parse_entry
from rpc_agent.store import SessionManager

PI15_ENTRIES = [
    {
        **entry("usage", "00000009", None, 1),
        "kind": "cache_warm",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 50000,
            "cacheWrite": 0,
            "cacheWrite1h": 0,
            "reasoning": 0,
            "totalTokens": 50000,
            "cost": {
                "input": 0,
                "output": 0,
                "cacheRead": 0.015,
                "cacheWrite": 0,
                "total": 0.015,
                "totalFromProvider": True,
            },
        },
        "note": "idle warm",
    },
    edit(
        "0000000a",
        "00000009",
        2,
        "00000009",
        {"content": [{"type": "toolCall", "id": "t", "name": "n", "arguments": {}}]},
    ),
    {
        **compaction_entry("0000000b", "0000000a", 3, "S", "0000000b", 1),
        "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3},
        "systemMessage": system(
            [{"type": "text", "text": "p"}],
            toolsAdded=[
                {
                    "name": "bash",
                    "description": "b",
                    "parameters": {"type": "object"},
                    "constrainedSampling": False,
                }
            ],
        ),
    },
]


@pytest.mark.parametrize("line", PI15_ENTRIES, ids=lambda line: str(line["type"]))
def test_pi15_entries_validate_and_dump_back_unchanged(line: JsonDict) -> None:
    typed = parse_entry(line)
    assert not isinstance(typed, dict), "a pi 1.5.2 entry type is known"
    assert typed.model_dump(mode="json", exclude_unset=True) == line


def test_pi15_entries_survive_a_reopen_and_an_append_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "pi15.jsonl"
    lines = [header(session_id="019a7c52-5e1c-7d3e-9c1a-2b3c4d5e6f70"), *PI15_ENTRIES]
    before = write_jsonl(path, lines)
    with SessionManager.open(path) as manager:
        manager.append_message(user("more"))
    after = path.read_bytes()
    assert after.startswith(before)
    assert json.loads(after[len(before) :])["parentId"] == "0000000b"


def test_our_compaction_saves_the_replayed_system_messages_as_pi_does(tmp_path: Path) -> None:
    path = tmp_path / "ours.jsonl"
    first = system(
        "Base.",
        sections={"preamble": "p", "skills": "s"},
        toolsAdded=[
            {"name": "read", "description": "r", "parameters": {}},
            {"name": "bash", "description": "b", "parameters": {}},
        ],
    )
    later = system(
        sections={"skills": None, "cwd": "/x"},
        toolsRemoved=[{"name": "read"}],
        toolsAdded=[{"name": "bash", "description": "b2", "parameters": {}}],
    )
    write_session(
        path,
        *chain(first, user("u1"), later, assistant("a1")),
    )
    with SessionManager.open(path) as manager:
        compaction_id = manager.append_compaction("S", "00000002", 100).id or ""
        saved = manager.get_entry(compaction_id)
        assert saved is not None
        assert saved["systemMessage"] == {
            "role": "system",
            "content": "Base.",
            "sections": {"preamble": "p", "cwd": "/x"},
            "toolsAdded": [{"name": "bash", "description": "b2", "parameters": {}}],
            "timestamp": ms(saved["timestamp"]),
        }
        messages = manager.build_session_context().messages
    assert [m["role"] for m in messages] == ["system", "compactionSummary", "user", "assistant"]


def test_our_compaction_without_system_messages_saves_none(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    write_session(
        path,
        *chain(user("u"), assistant("a")),
    )
    with SessionManager.open(path) as manager:
        saved = manager.get_entry(manager.append_compaction("S", "00000002", 1).id or "")
    assert saved is not None
    assert "systemMessage" not in saved


def test_new_sessions_get_uuidv7_ids_as_pi_1_5_writes_them(tmp_path: Path) -> None:
    before = time.time_ns() // 1_000_000
    with SessionManager.create(str(tmp_path), tmp_path / "sessions") as manager:
        session_id = manager.session_id
    after = time.time_ns() // 1_000_000
    parsed = uuid.UUID(session_id)
    assert (parsed.version, parsed.variant) == (7, uuid.RFC_4122)
    assert before <= parsed.int >> 80 <= after  # the creation time in milliseconds leads the id


def test_the_tree_previews_pi15_entries(tmp_path: Path) -> None:
    path = tmp_path / "pi15.jsonl"
    write_jsonl(path, pi15_session("/p"))
    with SessionManager.open(path) as manager:
        rows = {row["id"]: (row["role"], row["preview"]) for row in json.loads(manager.tree_json())}
    assert rows["00000001"] == ("system", "sections preamble, cwd; tools +read +bash")
    assert rows["0000000a"] == ("system", "sections cwd; tools -bash")
    assert rows["00000006"] == (None, "omit 00000005")
    assert rows["00000007"] == (None, "edit 00000004")
    assert rows["00000009"] == (None, "cache_warm: 300 tokens")
