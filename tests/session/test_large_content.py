"""Huge strings are cut on disk; large images go to the content-addressed blob store."""

from __future__ import annotations

import base64
import hashlib
import random
from pathlib import Path
from typing import Any

import pytest
from session_testlib import BASE_MS, assistant, blocks_of, read_lines, session_path, user

from rpc_agent.protocol.shapes import BlockDict, MessageDict
from rpc_agent.store import SessionManager

NOTICE = "[Session persistence truncated large content]"
LIMIT = 500_000


def image(size: int, seed: int = 1) -> tuple[bytes, str]:
    raw = random.Random(seed).randbytes(size)
    return raw, base64.b64encode(raw).decode("ascii")


def image_message(*blocks: BlockDict) -> MessageDict:
    return {"role": "user", "content": [{"type": "text", "text": "look"}, *blocks], "timestamp": BASE_MS}


@pytest.mark.anyio
async def test_strings_over_the_limit_are_truncated_on_disk_with_the_notice(tmp_path: Path) -> None:
    huge = "x" * (LIMIT + 100_000)
    at_limit = "y" * LIMIT
    manager = SessionManager.create("/p", tmp_path)
    await manager.append_message(user(huge))
    await manager.append_message(assistant(at_limit))
    await manager.append_message(
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "bash",
            "content": [{"type": "text", "text": huge}],
            "isError": False,
            "timestamp": BASE_MS,
        }
    )
    await manager.append_custom_entry("ext", {"blob": huge})
    assert manager.entries[0]["message"]["content"] == huge  # memory keeps the full text
    await manager.aclose()

    lines = read_lines(session_path(manager))
    expected = "x" * LIMIT + "\n" + NOTICE
    assert lines[1]["message"]["content"] == expected
    assert lines[2]["message"]["content"][0]["text"] == at_limit  # not over the limit: untouched
    assert lines[3]["message"]["content"][0]["text"] == expected
    assert lines[4]["data"]["blob"] == expected

    with SessionManager.open(session_path(manager)) as again:
        assert again.entries[0]["message"]["content"] == expected


@pytest.mark.anyio
async def test_large_image_goes_to_the_blob_store_and_comes_back_on_reopen(agent_home: Path) -> None:
    raw, data = image(3000)
    _small_raw, small = image(100, seed=2)
    assert len(data) >= 1024 > len(small)
    digest = hashlib.sha256(raw).hexdigest()
    manager = SessionManager.create("/home/me/proj")  # the default folder, under the agent home
    message = image_message(
        {"type": "image", "data": data, "mimeType": "image/png"},
        {"type": "image", "data": small, "mimeType": "image/png"},
    )
    await manager.append_message(message)
    await manager.append_message(assistant("nice picture"))
    assert blocks_of(manager.entries[0]["message"])[1]["data"] == data
    await manager.aclose()

    on_disk = read_lines(session_path(manager))[1]["message"]["content"]
    assert on_disk[1] == {"type": "image", "data": f"blob:sha256:{digest}", "mimeType": "image/png"}
    assert on_disk[2]["data"] == small  # under 1,024 base64 chars: stays inline
    blob = agent_home / "blobs" / digest
    assert blob.read_bytes() == raw
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name

    with SessionManager.open(session_path(manager)) as again:
        restored = again.entries[0]["message"]["content"]
        assert restored == message["content"]
        assert blocks_of(again.build_session_context().messages[0])[1]["data"] == data


@pytest.mark.anyio
async def test_same_image_twice_is_one_blob_and_custom_messages_use_it_too(tmp_path: Path) -> None:
    raw, data = image(2048, seed=7)
    digest = hashlib.sha256(raw).hexdigest()
    folder = tmp_path / "custom-dir"  # outside the agent home: blobs live in the folder itself
    manager = SessionManager.create("/p", folder)
    await manager.append_message(image_message({"type": "image", "data": data, "mimeType": "image/jpeg"}))
    await manager.append_message(assistant("ok"))
    await manager.append_custom_message_entry(
        "ext", [{"type": "image", "data": data, "mimeType": "image/jpeg"}], display=True
    )
    await manager.aclose()

    lines = read_lines(session_path(manager))
    assert lines[1]["message"]["content"][1]["data"] == f"blob:sha256:{digest}"
    assert lines[3]["content"][0]["data"] == f"blob:sha256:{digest}"
    assert sorted(p.name for p in (folder / "blobs").iterdir()) == [digest]
    assert data not in session_path(manager).read_text()

    with SessionManager.open(session_path(manager)) as again:
        assert blocks_of(again.entries[2])[0]["data"] == data
        assert blocks_of(again.build_session_context().messages[-1])[0]["data"] == data


@pytest.mark.anyio
async def test_entry_with_both_a_large_image_and_a_huge_string_gets_both_treatments(
    tmp_path: Path,
) -> None:
    raw, data = image(1500, seed=3)
    huge = "z" * (LIMIT + 1)
    manager = SessionManager.create("/p", tmp_path)
    await manager.append_message(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": huge},
                {"type": "image", "data": data, "mimeType": "image/png"},
            ],
            "timestamp": BASE_MS,
        }
    )
    streamed: Any = {  # as a stream left it: a transient field included
        **assistant("calling"),
        "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}, "partialJson": "{"}],
    }
    await manager.append_message(streamed)
    await manager.aclose()
    lines = read_lines(session_path(manager))
    content = lines[1]["message"]["content"]
    assert content[0]["text"] == "z" * LIMIT + "\n" + NOTICE
    assert content[1]["data"] == "blob:sha256:" + hashlib.sha256(raw).hexdigest()
    assert lines[2]["message"]["content"] == [
        {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}
    ]


@pytest.mark.anyio
async def test_missing_blob_leaves_the_reference_and_the_session_still_loads(tmp_path: Path) -> None:
    raw, data = image(1200, seed=4)
    digest = hashlib.sha256(raw).hexdigest()
    manager = SessionManager.create("/p", tmp_path)
    await manager.append_message(image_message({"type": "image", "data": data, "mimeType": "image/png"}))
    await manager.append_message(assistant("ok"))
    await manager.aclose()
    (tmp_path / "blobs" / digest).unlink()
    with SessionManager.open(session_path(manager)) as again:
        assert again.load_report.skipped == 0
        assert blocks_of(again.entries[0]["message"])[1]["data"] == f"blob:sha256:{digest}"
        assert len(again.build_session_context().messages) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("with_image", [False, True])
async def test_transient_streaming_fields_are_never_written(tmp_path: Path, with_image: bool) -> None:
    _raw, data = image(1500 if with_image else 10, seed=5)
    manager = SessionManager.create("/p", tmp_path)
    await manager.append_message(user("run it"))
    await manager.append_message(assistant("calling"))
    result: Any = {  # as a tool left it: a transient field included
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "screenshot",
        "content": [{"type": "image", "data": data, "mimeType": "image/png"}],
        "details": {"jsonlEvents": ["e1"], "kept": True},
        "isError": False,
        "timestamp": BASE_MS,
        "jsonlEvents": ["e1", "e2"],
    }
    await manager.append_message(result)
    await manager.aclose()
    stored = read_lines(session_path(manager))[3]["message"]
    assert "jsonlEvents" not in stored
    assert stored["details"] == {"kept": True}
    assert stored["content"][0]["data"].startswith("blob:sha256:") is with_image
