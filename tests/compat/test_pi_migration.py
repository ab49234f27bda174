"""Files from others stay as they were: pi builds the same context from an old (v1/v2) session
before and after our store migrated it, and the same context as ours from fields a file leaves
out (a custom message without ``display``, a compaction without ``tokensBefore``).

pi migrates old files in memory when it opens them, so "before" is pi's reading of the
original file, "after" pi's reading of the file our store rewrote.

``PI_SESSION_FIXTURES`` may name a folder of further session files to check the same way (for
example pi-mono's ``packages/coding-agent/test/fixtures``, with ``large-session.jsonl`` and
``before-compaction.jsonl``); they are not part of this repository.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_pi_compat import context_json

from node_reader import NodeReader
from pi_lines import (
    as_v2,
    assistant_message,
    old_compaction,
    old_header,
    old_hook_message,
    old_line,
    old_message,
    old_user,
    read_call,
    read_result_message,
    write_jsonl,
)
from rpc_agent.store import SessionManager

JsonDict = dict[str, Any]


def old_session(version: int | None) -> list[JsonDict]:
    image = base64.b64encode(bytes(range(256)) * 8).decode("ascii")
    lines: list[JsonDict] = [
        old_header(version=version, thinkingLevel="off"),
        old_line("thinking_level_change", 0.5, thinkingLevel="high"),
        old_user(
            [
                {"type": "text", "text": "what is this?"},
                {"type": "image", "data": image, "mimeType": "image/png"},
            ],
            1,
        ),
        old_message(2, assistant_message([read_call('{"path":"a.txt"}')], 2, "toolUse")),
        old_message(3, read_result_message("x" * 600_000, 3)),
        old_hook_message(4),
        old_compaction(5, "Read a.txt.", 3, 5000),
        old_line("model_change", 6, provider="openai", modelId="gpt-4o"),
        old_message(7, assistant_message([{"type": "text", "text": "Done.", "extra": 1}], 7)),
    ]
    return as_v2(lines) if version == 2 else lines


def assert_pi_reads_the_same_after_we_migrate(pi_reader: NodeReader, source: Path, work: Path) -> JsonDict:
    """pi's context of ``source`` as it is, and of a copy our store migrated: equal."""
    work.mkdir(parents=True, exist_ok=True)
    as_is = work / "as-is.jsonl"
    ours = work / "migrated.jsonl"
    shutil.copyfile(source, as_is)
    shutil.copyfile(source, ours)

    with SessionManager.open(ours) as manager:
        assert manager.load_report.migrated_from is not None
    assert json.loads(ours.read_text().split("\n", 1)[0])["version"] == 3
    # pi reads both copies: the untouched one (pi migrates it in memory, and its copy) and ours.
    before, after = pi_reader.read(as_is, ours)

    assert after["messages"] == before["messages"]
    assert after["thinkingLevel"] == before["thinkingLevel"]
    assert after["model"] == before["model"]
    return after


@pytest.mark.parametrize("version", [None, 2], ids=["v1", "v2"])
def test_pi_builds_the_same_context_before_and_after_our_migration(
    pi_reader: NodeReader, tmp_path: Path, version: int | None
) -> None:
    source = tmp_path / "old.jsonl"
    write_jsonl(source, old_session(version))
    after = assert_pi_reads_the_same_after_we_migrate(pi_reader, source, tmp_path / "work")
    # Not a trivial comparison: the tool call kept its partialJson, the compaction applies.
    roles = [m["role"] for m in after["messages"]]
    assert roles == ["compactionSummary", "assistant", "toolResult", "custom", "assistant"]
    assert after["messages"][1]["content"][0]["partialJson"] == '{"path":"a.txt"}'
    assert after["thinkingLevel"] == "high"


def _external_fixtures() -> list[Path]:
    folder = os.environ.get("PI_SESSION_FIXTURES")
    return sorted(Path(folder).glob("*.jsonl")) if folder else []


@pytest.mark.skipif(not _external_fixtures(), reason="PI_SESSION_FIXTURES names no folder of session files")
@pytest.mark.parametrize("fixture", _external_fixtures(), ids=lambda p: p.name)
def test_pi_fixture_sessions_give_the_same_context_after_our_migration(
    pi_reader: NodeReader, tmp_path: Path, fixture: Path
) -> None:
    assert_pi_reads_the_same_after_we_migrate(pi_reader, fixture, tmp_path)


def test_fields_a_file_leaves_out_stay_out_of_the_context(pi_reader: NodeReader, tmp_path: Path) -> None:
    """A custom message without ``display`` and a compaction without ``tokensBefore``: neither
    pi nor we invent them, and what the store reports is the line as stored."""
    lines: list[JsonDict] = [
        {"type": "session", "version": 3, "id": "s-1", "timestamp": "2024-12-03T14:00:00.000Z", "cwd": "/p"},
        {
            "type": "message",
            "id": "00000001",
            "parentId": None,
            "timestamp": "2024-12-03T14:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1733234401000},
        },
        {
            "type": "message",
            "id": "00000002",
            "parentId": "00000001",
            "timestamp": "2024-12-03T14:00:02.000Z",
            "message": assistant_message([{"type": "text", "text": "hello"}], 2),
        },
        {
            "type": "compaction",
            "id": "00000003",
            "parentId": "00000002",
            "timestamp": "2024-12-03T14:00:03.000Z",
            "summary": "Greetings.",
            "firstKeptEntryId": "00000002",
        },
        {
            "type": "custom_message",
            "id": "00000004",
            "parentId": "00000003",
            "timestamp": "2024-12-03T14:00:04.000Z",
            "customType": "note",
            "content": "a note",
        },
    ]
    path = tmp_path / "s.jsonl"
    write_jsonl(path, lines)
    with SessionManager.open(path) as manager:
        ours = context_json(manager.build_session_context())
        assert manager.get_entry("00000003") == lines[3]
        assert manager.get_entry("00000004") == lines[4]
        assert manager.entries == lines[1:]
    [pi] = pi_reader.read(path)
    assert ours["messages"] == pi["messages"]
    assert "tokensBefore" not in ours["messages"][0]
    assert "display" not in ours["messages"][-1]
