"""MCP servers through the ACP front: the editor's ``mcpServers`` of ``session/new`` run as real
servers (``tests/mcp_servers/mcp_server.py``), their tools ask permission unless read-only."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest
from acp.schema import AcpMcpServer, EnvVariable, HttpMcpServer, McpServerStdio, SseMcpServer
from acp_testlib import WAIT, AcpWorld, JsonDict, RecordingClient, content_text

from acp import text_block
from mcp_servers.processes import SERVER, http_server, wait_gone
from proc_table import pid_alive

pytestmark = pytest.mark.anyio

# The agent runs in the test's event loop (conftest.py); the MCP servers it starts are
# processes, and its closing them is what the tests check.


def stdio(name: str = "srv", *extra: str) -> McpServerStdio:
    return McpServerStdio(
        name=name, command=sys.executable, args=[str(SERVER), *extra], env=[EnvVariable(name="X", value="1")]
    )


async def test_initialize_advertises_http_mcp_servers(world: AcpWorld) -> None:
    client = RecordingClient()
    async with world.agent(client) as conn:
        init = await conn.initialize(protocol_version=1)
        assert init.agent_capabilities is not None
        mcp = init.agent_capabilities.mcp_capabilities
        assert mcp is not None
        assert mcp.http is True
        assert not mcp.sse


async def test_stdio_server_tools_ask_permission_unless_read_only(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "mcp__srv__pid", "arguments": {}, "id": "p1"}]},
        {"toolCalls": [{"name": "mcp__srv__echo", "arguments": {"text": "hey"}, "id": "e1"}]},
        {"toolCalls": [{"name": "mcp__srv__crash", "arguments": {}, "id": "c1"}]},
        {"text": "still here"},
        {"toolCalls": [{"name": "mcp__srv__pid", "arguments": {}, "id": "p2"}]},
        {"text": "pid again"},
    ]
    client = RecordingClient(answers=["allow_once", "allow_once"])
    async with world.agent(client, script) as conn:
        with anyio.fail_after(WAIT):
            sid = (await conn.new_session(cwd=str(world.cwd), mcp_servers=[stdio()])).session_id
            answer = await conn.prompt(session_id=sid, prompt=[text_block("use the server")])
        assert answer.stop_reason == "end_turn"
        pid = int(content_text(client.tool_updates(sid, "p1")[-1]))
        assert client.tool_updates(sid, "e1")[-1].status == "completed"
        assert "echo: hey" in content_text(client.tool_updates(sid, "e1")[-1])
        # pid is read-only (readOnlyHint): only echo and crash were asked about
        asked = [call.tool_call_id for _sid, call in client.permission_requests]
        assert asked == ["e1", "c1"]
        assert client.tool_updates(sid, "c1")[-1].status == "failed"
        assert client.agent_text(sid) == "still here"
        assert not pid_alive(pid) or await wait_gone(pid)

        with anyio.fail_after(WAIT):
            await conn.prompt(session_id=sid, prompt=[text_block("/mcp-restart srv")])
        assert "srv (stdio): ready, 6 tools" in client.agent_text(sid)
        with anyio.fail_after(WAIT):
            await conn.prompt(session_id=sid, prompt=[text_block("and now?")])
        restarted_pid = int(content_text(client.tool_updates(sid, "p2")[-1]))
        assert restarted_pid != pid
        assert pid_alive(restarted_pid)
    # the agent exited (stdin closed): the server it ran is gone too
    assert await wait_gone(restarted_pid), "the MCP server outlived rpc-agent --acp"


async def test_http_server_and_close_stops_stdio_server(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "mcp__web__picture", "arguments": {}, "id": "w1"}]},
        {"toolCalls": [{"name": "mcp__local__pid", "arguments": {}, "id": "p1"}]},
        {"text": "done"},
    ]
    client = RecordingClient(answers=["allow_once"])
    async with http_server() as url, world.agent(client, script) as conn:
        servers: list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio] = [
            HttpMcpServer(type="http", name="web", url=url, headers=[]),
            stdio("local"),
        ]
        with anyio.fail_after(WAIT):
            sid = (await conn.new_session(cwd=str(world.cwd), mcp_servers=servers)).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("draw")])
        picture = client.tool_updates(sid, "w1")[-1]
        assert picture.status == "completed"
        kinds = [c.content.type for c in picture.content or [] if c.type == "content"]
        assert kinds == ["text", "image"]
        pid = int(content_text(client.tool_updates(sid, "p1")[-1]))
        assert pid_alive(pid)
        with anyio.fail_after(WAIT):
            await conn.close_session(session_id=sid)
        assert await wait_gone(pid), "the MCP server outlived its session"


async def test_slow_server_fails_its_start_and_the_session_still_answers(world: AcpWorld) -> None:
    settings = world.cwd / ".rpc-agent" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"mcpStartupTimeoutMs": 500}))
    client = RecordingClient()
    async with world.agent(client, [{"text": "answered anyway"}]) as conn:
        with anyio.fail_after(WAIT):
            sid = (
                await conn.new_session(cwd=str(world.cwd), mcp_servers=[stdio("slow", "--sleep", "30")])
            ).session_id
            answer = await conn.prompt(session_id=sid, prompt=[text_block("hello")])
            assert answer.stop_reason == "end_turn"
            assert client.agent_text(sid) == "answered anyway"
            await conn.prompt(session_id=sid, prompt=[text_block("/mcp")])
        assert "slow (stdio): failed, 0 tools (did not start within 0.5 s)" in client.agent_text(sid)


def test_no_mcp_sdk_import_without_servers() -> None:
    # A fresh interpreter: what one process imports is the point.
    code = "import sys, rpc_agent.cli, rpc_agent.server.app, rpc_agent.methods.handlers; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_fork_command_keeps_the_editors_servers(world: AcpWorld) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "mcp__srv__pid", "arguments": {}, "id": "p1"}]},
        {"text": "ok"},
    ]
    client = RecordingClient()
    async with world.agent(client, script) as conn:
        with anyio.fail_after(WAIT):
            sid = (await conn.new_session(cwd=str(world.cwd), mcp_servers=[stdio()])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("/fork")])
            fork_id = client.agent_text(sid).split("session ")[1].split(";")[0]
            await conn.prompt(session_id=fork_id, prompt=[text_block("pid?")])
        assert client.tool_updates(fork_id, "p1")[-1].status == "completed"
        assert int(content_text(client.tool_updates(fork_id, "p1")[-1])) > 0
