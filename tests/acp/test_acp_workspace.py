"""Where a session works: ``additionalDirectories`` honoured and listed, a session loaded in
another folder listed there too, and a loaded session's writes and edits replayed as diffs."""

from __future__ import annotations

import json

import anyio
import pytest
from acp.schema import FileEditToolCallContent, ToolCallProgress
from acp_schema import SchemaCheck
from acp_testlib import WAIT, AcpWorld, JsonDict, RecordingClient, content_text, prompt, tool_call

from acp import RequestError
from fake_anthropic import FakeAnthropic, Reply, Text

pytestmark = pytest.mark.anyio

INVALID_PARAMS = -32602


def final_update(client: RecordingClient, sid: str, call_id: str) -> ToolCallProgress:
    return client.tool_updates(sid, call_id)[-1]


async def test_additional_directories_are_worked_in_listed_and_checked(world: AcpWorld) -> None:
    lib = world.root / "shared-lib"
    (lib / "src").mkdir(parents=True)
    (lib / "src" / "util.py").write_text("def helper():\n    return 1\n")
    script: list[JsonDict] = [
        tool_call("read", "r1", path=str(lib / "src" / "util.py")),
        tool_call("edit", "e1", path=str(lib / "src" / "util.py"), oldText="return 1", newText="return 2"),
        tool_call("write", "w1", path=str(lib / "NOTES.md"), content="notes\n"),
        tool_call("ls", "l1", path=str(lib)),
        tool_call("find", "f1", pattern="*.py", path=str(lib)),
        tool_call("grep", "g1", pattern="return 2", path=str(lib)),
        {"text": "Done in the other folder."},
    ]
    client = RecordingClient()
    check = SchemaCheck()
    async with world.agent(client, script) as conn:
        check.watch(conn)
        with anyio.fail_after(WAIT):
            init = await conn.initialize(protocol_version=1)
            assert init.agent_capabilities is not None
            assert init.agent_capabilities.session_capabilities is not None
            assert init.agent_capabilities.session_capabilities.additional_directories is not None
            for bad in (["relative/dir"], [str(world.root / "missing")]):
                with pytest.raises(RequestError) as caught:
                    await conn.new_session(cwd=str(world.cwd), additional_directories=bad, mcp_servers=[])
                assert caught.value.code == INVALID_PARAMS
            sid = (
                await conn.new_session(cwd=str(world.cwd), additional_directories=[str(lib)], mcp_servers=[])
            ).session_id
        answer = await prompt(conn, sid, "tidy the shared lib")
        assert answer.stop_reason == "end_turn"
        for call_id in ("r1", "e1", "w1", "l1", "f1", "g1"):
            assert final_update(client, sid, call_id).status == "completed", call_id
        assert (lib / "src" / "util.py").read_text() == "def helper():\n    return 2\n"
        assert (lib / "NOTES.md").read_text() == "notes\n"
        assert "util.py" in content_text(final_update(client, sid, "f1"))
        assert "return 2" in content_text(final_update(client, sid, "g1"))

        with anyio.fail_after(WAIT):
            in_cwd = await conn.list_sessions(cwd=str(world.cwd))
            in_lib = await conn.list_sessions(cwd=str(lib))
        for listed in (in_cwd, in_lib):
            (info,) = listed.sessions
            assert info.session_id == sid
            assert info.additional_directories == [str(lib)]
        assert in_lib.sessions[0].cwd == str(lib)
    assert check.problems == []


