"""What the AnthropicProvider tests share: a request to stream, and the events it gave.

The provider and the fake server themselves are fixtures (``conftest.py``)."""

from __future__ import annotations

from typing import Any

import anyio

from rpc_agent.protocol.shapes import BlockDict, MessageDict
from rpc_agent.providers.anthropic import AnthropicProvider
from rpc_agent.providers.base import AssistantEvent, ProviderRequest, ToolSpec
from rpc_agent.providers.models import resolve_model

JsonDict = dict[str, Any]
MODEL = "claude-haiku-4-5"

READ_TOOL = ToolSpec(
    "read",
    "Read a file",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
)


def user(text: str) -> MessageDict:
    return {"role": "user", "content": text, "timestamp": 1}


def make_request(
    messages: list[MessageDict] | None = None, *, level: str = "off", model: str = MODEL, tools: bool = True
) -> ProviderRequest:
    return ProviderRequest(
        model=resolve_model(model),
        system_prompt="You are a test.",
        messages=messages if messages is not None else [user("hi")],
        tools=[READ_TOOL] if tools else [],
        thinking_level=level,
    )


def blocks(message: MessageDict) -> list[BlockDict]:
    """The content blocks of a streamed message (whose content is always a list)."""
    content = message["content"]
    assert isinstance(content, list)
    return content


def summary(event: AssistantEvent) -> tuple[Any, ...]:
    return (event.type, event.contentIndex, event.delta, event.content)


async def collect(provider: AnthropicProvider, request: ProviderRequest) -> list[AssistantEvent]:
    return [event async for event in provider.stream(request)]


async def wait_for(event: Any, limit: float = 10.0) -> bool:
    """Wait for a threading.Event without blocking the loop."""
    return bool(await anyio.to_thread.run_sync(event.wait, limit))
