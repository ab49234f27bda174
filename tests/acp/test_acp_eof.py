"""The editor going away (its end of stdin closed) stops the work of ``rpc-agent --acp``: the run
is aborted and stored as such, tool processes are killed, the lock is released and the process
exits, also while a permission request is still waiting for an answer."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.client.connection import ClientSideConnection
from acp.schema import ClientCapabilities, PermissionOption, RequestPermissionResponse, ToolCallUpdate
from acp.stdio import spawn_agent_process
from acp_testlib import WAIT, AcpWorld, JsonDict, RecordingClient

from acp import PROTOCOL_VERSION, text_block
from proc_table import processes_running

pytestmark = pytest.mark.anyio

EXIT_BOUND = 2.0
"""Seconds the agent may take to exit once the editor is gone (a stated requirement)."""


@pytest.fixture
def world(tmp_path: Path) -> AcpWorld:
    """Real processes: what is tested is the process ending (its exit code, within
    ``EXIT_BOUND``) and the tool processes and locks it leaves behind once it is gone."""
    return AcpWorld(tmp_path)


@dataclass
class NeverAnswers(RecordingClient):
    """Records permission requests and leaves them unanswered (a user who walked away)."""

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((session_id, tool_call))
        self._note_change()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


@asynccontextmanager
async def acp_agent(
    world: AcpWorld, client: RecordingClient, script: list[JsonDict]
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    log = world.root / f"agent-{len(world.logs)}.stderr"
    world.logs.append(log)
    args = ["-m", "rpc_agent", "--acp", "--provider", "faux", "--faux-script", str(world.script(script))]
    with log.open("wb") as stderr:
        async with spawn_agent_process(
            client,
            sys.executable,
            *args,
            env={"RPC_AGENT_HOME": str(world.home)},
            cwd=world.cwd,
            transport_kwargs={"stderr": stderr.fileno()},
            use_unstable_protocol=True,
        ) as (conn, process):
            with anyio.fail_after(WAIT):
                await conn.initialize(
                    protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
                )
            yield conn, process
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text


async def close_stdin_and_wait(process: asyncio.subprocess.Process) -> int:
    assert process.stdin is not None
    process.stdin.close()
    with anyio.fail_after(EXIT_BOUND):
        return await process.wait()


def stored_messages(world: AcpWorld) -> list[JsonDict]:
    (session_file,) = sorted((world.home / "sessions").rglob("*.jsonl"))
    assert not session_file.with_name(session_file.name + ".lock").exists()
    lines = [json.loads(line) for line in session_file.read_text().splitlines()]
    return [line["message"] for line in lines[1:] if line.get("type") == "message"]


async def prompt_in_background(group: anyio.abc.TaskGroup, conn: ClientSideConnection, sid: str) -> None:
    async def run() -> None:
        # The connection goes away under the call: its outcome is not what is tested here.
        try:
            await conn.prompt(session_id=sid, prompt=[text_block("go")])
        except Exception:
            return

    group.start_soon(run)


async def test_eof_during_a_slow_reply_aborts_and_exits(world: AcpWorld) -> None:
    slow = " ".join(f"word{i}" for i in range(200))
    client = RecordingClient()
    async with acp_agent(world, client, [{"text": slow, "delayMs": 200}]) as (conn, process):
        sid = (await conn.new_session(cwd=str(world.cwd))).session_id
        async with anyio.create_task_group() as group:
            await prompt_in_background(group, conn, sid)
            await client.wait_for(lambda: bool(client.agent_text(sid)))
            assert await close_stdin_and_wait(process) == 0
            group.cancel_scope.cancel()
    stored = stored_messages(world)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[1]["stopReason"] == "aborted"


async def test_eof_while_a_permission_request_waits_exits_and_kills_nothing_left(world: AcpWorld) -> None:
    marker = f"sleep 33.{os.getpid()}"
    client = NeverAnswers()
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": {"command": marker}}]}]
    async with acp_agent(world, client, script) as (conn, process):
        sid = (await conn.new_session(cwd=str(world.cwd))).session_id
        async with anyio.create_task_group() as group:
            await prompt_in_background(group, conn, sid)
            await client.wait_for(lambda: bool(client.permission_requests))
            assert await close_stdin_and_wait(process) == 0
            group.cancel_scope.cancel()
    assert processes_running(marker) == []
    stored = stored_messages(world)
    assert [m["role"] for m in stored] == ["user", "assistant", "toolResult"]
    assert stored[-1]["isError"] is True


async def test_eof_during_an_allowed_command_kills_it_and_exits(world: AcpWorld) -> None:
    marker = f"34.{os.getpid()}"
    client = RecordingClient()
    command = f"trap '' TERM; sleep {marker} & sleep {marker}"
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}]
    async with acp_agent(world, client, script) as (conn, process):
        sid = (await conn.new_session(cwd=str(world.cwd))).session_id
        async with anyio.create_task_group() as group:
            await prompt_in_background(group, conn, sid)
            with anyio.fail_after(WAIT):
                while len(processes_running(f"sleep {marker}")) < 2:  # noqa: ASYNC110 (other processes)
                    await anyio.sleep(0.02)
            assert await close_stdin_and_wait(process) == 0
            group.cancel_scope.cancel()
    assert processes_running(f"sleep {marker}") == []
    stored = stored_messages(world)
    assert [m["role"] for m in stored] == ["user", "assistant", "toolResult"]
    assert "aborted" in json.dumps(stored[-1]["content"])
