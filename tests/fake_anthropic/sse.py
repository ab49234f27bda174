"""A scripted reply as the Messages API sends it: SSE events for a stream, one JSON body otherwise.

Kept apart from the server so that tests can compare the event sequence itself
(``test_fake_server.py``) without a socket.
"""

from __future__ import annotations

import json

from fake_anthropic.script import JsonDict, RedactedThinking, Reply, Text, Thinking


def _split(text: str, size: int) -> list[str]:
    if not text:
        return []
    return [text[i : i + size] for i in range(0, len(text), size)]


def sse_events(reply: Reply, model: str) -> list[tuple[str, JsonDict]]:
    """The (event name, data) sequence of a streamed reply, without error/drop effects."""
    usage = reply.usage
    start_usage = {
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": 1,
        "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
        "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
    }
    events: list[tuple[str, JsonDict]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
    ]
    if reply.ping:
        events.append(("ping", {"type": "ping"}))
    for index, block in enumerate(reply.content):
        deltas: list[JsonDict] = []
        start: JsonDict
        if isinstance(block, Text):
            start = {"type": "text", "text": ""}
            for piece in block.chunks if block.chunks is not None else _split(block.text, reply.chunk_size):
                deltas.append({"type": "text_delta", "text": piece})
        elif isinstance(block, Thinking):
            start = {"type": "thinking", "thinking": "", "signature": ""}
            chunks = block.chunks if block.chunks is not None else _split(block.thinking, reply.chunk_size)
            for piece in chunks:
                deltas.append({"type": "thinking_delta", "thinking": piece})
            deltas.append({"type": "signature_delta", "signature": block.signature})
        elif isinstance(block, RedactedThinking):
            start = {"type": "redacted_thinking", "data": block.data}
        else:
            start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
            text = json.dumps(block.input)
            for piece in block.chunks if block.chunks is not None else _split(text, reply.chunk_size):
                deltas.append({"type": "input_json_delta", "partial_json": piece})
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        )
        for delta in deltas:
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta_usage = {"output_tokens": usage.get("output_tokens", 0)}
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                "usage": delta_usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def message_body(reply: Reply, model: str) -> JsonDict:
    """The non-streaming JSON body of a reply."""
    content: list[JsonDict] = []
    for block in reply.content:
        if isinstance(block, Text):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, Thinking):
            content.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
        elif isinstance(block, RedactedThinking):
            content.append({"type": "redacted_thinking", "data": block.data})
        else:
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": dict(reply.usage),
    }
