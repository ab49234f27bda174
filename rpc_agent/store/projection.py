"""How one entry on the context path becomes messages, with pi 1.5's context edits applied.

pi 1.5 writes ``context_edit`` entries (when it drops a failed retry, or an extension edits
the context): each names an earlier entry and either omits it (``replacement: null``) or
replaces its content, keeping its role and metadata. The entry itself stays untouched in
the file, so a branch that does not hold the edit still sees the original. This module
holds those rules and pi's normalisation of messages whose ``content`` is null or missing
(hand-edited files), so that the context builder stays a walk over the path.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TypeVar

from rpc_agent.protocol.shapes import (
    Content,
    EntryDict,
    MessageDict,
    ReplacementDict,
    ToolDeclarationDict,
    ToolReferenceDict,
)
from rpc_agent.store.files import now_iso

EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})
"""Roles whose content a non-null replacement changes; other messages of an edited entry
(a compaction's system checkpoint and summary, a branch summary) are kept as they are."""

LIST_CONTENT_ROLES = frozenset({"user", "assistant", "toolResult"})
"""Roles whose null content pi reads as an empty list."""

BLOCK_ONLY_ROLES = frozenset({"assistant", "toolResult"})
"""Roles whose content must be a list: a string replacement becomes one text block."""


def normalized(message: MessageDict) -> MessageDict:
    """A stored message as pi's context sees it: null or missing content becomes "" for a
    system message and [] for user, assistant and tool-result messages (a copy; the stored
    dict is shared and never changed)."""
    if message.get("content") is not None:
        return message
    role = message.get("role")
    if role == "system":
        return {**message, "content": ""}
    if role in LIST_CONTENT_ROLES:
        return {**message, "content": []}
    return message


def needs_normalizing(message: MessageDict) -> bool:
    return message.get("content") is None and (
        message.get("role") == "system" or message.get("role") in LIST_CONTENT_ROLES
    )


def is_system_message_entry(entry: EntryDict) -> bool:
    """A ``message`` entry holding a ``role: "system"`` message (the entry must be loaded)."""
    message = entry.get("message")
    return isinstance(message, dict) and message.get("role") == "system"


def edit_of(entry: EntryDict) -> tuple[str, ReplacementDict | None] | None:
    """(target id, replacement) of a ``context_edit`` entry, or None when it names no target."""
    target: object = entry.get("targetId")  # as read: a line may lack it
    if not isinstance(target, str):
        return None
    return target, entry.get("replacement")


def apply_edit(messages: list[MessageDict], replacement: ReplacementDict | None) -> list[MessageDict]:
    """The messages of an edited entry: none when the replacement is null (or not an object,
    which pi cannot read either), else each editable message with its content replaced."""
    if not isinstance(replacement, dict):
        return []
    has_content = "content" in replacement
    content = replacement.get("content")
    edited: list[MessageDict] = []
    for message in messages:
        role = message.get("role")
        if role not in EDITABLE_ROLES:
            edited.append(message)
            continue
        new_content: Content = content
        if role in BLOCK_ONLY_ROLES and isinstance(content, str):
            new_content = [{"type": "text", "text": content}]
        copy: MessageDict = {**message, "content": new_content}
        if not has_content:  # pi's copy holds an undefined content, which its JSON leaves out
            del copy["content"]
        edited.append(copy)
    return edited


def current_system_message(messages: list[MessageDict], timestamp: int) -> MessageDict | None:
    """The system messages of a context replayed into one (pi-ai's ``getCurrentSystemMessage``),
    stamped ``timestamp``: what pi saves on a compaction as its ``systemMessage``. Contents are
    joined by blank lines, sections patched by name (null removes), tools added and removed by
    name. None when the context holds no system message."""
    systems = [m for m in messages if m.get("role") == "system"]
    if not systems:
        return None
    content: list[str] = []
    sections: dict[str, str | None] = {}
    tools: dict[str, ToolDeclarationDict] = {}
    for message in systems:
        text = content_text(message.get("content"))
        if text:
            content.append(text)
        patch = message.get("sections")
        for name, value in patch.items() if isinstance(patch, dict) else ():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for tool in _tool_list(message.get("toolsRemoved")):
            tools.pop(tool["name"], None)
        for tool in _tool_list(message.get("toolsAdded")):
            tools[tool["name"]] = tool  # a redefinition keeps its place, as in pi's Map
    replayed: MessageDict = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        replayed["sections"] = sections
    if tools:
        replayed["toolsAdded"] = list(tools.values())
    replayed["timestamp"] = timestamp
    return replayed


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def with_system_checkpoint(entry: EntryDict, messages: list[MessageDict]) -> EntryDict:
    """A compaction entry with the time it is written and, as pi 1.5 saves it, the context's
    system messages replayed as its ``systemMessage`` (stamped that time): the compacted
    context starts with it."""
    stamp = now_iso()
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    checkpoint = current_system_message(messages, (moment - _EPOCH) // timedelta(milliseconds=1))
    entry = {**entry, "timestamp": stamp}
    if checkpoint is not None:
        entry["systemMessage"] = checkpoint
    return entry


def content_text(content: Content | None) -> str:
    """pi-ai's ``contentText``: a string as it is, the text blocks of a list joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


ToolT = TypeVar("ToolT", ToolDeclarationDict, ToolReferenceDict)


def _tool_list(value: list[ToolT] | None) -> list[ToolT]:
    if not isinstance(value, list):
        return []
    return [tool for tool in value if isinstance(tool, dict) and isinstance(tool.get("name"), str)]


__all__ = [
    "EDITABLE_ROLES",
    "apply_edit",
    "current_system_message",
    "edit_of",
    "is_system_message_entry",
    "needs_normalizing",
    "normalized",
    "with_system_checkpoint",
]
