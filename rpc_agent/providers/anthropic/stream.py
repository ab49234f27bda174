"""Stream assembly: the SDK's raw stream events become our assistant message and events.

The events are typed with the SDK's models (imported for type checking only: the SDK is
imported lazily); their ``type`` tells them apart, so mypy checks each field read.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal

import anyio

from rpc_agent.errors import ProviderError
from rpc_agent.protocol.events import AssistantEventType
from rpc_agent.protocol.shapes import BlockDict, MessageDict
from rpc_agent.providers.anthropic.partial_json import PartialJson
from rpc_agent.providers.base import AssistantEvent, ModelInfo, empty_usage
from rpc_agent.providers.convert import API
from rpc_agent.providers.models import PROVIDER, cost_of

if TYPE_CHECKING:
    from anthropic import AsyncStream
    from anthropic.types import (
        MessageDeltaUsage,
        RawContentBlockDeltaEvent,
        RawContentBlockStartEvent,
        RawContentBlockStopEvent,
        RawMessageStreamEvent,
        Usage,
    )

__all__ = ["Assembler", "drain"]

DRAIN_TIMEOUT = 5.0
"""Seconds to wait for the end of the body after ``message_stop`` (so the connection is reused)."""

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "refusal": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}

_USAGE_FIELDS: tuple[tuple[Literal["input", "output", "cacheRead", "cacheWrite"], str], ...] = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cacheRead", "cache_read_input_tokens"),
    ("cacheWrite", "cache_creation_input_tokens"),
)
"""Our usage keys and the SDK usage's attributes they come from."""


def _now_ms() -> int:
    return int(time.time() * 1000)


