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
from test_pi_compat import context_json, node, run_pi, run_pi_lines

from rpc_agent.session import SessionManager

JsonDict = dict[str, Any]

__all__ = ["node"]  # the fixture, shared with test_pi_compat

pytestmark = pytest.mark.usefixtures("agent_home")

USAGE: JsonDict = {
    "input": 1,
    "output": 1,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 2,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def assistant(content: list[JsonDict], ts: int, stop: str = "stop") -> JsonDict:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": USAGE,
        "stopReason": stop,
        "timestamp": ts,
    }


def old_session(version: int | None) -> list[JsonDict]:
    header: JsonDict = {
        "type": "session",
        "id": "0c0ffee0-1111-4222-8333-444455556666",
        "timestamp": "2024-12-03T14:00:00.000Z",
        "cwd": "/project",
        "thinkingLevel": "off",
    }
    if version is not None:
        header["version"] = version
    image = base64.b64encode(bytes(range(256)) * 8).decode("ascii")
    entries: list[JsonDict] = [
        {"type": "thinking_level_change", "timestamp": "2024-12-03T14:00:00.500Z", "thinkingLevel": "high"},
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image", "data": image, "mimeType": "image/png"},
                ],
                "timestamp": 1733234401000,
            },
        },
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:02.000Z",
            "message": assistant(
                [
                    {
                        "type": "toolCall",
                        "id": "call_1",
                        "name": "read",
                        "arguments": {"path": "a.txt"},
                        "partialJson": '{"path":"a.txt"}',
                    }
                ],
                1733234402000,
                "toolUse",
            ),
        },
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:03.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "content": [{"type": "text", "text": "x" * 600_000}],
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
            "summary": "Read a.txt.",
            "firstKeptEntryIndex": 3,
            "tokensBefore": 5000,
        },
        {
            "type": "model_change",
            "timestamp": "2024-12-03T14:00:06.000Z",
            "provider": "openai",
            "modelId": "gpt-4o",
        },
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:07.000Z",
            "message": assistant([{"type": "text", "text": "Done.", "extra": 1}], 1733234407000),
        },
    ]
    if version == 2:
        previous = None
        for number, entry in enumerate(entries, start=1):
            entry["id"] = f"{number:08x}"
            entry["parentId"] = previous
            previous = entry["id"]
        entries[5]["firstKeptEntryId"] = entries[2]["id"]
        del entries[5]["firstKeptEntryIndex"]
    return [header, *entries]


def write_jsonl(path: Path, lines: list[JsonDict]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def assert_pi_reads_the_same_after_we_migrate(node: str, source: Path, work: Path) -> JsonDict:
    """pi's context of ``source`` as it is, and of a copy our store migrated: equal."""
    work.mkdir(parents=True, exist_ok=True)
    as_is = work / "as-is.jsonl"
    ours = work / "migrated.jsonl"
    shutil.copyfile(source, as_is)
    shutil.copyfile(source, ours)

    with SessionManager.open(ours) as manager:
        assert manager.load_report.migrated_from is not None
    assert json.loads(ours.read_text().split("\n", 1)[0])["version"] == 3
    # One node run reads both copies: the untouched one (pi migrates it in memory, and its
    # copy) and ours.
    before, after = run_pi_lines(node, "pi_context.mjs", str(as_is), str(ours))

    assert after["messages"] == before["messages"]
    assert after["thinkingLevel"] == before["thinkingLevel"]
    assert after["model"] == before["model"]
    return after


@pytest.mark.parametrize("version", [None, 2], ids=["v1", "v2"])
def test_pi_builds_the_same_context_before_and_after_our_migration(
    node: str, tmp_path: Path, version: int | None
) -> None:
    source = tmp_path / "old.jsonl"
    write_jsonl(source, old_session(version))
    after = assert_pi_reads_the_same_after_we_migrate(node, source, tmp_path / "work")
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
    node: str, tmp_path: Path, fixture: Path
) -> None:
    assert_pi_reads_the_same_after_we_migrate(node, fixture, tmp_path)


def test_fields_a_file_leaves_out_stay_out_of_the_context(node: str, tmp_path: Path) -> None:
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
            "message": assistant([{"type": "text", "text": "hello"}], 1733234402000),
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
    pi = run_pi(node, "pi_context.mjs", str(path))
    assert ours["messages"] == pi["messages"]
    assert "tokensBefore" not in ours["messages"][0]
    assert "display" not in ours["messages"][-1]
