"""The editor's view: its buffers (``fs``), its terminal, diffs and locations, slash commands,
and the approval policy, through the SDK's client side with the capabilities on and off."""

from __future__ import annotations

import json

import anyio
import pytest
from acp.schema import (
    FileEditToolCallContent,
    SessionConfigOptionSelect,
    TerminalToolCallContent,
)
from acp_editor import EDITOR, EditorClient
from acp_testlib import (
    WAIT,
    AcpWorld,
    JsonDict,
    RecordingClient,
    content_text,
    prompt,
    tool_call,
)

from acp import RequestError, resource_link_block, text_block

pytestmark = pytest.mark.anyio


def _tool_results(world: AcpWorld) -> dict[str, str]:
    """Tool call id -> the text the model got back, from the session files on disk."""
    results: dict[str, str] = {}
    for path in world.home.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            message = entry.get("message") or {}
            if message.get("role") == "toolResult":
                results[message["toolCallId"]] = "".join(
                    block.get("text", "") for block in message.get("content", [])
                )
    return results


async def test_read_and_edit_go_through_the_editors_buffers(world: AcpWorld) -> None:
    notes = world.cwd / "notes.txt"
    notes.write_text("saved version\nline two\n")
    script: list[JsonDict] = [
        tool_call("read", "r1", path="notes.txt"),
        {
            "toolCalls": [
                {
                    "name": "edit",
                    "arguments": {"path": "notes.txt", "oldText": "line two", "newText": "line 2"},
                    "id": "e1",
                }
            ]
        },
        {"text": "Done."},
    ]
    client = EditorClient()
    client.buffers[str(notes)] = "unsaved version\nline two\n"
    async with world.session(client, script, capabilities=EDITOR) as (conn, sid):
        answer = await prompt(conn, sid, "fix the notes")
    assert answer.stop_reason == "end_turn"
    assert "unsaved version" in _tool_results(world)["r1"]
    assert client.buffers[str(notes)] == "unsaved version\nline 2\n"
    assert notes.read_text() == "saved version\nline two\n"  # the editor saves, not the agent
    assert f"write {notes}" in client.calls

    # The question about the edit shows the change, and so does the finished tool call.
    ((_, asked),) = client.permission_requests
    (diff,) = asked.content or []
    assert isinstance(diff, FileEditToolCallContent)
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(notes),
        "unsaved version\nline two\n",
        "unsaved version\nline 2\n",
    )
    assert [(loc.path, loc.line) for loc in asked.locations or []] == [(str(notes), 2)]
    final = client.tool_updates(sid, "e1")[-1]
    assert final.status == "completed"
    assert final.content == [diff]


async def test_without_fs_the_tools_use_the_disk_and_still_report_diffs(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        tool_call("write", "w1", path="new.txt", content="a\nb\n"),
        {
            "toolCalls": [
                {"name": "edit", "arguments": {"path": "new.txt", "oldText": "b", "newText": "c"}, "id": "e1"}
            ]
        },
        {"text": "Written."},
    ]
    client = RecordingClient()  # no fs capability: its fs methods would fail
    async with world.session(client, script) as (conn, sid):
        answer = await prompt(conn, sid, "write it")
    assert answer.stop_reason == "end_turn"
    target = world.cwd / "new.txt"
    assert target.read_text() == "a\nc\n"
    (_, write_asked), (_, edit_asked) = client.permission_requests
    assert write_asked.content == [
        FileEditToolCallContent(type="diff", path=str(target), old_text=None, new_text="a\nb\n")
    ]
    assert edit_asked.content == [
        FileEditToolCallContent(type="diff", path=str(target), old_text="a\nb\n", new_text="a\nc\n")
    ]
    assert [(loc.path, loc.line) for loc in edit_asked.locations or []] == [(str(target), 2)]
    assert client.tool_updates(sid, "e1")[-1].content == edit_asked.content


async def test_a_read_reports_where_it_reads(world: AcpWorld) -> None:
    (world.cwd / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 30)))
    script: list[JsonDict] = [
        tool_call("read", "r1", path="long.txt", offset=12),
        {"text": "Read."},
    ]
    client = RecordingClient()
    async with world.session(client, script) as (conn, sid):
        await prompt(conn, sid, "read")
    (start,) = client.tool_calls(sid)
    assert [(loc.path, loc.line) for loc in start.locations or []] == [(str(world.cwd / "long.txt"), 12)]


