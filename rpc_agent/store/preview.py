"""The one-line preview and role of an entry, as a tree row shows them.

A stored message line gives its preview without being built: msgspec decodes only the fields
a preview reads (role, the text and name of content blocks, tool name, command, error) and
skips the rest (thinking, signatures, arguments, usage, images) without allocating it. The
result is the same as ``preview_of`` on the parsed entry, because it is ``preview_of`` on a
dict holding exactly the fields it reads.
"""

from __future__ import annotations

from typing import Any

import msgspec

from rpc_agent.protocol.shapes import Content, EntryDict, MessageDict

PREVIEW_CHARS = 100
"""A tree row shows about this much; more would only make a 100k-node tree heavier."""


def head_text(content: Content | None, limit: int = PREVIEW_CHARS * 4) -> str:
    """The first ``limit`` characters of a message's text, without joining all of it."""
    if isinstance(content, str):
        return content[:limit]
    parts: list[str] = []
    size = 0
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                piece = str(block.get("text", ""))[: limit - size]
                parts.append(piece)
                size += len(piece)
                if size >= limit:
                    break
    return "".join(parts)


_FIRST_CUT = PREVIEW_CHARS * 3 // 2


def one_line(text: str) -> str:
    """The first ``PREVIEW_CHARS`` of ``text`` with its whitespace folded, read from its first
    ``PREVIEW_CHARS * 4`` characters.

    Folding a prefix gives a prefix of the folded whole, so a short cut that already folds to
    a full preview is the answer, and most texts need no more than that (splitting a few
    hundred characters into words, per node of a 100,000-node tree, is what a preview costs).
    """
    head = " ".join(text[:_FIRST_CUT].split())
    if len(head) >= PREVIEW_CHARS or len(text) <= _FIRST_CUT:
        return head[:PREVIEW_CHARS]
    return " ".join(text[: PREVIEW_CHARS * 4].split())[:PREVIEW_CHARS]


def preview_of(entry: EntryDict) -> tuple[str | None, str]:
    """Role and a one-line preview of an entry for the tree view."""
    kind = entry.get("type")
    role: str | None = None
    text = ""
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):  # a damaged or foreign line: no role, no text
            return None, ""
        role = message.get("role")
        if role == "assistant":
            parts = [b for b in message.get("content") or [] if isinstance(b, dict)]
            text = head_text(parts) or ", ".join(
                f"{b.get('name')}(...)" for b in parts if b.get("type") == "toolCall"
            )
            if not text and message.get("errorMessage"):
                text = f"[{message.get('stopReason')}] {message.get('errorMessage')}"
        elif role == "toolResult":
            text = f"{message.get('toolName')}: {head_text(message.get('content'))}"
        elif role == "bashExecution":
            text = f"$ {message.get('command')}"
        elif role == "system":
            text = _system_text(message)
        else:
            text = head_text(message.get("content"))
    elif kind == "context_edit":
        text = f"{'edit' if isinstance(entry.get('replacement'), dict) else 'omit'} {entry.get('targetId')}"
    elif kind == "usage":
        usage = entry.get("usage")
        tokens = usage.get("totalTokens") if isinstance(usage, dict) else None
        text = f"{entry.get('kind')}: {tokens} tokens"
    elif kind in ("branch_summary", "compaction"):
        text = str(entry.get("summary", ""))[: PREVIEW_CHARS * 4]
    elif kind == "custom_message":
        text = head_text(entry.get("content"))
    elif kind == "label":
        text = f"{entry.get('targetId')} = {entry.get('label')}"
    elif kind == "session_info":
        text = str(entry.get("name", ""))
    elif kind == "model_change":
        text = (
            f"{entry.get('provider')}/{entry.get('modelId')}"
            if entry.get("modelId")
            else str(entry.get("model"))
        )
    elif kind == "thinking_level_change":
        text = str(entry.get("thinkingLevel"))
    elif kind == "custom":
        text = str(entry.get("customType", ""))
    # Only the head matters: folding whitespace of a 50 KB tool output for 200 characters
    # would make get_tree on a big session pay for every byte of it.
    return role, one_line(text)


def _system_text(message: MessageDict) -> str:
    """A pi 1.5 system message: its added instructions, else what it changes (the sections set
    or removed, the tools added or removed)."""
    text = head_text(message.get("content"))
    if text:
        return text
    sections = message.get("sections")
    names = (
        [name if value is not None else f"-{name}" for name, value in sections.items()]
        if isinstance(sections, dict)
        else []
    )
    tools = [f"+{t.get('name')}" for t in message.get("toolsAdded") or [] if isinstance(t, dict)]
    tools += [f"-{t.get('name')}" for t in message.get("toolsRemoved") or [] if isinstance(t, dict)]
    parts = [f"sections {', '.join(names)}" if names else "", f"tools {' '.join(tools)}" if tools else ""]
    return "; ".join(part for part in parts if part)


class _Block(msgspec.Struct):
    type: Any = None
    text: Any = ""
    name: Any = None


class _Message(msgspec.Struct):
    role: Any = None
    content: str | list[_Block] | None = None
    toolName: Any = None
    command: Any = None
    errorMessage: Any = None
    stopReason: Any = None


_decode_message = msgspec.json.Decoder(_Message).decode


def _blocks_text(blocks: list[_Block], limit: int = PREVIEW_CHARS * 4) -> str:
    """``head_text`` over decoded blocks."""
    parts: list[str] = []
    size = 0
    for block in blocks:
        if block.type == "text":
            piece = str(block.text)[: limit - size]
            parts.append(piece)
            size += len(piece)
            if size >= limit:
                break
    return "".join(parts)


def preview_of_stored(message: msgspec.Raw) -> tuple[str | None, str] | None:
    """``preview_of`` for a message kept as JSON bytes; None when its shape needs a full parse."""
    try:
        head = _decode_message(message)
    except msgspec.DecodeError:
        return None
    role, content = head.role, head.content
    if role == "system":  # rare: its sections and tools need the whole message
        return None
    if role == "assistant":
        blocks = content if isinstance(content, list) else []
        text = _blocks_text(blocks) or ", ".join(f"{b.name}(...)" for b in blocks if b.type == "toolCall")
        if not text and head.errorMessage:
            text = f"[{head.stopReason}] {head.errorMessage}"
    elif role == "toolResult":
        body = content[: PREVIEW_CHARS * 4] if isinstance(content, str) else _blocks_text(content or [])
        text = f"{head.toolName}: {body}"
    elif role == "bashExecution":
        text = f"$ {head.command}"
    elif isinstance(content, str):
        text = content[: PREVIEW_CHARS * 4]
    else:
        text = _blocks_text(content or [])
    return role, one_line(text)
