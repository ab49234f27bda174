"""Text and thinking through the real anthropic SDK and AnthropicProvider, against the local fake.

The event sequence, the final message (usage, cost, stop reason) and what a thinking block sends
back on the next turn."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fake_anthropic import FakeAnthropic, RedactedThinking, Reply, Text, Thinking, ToolUse
from providers.anthropic_testlib import MODEL, READ_TOOL, collect, make_request, summary, user
from rpc_agent.providers.anthropic import AnthropicProvider

pytestmark = pytest.mark.anyio


async def test_streamed_text_event_sequence_and_final_message(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(
        Reply(
            [Text("Hello, world!", chunks=["Hel", "lo, ", "world!"])],
            usage={"input_tokens": 12, "output_tokens": 4},
        )
    )
    events = await collect(provider, make_request())
    assert [summary(e) for e in events] == [
        ("start", None, None, None),
        ("text_start", 0, None, None),
        ("text_delta", 0, "Hel", None),
        ("text_delta", 0, "lo, ", None),
        ("text_delta", 0, "world!", None),
        ("text_end", 0, None, "Hello, world!"),
        ("done", None, None, None),
    ]
    assert events[-1].reason == "stop"
    assert all(event.partial is events[0].partial for event in events)
    final = events[-1].partial
    assert final["role"] == "assistant"
    assert final["content"] == [{"type": "text", "text": "Hello, world!"}]
    assert final["api"] == "anthropic-messages"
    assert final["provider"] == "anthropic"
    assert final["model"] == MODEL
    assert final["stopReason"] == "stop"
    assert isinstance(final["timestamp"], int)
    assert final["timestamp"] > 1_600_000_000_000
    assert "errorMessage" not in final

    [record] = fake.requests
    assert record.path == "/v1/messages"
    assert record.headers["authorization"] == "Bearer sk-ant-test-key"
    assert "anthropic-version" in record.headers
    assert record.headers.get("x-stainless-retry-count") == "0"
    assert record.body["stream"] is True
    assert record.body["model"] == MODEL
    assert record.body["max_tokens"] == 32_000
    assert "thinking" not in record.body
    assert record.body["system"] == [
        {"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}
    ]
    assert record.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
    ]
    assert record.body["tools"] == [
        {"name": "read", "description": "Read a file", "input_schema": READ_TOOL.parameters}
    ]


async def test_usage_and_cost_on_the_final_message(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(
        Reply(
            [Text("ok")],
            usage={
                "input_tokens": 1_000,
                "output_tokens": 500,
                "cache_read_input_tokens": 20_000,
                "cache_creation_input_tokens": 3_000,
            },
        )
    )
    events = await collect(provider, make_request())
    usage = events[-1].partial["usage"]
    assert {k: usage[k] for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")} == {
        "input": 1_000,
        "output": 500,
        "cacheRead": 20_000,
        "cacheWrite": 3_000,
        "totalTokens": 24_500,
    }
    # claude-haiku-4-5: $1 in, $5 out, $0.10 cache read, $1.25 cache write per million.
    cost = usage["cost"]
    assert cost["input"] == pytest.approx(0.001)
    assert cost["output"] == pytest.approx(0.0025)
    assert cost["cacheRead"] == pytest.approx(0.002)
    assert cost["cacheWrite"] == pytest.approx(0.00375)
    assert cost["total"] == pytest.approx(0.00925)


async def test_thinking_signature_is_stored_and_sent_back_verbatim(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    signature = "EqQBCkgIARABGAIiQL+signature/with+base64=="
    fake.enqueue(
        Reply(
            [
                Thinking(
                    "Let me think about it.", signature=signature, chunks=["Let me ", "think about it."]
                ),
                Text("42"),
            ]
        ),
        Reply([Text("Sure.")]),
    )
    events = await collect(provider, make_request(level="medium"))
    assert [summary(e) for e in events[:5]] == [
        ("start", None, None, None),
        ("thinking_start", 0, None, None),
        ("thinking_delta", 0, "Let me ", None),
        ("thinking_delta", 0, "think about it.", None),
        ("thinking_end", 0, None, "Let me think about it."),
    ]
    final = copy.deepcopy(events[-1].partial)
    assert final["content"][0] == {
        "type": "thinking",
        "thinking": "Let me think about it.",
        "thinkingSignature": signature,
    }
    assert fake.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 10240}

    await collect(provider, make_request([user("q"), final, user("and?")], level="medium"))
    sent = fake.requests[1].body["messages"][1]["content"]
    assert sent == [
        {"type": "thinking", "thinking": "Let me think about it.", "signature": signature},
        {"type": "text", "text": "42"},
    ]


async def test_redacted_thinking_round_trip(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(Reply([RedactedThinking("opaque-encrypted-data"), Text("ok")]), Reply([Text("again")]))
    events = await collect(provider, make_request(level="high"))
    assert [e.type for e in events[:3]] == ["start", "thinking_start", "thinking_end"]
    final = copy.deepcopy(events[-1].partial)
    assert final["content"][0] == {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "thinkingSignature": "opaque-encrypted-data",
        "redacted": True,
    }
    await collect(provider, make_request([user("q"), final, user("more")], level="high"))
    assert fake.requests[1].body["messages"][1]["content"][0] == {
        "type": "redacted_thinking",
        "data": "opaque-encrypted-data",
    }


async def test_adaptive_model_request_fields(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(Reply([Thinking("", signature="sig-omitted"), Text("done")]))
    events = await collect(provider, make_request(level="high", model="claude-opus-4-8"))
    body = fake.requests[0].body
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "high"}
    assert "anthropic-beta" not in fake.requests[0].headers
    # A thinking block with an omitted text still keeps its signature for the next turn.
    assert events[-1].partial["content"][0] == {
        "type": "thinking",
        "thinking": "",
        "thinkingSignature": "sig-omitted",
    }


@pytest.mark.parametrize(
    ("stop_reason", "expected"),
    [("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"), ("tool_use", "toolUse")],
)
async def test_stop_reasons(
    fake: FakeAnthropic, provider: AnthropicProvider, stop_reason: str, expected: str
) -> None:
    content: list[Any] = (
        [ToolUse("toolu_1", "read", {"path": "x"})] if stop_reason == "tool_use" else [Text("x")]
    )
    fake.enqueue(Reply(content, stop_reason=stop_reason))
    events = await collect(provider, make_request())
    assert events[-1].type == "done"
    assert events[-1].reason == expected == events[-1].partial["stopReason"]


async def test_refusal_is_a_stop_with_a_note(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(Reply([Text("I can't")], stop_reason="refusal"))
    events = await collect(provider, make_request())
    final = events[-1].partial
    assert events[-1].type == "done"
    assert final["stopReason"] == "stop"
    assert "refusal" in final["errorMessage"]


async def test_message_without_content_still_starts_and_ends(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(Reply([]))
    events = await collect(provider, make_request())
    assert [e.type for e in events] == ["start", "done"]
    assert events[-1].partial["content"] == []
