"""Compaction over the wire (issue 5): manual, on the threshold, on overflow, and aborted.

Each conversation is three prompts of one 45,000-character word (about 11,250 estimated tokens
each, one streamed delta): with the default keepRecentTokens of 20,000 the cut lands on the
second user message, so the first turn is summarized.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from e2e.conftest import (
    E2E,
    JsonDict,
    context_of,
    expect_error,
    header_and_entries,
    long_text,
    start,
    text_of,
    wait_event,
)
from rpc_agent.server import errors as codes
from rpc_agent_client import RpcAgentClient, RpcCallError

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


SHORT_REPLIES: list[JsonDict] = [{"text": "ok 1"}, {"text": "ok 2"}, {"text": "ok 3"}]


async def long_conversation(client: RpcAgentClient) -> list[str]:
    """Three long prompts; the entry ids of the user messages."""
    user_ids = []
    for turn in range(1, 4):
        mark = len(client.events_seen)
        result = await client.call("prompt", {"message": long_text(f"p{turn}", 45_000)})
        assert result["stopReason"] == "stop"
        user_ids.append(
            next(
                e["entryId"]
                for e in client.events_seen[mark:]
                if e["type"] == "message_end" and e["message"]["role"] == "user"
            )
        )
    return user_ids


async def entries_of(client: RpcAgentClient) -> list[JsonDict]:
    return list((await client.call("get_entries"))["entries"])


def compaction_events(events: list[JsonDict]) -> list[JsonDict]:
    return [e for e in events if e["type"] in ("compaction_start", "compaction_end")]


async def test_manual_compact(e2e: E2E) -> None:
    async with e2e.server(script=SHORT_REPLIES) as client:
        users = await long_conversation(client)
        tokens_seen = (await client.call("get_messages"))["messages"]
        assert len(tokens_seen) == 6
        mark = len(client.events_seen)
        result = await client.call("compact", {"customInstructions": "keep the p-numbers"})
        assert result["firstKeptEntryId"] == users[1]
        assert result["tokensBefore"] > 20_000
        assert result["details"] == {"readFiles": [], "modifiedFiles": []}
        assert result["summary"].startswith("## Goal")
        start_event, end_event = compaction_events(client.events_seen[mark:])
        assert start_event == {"type": "compaction_start", "reason": "manual"}
        assert end_event["reason"] == "manual"
        assert end_event["aborted"] is False
        assert end_event["willRetry"] is False
        assert end_event["result"] == result
        assert "errorMessage" not in end_event

        state = await client.get_state()
        assert state.isCompacting is False
        assert state.sessionFile is not None
        _, entries = header_and_entries(Path(state.sessionFile))
        compaction = entries[-1]
        assert compaction["type"] == "compaction"
        assert compaction["firstKeptEntryId"] == users[1]
        assert compaction["summary"] == result["summary"]
        assert compaction["id"] == state.leafId
        messages = await context_of(client, "compactionSummary", "user", "assistant", "user", "assistant")
        assert messages[0]["summary"] == result["summary"]

        # Everything left fits in the kept part: a clear error, nothing appended.
        before = await entries_of(client)
        mark = len(client.events_seen)
        error = await expect_error(client.call("compact"), codes.NOTHING_TO_COMPACT)
        assert "nothing to compact" in error.message
        assert await entries_of(client) == before
        end_event = compaction_events(client.events_seen[mark:])[-1]
        assert end_event["result"] is None
        assert "nothing to compact" in end_event["errorMessage"]

        # The conversation goes on from the summary.
        after = await client.call("prompt", {"message": "and now?"})
        assert text_of(after["messages"][-1]) == "Echo: and now?"


async def test_threshold_compaction_after_a_run_and_turning_it_off(e2e: E2E) -> None:
    big_usage = {"input": 190_000, "output": 10}
    script = [*SHORT_REPLIES[:2], {"text": "ok 3", "usage": big_usage}, {"text": "ok 4", "usage": big_usage}]
    async with e2e.server(script=script) as client:
        mark = len(client.events_seen)
        users = await long_conversation(client)
        events = client.events_seen[mark:]
        start_event, end_event = compaction_events(events)
        assert start_event["reason"] == "threshold"
        assert end_event["reason"] == "threshold"
        assert end_event["aborted"] is False
        assert end_event["willRetry"] is False
        assert end_event["result"]["firstKeptEntryId"] == users[1]
        assert end_event["result"]["tokensBefore"] >= 190_000
        # The compaction belongs to the third run: before its agent_end.
        types = [e["type"] for e in events]
        assert types.index("compaction_end") < len(types) - 1 - types[::-1].index("agent_end")
        entries = await entries_of(client)
        assert [e["type"] for e in entries].count("compaction") == 1
        assert entries[-1]["type"] == "compaction"

        await client.call("set_auto_compaction", {"enabled": False})
        assert (await client.get_state()).autoCompaction is False
        mark = len(client.events_seen)
        await client.call("prompt", {"message": "big again"})
        assert compaction_events(client.events_seen[mark:]) == []
        assert [e["type"] for e in await entries_of(client)].count("compaction") == 1


async def test_overflow_is_compacted_and_retried(e2e: E2E) -> None:
    script = [
        *SHORT_REPLIES,
        {"error": "prompt is too long: 250000 tokens > 200000 maximum", "status": 400, "overflow": True},
        {"text": "## Goal\nA scripted summary of p1"},
        {"text": "answer after compaction"},
    ]
    async with e2e.server(script=script) as client:
        users = await long_conversation(client)
        mark = len(client.events_seen)
        result = await client.call("prompt", {"message": "one more"})
        assert result["stopReason"] == "stop"
        assert result["errorMessage"] is None
        assert text_of(result["messages"][-1]) == "answer after compaction"
        failed = [m for m in result["messages"] if m["role"] == "assistant" and m["stopReason"] == "error"]
        assert len(failed) == 1
        assert "too long" in failed[0]["errorMessage"]
        start_event, end_event = compaction_events(client.events_seen[mark:])
        assert start_event["reason"] == "overflow"
        assert end_event["reason"] == "overflow"
        assert end_event["willRetry"] is True
        assert end_event["result"]["firstKeptEntryId"] == users[1]
        assert end_event["result"]["summary"].startswith("## Goal\nA scripted summary of p1")
        messages = (await client.call("get_messages"))["messages"]
        assert messages[0]["role"] == "compactionSummary"
        assert text_of(messages[-1]) == "answer after compaction"
        assert [e["type"] for e in client.events_seen[mark:]].count("agent_end") == 1


async def test_abort_during_compaction_appends_nothing(e2e: E2E) -> None:
    slow_summary = {"text": " ".join(["summary"] * 50), "delayMs": 500}
    async with e2e.server(script=[*SHORT_REPLIES, slow_summary]) as client:
        await long_conversation(client)
        before = await entries_of(client)
        mark = len(client.events_seen)
        async with anyio.create_task_group() as group:
            compact = start(group, lambda: client.call("compact"))
            await wait_event(client, "compaction_start", after=mark)
            assert (await client.get_state()).isCompacting is True
            await expect_error(client.call("prompt", {"message": "not now"}), codes.AGENT_BUSY)
            assert (await client.abort()).aborted is True
            with pytest.raises(RpcCallError) as caught:
                await compact.result()
        assert caught.value.code == codes.CANCELLED
        end_event = compaction_events(client.events_seen[mark:])[-1]
        assert end_event["type"] == "compaction_end"
        assert end_event["aborted"] is True
        assert end_event["result"] is None
        assert await entries_of(client) == before
        state = await client.get_state()
        assert state.isCompacting is False
        assert state.sessionFile is not None
        _, entries = header_and_entries(Path(state.sessionFile))
        assert entries == before
