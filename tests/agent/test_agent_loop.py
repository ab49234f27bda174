"""The agent loop in-process: AgentSession on the faux provider, an in-memory store and the real
tools in a scratch folder. What needs no process boundary is checked here, fast; tests/e2e keeps
what only a real server process can show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_testlib import Recorder

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.providers.faux import FauxProvider, FauxReply
from rpc_agent.store import SessionManager
from rpc_agent.tools import default_tools

pytestmark = pytest.mark.anyio

JsonDict = dict[str, Any]


class ClosingFaux(FauxProvider):
    """The faux provider, remembering whether the session closed it."""

    closed = False

    async def aclose(self) -> None:
        self.closed = True


def make_agent(tmp_path: Path, script: list[FauxReply]) -> tuple[AgentSession, Recorder, ClosingFaux]:
    provider = ClosingFaux(script)
    recorder = Recorder()
    agent = AgentSession(
        manager=SessionManager.in_memory(str(tmp_path)),
        provider=provider,
        emit=recorder,
        tools=default_tools,
    )
    return agent, recorder, provider


def text_of(message: MessageDict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block["type"] == "text")


async def test_a_text_reply_emits_the_events_in_order(tmp_path: Path) -> None:
    agent, recorder, _ = make_agent(tmp_path, [{"text": "Hello there."}])
    result = await agent.prompt("hi")
    assert result.stopReason == "stop"
    assert [m["role"] for m in agent.messages()] == ["user", "assistant"]
    assert text_of(agent.messages()[-1]) == "Hello there."
    types = recorder.types()
    assert types[0] == "agent_start"
    assert types[-2:] == ["agent_end", "agent_settled"]
    starts = [e["message"]["role"] for e in recorder.events if e["type"] == "message_start"]
    assert starts == ["user", "assistant"]
    assert types.index("turn_start") < types.index("message_update") < types.index("turn_end")
    recorder.assert_balanced()


async def test_a_tool_call_runs_in_the_cwd_and_its_result_goes_back(tmp_path: Path) -> None:
    agent, recorder, _ = make_agent(
        tmp_path,
        [
            {
                "toolCalls": [
                    {"name": "bash", "arguments": {"command": "echo made > made.txt && cat made.txt"}}
                ]
            },
            {"text": "done"},
        ],
    )
    result = await agent.prompt("make a file")
    assert result.stopReason == "stop"
    assert (tmp_path / "made.txt").read_text() == "made\n"
    roles = [m["role"] for m in agent.messages()]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    tool_result = agent.messages()[2]
    assert tool_result["isError"] is False
    assert "made" in text_of(tool_result)
    ends = [e for e in recorder.events if e["type"] == "tool_execution_end"]
    assert [e["isError"] for e in ends] == [False]
    recorder.assert_balanced()


async def test_an_unknown_tool_is_an_error_result_and_the_run_goes_on(tmp_path: Path) -> None:
    agent, recorder, _ = make_agent(
        tmp_path, [{"toolCalls": [{"name": "teleport", "arguments": {}}]}, {"text": "ok, no teleport"}]
    )
    result = await agent.prompt("go")
    assert result.stopReason == "stop"
    tool_result = agent.messages()[2]
    assert tool_result["role"] == "toolResult"
    assert tool_result["isError"] is True
    assert "teleport" in text_of(tool_result)
    recorder.assert_balanced()


async def test_abort_mid_stream_keeps_the_partial_answer(tmp_path: Path) -> None:
    words = " ".join(f"word{i}" for i in range(200))
    agent, recorder, _ = make_agent(tmp_path, [{"text": words, "delayMs": 5}])
    outcome: dict[str, Any] = {}

    async def run() -> None:
        outcome["result"] = await agent.prompt("talk")

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await recorder.until(
            lambda e: e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
        )
        assert agent.abort() is True

    assert outcome["result"].stopReason == "aborted"
    partial = agent.messages()[-1]
    assert partial["role"] == "assistant"
    assert partial["stopReason"] == "aborted"
    assert 0 < len(text_of(partial)) < len(words)
    assert not agent.is_streaming
    recorder.assert_balanced()


async def test_a_steering_message_reaches_the_next_model_call(tmp_path: Path) -> None:
    agent, recorder, _ = make_agent(
        tmp_path,
        [
            {"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 0.3; echo slept"}}]},
            {"text": "steered"},
        ],
    )
    outcome: dict[str, Any] = {}

    async def run() -> None:
        outcome["result"] = await agent.prompt("start")

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await recorder.until(lambda e: e["type"] == "tool_execution_start")
        queued = await agent.prompt("also this", streaming_behavior="steer")
        assert queued.queued is True

    users = [text_of(m) for m in agent.messages() if m["role"] == "user"]
    assert users == ["start", "also this"]
    assert outcome["result"].stopReason == "stop"
    recorder.assert_balanced()


async def test_shutdown_closes_the_provider(tmp_path: Path) -> None:
    agent, _, provider = make_agent(tmp_path, [{"text": "hi"}])
    await agent.prompt("hello")
    assert provider.closed is False
    await agent.shutdown()
    assert provider.closed is True
