"""An abort at any moment of a prompt's start leaves the prompt and an aborted answer.

Between a prompt's request and its model call there are waits (MCP servers starting, the
prompt's line going to the disk) where the run had no cancel scope yet, or where a cancel left
the file ending with the user's message. Each moment is hit here deterministically, in-process,
on a real session file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_testlib import Recorder
from pydantic import BaseModel

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.protocol.state_shapes import McpServerStateDict
from rpc_agent.providers.faux import FauxProvider, FauxReply
from rpc_agent.store import SessionManager
from rpc_agent.tools.base import Tool

pytestmark = pytest.mark.anyio

JsonDict = dict[str, Any]

SLOW: FauxReply = {"text": "one two three four", "delayMs": 20}


def stored(folder: Path) -> list[tuple[str, str | None]]:
    (path,) = folder.glob("*.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [(e["message"]["role"], e["message"].get("stopReason")) for e in lines if e["type"] == "message"]


def make_agent(tmp_path: Path, emit: Any) -> AgentSession:
    manager = SessionManager.create(str(tmp_path), session_dir=tmp_path / "sessions")
    return AgentSession(manager=manager, provider=FauxProvider([SLOW]), emit=emit)


async def test_an_abort_at_agent_start_stores_the_prompt_and_an_aborted_answer(tmp_path: Path) -> None:
    recorder = Recorder()
    answers: list[bool] = []

    def emit(event: BaseModel) -> None:
        recorder(event)
        if getattr(event, "type", None) == "agent_start":
            answers.append(agent.abort())

    agent = make_agent(tmp_path, emit)
    result = await agent.prompt("hi")
    await agent.shutdown()
    assert answers == [True]
    assert result.stopReason == "aborted"
    assert stored(tmp_path / "sessions") == [("user", None), ("assistant", "aborted")]
    recorder.assert_balanced()
    assert recorder.types()[-2:] == ["agent_end", "agent_settled"]
    assert recorder.of("agent_settled")[0]["aborted"] is True


class SlowServers:
    """MCP servers still starting: ``ready`` waits until the test lets it go."""

    def __init__(self) -> None:
        self.waiting = anyio.Event()
        self.release = anyio.Event()

    async def ready(self) -> None:
        self.waiting.set()
        await self.release.wait()

    def tools(self) -> list[Tool]:
        return []

    def state_json(self) -> list[McpServerStateDict]:
        return []

    async def aclose(self) -> None:
        pass


async def test_an_abort_while_the_prompt_waits_for_its_servers_reaches_it(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, Recorder())
    servers = SlowServers()
    agent.mcp = servers
    results: list[Any] = []

    async def run() -> None:
        results.append(await agent.prompt("hi"))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(10):
            await servers.waiting.wait()
        assert agent.abort() is True
        servers.release.set()
    await agent.shutdown()
    assert results[0].stopReason == "aborted"
    assert stored(tmp_path / "sessions") == [("user", None), ("assistant", "aborted")]


async def test_a_prompt_that_starts_after_the_server_began_stopping_is_aborted(tmp_path: Path) -> None:
    # SIGTERM, EOF or shutdown came while the prompt's request was read but not yet started.
    agent = make_agent(tmp_path, Recorder())
    ticket = agent.prompt_ticket()
    assert agent.abort(stopping=True) is True
    result = await agent.prompt("hi", ticket=ticket)
    later = await agent.prompt("and this", ticket=agent.prompt_ticket())
    await agent.shutdown()
    assert (result.stopReason, later.stopReason) == ("aborted", "aborted")
    assert stored(tmp_path / "sessions") == [("user", None), ("assistant", "aborted")] * 2


async def test_an_abort_before_a_prompt_was_asked_for_does_not_touch_it(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, Recorder())
    assert agent.abort() is False
    result = await agent.prompt("hi")
    await agent.shutdown()
    assert result.stopReason == "stop"
    assert stored(tmp_path / "sessions") == [("user", None), ("assistant", "stop")]