async def test_the_model_is_told_of_the_additional_directories(world: AcpWorld) -> None:
    lib = world.root / "docs-checkout"
    lib.mkdir()
    (lib / "AGENTS.md").write_text("Docs use British spelling.\n")
    with FakeAnthropic() as fake:
        fake.enqueue(Reply([Text("ok")]))
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "sk-test"}
        provider = ("--provider", "anthropic", "--model", "claude-haiku-4-5")
        async with world.agent(RecordingClient(), provider=provider, env=env) as conn:
            with anyio.fail_after(WAIT):
                sid = (
                    await conn.new_session(
                        cwd=str(world.cwd), additional_directories=[str(lib)], mcp_servers=[]
                    )
                ).session_id
            await prompt(conn, sid, "hello")
        system = " ".join(block["text"] for block in fake.bodies[0]["system"])
    assert (
        f"Additional workspace directories (part of this task too; use absolute paths there): {lib}" in system
    )
    assert "Docs use British spelling." in system
    assert f"Current working directory: {world.cwd}" in system


async def test_a_session_loaded_elsewhere_is_listed_there_and_replays_its_edits_as_diffs(
    world: AcpWorld,
) -> None:
    (world.cwd / "app.py").write_text("x = 1\n")
    script: list[JsonDict] = [
        tool_call("write", "w1", path="new.txt", content="fresh\n"),
        tool_call("edit", "e1", path="app.py", oldText="x = 1", newText="x = 2"),
        tool_call("edit", "e2", path="app.py", oldText="not there", newText="y"),
        {"text": "Changed."},
    ]
    client = RecordingClient()
    async with world.session(client, script) as (conn, sid):
        await prompt(conn, sid, "change things")
        live = {call: final_update(client, sid, call) for call in ("w1", "e1", "e2")}
    session_file = next((world.home / "sessions").rglob(f"*{sid}.jsonl"))
    stored = session_file.read_bytes()

    moved = world.root / "moved-project"
    moved.mkdir()
    client = RecordingClient()
    check = SchemaCheck()
    async with world.agent(client) as conn:
        check.watch(conn)
        with anyio.fail_after(WAIT):
            await conn.load_session(cwd=str(moved), session_id=sid, mcp_servers=[])
            in_moved = await conn.list_sessions(cwd=str(moved))
            in_first = await conn.list_sessions(cwd=str(world.cwd))
            everywhere = await conn.list_sessions()
        assert [(s.session_id, s.cwd) for s in in_moved.sessions] == [(sid, str(moved))]
        assert [(s.session_id, s.cwd) for s in in_first.sessions] == [(sid, str(world.cwd))]
        assert [(s.session_id, s.cwd) for s in everywhere.sessions] == [(sid, str(moved))]

        replayed = {call: final_update(client, sid, call) for call in ("w1", "e1", "e2")}
        for call in ("w1", "e1"):
            (diff,) = replayed[call].content or []
            assert isinstance(diff, FileEditToolCallContent)
            assert replayed[call].status == live[call].status == "completed"
        write_diff, edit_diff = (replayed[c].content[0] for c in ("w1", "e1"))  # type: ignore[index]
        assert (write_diff.path, write_diff.old_text, write_diff.new_text) == (
            str(moved / "new.txt"),  # a relative path is shown where the session now works
            None,
            "fresh\n",
        )
        assert (edit_diff.path, edit_diff.old_text, edit_diff.new_text) == (
            str(moved / "app.py"),
            "x = 1",
            "x = 2",
        )
        assert replayed["e1"].locations is not None
        assert replayed["e1"].locations[0].line == 1
        # A failed edit is replayed as it ended live: its error, no diff.
        assert replayed["e2"].status == "failed"
        assert content_text(replayed["e2"]) == content_text(live["e2"])
    assert check.problems == []
    # pi's file is as it was: where it was opened is kept beside it.
    assert session_file.read_bytes() == stored
    index = json.loads((world.home / "workspaces.json").read_text())
    assert index[sid]["cwd"] == str(moved)

    # Back home: the record goes, and the moved folder no longer lists it.
    async with world.agent(RecordingClient()) as conn:
        with anyio.fail_after(WAIT):
            await conn.resume_session(cwd=str(world.cwd), session_id=sid, mcp_servers=[])
            assert (await conn.list_sessions(cwd=str(moved))).sessions == []
    assert sid not in json.loads((world.home / "workspaces.json").read_text())
