"""``rpc-agent --acp`` driven by the ACP SDK's client side over real pipes."""

from __future__ import annotations

import subprocess
import sys

import anyio
import pytest
from acp.schema import AvailableCommandsUpdate, SessionConfigOptionSelect
from acp_testlib import (
    WAIT,
    AcpWorld,
    JsonDict,
    RecordingClient,
    cancelled_midway,
    content_text,
    prompt,
    tool_call,
)

from acp import RequestError, text_block
from fake_anthropic import FakeAnthropic, Thinking, ToolUse, tool_round

pytestmark = pytest.mark.anyio


async def test_initialize_advertises_capabilities(world: AcpWorld) -> None:
    client = RecordingClient()
    async with world.agent(client) as conn:
        with anyio.fail_after(WAIT):
            init = await conn.initialize(protocol_version=1)
    caps = init.agent_capabilities
    assert init.protocol_version == 1
    assert caps is not None
    assert caps.load_session
    assert caps.prompt_capabilities is not None
    assert caps.prompt_capabilities.image
    sessions = caps.session_capabilities
    assert sessions is not None
    assert None not in (sessions.list, sessions.fork, sessions.resume, sessions.close)


async def test_prompt_asks_before_bash_and_runs_it_when_allowed(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        tool_call("bash", "call_1", command="echo hi > made.txt"),
        {"text": "Created it."},
        tool_call("bash", "call_2", command="echo again > again.txt"),
        {"text": "Again."},
    ]
    client = RecordingClient(answers=["allow_always"])
    async with world.session(client, script) as (conn, sid):
        answer = await prompt(conn, sid, "make a file")
        assert answer.stop_reason == "end_turn"
        assert (world.cwd / "made.txt").read_text() == "hi\n"
        assert [call.tool_call_id for _, call in client.permission_requests] == ["call_1"]
        (start,) = client.tool_calls(sid)
        assert (start.tool_call_id, start.kind, start.status) == ("call_1", "execute", "pending")
        statuses = [u.status for u in client.tool_updates(sid, "call_1")]
        assert (statuses[0], statuses[-1]) == ("in_progress", "completed")
        assert client.agent_text(sid) == "Created it."

        # "Always allow" holds for bash in this session: no second question.
        with anyio.fail_after(WAIT):
            answer = await conn.prompt(session_id=sid, prompt=[text_block("once more")])
        assert answer.stop_reason == "end_turn"
        assert (world.cwd / "again.txt").read_text() == "again\n"
        assert len(client.permission_requests) == 1
        assert client.tool_updates(sid, "call_2")[-1].status == "completed"
        await client.wait_for(lambda: any(isinstance(u, AvailableCommandsUpdate) for u in client.of(sid)))
        commands = next(u for u in client.of(sid) if isinstance(u, AvailableCommandsUpdate))
        assert {c.name for c in commands.available_commands} == {
            "tree",
            "compact",
            "fork",
            "rewind",
            "changes",
            "name",
            "label",
            "mcp",
            "mcp-restart",
        }


async def test_rejected_permission_goes_back_to_the_model_as_a_tool_error(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        tool_call("write", "w1", path="nope.txt", content="x"),
        {"text": "Understood, I left it alone."},
    ]
    client = RecordingClient(answers=["reject_once"])
    async with world.session(client, script) as (conn, sid):
        answer = await prompt(conn, sid, "write a file")
        assert answer.stop_reason == "end_turn"
        assert not (world.cwd / "nope.txt").exists()
        assert len(client.permission_requests) == 1
        (start,) = client.tool_calls(sid)
        assert start.kind == "edit"
        final = client.tool_updates(sid, "w1")[-1]
        assert final.status == "failed"
        assert "rejected" in content_text(final)
        assert client.agent_text(sid) == "Understood, I left it alone."


