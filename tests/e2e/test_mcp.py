"""MCP servers through the JSON-RPC front: real servers (``tests/mcp_servers/mcp_server.py``: the
SDK's FastMCP over stdio and HTTP, hand-written ones, quick to start, in the other tests) as
processes, their tools called by the scripted model.

The rpc-agent server runs in the test's event loop (``in_process``) but where its stderr is the
point (a crashing MCP server's output goes to rpc-agent's log)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from e2e.conftest import E2E, WAIT, JsonDict, expect_error, text_of
from mcp_servers.processes import http_server, stdio_server, wait_gone
from proc_table import pid_alive
from rpc_agent.server import errors as codes

pytestmark = pytest.mark.anyio


def call(name: str, **arguments: Any) -> JsonDict:
    return {"toolCalls": [{"name": name, "arguments": arguments}]}


def tool_results(result: JsonDict) -> list[JsonDict]:
    return [m for m in result["messages"] if m["role"] == "toolResult"]


def statuses(events: list[JsonDict], name: str) -> list[str]:
    return [e["status"] for e in events if e["type"] == "mcp_server_status" and e["name"] == name]


@pytest.mark.in_process
@pytest.mark.parametrize("mode", ["stdio", "sdk-stdio"])
async def test_stdio_server_tools_are_offered_and_called(e2e: E2E, mode: str) -> None:
    """Against our quick hand-written server and against one the MCP SDK itself writes."""
    script = [
        call("mcp__srv__echo", text="hi"),
        call("mcp__srv__picture"),
        call("mcp__srv__pid"),
        {"text": "done"},
    ]
    async with e2e.server(script=script) as client:
        init = await client.call("initialize", {"mcpServers": [stdio_server("srv", mode)]})
        assert "mcp_servers" in init["methods"]
        assert "mcp_restart" in init["methods"]
        result = await client.call("prompt", {"message": "use the server"})
        assert result["stopReason"] == "stop"
        echo, picture, pid = tool_results(result)
        assert echo["toolName"] == "mcp__srv__echo"
        assert echo["isError"] is False
        assert text_of(echo) == "echo: hi"
        assert [b["type"] for b in picture["content"]] == ["text", "image"]
        assert picture["content"][1]["mimeType"] == "image/png"
        assert text_of(result["messages"][-1]) == "done"

        state = await client.call("get_state")
        assert state["mcpServers"] == [
            {"name": "srv", "transport": "stdio", "status": "ready", "toolCount": 6}
        ]
        assert (await client.call("mcp_servers"))["servers"] == state["mcpServers"]
        assert statuses(client.events_seen, "srv") == ["starting", "ready"]
        server_pid = int(text_of(pid))
        assert pid_alive(server_pid)

        await client.call("shutdown")
    assert await wait_gone(server_pid), "the MCP server outlived rpc-agent"


async def test_server_crashing_mid_call_is_a_tool_error_and_the_run_goes_on(e2e: E2E) -> None:
    script = [call("mcp__srv__crash"), call("mcp__srv__echo", text="again"), {"text": "carried on"}]
    async with e2e.server(script=script) as client:
        await client.call("initialize", {"mcpServers": [stdio_server()]})
        result = await client.call("prompt", {"message": "crash it"})
        assert result["stopReason"] == "stop"
        crash, again = tool_results(result)
        assert crash["isError"] is True
        assert "srv" in text_of(crash)
        assert again["isError"] is True
        assert "not running" in text_of(again)
        assert text_of(result["messages"][-1]) == "carried on"
        assert statuses(client.events_seen, "srv")[-1] == "failed"
        (server,) = (await client.call("mcp_servers"))["servers"]
        assert server["status"] == "failed"
        assert "crash" in server["error"]

        restarted = await client.mcp_restart("srv")
        assert [(s.name, s.status, s.toolCount) for s in restarted.servers] == [("srv", "ready", 6)]
        error = await expect_error(client.call("mcp_restart", {"name": "nope"}), codes.INVALID_PARAMS)
        assert "nope" in error.message
    # The server's stderr went to rpc-agent's log, not to its stdout (the protocol).
    assert "test server: crashing on purpose" in e2e.logs[-1].read_text()


@pytest.mark.in_process
async def test_server_exiting_while_idle_is_reported_at_once(e2e: E2E) -> None:
    script = [call("mcp__srv__exit_soon"), {"text": "it said bye"}]
    async with e2e.server(script=script) as client:
        await client.call("initialize", {"mcpServers": [stdio_server()]})
        result = await client.call("prompt", {"message": "exit"})
        assert text_of(tool_results(result)[0]) == "bye"
        with anyio.fail_after(WAIT):
            event = await client.wait_for_event("mcp_server_status", lambda e: e["status"] == "failed")
        assert event["error"] == "the server exited"
        assert (await client.call("mcp_servers"))["servers"][0]["status"] == "failed"


@pytest.mark.in_process
async def test_slow_server_times_out_and_the_session_still_works(e2e: E2E) -> None:
    settings = e2e.cwd / ".rpc-agent" / "settings.json"
    settings.parent.mkdir()
    slow = stdio_server("slow", "--sleep", "30")
    pid_file = e2e.root / "slow.pid"
    entry = {"command": slow["command"], "args": slow["args"], "env": {"MCP_TEST_PID_FILE": str(pid_file)}}
    settings.write_text(json.dumps({"mcpStartupTimeoutMs": 1000, "mcpServers": {"slow": entry}}))
    async with e2e.server(script=[{"text": "fine without it"}]) as client:
        result = await client.call("prompt", {"message": "hello"})
        assert text_of(result["messages"][-1]) == "fine without it"
        (server,) = (await client.call("get_state"))["mcpServers"]
        assert server["status"] == "failed"
        assert "did not start within 1 s" in server["error"]
        # A server that never answered is killed, not left sleeping.
        assert await wait_gone(int(pid_file.read_text()))


@pytest.mark.in_process
async def test_project_mcp_json_and_switching_sessions_restarts_servers(e2e: E2E) -> None:
    project = stdio_server()
    (e2e.cwd / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"proj": {"command": project["command"], "args": project["args"], "env": {}}}}
        )
    )
    script = [call("mcp__proj__pid"), {"text": "first"}, call("mcp__proj__pid"), {"text": "second"}]
    async with e2e.server(script=script) as client:
        first = tool_results(await client.call("prompt", {"message": "pid?"}))[0]
        old_pid = int(text_of(first))
        old_file = (await client.call("get_state"))["sessionFile"]
        await client.call("new_session", {"mcpServers": [stdio_server("extra")]})
        assert await wait_gone(old_pid), "the old session's server is still running"
        second = tool_results(await client.call("prompt", {"message": "pid?"}))[0]
        new_pid = int(text_of(second))
        assert new_pid != old_pid
        await client.call("switch_session", {"sessionPath": old_file})
        assert await wait_gone(new_pid)
        # switch_session without mcpServers keeps the client's list of new_session; a prompt
        # waits until the servers are up
        await client.call("prompt", {"message": "ready?"})
        servers = (await client.call("mcp_servers"))["servers"]
        assert [(s["name"], s["status"]) for s in servers] == [("proj", "ready"), ("extra", "ready")]


@pytest.mark.in_process
async def test_http_server(e2e: E2E) -> None:
    async with http_server(sdk=True) as url:
        script = [call("mcp__web__echo", text="over http"), call("mcp__web__resources"), {"text": "ok"}]
        async with e2e.server(script=script) as client:
            await client.call(
                "initialize", {"mcpServers": [{"type": "http", "name": "web", "url": url, "headers": []}]}
            )
            result = await client.call("prompt", {"message": "http"})
            echo, resources = tool_results(result)
            assert text_of(echo) == "echo: over http"
            assert "remember the milk" in text_of(resources)
            assert "https://example.com/spec" in text_of(resources)
            (server,) = (await client.call("mcp_servers"))["servers"]
            assert server["transport"] == "http"
            assert server["status"] == "ready"


@pytest.mark.in_process
async def test_http_server_dying_mid_call_is_a_tool_error(e2e: E2E) -> None:
    async with http_server() as url:
        script = [call("mcp__web__crash"), {"text": "noted"}]
        async with e2e.server(script=script) as client:
            await client.call("initialize", {"mcpServers": [{"type": "http", "name": "web", "url": url}]})
            result = await client.call("prompt", {"message": "crash over http"})
            (crash,) = tool_results(result)
            assert crash["isError"] is True
            assert "web" in text_of(crash)
            assert text_of(result["messages"][-1]) == "noted"
            assert statuses(client.events_seen, "web")[-1] == "failed"


@pytest.mark.in_process
async def test_bad_mcp_servers_param_is_invalid_params(e2e: E2E) -> None:
    async with e2e.server() as client:
        await expect_error(client.call("initialize", {"mcpServers": [{"name": "x"}]}), codes.INVALID_PARAMS)
        assert (await client.call("mcp_servers"))["servers"] == []
