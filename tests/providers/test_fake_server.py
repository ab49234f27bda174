"""The fake server's request validator: it must reject what the real API rejects."""

from __future__ import annotations

from typing import Any

import pytest

from fake_anthropic import Reply, Text, Thinking, ToolUse, sse_events, validate_request

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
