"""Tool calls streamed as partial JSON: the arguments as they grow, the round trip with results,
and what is kept when the stream is cut inside the arguments."""

from __future__ import annotations

import copy

import pytest

from fake_anthropic import FakeAnthropic, Reply, Text, ToolUse
from providers.anthropic_testlib import JsonDict, blocks, collect, make_request, summary, user
from rpc_agent.providers.anthropic import AnthropicProvider
from rpc_agent.providers.base import AssistantEvent

pytestmark = pytest.mark.anyio


async def test_tool_use_with_json_chunks_gives_a_parsed_tool_call(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    chunks = ['{"pa', 'th": "a.t', 'xt", "lim', 'it": 10}']
    fake.enqueue(
        Reply(
            [Text("Reading."), ToolUse("toolu_01", "read", {"path": "a.txt", "limit": 10}, chunks=chunks)],
            stop_reason="tool_use",
        )
    )
    seen_arguments: list[JsonDict] = []
    events: list[AssistantEvent] = []
    async for event in provider.stream(make_request()):
        events.append(event)
        if event.type == "toolcall_delta":
            seen_arguments.append(copy.deepcopy(blocks(event.partial)[1]["arguments"]))
    assert [summary(e) for e in events if e.contentIndex == 1] == [
        ("toolcall_start", 1, None, None),
        *[("toolcall_delta", 1, chunk, None) for chunk in chunks],
        ("toolcall_end", 1, None, None),
    ]
    assert seen_arguments == [{}, {"path": "a.t"}, {"path": "a.txt"}, {"path": "a.txt", "limit": 10}]
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.toolCall == {
        "type": "toolCall",
        "id": "toolu_01",
        "name": "read",
        "arguments": {"path": "a.txt", "limit": 10},
    }
    assert events[-1].type == "done"
    assert events[-1].reason == "toolUse"
    assert events[-1].partial["stopReason"] == "toolUse"


async def test_tool_round_trip_request_has_merged_results_in_order(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(
        Reply(
            [ToolUse("toolu_a", "read", {"path": "a"}), ToolUse("toolu_b", "read", {"path": "b"})],
            stop_reason="tool_use",
        ),
        Reply([Text("Both read.")]),
    )
    history = [user("read a and b")]
    first = await collect(provider, make_request(history, level="low"))
    assistant = copy.deepcopy(first[-1].partial)
    history += [
        assistant,
        {
            "role": "toolResult",
            "toolCallId": "toolu_b",
            "toolName": "read",
            "content": [{"type": "text", "text": "B"}],
            "isError": False,
            "timestamp": 3,
        },
        {
            "role": "toolResult",
            "toolCallId": "toolu_a",
            "toolName": "read",
            "content": [{"type": "text", "text": "A"}],
            "isError": False,
            "timestamp": 3,
        },
    ]
    second = await collect(provider, make_request(history, level="low"))
    assert second[-1].partial["content"] == [{"type": "text", "text": "Both read."}]

    body = fake.requests[1].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["max_tokens"] == 32_000 + 4096
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a"}},
        {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {"path": "b"}},
    ]
    results = body["messages"][2]["content"]
    assert [(r["type"], r["tool_use_id"], r["content"][0]["text"]) for r in results] == [
        ("tool_result", "toolu_a", "A"),
        ("tool_result", "toolu_b", "B"),
    ]
    # The cache breakpoint sits on the last block of the last user message, and on the
    # previous user message.
    assert results[-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in results[0]
    assert fake.requests[1].headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert all(record.rejected is None for record in fake.requests)


async def test_tool_call_cut_mid_arguments_keeps_best_effort_arguments(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    chunks = ['{"path": "src/', 'main.py", "lim', 'it": 5}']
    # 0 start, 1 ping, 2 block start, 3-4 two chunks, then the drop.
    fake.enqueue(
        Reply([ToolUse("toolu_9", "read", {"path": "src/main.py", "limit": 5}, chunks=chunks)], drop_after=5)
    )
    events = await collect(provider, make_request())
    assert events[-1].type == "error"
    assert events[-1].partial["content"] == [
        {"type": "toolCall", "id": "toolu_9", "name": "read", "arguments": {"path": "src/main.py"}}
    ]
