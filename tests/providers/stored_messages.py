"""Messages as the session stores them (pi's shapes), built in one call each for the conversion
tests."""

from __future__ import annotations

from typing import Any

JsonDict = dict[str, Any]
MODEL = "claude-opus-4-5"


def user(content: Any) -> JsonDict:
    return {"role": "user", "content": content, "timestamp": 1}


def text(value: str) -> JsonDict:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str | None = None, *, redacted: bool = False) -> JsonDict:
    block: JsonDict = {"type": "thinking", "thinking": value}
    if signature is not None:
        block["thinkingSignature"] = signature
    if redacted:
        block["redacted"] = True
    return block


def call(call_id: str, name: str = "bash", **arguments: Any) -> JsonDict:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def assistant(
    *blocks: JsonDict, stop: str = "stop", model: str = MODEL, provider: str = "anthropic"
) -> JsonDict:
    return {
        "role": "assistant",
        "content": list(blocks),
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "stopReason": stop,
        "timestamp": 2,
    }


def result(call_id: str, output: str = "ok", *, name: str = "bash", error: bool = False) -> JsonDict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [text(output)],
        "isError": error,
        "timestamp": 3,
    }


def bash(**fields: Any) -> JsonDict:
    return {"role": "bashExecution", "command": "ls -la", "output": "", "timestamp": 1, **fields}
