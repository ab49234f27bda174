"""Session files over the wire: fork, clone, new, list, switch, locks, reopening, migration."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from e2e.conftest import (
    E2E,
    WAIT,
    JsonDict,
    context_of,
    current_file,
    expect_error,
    header_and_entries,
    messages_of,
    read_jsonl,
    text_of,
)
from pi_lines import assistant_message, encode, old_compaction, old_header, old_line, old_message, old_user
from rpc_agent.server import errors as codes
from rpc_agent_client import RpcAgentClient

pytestmark = pytest.mark.anyio


async def prompt_ids(client: RpcAgentClient, text: str) -> tuple[str, str]:
    mark = len(client.events_seen)
    await client.call("prompt", {"message": text})
    ends = [e for e in client.events_seen[mark:] if e["type"] == "message_end"]
    return ends[0]["entryId"], ends[-1]["entryId"]


def context_texts(result: JsonDict) -> list[str]:
    return [text_of(m) for m in result["messages"]]


@pytest.mark.in_process
async def test_fork_clone_new_list_and_switch(e2e: E2E) -> None:
    other_cwd_folder = e2e.session_root / "--somewhere-else--"
    other_cwd_folder.mkdir(parents=True)
    elsewhere = other_cwd_folder / "2024-01-01T00-00-00-000Z_elsewhere.jsonl"
    elsewhere.write_text(
        json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "elsewhere",
                "timestamp": "2024-01-01T00:00:00.000Z",
                "cwd": "/somewhere/else",
            }
        )
        + "\n"
    )
    async with e2e.server() as client:
        u1, a1 = await prompt_ids(client, "first")
        u2, _ = await prompt_ids(client, "second")
        original = await current_file(client)
        original_id = (await client.get_state()).sessionId
        await client.navigate_tree(a1)  # this file's leaf is now a1 (nothing appended but a marker)
        original_bytes = original.read_bytes()

        # fork from a user message: a new file with the path before it; its text comes back.
        mark = len(client.events_seen)
        forked = await client.fork(u2)
        assert forked.text == "second"
        assert forked.cancelled is False
        assert forked.leafId == a1
        assert forked.sessionFile is not None
        fork_file = Path(forked.sessionFile)
        assert fork_file != original
        assert fork_file.parent == original.parent
        header, entries = header_and_entries(fork_file)
        assert header["parentSession"] == str(original)
        assert header["id"] == forked.sessionId != original_id
        assert [e["id"] for e in messages_of(entries)] == [u1, a1]
        changed = [e for e in client.events_seen[mark:] if e["type"] == "session_changed"]
        assert [(e["reason"], e["sessionFile"], e["leafId"]) for e in changed] == [
            ("fork", str(fork_file), a1)
        ]
        assert context_texts(await client.call("get_messages")) == ["first", "Echo: first"]
        assert original.read_bytes() == original_bytes  # the source file is untouched

        # Only user messages can be forked from.
        error = await expect_error(client.call("fork", {"entryId": a1}), codes.INVALID_PARAMS)
        assert "user message" in error.message
        assert f"entry {a1} is an assistant message" in error.message

        # clone: a new file holding the current branch.
        u3, a3 = await prompt_ids(client, "third in fork")
        mark = len(client.events_seen)
        cloned = await client.clone()
        assert cloned.sessionFile is not None
        clone_file = Path(cloned.sessionFile)
        assert clone_file not in (original, fork_file)
        assert cloned.leafId == a3
        header, entries = header_and_entries(clone_file)
        assert header["parentSession"] == str(fork_file)
        assert [e["id"] for e in messages_of(entries)] == [u1, a1, u3, a3]
        assert [e["reason"] for e in client.events_seen[mark:] if e["type"] == "session_changed"] == ["clone"]

        # new_session: empty, written only once it has an answer.
        mark = len(client.events_seen)
        fresh = await client.new_session(parent_session=str(original))
        assert fresh.leafId is None
        assert fresh.sessionFile is not None
        new_file = Path(fresh.sessionFile)
        assert not new_file.exists()
        assert (await client.call("get_messages"))["messages"] == []
        assert [e["reason"] for e in client.events_seen[mark:] if e["type"] == "session_changed"] == ["new"]
        await prompt_ids(client, "in the new one")
        header, _ = header_and_entries(new_file)
        assert header["parentSession"] == str(original)

        # list_sessions: this folder, most recent first; all=true adds the other folders.
        listed = await client.list_sessions()
        paths = [s.path for s in listed.sessions]
        assert set(paths) == {str(original), str(fork_file), str(clone_file), str(new_file)}
        by_path = {s.path: s for s in listed.sessions}
        assert by_path[str(original)].messageCount == 4
        assert by_path[str(original)].firstMessage == "first"
        assert by_path[str(fork_file)].parentSession == str(original)
        assert paths[0] == str(new_file)
        everything = await client.list_sessions(all_cwds=True)
        assert {s.path for s in everything.sessions} == {*paths, str(elsewhere)}

        # switch_session: back to the first file, at the leaf it was left on.
        mark = len(client.events_seen)
        switched = await client.switch_session(str(original))
        assert switched.sessionFile == str(original)
        assert switched.sessionId == original_id
        assert switched.leafId == a1
        assert context_texts(await client.call("get_messages")) == ["first", "Echo: first"]
        assert [e["reason"] for e in client.events_seen[mark:] if e["type"] == "session_changed"] == [
            "switch"
        ]
        # Switching to the file that is open already changes nothing.
        again = await client.switch_session(str(original))
        assert again.leafId == a1
        # The file continues where it was left.
        u4, _ = await prompt_ids(client, "after switching back")
        _, entries = header_and_entries(original)
        assert next(e for e in entries if e["id"] == u4)["parentId"] == a1


@pytest.mark.in_process
async def test_switch_to_a_file_that_is_not_a_session_changes_nothing(e2e: E2E) -> None:
    notes = e2e.cwd / "notes.txt"
    notes.write_bytes(b"hello\nthis is not a session\n")
    json_file = e2e.cwd / "data.jsonl"
    json_file.write_bytes(b'{"a": 1}\n{"b": 2}\n')
    missing = e2e.cwd / "missing.jsonl"
    async with e2e.server() as client:
        await prompt_ids(client, "first")
        session_file = await current_file(client)
        session_bytes = session_file.read_bytes()
        for target in (notes, json_file):
            before = target.read_bytes()
            error = await expect_error(client.switch_session(str(target)), codes.INVALID_SESSION_FILE)
            assert error.data == {"path": str(target)}
            assert target.read_bytes() == before
            assert not target.with_name(target.name + ".lock").exists()
        error = await expect_error(client.switch_session(str(missing)), codes.SESSION_NOT_FOUND)
        assert error.data == {"path": str(missing)}
        assert not missing.exists()
        assert not missing.with_name(missing.name + ".lock").exists()
        deep = e2e.root / "no" / "such" / "folder.jsonl"
        await expect_error(client.switch_session(str(deep)), codes.SESSION_NOT_FOUND)
        assert not (e2e.root / "no").exists()
        # Still serving the same session, which is intact and still takes appends.
        state = await client.get_state()
        assert state.sessionFile == str(session_file)
        assert session_file.read_bytes() == session_bytes
        await prompt_ids(client, "second")
        assert len(messages_of(read_jsonl(session_file))) == 4
    assert sorted(p.name for p in e2e.cwd.iterdir()) == ["data.jsonl", "notes.txt"]


async def test_a_session_locked_by_another_server(e2e: E2E) -> None:
    # The owner in this process, the servers it keeps out in processes of their own.
    async with e2e.server(in_this_process=True) as owner:
        await prompt_ids(owner, "mine")
        locked = await current_file(owner)
        async with e2e.server() as other:
            own_file = await current_file(other)
            error = await expect_error(other.switch_session(str(locked)), codes.SESSION_LOCKED)
            assert error.data == {"path": str(locked), "pid": owner.process.pid}
            assert str(owner.process.pid) in error.message or "locked" in error.message.lower()
            assert (await other.get_state()).sessionFile == str(own_file)
        # The owner never noticed.
        await prompt_ids(owner, "still mine")
        # A server started on the locked file says so and exits 1.
        async with e2e.raw("--session", str(locked)) as third:
            with anyio.fail_after(WAIT):
                code = await third.process.wait()
            assert code == 1
            assert "lock" in e2e.logs[-1].read_text().lower()
    assert len(messages_of(read_jsonl(locked))) == 4


@pytest.mark.in_process
async def test_reopen_restores_the_leaf_after_navigation(e2e: E2E) -> None:
    async with e2e.server() as client:
        u1, a1 = await prompt_ids(client, "first")
        await prompt_ids(client, "second")
        session_file = await current_file(client)
        await client.navigate_tree(a1)
    async with e2e.server("--session", str(session_file)) as client:
        state = await client.get_state()
        assert state.sessionFile == str(session_file)
        assert state.leafId == a1
        assert context_texts(await client.call("get_messages")) == ["first", "Echo: first"]
        # The first user message: an empty context, the leaf on the session's initial
        # thinking_level_change (its parent), as in pi's files.
        await client.navigate_tree(u1)
        start = (await client.get_state()).leafId
        assert start is not None
        assert (await client.call("get_messages"))["messages"] == []
    async with e2e.server("--continue") as client:
        state = await client.get_state()
        assert state.sessionFile == str(session_file)
        assert state.leafId == start
        assert (await client.call("get_messages"))["messages"] == []
        assert len((await client.call("get_tree"))["nodes"]) == 6


def v1_file(cwd: Path) -> bytes:
    """A v1 session as the old writer produced it: no version, no ids, a compaction by index."""
    return encode(
        [
            old_header(cwd=str(cwd)),
            old_user("u1", 1),
            old_message(2, assistant_message([{"type": "text", "text": "a1"}], 2)),
            old_user("u2", 3),
            old_message(4, assistant_message([{"type": "text", "text": "a2"}], 4)),
            old_compaction(5, "u1 and a1 were discussed", 3, 50000),
            old_line("thinking_level_change", 6, thinkingLevel="high"),
            old_user("u3", 7),
            old_message(8, assistant_message([{"type": "text", "text": "a3"}], 8)),
        ]
    )


@pytest.mark.in_process
async def test_a_v1_session_file_is_migrated_and_served(e2e: E2E) -> None:
    path = e2e.root / "old-session.jsonl"
    path.write_bytes(v1_file(e2e.cwd))
    async with e2e.server("--session", str(path)) as client:
        state = await client.get_state()  # answered once the file is open (and migrated)
        header, entries = header_and_entries(path)
        assert header["version"] == 3
        assert all(isinstance(e["id"], str) for e in entries)
        assert [e["parentId"] for e in entries[1:]] == [e["id"] for e in entries[:-1]]
        compaction = next(e for e in entries if e["type"] == "compaction")
        assert "firstKeptEntryIndex" not in compaction
        assert compaction["firstKeptEntryId"] == entries[2]["id"]  # the message "u2"

        assert state.sessionId == "0c0ffee0-1111-4222-8333-444455556666"
        assert state.leafId == entries[-1]["id"]
        assert state.thinkingLevel == "high"
        messages = await context_of(client, "compactionSummary", "user", "assistant", "user", "assistant")
        assert messages[0]["summary"] == "u1 and a1 were discussed"
        assert [text_of(m) for m in messages[1:]] == ["u2", "a2", "u3", "a3"]
        nodes = (await client.call("get_tree"))["nodes"]
        assert [n["depth"] for n in nodes] == list(range(8))

        result = await client.call("prompt", {"message": "u4"})
        assert text_of(result["messages"][-1]) == "Echo: u4"
    _, entries = header_and_entries(path)
    assert [text_of(e["message"]) for e in messages_of(entries)][-2:] == ["u4", "Echo: u4"]


@pytest.mark.in_process
async def test_no_session_mode_writes_nothing(e2e: E2E) -> None:
    async with e2e.server("--no-session") as client:
        u1, _ = await prompt_ids(client, "first")
        await prompt_ids(client, "second")
        state = await client.get_state()
        assert state.sessionFile is None
        forked = await client.call("fork", {"entryId": u1})
        assert forked["sessionFile"] is None
        assert forked["text"] == "first"
        fresh = await client.new_session()
        assert fresh.sessionFile is None
        changed = [e for e in client.events_seen if e["type"] == "session_changed"]
        assert [(e["reason"], e["sessionFile"]) for e in changed] == [("fork", None), ("new", None)]
        assert (await client.list_sessions()).sessions == []
    assert not e2e.session_root.exists() or e2e.session_files() == []
