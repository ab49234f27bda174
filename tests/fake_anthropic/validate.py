"""The Messages API's request rules, so that a conversion bug fails here and not in production.

Stricter than the real API in one way: consecutive messages of the same role are rejected too,
because our conversion promises to merge them.
"""

from __future__ import annotations

import re
from typing import Any

_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


def _count_cache_control(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_count_cache_control(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_cache_control(v) for v in value)
    return 0


def _check_text(text: Any, where: str) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return f"{where}: text content blocks must contain non-whitespace text"
    return None


def _check_tool_choice(choice: Any, tools: Any, thinking: Any) -> str | None:
    """A forced tool must be offered, and the API refuses forcing a tool while thinking."""
    if choice is None:
        return None
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        return "tool_choice: expected an object with type auto, any, tool or none"
    if choice["type"] == "tool" and choice.get("name") not in {t.get("name") for t in tools or []}:
        return f"tool_choice.name: no tool named {choice.get('name')!r} in tools"
    thinks = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    if thinks and choice["type"] in ("any", "tool"):
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None


def validate_request(body: Any) -> str | None:
    """What the real API would reject in this body (plus same-role neighbours), or None."""
    if not isinstance(body, dict):
        return "body: expected a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: field required"
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return "max_tokens: must be a positive integer"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                return f"system.{i}: expected a text block"
            if problem := _check_text(block.get("text"), f"system.{i}"):
                return problem
    elif system is not None and not isinstance(system, str):
        return "system: expected a string or a list of text blocks"
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if budget >= max_tokens:
            return "`max_tokens` must be greater than `thinking.budget_tokens`"
    tools = body.get("tools")
    if tools is not None:
        names: set[str] = set()
        for i, tool in enumerate(tools):
            name = tool.get("name")
            if not isinstance(name, str) or not _TOOL_NAME.match(name):
                return f"tools.{i}.name: invalid tool name"
            if name in names:
                return f"tools: tool names must be unique ({name})"
            names.add(name)
            schema = tool.get("input_schema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                return f"tools.{i}.input_schema.type: Field required (must be 'object')"
    if problem := _check_tool_choice(body.get("tool_choice"), tools, thinking):
        return problem
    if _count_cache_control(body) > 4:
        return "A maximum of 4 blocks with cache_control may be provided"

    if messages[0].get("role") != "user":
        return "messages.0.role: the first message must use the user role"
    previous_role = None
    previous_tool_ids: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: must be user or assistant"
        if role == previous_role:
            return f"messages.{i}: consecutive {role} messages (fake_anthropic is strict here)"
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list) and content:
            blocks = content
        else:
            return f"messages.{i}.content: must be a non-empty string or list"
        answered: list[str] = []
        tool_ids: list[str] = []
        seen_other = False
        for j, block in enumerate(blocks):
            where = f"messages.{i}.content.{j}"
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                if problem := _check_text(block.get("text"), where):
                    return problem
                seen_other = True
            elif role == "user" and kind == "image":
                source = block.get("source") or {}
                if source.get("media_type") not in ("image/jpeg", "image/png", "image/gif", "image/webp"):
                    return f"{where}.source.media_type: unsupported image type"
                seen_other = True
            elif role == "user" and kind == "tool_result":
                if seen_other:
                    return f"{where}: tool_result blocks must come before any other content"
                tool_use_id = block.get("tool_use_id")
                if tool_use_id not in previous_tool_ids:
                    return (
                        f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: {tool_use_id}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the "
                        "previous message."
                    )
                if tool_use_id in answered:
                    return f"{where}: duplicate tool_result for {tool_use_id}"
                answered.append(tool_use_id)
                inner_blocks = block.get("content")
                if isinstance(inner_blocks, str):
                    inner_blocks = [{"type": "text", "text": inner_blocks}]
                for k, inner in enumerate(inner_blocks or []):
                    if inner.get("type") == "text" and (
                        problem := _check_text(inner.get("text"), f"{where}.{k}")
                    ):
                        return problem
            elif role == "assistant" and kind == "thinking":
                if not isinstance(block.get("signature"), str) or not block["signature"]:
                    return f"{where}.thinking.signature: Field required"
            elif role == "assistant" and kind == "redacted_thinking":
                if not isinstance(block.get("data"), str) or not block["data"]:
                    return f"{where}.redacted_thinking.data: Field required"
            elif role == "assistant" and kind == "tool_use":
                tool_id = block.get("id")
                if not isinstance(tool_id, str) or not _TOOL_ID.match(tool_id):
                    return f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                if tool_id in tool_ids:
                    return f"{where}: `tool_use` ids must be unique"
                if not isinstance(block.get("input"), dict):
                    return f"{where}.input: Input should be a valid dictionary"
                tool_ids.append(tool_id)
            else:
                return f"{where}.type: unexpected block type {kind!r} in a {role} message"
        if role == "user":
            missing = [tool_id for tool_id in previous_tool_ids if tool_id not in answered]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                    f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message."
                )
        previous_role = role
        previous_tool_ids = tool_ids if role == "assistant" else []
    if previous_tool_ids:
        return "the last assistant message has `tool_use` blocks without a following `tool_result` message"
    return None
