"""An offline, deterministic provider that streams like a real model.

It serves the demo, the clients' tests and anybody who wants to drive the server without an
API key. Replies come from an optional script (a JSON list, or JSON lines, of reply objects)
consumed in order; when the script runs out, or without one, every turn answers with a plain
deterministic echo of the last user message, and every summary request with a deterministic
structured summary.

A reply object may hold:

* ``text``: the answer text (streamed in word-sized deltas);
* ``thinking``: a thinking block streamed before the text (with a fake signature);
* ``toolCalls``: ``[{"name": "bash", "arguments": {...}, "id"?: "..."}]``;
* ``error``: fail this call with that message; with ``status`` (e.g. 529) and ``retryable``;
  with ``retryAfterMs``, the wait a real provider's ``retry-after`` header would ask for; with
  ``overflow: true`` it is a context-overflow error; with ``afterChunks: n`` the stream breaks
  mid-message after n deltas instead of failing up front;
* ``delayMs``: a pause before every delta (to test abort and steering mid-stream);
* ``usage``: ``{"input": n, "output": n}`` to report instead of the estimate; ``costUsd``: the
  call's cost in dollars (the faux models are free otherwise; budget limits are tested with it).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal, TypedDict

import anyio
import orjson

from rpc_agent.errors import ProviderError
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.content import message_text
from rpc_agent.protocol.events import AssistantEventType
from rpc_agent.protocol.shapes import BlockDict, Content, MessageDict
from rpc_agent.providers.base import AssistantEvent, ModelInfo, ProviderRequest, empty_usage


class FauxToolCall(TypedDict, total=False):
    name: str
    arguments: JsonDict
    id: str


class FauxUsage(TypedDict, total=False):
    input: int
    output: int
    costUsd: float


class FauxReply(TypedDict, total=False):
    """One scripted reply (see the module docstring). A script is read as it is, not
    validated: the fields are converted where they are used."""

    text: str
    thinking: str
    toolCalls: list[FauxToolCall]
    error: str
    status: int
    retryable: bool
    retryAfterMs: float
    overflow: bool
    afterChunks: int
    delayMs: float
    usage: FauxUsage


FAUX_MODELS = [
    ModelInfo(id="faux-1", provider="faux", name="Faux 1 (offline)", contextWindow=200_000, maxTokens=32_000),
    ModelInfo(
        id="faux-mini", provider="faux", name="Faux mini (offline)", contextWindow=32_000, maxTokens=8_000
    ),
]
FAUX_UNLISTED = [
    ModelInfo(
        id="faux-plain",
        provider="faux",
        name="Faux plain (offline, no reasoning)",
        contextWindow=200_000,
        maxTokens=32_000,
        reasoning=False,
    ),
]
"""Models set_model takes by name that the model list and cycle_model leave out: a model
without reasoning, to show what a client gets for one."""


def load_script(path: Path) -> list[FauxReply]:
    """A JSON list of replies, or one reply per line."""
    data = path.read_bytes()
    stripped = data.strip()
    if stripped.startswith(b"["):
        replies = orjson.loads(stripped)
    else:
        replies = [orjson.loads(line) for line in stripped.splitlines() if line.strip()]
    if not isinstance(replies, list) or not all(isinstance(r, dict) for r in replies):
        raise ValueError(f"{path}: a faux script is a list of reply objects")
    return replies


def _chars(message: MessageDict) -> int:
    content = message.get("content")
    if isinstance(content, str):
        return len(content)
    total = 0
    for key in ("summary", "output", "command"):
        value = message.get(key)
        if isinstance(value, str):
            total += len(value)
    return total + _content_chars(content)


def _content_chars(content: Content | None) -> int:
    total = 0
    if isinstance(content, list):
        for block in content:
            stored: object = block
            if isinstance(stored, dict):  # files are not validated when read: a block may be anything
                total += len(str(block.get("text") or block.get("thinking") or block.get("arguments") or ""))
                if block.get("type") == "image":
                    total += 4800
    return total


def estimate_input_tokens(request: ProviderRequest) -> int:
    chars = len(request.system_prompt) + sum(_chars(m) for m in request.messages)
    return (chars + 3) // 4


class FauxProvider:
    name = "faux"

    def __init__(self, script: list[FauxReply] | None = None) -> None:
        self.script: list[FauxReply] = list(script or [])
        self.requests: list[ProviderRequest] = []
        """Every request seen, for tests that want to look at what the model was sent."""

    def models(self) -> list[ModelInfo]:
        return list(FAUX_MODELS)

    def knows_model(self, model_id: str) -> bool:
        return any(model.id == model_id for model in (*FAUX_MODELS, *FAUX_UNLISTED))

    def resolve_model(self, model_id: str) -> ModelInfo:
        for model in (*FAUX_MODELS, *FAUX_UNLISTED):
            if model.id == model_id:
                return model
        return ModelInfo(id=model_id, provider="faux", name=model_id, contextWindow=200_000, maxTokens=32_000)

    def _next_reply(self, request: ProviderRequest) -> FauxReply:
        if self.script:
            return self.script.pop(0)
        if request.purpose == "summary":
            return {"text": self._summary(request)}
        last_user = next(
            (
                message_text(m.get("content"), " ")
                for m in reversed(request.messages)
                if m.get("role") == "user"
            ),
            "",
        )
        return {"text": f"Echo: {last_user}" if last_user else "Hello from the faux provider."}

    async def aclose(self) -> None:
        """Nothing to release: the script lives in memory."""

    @staticmethod
    def _summary(request: ProviderRequest) -> str:
        """A deterministic summary in the structured format the real summarizer asks for."""
        transcript = message_text(request.messages[-1].get("content"), " ") if request.messages else ""
        user_lines = [line for line in transcript.splitlines() if line.startswith("[User]:")]
        first = user_lines[0][len("[User]:") :].strip() if user_lines else "(no user request)"
        return (
            "## Goal\n"
            f"{first[:200]}\n\n"
            "## Constraints & Preferences\n- (none recorded)\n\n"
            "## Progress\n"
            f"### Done\n- [x] {len(user_lines)} user request(s) handled\n\n"
            "## Key Decisions\n- (none)\n\n"
            "## Next Steps\n1. Continue from the latest request\n\n"
            "## Critical Context\n- Summary produced offline by the faux provider"
        )

    async def stream(self, request: ProviderRequest) -> AsyncIterator[AssistantEvent]:
        self.requests.append(request)
        reply = self._next_reply(request)
        delay = float(reply.get("delayMs", 0)) / 1000
        if "error" in reply and "afterChunks" not in reply:
            if delay:
                await anyio.sleep(delay)
            raise _provider_error(reply)
        break_after = int(reply["afterChunks"]) if "afterChunks" in reply else None
        content: list[BlockDict] = []
        partial: MessageDict = {
            "role": "assistant",
            "content": content,
            "api": "faux",
            "provider": "faux",
            "model": request.model.id,
            "usage": empty_usage(),
            "stopReason": "stop",
            "timestamp": int(time.time() * 1000),
        }
        chunks_sent = 0
        yield AssistantEvent(type="start", partial=partial)

        async def pause() -> None:
            if delay:
                await anyio.sleep(delay)
            else:
                await anyio.lowlevel.checkpoint()

        def broken() -> bool:
            return break_after is not None and chunks_sent >= break_after

        texts: list[tuple[Literal["text", "thinking"], str]] = []
        if reply.get("thinking"):
            texts.append(("thinking", str(reply["thinking"])))
        if reply.get("text"):
            texts.append(("text", str(reply["text"])))
        calls = [
            (call.get("id") or f"faux_call_{int(time.time() * 1000)}_{index}", call)
            for index, call in enumerate(reply.get("toolCalls") or [])
        ]

        for kind, value in texts:
            content_index = len(content)
            start, step, end = _TEXT_EVENTS[kind]
            block: BlockDict = {"type": kind}
            block[kind] = ""
            content.append(block)
            yield AssistantEvent(type=start, partial=partial, contentIndex=content_index)
            for piece in _pieces(value):
                await pause()
                if broken():
                    yield self._error(partial, reply)
                    return
                block[kind] += piece
                chunks_sent += 1
                yield AssistantEvent(type=step, partial=partial, contentIndex=content_index, delta=piece)
            if kind == "thinking":
                block["thinkingSignature"] = f"faux-signature-{len(value)}"
            yield AssistantEvent(type=end, partial=partial, contentIndex=content_index, content=block[kind])

        for call_id, scripted in calls:
            content_index = len(content)
            call: BlockDict = {"type": "toolCall", "id": call_id, "name": scripted["name"], "arguments": {}}
            content.append(call)
            yield AssistantEvent(type="toolcall_start", partial=partial, contentIndex=content_index)
            arguments_json = orjson.dumps(scripted.get("arguments") or {}).decode()
            await pause()
            if broken():
                yield self._error(partial, reply)
                return
            chunks_sent += 1
            yield AssistantEvent(
                type="toolcall_delta", partial=partial, contentIndex=content_index, delta=arguments_json
            )
            call["arguments"] = dict(scripted.get("arguments") or {})
            yield AssistantEvent(
                type="toolcall_end", partial=partial, contentIndex=content_index, toolCall=call
            )

        if break_after is not None:
            yield self._error(partial, reply)
            return
        usage = reply.get("usage") or {}
        input_tokens = int(usage.get("input", estimate_input_tokens(request)))
        output_tokens = int(usage.get("output", (_content_chars(content) + 3) // 4))
        stored = partial["usage"]
        stored["input"] = input_tokens
        stored["output"] = output_tokens
        stored["totalTokens"] = input_tokens + output_tokens
        cost_usd = usage.get("costUsd")
        if cost_usd is not None:
            stored["cost"] = {**stored["cost"], "total": float(cost_usd)}
        partial["stopReason"] = "toolUse" if reply.get("toolCalls") else "stop"
        yield AssistantEvent(type="done", partial=partial, reason=partial["stopReason"])

    @staticmethod
    def _error(partial: MessageDict, reply: FauxReply) -> AssistantEvent:
        """The stream breaking mid-message, classified as a real provider would."""
        error = _provider_error(reply)
        partial["stopReason"] = "error"
        partial["errorMessage"] = str(error)
        return AssistantEvent(type="error", partial=partial, reason="error", error=error)


def _provider_error(reply: FauxReply) -> ProviderError:
    status = reply.get("status")
    retry_after = reply.get("retryAfterMs")
    return ProviderError(
        str(reply["error"]),
        status=int(status) if status is not None else None,
        retryable=bool(reply.get("retryable", False)),
        overflow=bool(reply.get("overflow", False)),
        retry_after=float(retry_after) / 1000 if retry_after is not None else None,
    )


_TEXT_EVENTS: dict[str, tuple[AssistantEventType, AssistantEventType, AssistantEventType]] = {
    "text": ("text_start", "text_delta", "text_end"),
    "thinking": ("thinking_start", "thinking_delta", "thinking_end"),
}
"""The start, delta and end events of a streamed text or thinking block."""


def _pieces(text: str) -> list[str]:
    """Word-sized deltas, whitespace kept with the word before it, so joining them is exact."""
    pieces: list[str] = []
    current = ""
    for char in text:
        current += char
        if char == " ":
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces or [""]
