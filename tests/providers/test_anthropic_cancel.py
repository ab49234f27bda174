"""Stopping a stream early (task cancelled, generator closed, cancel scope) closes its connection,
so an aborted turn stops costing tokens at once."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from fake_anthropic import FakeAnthropic, Reply, Text
from providers.anthropic_testlib import collect, make_request, wait_for
from rpc_agent.providers.anthropic import AnthropicProvider

pytestmark = pytest.mark.anyio


async def test_cancelling_the_consumer_closes_the_connection(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    # Four events (start, ping, block start, one delta), then the server waits for the client.
    fake.enqueue(Reply([Text("first part, and the rest never comes")], hang_after=4))
    got_delta = asyncio.Event()
    seen: list[str] = []

    async def consume() -> None:
        async for event in provider.stream(make_request()):
            seen.append(event.type)
            if event.type == "text_delta":
                got_delta.set()

    task = asyncio.create_task(consume())
    await got_delta.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    record = fake.requests[-1]
    assert await wait_for(record.disconnected), "the fake server never saw the client go away"
    assert seen == ["start", "text_start", "text_delta"]


async def test_closing_the_generator_early_closes_the_connection(
    fake: FakeAnthropic, provider: AnthropicProvider
) -> None:
    fake.enqueue(Reply([Text("slow stream of text that goes on and on")], chunk_size=4, delay=0.02))
    stream = provider.stream(make_request())
    async for event in stream:
        if event.type == "text_delta":
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert await wait_for(fake.requests[-1].disconnected)


async def test_cancel_scope_around_a_slow_stream(fake: FakeAnthropic, provider: AnthropicProvider) -> None:
    fake.enqueue(Reply([Text("a" * 400)], chunk_size=2, delay=0.01), Reply([Text("next")]))
    deltas = 0
    with anyio.CancelScope() as scope:
        async for event in provider.stream(make_request()):
            if event.type == "text_delta":
                deltas += 1
                if deltas == 3:
                    scope.cancel()
    assert scope.cancelled_caught
    assert await wait_for(fake.requests[0].disconnected)
    # The provider still works afterwards.
    events = await collect(provider, make_request())
    assert events[-1].partial["content"] == [{"type": "text", "text": "next"}]
