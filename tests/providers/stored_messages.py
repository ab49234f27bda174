"""Messages as the session stores them (pi's shapes), built in one call each for the conversion
tests."""

from __future__ import annotations

from typing import Any

from rpc_agent.protocol.shapes import BlockDict, MessageDict

JsonDict = dict[str, Any]
MODEL = "claude-opus-4-5"


def user(content: Any) -> MessageDict:
    return {"role": "user", "content": content, "timestamp": 1}


def text(value: str) -> BlockDict:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str | None = None, *, redacted: bool = False) -> BlockDict:
    block: BlockDict = {"type": "thinking", "thinking": value}
    if signature is not None:
        block["thinkingSignature"] = signature
    if redacted:
        block["redacted"] = True
    return block


def call(call_id: str, name: str = "bash", **arguments: Any) -> BlockDict:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def assistant(
    *blocks: BlockDict, stop: str = "stop", model: str = MODEL, provider: str = "anthropic"
) -> MessageDict:
    return {
        "role": "assistant",
        "content": list(blocks),
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "stopReason": stop,
        "timestamp": 2,
    }


def result(call_id: str, output: str = "ok", *, name: str = "bash", error: bool = False) -> MessageDict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [text(output)],
        "isError": error,
        "timestamp": 3,
    }


def bash(
    *,
    output: str = "",
    exitCode: int | None = None,
    cancelled: bool = False,
    truncated: bool = False,
    fullOutputPath: str | None = None,
    excludeFromContext: bool = False,
) -> MessageDict:
    message: MessageDict = {
        "role": "bashExecution",
        "command": "ls -la",
        "output": output,
        "exitCode": exitCode,
        "cancelled": cancelled,
        "truncated": truncated,
        "excludeFromContext": excludeFromContext,
        "timestamp": 1,
    }
    if fullOutputPath is not None:
        message["fullOutputPath"] = fullOutputPath
    return message
