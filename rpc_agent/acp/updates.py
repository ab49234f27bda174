"""Our events and stored messages as ACP ``session/update`` payloads.

Two directions share these helpers: live events while a prompt runs (``EventTranslator``) and
the replay of a stored branch when a client loads a session (``replay_updates``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    ImageContentBlock,
    SessionInfoUpdate,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
    UsageUpdate,
    UserMessageChunk,
)
from pydantic import BaseModel

from acp import (
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message,
)
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.shapes import EntryDict, MessageDict

Update = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AvailableCommandsUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)

_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
}


def tool_kind(name: str) -> ToolKind:
    return _KINDS.get(name, "other")


def tool_title(name: str, args: Mapping[str, Any]) -> str:
    if name == "bash" and isinstance(args.get("command"), str):
        return f"bash: {args['command']}"
    if name == "grep" and isinstance(args.get("pattern"), str):
        return f"grep {args['pattern']}"
    if name == "find" and isinstance(args.get("pattern"), str):
        return f"find {args['pattern']}"
    if isinstance(args.get("path"), str):
        return f"{name} {args['path']}"
    return name


def tool_locations(args: Mapping[str, Any], cwd: str) -> list[ToolCallLocation] | None:
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return None
    candidate = Path(path).expanduser()
    resolved = candidate if candidate.is_absolute() else Path(cwd) / candidate
    offset = args.get("offset")
    line = offset if isinstance(offset, int) and not isinstance(offset, bool) and offset > 0 else None
    return [ToolCallLocation(path=str(resolved), line=line)]


def _block(block: Any) -> TextContentBlock | ImageContentBlock | None:
    if not isinstance(block, dict):
        return None
    if block.get("type") == "text":
        return TextContentBlock(type="text", text=str(block.get("text") or ""))
    if block.get("type") == "image" and isinstance(block.get("data"), str):
        return ImageContentBlock(type="image", data=block["data"], mime_type=str(block.get("mimeType") or ""))
    return None


def tool_content(content: Any) -> list[ContentToolCallContent]:
    """Text and image blocks of a tool result as tool call content."""
    blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
    return [
        ContentToolCallContent(type="content", content=converted)
        for converted in map(_block, blocks)
        if converted is not None
    ]


def tool_started(call_id: str, name: str, args: Mapping[str, Any], cwd: str) -> ToolCallStart:
    return start_tool_call(
        call_id,
        tool_title(name, args),
        kind=tool_kind(name),
        status="pending",
        locations=tool_locations(args, cwd),
        raw_input=args,
    )


def tool_finished(call_id: str, content: Any, is_error: bool) -> ToolCallProgress:
    status: ToolCallStatus = "failed" if is_error else "completed"
    return update_tool_call(call_id, status=status, content=tool_content(content))


class EventTranslator:
    """Live events of one session -> ``session/update`` payloads (most events map to none).

    A write or edit that succeeded ends with the diff it was previewed with (``diffs``); a
    ``bash`` run in the editor's terminal shows that terminal instead of streamed text.
    """

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.diffs: dict[str, FileEditToolCallContent] = {}
        self.terminals: dict[str, str] = {}

    def translate(self, event: BaseModel) -> list[Update]:
        if isinstance(event, ev.MessageUpdateEvent):
            delta = event.assistantMessageEvent
            if delta.type == "text_delta" and delta.delta:
                return [update_agent_message_text(delta.delta)]
            if delta.type == "thinking_delta" and delta.delta:
                return [update_agent_thought_text(delta.delta)]
            return []
        if isinstance(event, ev.ToolExecutionStartEvent):
            return [tool_started(event.toolCallId, event.toolName, event.args, self.cwd)]
        if isinstance(event, ev.ToolExecutionUpdateEvent):
            if event.toolCallId in self.terminals:
                return []
            return [
                update_tool_call(
                    event.toolCallId, status="in_progress", content=tool_content(event.partialResult.content)
                )
            ]
        if isinstance(event, ev.ToolExecutionEndEvent):
            call_id = event.toolCallId
            diff = self.diffs.pop(call_id, None)
            terminal = self.terminals.pop(call_id, None)
            if terminal is not None:
                status: ToolCallStatus = "failed" if event.isError else "completed"
                shown: list[Any] = [TerminalToolCallContent(type="terminal", terminal_id=terminal)]
                if event.isError:  # the terminal shows the output, not why it counts as failed
                    shown += tool_content(event.result.content)
                return [update_tool_call(call_id, status=status, content=shown)]
            if diff is not None and not event.isError:
                return [update_tool_call(call_id, status="completed", content=[diff])]
            return [tool_finished(call_id, event.result.content, event.isError)]
        if isinstance(event, ev.MessageEndEvent):
            message = event.message
            if message.get("role") == "assistant" and message.get("stopReason") == "error":
                return [update_agent_message_text(f"\n\nError: {message.get('errorMessage')}")]
        return []


def _stored_diffs(name: str, args: Mapping[str, Any], details: Any, cwd: str) -> tuple[list[Any], int | None]:
    """The diff content a finished write or edit showed live, as far as the file still tells.

    An edit's arguments hold the replaced text and its replacement, the region the live diff
    showed changed; a write's hold the new text, and the old text of a file it overwrote is not
    stored anywhere, so the diff shows the written text against nothing (a created file)."""
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return [], None
    locations = tool_locations({"path": path}, cwd) or []
    target = locations[0].path if locations else path
    line = details.get("firstChangedLine") if isinstance(details, dict) else None
    first = line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None
    if name == "write" and isinstance(args.get("content"), str):
        return [FileEditToolCallContent(type="diff", path=target, old_text=None, new_text=args["content"])], 1
    if name != "edit":
        return [], None
    listed = args.get("edits")
    edits: list[Any] = listed if isinstance(listed, list) else [args]
    diffs = [
        FileEditToolCallContent(type="diff", path=target, old_text=edit["oldText"], new_text=edit["newText"])
        for edit in edits
        if isinstance(edit, dict)
        and isinstance(edit.get("oldText"), str)
        and isinstance(edit.get("newText"), str)
    ]
    return diffs, first


def replay_updates(branch: list[EntryDict], cwd: str) -> list[Update]:
    """The messages of a stored branch (root to leaf) as the updates a live run would have sent:
    a write or edit that succeeded ends with ``diff`` content, as it did live."""
    updates: list[Update] = []
    pending_calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for entry in branch:
        if entry.get("type") != "message" or not isinstance(entry.get("message"), dict):
            continue
        message: MessageDict = entry["message"]
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks if isinstance(blocks, list) else []:
                converted = _block(block)
                if converted is not None:
                    updates.append(update_user_message(converted))
        elif role == "assistant":
            parts: Sequence[object] = content if isinstance(content, list) else []
            for part in parts:
                if not isinstance(part, dict):  # a file edited by hand may hold anything
                    continue
                kind = part.get("type")
                if kind == "text" and part.get("text"):
                    updates.append(update_agent_message_text(str(part["text"])))
                elif kind == "thinking" and part.get("thinking"):
                    updates.append(update_agent_thought_text(str(part["thinking"])))
                elif kind == "toolCall":
                    raw_args = part.get("arguments")
                    args: Mapping[str, Any] = raw_args if isinstance(raw_args, dict) else {}
                    call_id = str(part.get("id"))
                    name = str(part.get("name"))
                    pending_calls[call_id] = (name, args)
                    updates.append(tool_started(call_id, name, args, cwd))
        elif role == "toolResult":
            call_id = str(message.get("toolCallId"))
            call = pending_calls.pop(call_id, None)
            if call is None:
                continue
            is_error = bool(message.get("isError"))
            diffs, line = ([], None) if is_error else _stored_diffs(*call, message.get("details"), cwd)
            if diffs:
                where = [ToolCallLocation(path=diffs[0].path, line=line)]
                updates.append(update_tool_call(call_id, status="completed", content=diffs, locations=where))
            else:
                updates.append(tool_finished(call_id, content, is_error))
    return updates
