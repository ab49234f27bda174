"""However a run stops, every ``*_start`` it emitted gets its ``*_end`` and ``agent_end`` comes
last (checked in process with the faux provider and an in-memory session)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.pairing import EventPairing
from rpc_agent.protocol import builders as build
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.entries import UserMessage
from rpc_agent.protocol.payload import event_payload
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.providers.base import AssistantEvent, ProviderRequest
from rpc_agent.providers.faux import FauxProvider, FauxReply
from rpc_agent.store import SessionManager
from rpc_agent.tools.bash import BashTool

JsonDict = dict[str, Any]

PAIRS = {
    "agent_start": "agent_end",
    "turn_start": "turn_end",
    "message_start": "message_end",
    "tool_execution_start": "tool_execution_end",
    "auto_retry_start": "auto_retry_end",
}


class BreaksMidStream(FauxProvider):
    """The faux provider, except that the call number ``fail_on`` raises after a few deltas
    with an exception no provider code classifies (as a bug or an SDK surprise would)."""

    def __init__(self, script: list[FauxReply], fail_on: int) -> None:
        super().__init__(script)
        self.fail_on = fail_on
        self.calls = 0

    async def stream(self, request: ProviderRequest) -> AsyncIterator[AssistantEvent]:
        self.calls += 1
        sent = 0
        async for event in super().stream(request):
            if self.calls == self.fail_on and sent == 3:
                raise RuntimeError("the stream fell over")
            sent += 1
            yield event


def run_events(events: list[BaseModel]) -> list[JsonDict]:
    return [event_payload(e) for e in events]


def assert_paired(events: list[JsonDict]) -> None:
    stack: list[JsonDict] = []
    ends = {end: start for start, end in PAIRS.items()}
    for event in events:
        kind = event["type"]
        if kind in PAIRS:
            stack.append(event)
        elif kind in ends:
            assert stack, f"{kind} without a start"
            start = stack.pop()
            assert start["type"] == ends[kind], (start["type"], kind)
            if kind == "tool_execution_end":
                assert event["toolCallId"] == start["toolCallId"]
    assert stack == [], [e["type"] for e in stack]
    assert [e["type"] for e in events[-2:]] == ["agent_end", "agent_settled"]


@pytest.mark.anyio
@pytest.mark.parametrize("fail_on", [1, 2])
async def test_an_unexpected_exception_still_closes_every_event(fail_on: int) -> None:
    script: list[FauxReply] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
        {"text": "the answer is long enough to stream in several deltas"},
    ]
    seen: list[BaseModel] = []
    agent = AgentSession(
        manager=SessionManager.in_memory(),
        provider=BreaksMidStream(script, fail_on),
        emit=seen.append,
        tools=[BashTool()],
    )
    with pytest.raises(RuntimeError, match="fell over"):
        await agent.prompt("go")
    events = run_events(seen)
    assert_paired(events)
    ended = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert ended[-1]["message"]["stopReason"] == "error"
    assert "entryId" not in ended[-1] or ended[-1]["entryId"] is None
    assert not agent.is_streaming
    # The session is usable afterwards.
    result = await agent.prompt("again")
    assert result.stopReason == "stop"


def test_close_all_ends_what_is_open_from_the_message_it_began_with() -> None:
    """A stored message (a dict, as events carry it) ends marked with why the run stopped, the
    started one left as it was; a turn ends with the last assistant message it saw; a message
    given as a model is held as the store would hold it, so it ends with its content."""
    emitted: list[BaseModel] = []
    errors: list[str] = []

    def error_message(reason: str) -> MessageDict:
        errors.append(reason)
        return {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": reason}

    pairing = EventPairing(emitted.append, error_message)
    answer: MessageDict = {"role": "assistant", "content": [{"type": "text", "text": "par"}], "timestamp": 1}
    pairing(ev.TurnStartEvent())
    pairing(build.message_start(answer))
    pairing(ev.MessageStartEvent(message=UserMessage(content="a model, not a stored dict", timestamp=2)))
    assert pairing.open_count == 3
    pairing.close_all("the disk is full")
    assert pairing.open_count == 0
    ends = run_events(emitted[3:])
    assert [e["type"] for e in ends] == ["message_end", "message_end", "turn_end"]
    assert ends[0]["message"] == {"role": "user", "content": "a model, not a stored dict", "timestamp": 2}
    assert ends[1]["message"] == {**answer, "stopReason": "error", "errorMessage": "the disk is full"}
    assert ends[2]["message"] == answer  # the turn's answer as it was seen, not the marked copy
    assert "stopReason" not in answer
    assert errors == []  # an answer was seen: none is made up
