"""An ACP prompt as the agent's input, and the agent's result as ACP's stop reason."""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    StopReason,
    TextContentBlock,
)

from rpc_agent.protocol import methods as m
from rpc_agent.protocol.shapes import BlockDict

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def prompt_content(prompt: list[PromptBlock]) -> tuple[str, list[BlockDict]]:
    """The text (resources inlined or linked) and the images of a prompt; audio is dropped."""
    texts: list[str] = []
    images: list[BlockDict] = []
    for block in prompt:
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            images.append({"type": "image", "data": block.data, "mimeType": block.mime_type})
        elif isinstance(block, ResourceContentBlock):
            texts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            body = getattr(resource, "text", None)
            if isinstance(body, str):
                texts.append(f'<file uri="{resource.uri}">\n{body}\n</file>')
            else:
                texts.append(f"[{resource.uri}]")
    return "\n".join(texts), images


def stop_reason(result: m.PromptResult, cancelled: bool) -> StopReason:
    if cancelled or result.stopReason == "aborted":
        return "cancelled"
    if result.stopReason == "length":
        return "max_tokens"
    messages: list[Any] = result.messages or []
    last = next(
        (msg for msg in reversed(messages) if isinstance(msg, dict) and msg.get("role") == "assistant"), None
    )
    if last is not None and "refusal" in str(last.get("errorMessage") or ""):
        return "refusal"
    return "end_turn"