async def test_cancel_stops_a_slow_reply(world: AcpWorld) -> None:
    slow = " ".join(f"word{i}" for i in range(200))
    client = RecordingClient()
    async with world.session(client, [{"text": slow, "delayMs": 50}]) as (conn, sid):
        stop_reasons = await cancelled_midway(conn, client, sid, lambda: conn.cancel(session_id=sid))
        assert stop_reasons == ["cancelled"]
        assert client.agent_text(sid) != slow

        # The session is usable afterwards (the script is used up: the faux provider echoes).
        with anyio.fail_after(WAIT):
            answer = await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
        assert answer.stop_reason == "end_turn"
        assert client.agent_text(sid).endswith("Echo: still there?")


async def test_fork_then_load_in_a_fresh_process_replays_the_history(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        {"thinking": "Let me look.", "toolCalls": [{"name": "ls", "arguments": {}, "id": "ls_1"}]},
        {"text": "Listed the folder."},
    ]
    client = RecordingClient()
    async with world.session(client, script) as (conn, sid):
        await prompt(conn, sid, "what is here?")
        with anyio.fail_after(WAIT):
            fork = await conn.fork_session(session_id=sid, cwd=str(world.cwd))
            assert fork.session_id != sid
            answer = await conn.prompt(session_id=fork.session_id, prompt=[text_block("and in the fork?")])
        assert answer.stop_reason == "end_turn"
        assert client.agent_text(fork.session_id).endswith("Echo: and in the fork?")
        assert client.permission_requests == []  # ls needs no permission

    fresh = RecordingClient()
    async with world.agent(fresh) as conn:
        with anyio.fail_after(WAIT):
            listed = await conn.list_sessions(cwd=str(world.cwd))
            assert {sid, fork.session_id} <= {info.session_id for info in listed.sessions}
            await conn.load_session(cwd=str(world.cwd), session_id=sid)
        # Everything was replayed before the answer.
        assert fresh.user_text(sid) == "what is here?"
        assert fresh.thought_text(sid) == "Let me look."
        (call,) = fresh.tool_calls(sid)
        assert (call.tool_call_id, call.kind) == ("ls_1", "search")
        assert fresh.tool_updates(sid, "ls_1")[-1].status == "completed"
        assert fresh.agent_text(sid) == "Listed the folder."

        with anyio.fail_after(WAIT):
            await conn.load_session(cwd=str(world.cwd), session_id=fork.session_id)
        assert fresh.user_text(fork.session_id) == "what is here?and in the fork?"
        assert fresh.agent_text(fork.session_id) == "Listed the folder.Echo: and in the fork?"

        with anyio.fail_after(WAIT), pytest.raises(RequestError):
            await conn.load_session(cwd=str(world.cwd), session_id="no-such-session")

        # A loaded session goes on where it stopped.
        with anyio.fail_after(WAIT):
            answer = await conn.prompt(session_id=sid, prompt=[text_block("go on")])
        assert answer.stop_reason == "end_turn"
        assert fresh.agent_text(sid).endswith("Echo: go on")
        with anyio.fail_after(WAIT):
            await conn.close_session(session_id=sid)


