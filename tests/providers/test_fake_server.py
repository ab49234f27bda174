"""The fake server itself: its validator must reject what the real API rejects, and the real SDK
must read its answers, streamed or not."""

from __future__ import annotations

from typing import Any

import pytest

from fake_anthropic import FakeAnthropic, Reply, Text, Thinking, ToolUse, sse_events, validate_request
from providers.anthropic_testlib import MODEL, collect, make_request
from rpc_agent.providers.anthropic import AnthropicProvider

JsonDict = dict[str, Any]

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1"}
TEXT = {"type": "text", "text": "hi"}


def body(*messages: JsonDict, **extra: Any) -> JsonDict:
    return {"model": "m", "max_tokens": 2000, "messages": list(messages), **extra}


def msg(role: str, *blocks: JsonDict) -> JsonDict:
    return {"role": role, "content": list(blocks)}


def test_a_good_body_passes() -> None:
    good = body(
        msg("user", TEXT),
        msg("assistant", {"type": "thinking", "thinking": "t", "signature": "s"}, TOOL_USE),
        msg("user", RESULT, TEXT),
        system=[{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
        thinking={"type": "enabled", "budget_tokens": 1024},
        tools=[{"name": "bash", "input_schema": {"type": "object"}}],
    )
    assert validate_request(good) is None


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        (body(), "at least one message"),
        (body(msg("assistant", TEXT)), "first message"),
        (body(msg("user", TEXT), msg("user", TEXT)), "consecutive"),
        (body(msg("user", {"type": "text", "text": "  "})), "non-whitespace"),
        (body(msg("user", RESULT)), "unexpected `tool_use_id`"),
        (body(msg("user", TEXT), msg("assistant", TOOL_USE), msg("user", TEXT)), "without `tool_result`"),
        (body(msg("user", TEXT), msg("assistant", TOOL_USE), msg("user", TEXT, RESULT)), "must come before"),
        (body(msg("user", TEXT), msg("assistant", TOOL_USE)), "without a following"),
        (body(msg("user", TEXT), msg("assistant", TOOL_USE, TOOL_USE), msg("user", RESULT)), "unique"),
        (body(msg("user", TEXT), msg("assistant", {"type": "thinking", "thinking": "t"})), "signature"),
        (body(msg("user", TEXT), thinking={"type": "enabled", "budget_tokens": 512}), "1024"),
        (body(msg("user", TEXT), thinking={"type": "enabled", "budget_tokens": 4000}), "max_tokens"),
        (body(msg("user", *[{**TEXT, "cache_control": {"type": "ephemeral"}}] * 5)), "maximum of 4"),
        (body(msg("user", TEXT), tools=[{"name": "a b", "input_schema": {"type": "object"}}]), "tool name"),
    ],
)
def test_invalid_bodies_are_rejected(bad: JsonDict, fragment: str) -> None:
    problem = validate_request(bad)
    assert problem is not None
    assert fragment in problem


def test_sse_event_sequence() -> None:
    reply = Reply(
        [
            Thinking("ab", signature="S"),
            Text("hello", chunks=["he", "llo"]),
            ToolUse("toolu_1", "x", {"a": 1}),
        ]
    )
    names = [name for name, _ in sse_events(reply, "m")]
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


@pytest.mark.anyio
async def test_fake_server_non_streaming_mode(fake: FakeAnthropic) -> None:
    import anthropic

    fake.enqueue(
        Reply(
            [Thinking("t", signature="s"), Text("plain"), ToolUse("toolu_1", "read", {"path": "p"})],
            stop_reason="tool_use",
        )
    )
    client = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url, max_retries=0)
    try:
        message = await client.messages.create(
            model=MODEL, max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        )
    finally:
        await client.close()
    assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
    assert message.stop_reason == "tool_use"


@pytest.mark.anyio
async def test_fake_server_rejects_invalid_requests(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    bad = make_request(
        [{"role": "toolResult", "toolCallId": "x", "toolName": "t", "content": [], "timestamp": 1}]
    )
    # Our conversion repairs this (the orphan becomes text), so send a raw invalid body instead.
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url, max_retries=0)
    try:
        with pytest.raises(anthropic.BadRequestError, match="fake_anthropic"):
            await client.messages.create(
                model=MODEL,
                max_tokens=100,
                messages=[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]}],
            )
    finally:
        await client.close()
    assert fake.requests[-1].rejected is not None
    fake.enqueue(Reply([Text("fine")]))
    events = await collect(provider, bad)
    assert events[-1].type == "done"
    assert fake.requests[-1].rejected is None