async def test_bash_runs_in_the_editors_terminal(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        {
            "toolCalls": [
                {"name": "bash", "arguments": {"command": "echo from-terminal; pwd; exit 3"}, "id": "b1"}
            ]
        },
        {"text": "Ran."},
    ]
    client = EditorClient()
    async with world.session(client, script, capabilities=EDITOR) as (conn, sid):
        answer = await prompt(conn, sid, "run it")
    assert answer.stop_reason == "end_turn"
    assert [call.split()[0] for call in client.calls] == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    result = _tool_results(world)["b1"]
    assert f"from-terminal\n{world.cwd}" in result
    assert "exited with code 3" in result
    final = client.tool_updates(sid, "b1")[-1]
    assert final.status == "failed"
    assert final.content is not None
    assert TerminalToolCallContent(type="terminal", terminal_id="term-1") in final.content


async def test_a_terminal_command_times_out_like_local_bash(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        {
            "toolCalls": [
                {"name": "bash", "arguments": {"command": "echo started; sleep 30", "timeout": 1}, "id": "b1"}
            ]
        },
        {"text": "Too slow."},
    ]
    client = EditorClient()
    async with world.session(client, script, capabilities=EDITOR) as (conn, sid):
        await prompt(conn, sid, "run it")
    result = _tool_results(world)["b1"]
    assert "started" in result
    assert "timed out after 1 seconds" in result
    assert "terminal/kill term-1" in client.calls
    assert client.calls[-1] == "terminal/release term-1"
    assert client.terminals["term-1"].process.returncode is not None


async def test_cancel_kills_and_releases_the_terminal(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        tool_call("bash", "b1", command="sleep 30"),
    ]
    client = EditorClient(answers=["allow_once"])
    async with world.session(client, script, capabilities=EDITOR) as (conn, sid):
        stop: list[str] = []

        async def run_prompt() -> None:
            stop.append((await conn.prompt(session_id=sid, prompt=[text_block("wait")])).stop_reason)

        try:
            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as group:
                    group.start_soon(run_prompt)
                    await client.wait_for(lambda: "terminal/wait_for_exit term-1" in client.calls)
                    await conn.cancel(session_id=sid)
        finally:
            client.close_terminals()
    assert stop == ["cancelled"]
    assert client.calls[-2:] == ["terminal/kill term-1", "terminal/release term-1"]
    assert client.terminals["term-1"].process.returncode is not None


async def test_slash_command_at_the_start_of_any_text_block(world: AcpWorld) -> None:
    client = RecordingClient()
    async with world.session(client) as (conn, sid):
        with anyio.fail_after(WAIT):
            answer = await conn.prompt(
                session_id=sid,
                prompt=[
                    resource_link_block(name="main.py", uri=f"file://{world.cwd}/main.py"),
                    text_block("/name Refactor"),
                ],
            )
    assert answer.stop_reason == "end_turn"
    assert "Session named 'Refactor'" in client.agent_text(sid)
    assert "Echo" not in client.agent_text(sid)


async def test_approval_policy_is_a_session_config_option(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        tool_call("write", "w1", path="a.txt", content="x"),
        {"text": "Wrote."},
        tool_call("ls", "l1"),
        {"text": "Listed."},
    ]
    client = RecordingClient(answers=["allow_once"])
    async with world.agent(client, script) as conn:
        with anyio.fail_after(WAIT):
            session = await conn.new_session(cwd=str(world.cwd))
            sid = session.session_id
            options = {
                o.id: o for o in session.config_options or [] if isinstance(o, SessionConfigOptionSelect)
            }
            policy = options["approval_policy"]
            assert policy.current_value == "writes"
            assert {o.value for o in policy.options} == {"never", "writes", "all"}

            with pytest.raises(RequestError):
                await conn.set_config_option(config_id="approval_policy", session_id=sid, value="sometimes")

            await conn.set_config_option(config_id="approval_policy", session_id=sid, value="never")
            await conn.prompt(session_id=sid, prompt=[text_block("write")])
            assert (world.cwd / "a.txt").read_text() == "x"
            assert client.permission_requests == []

            changed = await conn.set_config_option(config_id="approval_policy", session_id=sid, value="all")
            assert changed is not None
            assert {o.id: o.current_value for o in changed.config_options}["approval_policy"] == "all"
            await conn.prompt(session_id=sid, prompt=[text_block("list")])
    assert [call.tool_call_id for _, call in client.permission_requests] == ["l1"]
    assert client.tool_updates(sid, "l1")[-1].status == "completed"
    assert "a.txt" in content_text(client.tool_updates(sid, "l1")[-1])
