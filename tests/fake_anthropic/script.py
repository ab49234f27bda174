"""What a test tells the fake to answer: content blocks, replies and their stream-breaking knobs.

A reply is data, not behaviour: ``sse.py`` turns it into wire events and ``server.py`` acts on the
knobs (delay, drop, error, hang, truncate), so a test reads as the conversation it scripts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JsonDict = dict[str, Any]


@dataclass
class Text:
    text: str
    chunks: list[str] | None = None
    """The text_delta pieces; by default the text cut into the reply's chunk_size."""


@dataclass
class Thinking:
    thinking: str
    signature: str = "sig-thinking"
    chunks: list[str] | None = None


@dataclass
class RedactedThinking:
    data: str


@dataclass
class ToolUse:
    id: str
    name: str
    input: JsonDict
    chunks: list[str] | None = None
    """The input_json_delta pieces; by default the JSON text cut into the reply's chunk_size."""


Block = Text | Thinking | RedactedThinking | ToolUse


@dataclass
class Reply:
    content: list[Block]
    stop_reason: str = "end_turn"
    usage: JsonDict = field(
        default_factory=lambda: {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }
    )
    model: str | None = None
    chunk_size: int = 8
    delay: float = 0.0
    drop_after: int | None = None
    error_after: int | None = None
    error_type: str = "overloaded_error"
    error_message: str = "Overloaded"
    hang_after: int | None = None
    truncate_after: int | None = None
    ping: bool = True
    headers: dict[str, str] = field(default_factory=dict)


def tool_round(*blocks: Block, answer: str) -> list[Reply]:
    """A turn that calls tools (``blocks``: what precedes the calls, and the calls), then the
    final answer once their results are in."""
    return [Reply(list(blocks), stop_reason="tool_use"), Reply([Text(answer)])]


@dataclass
class HttpError:
    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


ScriptItem = Reply | HttpError