async def test_config_options_slash_commands_and_extension_methods(world: AcpWorld) -> None:
    client = RecordingClient()
    async with world.agent(client) as conn:
        with anyio.fail_after(WAIT):
            session = await conn.new_session(cwd=str(world.cwd))
        sid = session.session_id
        options = {o.id: o for o in session.config_options or [] if isinstance(o, SessionConfigOptionSelect)}
        assert options["model"].current_value == "faux-1"
        assert options["thinking_level"].current_value == "off"

        with anyio.fail_after(WAIT):
            changed = await conn.set_config_option(config_id="model", session_id=sid, value="faux-mini")
            assert changed is not None
            current = {o.id: o.current_value for o in changed.config_options}
            assert current["model"] == "faux-mini"
            changed = await conn.set_config_option(config_id="thinking_level", session_id=sid, value="high")
            assert changed is not None
            assert {o.id: o.current_value for o in changed.config_options}["thinking_level"] == "high"

            await conn.prompt(session_id=sid, prompt=[text_block("hello")])
            tree = await conn.ext_method("rpc_agent/get_tree", {"sessionId": sid})
        messages = [n for n in tree["nodes"] if n["type"] == "message"]
        assert [n["role"] for n in messages] == ["user", "assistant"]
        user_id, before_user = messages[0]["id"], messages[0]["parentId"]

        with anyio.fail_after(WAIT):
            await conn.ext_method(
                "rpc_agent/set_label", {"sessionId": sid, "entryId": user_id, "label": "start"}
            )
            answer = await conn.prompt(session_id=sid, prompt=[text_block("/tree")])
        assert answer.stop_reason == "end_turn"
        assert "[start]" in client.agent_text(sid)

        with anyio.fail_after(WAIT):
            await conn.prompt(session_id=sid, prompt=[text_block("/name My session")])
            moved = await conn.ext_method("rpc_agent/navigate_tree", {"sessionId": sid, "targetId": user_id})
        assert moved["editorText"] == "hello"
        assert moved.get("leafId") == before_user
        with anyio.fail_after(WAIT):
            listed = await conn.list_sessions(cwd=str(world.cwd))
        assert [info.title for info in listed.sessions if info.session_id == sid] == ["My session"]


async def test_anthropic_provider_against_the_fake_messages_api(world: AcpWorld) -> None:
    with FakeAnthropic() as fake:
        fake.enqueue(
            *tool_round(
                Thinking("I should list first."),
                ToolUse("toolu_1", "bash", {"command": "echo hi > x.txt"}),
                answer="All done, the file is there.",
            )
        )
        client = RecordingClient()
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "sk-test-acp"}
        provider = ("--provider", "anthropic", "--model", "claude-haiku-4-5")
        async with world.session(client, provider=provider, env=env) as (conn, sid):
            answer = await prompt(conn, sid, "make x.txt")
        assert answer.stop_reason == "end_turn"
        assert client.thought_text(sid) == "I should list first."
        assert [call.tool_call_id for _, call in client.permission_requests] == ["toolu_1"]
        assert client.tool_updates(sid, "toolu_1")[-1].status == "completed"
        assert (world.cwd / "x.txt").read_text() == "hi\n"
        assert client.agent_text(sid) == "All done, the file is there."
        assert len(fake.requests) == 2


def test_the_json_rpc_server_does_not_import_the_acp_sdk() -> None:
    # A fresh interpreter: what one process imports is the point.
    code = "import sys, rpc_agent.cli, rpc_agent.server.app; print('acp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_acp_front_does_not_import_the_json_rpc_server() -> None:
    # The fronts are independent: ACP serves the method table from rpc_agent.methods, below both.
    code = (
        "import sys, rpc_agent.acp.agent, rpc_agent.acp.extensions; "
        "print(sorted(m for m in sys.modules if m.startswith('rpc_agent.server')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_resume_in_a_fresh_process_continues_without_replay(world: AcpWorld) -> None:
    client = RecordingClient()
    async with world.session(client) as (conn, sid):
        await prompt(conn, sid, "remember me")

    fresh = RecordingClient()
    async with world.agent(fresh) as conn:
        with anyio.fail_after(WAIT):
            resumed = await conn.resume_session(session_id=sid, cwd=str(world.cwd))
            assert resumed.config_options
            answer = await conn.prompt(session_id=sid, prompt=[text_block("still here")])
        assert answer.stop_reason == "end_turn"
        assert fresh.user_text(sid) == ""  # resume does not replay
        assert fresh.agent_text(sid) == "Echo: still here"
        with anyio.fail_after(WAIT):
            tree = await conn.ext_method("rpc_agent/get_tree", {"sessionId": sid})
        roles = [n["role"] for n in tree["nodes"] if n["type"] == "message"]
        assert roles == ["user", "assistant", "user", "assistant"]
