"""``/rewind`` and ``/changes`` from the editor's prompt box, and the checkpoint extension
methods, through the SDK's client side: without ``fs`` the restore writes the disk; with it,
the restored files also reach the editor's buffers through ``fs/write_text_file``."""

from __future__ import annotations

import json

import anyio
import pytest
from acp_editor import EDITOR, EditorClient
from acp_testlib import WAIT, AcpWorld, JsonDict, RecordingClient, prompt

from acp import RequestError
from rpc_agent.protocol.errors import ENTRY_NOT_FOUND

pytestmark = pytest.mark.anyio


def bash(command: str, call_id: str) -> JsonDict:
    return {"toolCalls": [{"name": "bash", "id": call_id, "arguments": {"command": command}}]}


SCRIPT: list[JsonDict] = [
    bash("sed -i 's/one/ONE/' notes.txt && echo made > made.txt", "b1"),
    {"text": "changed"},
]


def first_user_entry(world: AcpWorld) -> str:
    for path in world.home.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("type") == "message" and entry["message"].get("role") == "user":
                return str(entry["id"])
    raise AssertionError("no user message stored")


async def test_rewind_and_changes_without_fs_restore_the_disk(world: AcpWorld) -> None:
    notes = world.cwd / "notes.txt"
    notes.write_text("one\ntwo\n")
    client = RecordingClient()
    async with world.session(client, SCRIPT) as (conn, sid):
        await prompt(conn, sid, "change the notes")
        assert notes.read_text() == "ONE\ntwo\n"

        await prompt(conn, sid, "/changes")
        shown = client.agent_text(sid)
        assert "- modified notes.txt" in shown
        assert "- added made.txt" in shown
        assert "-one\n+ONE" in shown

        params = {"sessionId": sid, "entryId": first_user_entry(world), "dryRun": True}
        with anyio.fail_after(WAIT):
            dry = await conn.ext_method("rpc_agent/restore_files", params)
        assert {f["path"] for f in dry["files"]} == {"notes.txt", "made.txt"}
        assert notes.read_text() == "ONE\ntwo\n"
        with anyio.fail_after(WAIT), pytest.raises(RequestError) as caught:
            await conn.ext_method("rpc_agent/get_file_changes", {"sessionId": sid, "entryId": "nope0000"})
        assert caught.value.code == ENTRY_NOT_FOUND

        notes.write_text("the user's edit\n")
        await prompt(conn, sid, "/rewind")
        assert (
            "Not rewound: these files changed since the last checkpoint:\n- notes.txt"
            in client.agent_text(sid)
        )
        assert notes.read_text() == "the user's edit\n"

        answer = await prompt(conn, sid, f"/rewind {first_user_entry(world)} force")
        assert answer.stop_reason == "end_turn"
        assert "2 file(s) restored" in client.agent_text(sid)
        assert notes.read_text() == "one\ntwo\n"
        assert not (world.cwd / "made.txt").exists()


async def test_rewind_with_fs_hands_the_restored_files_to_the_editor(world: AcpWorld) -> None:
    notes = world.cwd / "notes.txt"
    notes.write_text("one\ntwo\n")
    client = EditorClient()  # fs and terminal: bash runs in the editor's terminal, on this disk
    async with world.session(client, SCRIPT, capabilities=EDITOR) as (conn, sid):
        await prompt(conn, sid, "change the notes")
        assert notes.read_text() == "ONE\ntwo\n"
        client.buffers[str(notes)] = "ONE\ntwo\n"  # the editor has the file open
        client.calls.clear()
        await prompt(conn, sid, "/rewind")
        assert "2 file(s) restored" in client.agent_text(sid)
    assert notes.read_text() == "one\ntwo\n"
    assert client.buffers[str(notes)] == "one\ntwo\n"
    assert f"write {notes}" in client.calls
    assert not (world.cwd / "made.txt").exists()
