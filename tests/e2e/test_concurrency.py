"""A long prompt never blocks the rest: state, tree, abort, steer and queued prompts meanwhile."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from e2e.conftest import (
    E2E,
    JsonDict,
    event_types,
    expect_error,
    header_and_entries,
    messages_of,
    start,
    text_of,
    wait_event,
)
from rpc_agent.server import errors as codes

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


SLOW_WORDS = " ".join(f"w{i}" for i in range(60))
"""60 deltas: with a pause before each, a reply that cannot finish before the test is done with it."""


def is_text_delta(event: dict[str, object]) -> bool:
    delta = event.get("assistantMessageEvent")
    return isinstance(delta, dict) and delta.get("type") == "text_delta"


async def test_state_and_tree_answer_while_a_prompt_streams_and_abort_keeps_the_partial(e2e: E2E) -> None:
    script: list[JsonDict] = [{"text": "first answer"}, {"text": SLOW_WORDS, "delayMs": 400}]
    async with e2e.server(script=script) as client:
        await client.prompt("warm up")
        before = await client.get_tree()
        mark = len(client.events_seen)
        async with anyio.create_task_group() as group:
            prompt = start(group, lambda: client.call("prompt", {"message": "talk slowly"}))
            await wait_event(client, "message_update", is_text_delta, after=mark)
            state = await client.get_state()
            assert state.isStreaming is True
            tree = await client.get_tree()
            # The user message of the running prompt is already a node; the answer is not yet.
            assert len(tree.nodes) == len(before.nodes) + 1
            assert tree.nodes[-1].role == "user"
            assert (await client.get_messages()).messages[-1].role == "user"
            assert (await client.steer("never delivered")).pendingMessageCount == 1
            aborted = await client.abort()
            assert aborted.aborted is True
            result = await prompt.result()
        # The run is over: what was still queued is dropped, and the client is told.
        assert (await client.get_state()).pendingMessageCount == 0
        updates = [e for e in client.events_seen[mark:] if e["type"] == "queue_update"]
        assert updates[-1] == {"type": "queue_update", "steering": [], "followUp": []}
        assert result["stopReason"] == "aborted"
        partial = result["messages"][-1]
        assert partial["role"] == "assistant"
        assert partial["stopReason"] == "aborted"
        assert text_of(partial).startswith("w0 ")
        assert text_of(partial) != SLOW_WORDS
        state = await client.get_state()
        assert state.isStreaming is False
        assert state.sessionFile is not None
        _, entries = header_and_entries(Path(state.sessionFile))
        last = messages_of(entries)[-1]
        assert last["message"] == partial
        assert last["id"] == state.leafId
        assert event_types(client.events_seen)[-2:] == ["agent_end", "agent_settled"]
        # Nothing to abort any more; the next prompt runs normally from the aborted answer.
        assert (await client.abort()).aborted is False
        again = await client.call("prompt", {"message": "again"})
        assert again["stopReason"] == "stop"
        assert text_of(again["messages"][-1]) == "Echo: again"


async def test_abort_during_a_long_bash_tool_call(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]},
        {"text": "never"},
    ]
    async with e2e.server(script=script) as client:
        async with anyio.create_task_group() as group:
            prompt = start(group, lambda: client.call("prompt", {"message": "sleep"}))
            await wait_event(client, "tool_execution_start")
            assert (await client.abort()).aborted is True
            with anyio.fail_after(15):  # far less than the 30 s sleep: the command was killed
                result = await prompt.result()
        assert result["stopReason"] == "aborted"
        roles = [m["role"] for m in result["messages"]]
        assert roles == ["user", "assistant", "toolResult"]
        tool_result = result["messages"][-1]
        assert tool_result["isError"] is True
        assert "aborted" in text_of(tool_result)
        end = await wait_event(client, "tool_execution_end")
        assert end["isError"] is True
        state = await client.get_state()
        assert state.sessionFile is not None
        _, entries = header_and_entries(Path(state.sessionFile))
        assert messages_of(entries)[-1]["message"] == tool_result
        # The script's next reply is still there: the model was not called again.
        follow = await client.call("prompt", {"message": "next"})
        assert text_of(follow["messages"][-1]) == "never"


async def test_steer_during_a_tool_call_reaches_the_next_model_call(e2e: E2E) -> None:
    gate = e2e.root / "go"
    command = f"while [ ! -e {gate} ]; do sleep 0.02; done; echo released"
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}]
    async with e2e.server(script=script) as client:
        async with anyio.create_task_group() as group:
            prompt = start(group, lambda: client.call("prompt", {"message": "start work"}))
            await wait_event(client, "tool_execution_start")
            queued = await client.steer("change of plan")
            assert queued.pendingMessageCount == 1
            update = await wait_event(client, "queue_update", lambda e: e["steering"] == ["change of plan"])
            assert update["followUp"] == []
            assert (await client.get_state()).pendingMessageCount == 1
            gate.touch()
            result = await prompt.result()
        assert result["stopReason"] == "stop"
        roles = [(m["role"], text_of(m)) for m in result["messages"]]
        assert roles[0] == ("user", "start work")
        assert roles[1][0] == "assistant"
        assert roles[2][0] == "toolResult"
        assert "released" in roles[2][1]
        assert roles[3] == ("user", "change of plan")
        # The model answered after seeing the steering message (the faux echo proves it).
        assert roles[4] == ("assistant", "Echo: change of plan")
        messages = (await client.call("get_messages"))["messages"]
        users = [text_of(m) for m in messages if m["role"] == "user"]
        assert users == ["start work", "change of plan"]
        assert (await client.get_state()).pendingMessageCount == 0


async def test_busy_prompt_is_refused_and_follow_up_is_queued_and_run_after(e2e: E2E) -> None:
    gate = e2e.root / "go"
    command = f"while [ ! -e {gate} ]; do sleep 0.02; done"
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
        {"text": "tool done"},
    ]
    async with e2e.server(script=script) as client:
        async with anyio.create_task_group() as group:
            prompt = start(group, lambda: client.call("prompt", {"message": "first"}))
            await wait_event(client, "tool_execution_start")
            busy = await expect_error(client.call("prompt", {"message": "too soon"}), codes.AGENT_BUSY)
            assert "streamingBehavior" in busy.message
            # Other idle-only methods are refused the same way, nothing else changes.
            await expect_error(client.call("compact"), codes.AGENT_BUSY)
            await expect_error(client.call("new_session"), codes.AGENT_BUSY)
            queued = await client.prompt("and then this", streaming_behavior="followUp")
            assert queued.queued is True
            assert queued.stopReason is None
            assert queued.messages == []
            await wait_event(client, "queue_update", lambda e: e["followUp"] == ["and then this"])
            gate.touch()
            result = await prompt.result()
        texts = [(m["role"], text_of(m)) for m in result["messages"]]
        assert [t for t in texts if t[0] == "user"] == [("user", "first"), ("user", "and then this")]
        assert texts[-3:] == [
            ("assistant", "tool done"),
            ("user", "and then this"),
            ("assistant", "Echo: and then this"),
        ]
        assert result["stopReason"] == "stop"
        messages = (await client.call("get_messages"))["messages"]
        assert [text_of(m) for m in messages if m["role"] == "user"] == ["first", "and then this"]
        # "too soon" never reached the session.
        assert all(text_of(m) != "too soon" for m in messages)
