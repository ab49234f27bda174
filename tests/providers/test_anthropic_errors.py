"""How a failed request or a broken stream reaches the agent.

Before any content the stream raises ProviderError and yields nothing, so the agent may retry
from scratch; after content it ends with an error event that carries the partial message."""

from __future__ import annotations

import pytest

from fake_anthropic import FakeAnthropic, HttpError, Reply, Text, Thinking
from providers.anthropic_testlib import collect, make_request
from rpc_agent.errors import ProviderError
from rpc_agent.providers.anthropic import AnthropicProvider
from rpc_agent.providers.base import AssistantEvent

pytestmark = pytest.mark.anyio


# --- errors before any content: ProviderError, nothing yielded ------------------------------


@pytest.mark.parametrize(
    ("status", "kind", "headers", "retry_after"),
    [
        (529, "overloaded_error", {"retry-after": "7"}, 7.0),
        (429, "rate_limit_error", {"retry-after-ms": "1500"}, 1.5),
        (500, "api_error", {}, None),
        (503, "api_error", {}, None),
    ],
)
async def test_transient_http_errors_are_retryable(
    fake: FakeAnthropic,
    provider: AnthropicProvider,
    status: int,
    kind: str,
    headers: dict[str, str],
    retry_after: float | None,
) -> None:
    fake.enqueue(HttpError(status, kind, "try later", headers))
    seen: list[AssistantEvent] = []

    async def consume() -> None:
        async for event in provider.stream(make_request()):
            seen.append(event)

    with pytest.raises(ProviderError) as caught:
        await consume()
    assert seen == []
    error = caught.value
    assert (error.status, error.retryable, error.overflow) == (status, True, False)
    assert error.retry_after == retry_after
    assert kind in str(error)
    assert "try later" in str(error)
    assert len(fake.requests) == 1  # the SDK did not retry on its own


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_are_not_retryable_and_clear(
    fake: FakeAnthropic, provider: AnthropicProvider, status: int
) -> None:
    kind = "authentication_error" if status == 401 else "permission_error"
    fake.enqueue(HttpError(status, kind, "invalid x-api-key"))
    with pytest.raises(ProviderError) as caught:
        await collect(provider, make_request())
    error = caught.value
    assert (error.status, error.retryable, error.overflow) == (status, False, False)
    assert "authentication failed" in str(error)
    assert "invalid x-api-key" in str(error)


async def test_prompt_too_long_is_overflow(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(
        HttpError(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    )
    with pytest.raises(ProviderError) as caught:
        await collect(provider, make_request())
    assert (caught.value.status, caught.value.overflow, caught.value.retryable) == (400, True, False)


async def test_other_bad_requests_are_neither_overflow_nor_retryable(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(HttpError(400, "invalid_request_error", "messages.1: something else is wrong"))
    with pytest.raises(ProviderError) as caught:
        await collect(provider, make_request())
    assert (caught.value.overflow, caught.value.retryable) == (False, False)


async def test_in_stream_error_before_content_raises(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(Reply([Text("never sent")], error_after=2))  # after message_start and ping
    with pytest.raises(ProviderError) as caught:
        await collect(provider, make_request())
    assert (caught.value.status, caught.value.retryable) == (529, True)


async def test_connection_drop_before_content_raises(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(Reply([Text("never sent")], drop_after=1))
    with pytest.raises(ProviderError) as caught:
        await collect(provider, make_request())
    assert caught.value.retryable
    assert caught.value.status is None


async def test_connection_refused_is_retryable(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic() as gone:
        url = gone.base_url
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    provider = AnthropicProvider(base_url=url)
    try:
        with pytest.raises(ProviderError) as caught:
            await collect(provider, make_request())
    finally:
        await provider.aclose()
    assert caught.value.retryable
    assert "connection" in str(caught.value).lower()


# --- errors after content: a final error event with the partial message ---------------------


async def test_in_stream_error_event_after_content(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    # 0 message_start, 1 ping, 2 block start, 3 "Hello th", 4 "ere frie", then the error.
    fake.enqueue(Reply([Text("Hello there friend")], error_after=5))
    events = await collect(provider, make_request())
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_delta", "error"]
    last = events[-1]
    assert last.reason == "error"
    assert last.partial["content"] == [{"type": "text", "text": "Hello there frie"}]
    assert last.partial["stopReason"] == "error"
    assert "overloaded_error" in last.partial["errorMessage"]
    assert last.error is not None
    assert (last.error.status, last.error.retryable) == (529, True)
    assert last.partial["usage"]["input"] == 100  # from message_start


async def test_in_stream_invalid_request_error_is_not_retryable(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(
        Reply([Text("abcdefgh")], error_after=4, error_type="invalid_request_error", error_message="bad")
    )
    events = await collect(provider, make_request())
    assert events[-1].error is not None
    assert (events[-1].error.status, events[-1].error.retryable) == (400, False)


async def test_connection_dropped_mid_stream(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(
        Reply(
            [Thinking("deep thoughts here", signature="S"), Text("partial answer")],
            chunk_size=7,
            drop_after=10,
        )
    )
    events = await collect(provider, make_request(level="low"))
    last = events[-1]
    assert last.type == "error"
    assert last.reason == "error"
    assert last.partial["stopReason"] == "error"
    assert "connection dropped" in last.partial["errorMessage"]
    assert last.error is not None
    assert last.error.retryable
    # The thinking block finished (signature included); the text block is kept as it stood.
    assert last.partial["content"] == [
        {"type": "thinking", "thinking": "deep thoughts here", "thinkingSignature": "S"},
        {"type": "text", "text": "partial"},
    ]
    assert sum(e.type in ("done", "error") for e in events) == 1


async def test_stream_ending_without_message_stop_is_an_error(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(Reply([Text("cut short")], truncate_after=4))
    events = await collect(provider, make_request())
    assert events[-1].type == "error"
    assert events[-1].error is not None
    assert events[-1].error.retryable
    assert events[-1].partial["content"] == [{"type": "text", "text": "cut shor"}]


async def test_drop_after_the_stop_reason_still_completes(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    # 0 message_start, 1 ping, 2 block start, 3 delta, 4 block stop, 5 message_delta, then the drop.
    fake.enqueue(Reply([Text("all of it")], chunk_size=20, drop_after=6))
    events = await collect(provider, make_request())
    assert events[-1].type == "done"
    assert events[-1].partial["content"] == [{"type": "text", "text": "all of it"}]
    assert events[-1].partial["usage"]["output"] == 20