class Assembler:
    """Raw SDK stream events -> our assistant message and AssistantEvents."""

    def __init__(self, model: ModelInfo) -> None:
        self.model = model
        self._content: list[BlockDict] = []
        """The partial's content: the same list, typed as the list it always is."""
        self.partial: MessageDict = {
            "role": "assistant",
            "content": self._content,
            "api": API,
            "provider": PROVIDER,
            "model": model.id,
            "usage": empty_usage(),
            "stopReason": "stop",
            "timestamp": _now_ms(),
        }
        self.started = False
        self.finished = False
        self.stop_reason: str | None = None
        self._index: dict[int, int] = {}  # API block index -> our content index
        self._json: dict[int, PartialJson] = {}
        self._has_deltas: set[int] = set()

    def _event(self, kind: AssistantEventType, **fields: Any) -> AssistantEvent:
        return AssistantEvent(type=kind, partial=self.partial, **fields)

    def _start(self, out: list[AssistantEvent]) -> None:
        if not self.started:
            self.started = True
            out.append(self._event("start"))

    def _usage(self, usage: Usage | MessageDeltaUsage, *, replace: bool) -> None:
        stored = self.partial["usage"]
        for key, attr in _USAGE_FIELDS:
            value = getattr(usage, attr, None)
            if value is not None:
                stored[key] = int(value)
            elif replace:
                stored[key] = 0
        stored["totalTokens"] = (
            stored["input"] + stored["output"] + stored["cacheRead"] + stored["cacheWrite"]
        )
        stored["cost"] = cost_of(stored, self.model)

    def handle(self, event: RawMessageStreamEvent) -> list[AssistantEvent]:
        out: list[AssistantEvent] = []
        if event.type == "content_block_delta":
            self._delta(event, out)
        elif event.type == "content_block_start":
            self._block_start(event, out)
        elif event.type == "content_block_stop":
            self._block_stop(event, out)
        elif event.type == "message_start":
            usage = getattr(getattr(event, "message", None), "usage", None)  # a server may leave it out
            if usage is not None:
                self._usage(usage, replace=True)
        elif event.type == "message_delta":
            delta = event.delta
            if delta.stop_reason:
                self.stop_reason = str(delta.stop_reason)
                self.partial["stopReason"] = _STOP_REASONS.get(self.stop_reason, "stop")
                if self.stop_reason == "refusal":
                    details = getattr(delta, "stop_details", None)
                    note = getattr(details, "explanation", None) or getattr(details, "category", None)
                    self.partial["errorMessage"] = "Claude declined to continue (stop_reason refusal)" + (
                        f": {note}" if note else ""
                    )
            if event.usage is not None:
                self._usage(event.usage, replace=False)
        elif event.type == "message_stop":
            self.finished = True
        return out

    def _block_start(self, event: RawContentBlockStartEvent, out: list[AssistantEvent]) -> None:
        block = event.content_block
        if block.type == "text":
            index = self._open(event.index, {"type": "text", "text": ""}, "text_start", out)
            if block.text:
                self._text(index, "text", block.text, out)
        elif block.type == "thinking":
            stored: BlockDict = {"type": "thinking", "thinking": ""}
            if block.signature:
                stored["thinkingSignature"] = block.signature
            index = self._open(event.index, stored, "thinking_start", out)
            if block.thinking:
                self._text(index, "thinking", block.thinking, out)
        elif block.type == "redacted_thinking":
            redacted: BlockDict = {
                "type": "thinking",
                "thinking": "[Reasoning redacted]",
                "thinkingSignature": block.data,
                "redacted": True,
            }
            self._open(event.index, redacted, "thinking_start", out)
        elif block.type == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {}
            call: BlockDict = {
                "type": "toolCall",
                "id": block.id,
                "name": block.name,
                "arguments": dict(arguments),
            }
            index = self._open(event.index, call, "toolcall_start", out)
            self._json[index] = PartialJson()
        # Server-side tool blocks and future block types are not part of our message shape.

    def _open(
        self, api_index: int, block: BlockDict, start: AssistantEventType, out: list[AssistantEvent]
    ) -> int:
        """Append ``block`` to the message for the API's block ``api_index`` and announce it;
        its index in our content."""
        content = self._content
        index = len(content)
        content.append(block)
        self._index[api_index] = index
        self._start(out)
        out.append(self._event(start, contentIndex=index))
        return index

    def _text(
        self, index: int, key: Literal["text", "thinking"], text: str, out: list[AssistantEvent]
    ) -> None:
        self._content[index][key] += text
        kind: AssistantEventType = "text_delta" if key == "text" else "thinking_delta"
        out.append(self._event(kind, contentIndex=index, delta=text))

    def _delta(self, event: RawContentBlockDeltaEvent, out: list[AssistantEvent]) -> None:
        index = self._index.get(event.index)
        if index is None:
            return
        delta = event.delta
        block = self._content[index]
        if delta.type == "text_delta" and block["type"] == "text":
            self._text(index, "text", delta.text, out)
        elif delta.type == "thinking_delta" and block["type"] == "thinking":
            self._text(index, "thinking", delta.thinking, out)
        elif delta.type == "signature_delta" and block["type"] == "thinking":
            block["thinkingSignature"] = block.get("thinkingSignature", "") + delta.signature
        elif delta.type == "input_json_delta" and block["type"] == "toolCall":
            self._has_deltas.add(index)
            block["arguments"] = self._json[index].feed(delta.partial_json)
            out.append(self._event("toolcall_delta", contentIndex=index, delta=delta.partial_json))

    def _block_stop(self, event: RawContentBlockStopEvent, out: list[AssistantEvent]) -> None:
        index = self._index.get(event.index)
        if index is None:
            return
        block = self._content[index]
        kind = block["type"]
        if kind == "text":
            out.append(self._event("text_end", contentIndex=index, content=block["text"]))
        elif kind == "thinking":
            out.append(self._event("thinking_end", contentIndex=index, content=block["thinking"]))
        elif kind == "toolCall":
            if index in self._has_deltas:
                block["arguments"] = self._json[index].final()
            out.append(self._event("toolcall_end", contentIndex=index, toolCall=block))

    def done(self) -> list[AssistantEvent]:
        out: list[AssistantEvent] = []
        self._start(out)
        out.append(self._event("done", reason=self.partial["stopReason"]))
        return out

    def error(self, error: ProviderError) -> AssistantEvent:
        self.partial["stopReason"] = "error"
        self.partial["errorMessage"] = str(error)
        return self._event("error", reason="error", error=error)


async def drain(sdk_stream: AsyncStream[RawMessageStreamEvent]) -> None:
    """Read what follows ``message_stop`` (normally only the end of the body) so the
    connection goes back to the pool; a misbehaving server gets DRAIN_TIMEOUT seconds."""
    with anyio.move_on_after(DRAIN_TIMEOUT):
        try:
            while True:
                await sdk_stream.__anext__()
        except StopAsyncIteration:
            pass
        except Exception:
            pass  # the message is complete; a broken tail does not matter
