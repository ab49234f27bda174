"""search_sessions, delete_session and list_sessions' pages: search and pages with the server in
the test's event loop (``in_process``), delete with a second server holding a session in a
process of its own, as a lock needs."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from e2e.conftest import E2E, current_file, expect_error
from rpc_agent.server import errors as codes
from rpc_agent_client import RpcAgentClient

pytestmark = pytest.mark.anyio


async def exchange(client: RpcAgentClient, text: str) -> tuple[Path, list[str]]:
    """A new session holding one prompt; its file and the ids of the prompt and its answer."""
    await client.new_session()
    mark = len(client.events_seen)
    await client.call("prompt", {"message": text})
    ids = [str(e["entryId"]) for e in client.events_seen[mark:] if e["type"] == "message_end"]
    return await current_file(client), ids


def write_elsewhere(e2e: E2E, text: str) -> Path:
    folder = e2e.session_root / "--somewhere-else--"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "2024-01-01T00-00-00-000Z_elsewhere.jsonl"
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "elsewhere",
            "timestamp": "2024-01-01T00:00:00.000Z",
            "cwd": "/x",
        },
        {
            "type": "message",
            "id": "e1",
            "parentId": None,
            "timestamp": "2024-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1704067201000},
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.in_process
async def test_search_finds_messages_and_names_newest_first_a_page_at_a_time(e2e: E2E) -> None:
    elsewhere = write_elsewhere(e2e, "the Migration plan, elsewhere")
    async with e2e.server() as client:
        first, first_ids = await exchange(client, "plan the database migration")
        second, _ = await exchange(client, "unrelated talk")
        await client.set_session_name("Migration notes")
        third, third_ids = await exchange(client, "MIGRATION done?")
        for age, path in enumerate([third, second, first]):
            os.utime(path, (2_000_000_000 - age, 2_000_000_000 - age))

        found = await client.search_sessions("migration")
        assert [hit.session.path for hit in found.sessions] == [str(third), str(second), str(first)]
        assert found.nextCursor is None
        by_path = {hit.session.path: hit for hit in found.sessions}
        assert by_path[str(first)].entryIds == first_ids  # the prompt and its echo
        assert by_path[str(first)].snippet == "plan the database migration"
        assert by_path[str(third)].entryIds == third_ids
        assert by_path[str(second)].entryIds == []
        assert by_path[str(second)].nameMatched is True
        assert by_path[str(second)].session.name == "Migration notes"

        pages: list[list[str]] = []
        cursor: str | None = None
        while True:
            page = await client.search_sessions("MIGRATION", limit=2, cursor=cursor)
            pages.append([hit.session.path for hit in page.sessions])
            cursor = page.nextCursor
            if cursor is None:
                break
        assert pages == [[str(third), str(second)], [str(first)]]

        everywhere = await client.search_sessions("migration", all_cwds=True)
        assert {hit.session.path for hit in everywhere.sessions} == {
            str(first),
            str(second),
            str(third),
            str(elsewhere),
        }
        assert (await client.search_sessions("nothing like this")).sessions == []

        await expect_error(client.call("search_sessions", {"query": ""}), codes.INVALID_PARAMS)
        await expect_error(client.call("search_sessions", {"query": "   "}), codes.INVALID_PARAMS)
        await expect_error(
            client.call("search_sessions", {"query": "x", "cursor": "bogus"}), codes.INVALID_PARAMS
        )
        await expect_error(client.call("search_sessions", {"query": "x", "limit": 0}), codes.INVALID_PARAMS)
        listed = await client.list_sessions(limit=1)
        assert listed.nextCursor is not None
        await expect_error(  # one method's cursor is not the other's
            client.call("search_sessions", {"query": "x", "cursor": listed.nextCursor}), codes.INVALID_PARAMS
        )
        assert (await client.search_sessions("database")).sessions[0].session.path == str(first)


@pytest.mark.in_process
async def test_list_sessions_pages_return_each_session_once(e2e: E2E) -> None:
    async with e2e.server() as client:
        made = [(await exchange(client, f"session {i}"))[0] for i in range(5)]
        whole = await client.list_sessions()
        assert whole.nextCursor is None
        assert {s.path for s in whole.sessions} == {str(p) for p in made}
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page = await client.list_sessions(limit=2, cursor=cursor)
            assert len(page.sessions) <= 2
            seen += [s.path for s in page.sessions]
            cursor = page.nextCursor
            if cursor is None:
                break
        assert seen == [s.path for s in whole.sessions]
        await expect_error(client.call("list_sessions", {"cursor": "%%%"}), codes.INVALID_PARAMS)
        await expect_error(client.call("list_sessions", {"limit": -1}), codes.INVALID_PARAMS)


async def test_delete_session_removes_file_and_unused_blob_and_refuses_what_it_must(e2e: E2E) -> None:
    image = {"type": "image", "data": base64.b64encode(os.urandom(3000)).decode(), "mimeType": "image/png"}
    # This server in the test's process, the one holding a session in a process of its own.
    async with e2e.server(in_this_process=True) as client:
        await client.prompt("with a picture", images=[image])
        pictured = await current_file(client)
        [blob] = list((e2e.home / "blobs").iterdir())
        kept, _ = await exchange(client, "a session to keep open elsewhere")
        held, _ = await exchange(client, "held by another server")
        live, _ = await exchange(client, "the live one")

        error = await expect_error(client.delete_session(str(live)), codes.SESSION_LOCKED)
        assert "live session" in error.message
        async with e2e.server("--session", str(held)) as other:
            assert (await other.get_state()).sessionFile == str(held)
            error = await expect_error(client.delete_session(str(held)), codes.SESSION_LOCKED)
            assert error.data is not None
            assert error.data["pid"] not in (None, os.getpid())
        await expect_error(client.delete_session(str(e2e.root / "x.jsonl")), codes.INVALID_SESSION_FILE)
        await expect_error(client.delete_session(str(kept.with_suffix(".txt"))), codes.INVALID_SESSION_FILE)
        await expect_error(client.delete_session(str(kept.parent / "gone.jsonl")), codes.SESSION_NOT_FOUND)
        await expect_error(client.call("delete_session", {}), codes.INVALID_PARAMS)

        os.utime(blob, (1, 1))  # stored long ago: no writer can be about to use it
        deleted = await client.delete_session(str(pictured))
        assert (deleted.path, deleted.blobsRemoved) == (str(pictured), 1)
        assert not pictured.exists()
        assert not blob.exists()
        deleted = await client.delete_session(str(held))
        assert deleted.blobsRemoved == 0
        listed = await client.list_sessions()
        assert {s.path for s in listed.sessions} == {str(kept), str(live)}
        answer = await client.call("prompt", {"message": "still answering"})
        assert answer["messages"][-1]["content"][0]["text"] == "Echo: still answering"
