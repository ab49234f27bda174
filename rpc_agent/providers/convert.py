"""Stored messages -> the ``messages`` of an Anthropic Messages API request. Pure functions.

What they build is typed with the SDK's own param TypedDicts, so mypy checks the request
against what the SDK accepts; those are imported for type checking only, since importing the
SDK takes seconds (see ``anthropic.sdk``). The rest of the request is ``providers.request``'s.

The messages this builds are always valid, whatever the stored history looks like:

- the conversation starts with a user message (a short placeholder is put first when the
  history starts with an assistant message, as after a compaction cut);
- user and assistant messages alternate (consecutive same-role messages are merged);
- every ``tool_result`` answers a ``tool_use`` of the assistant message right before it, and
  comes before any other block of its user message, as the API requires;
- every ``tool_use`` gets its ``tool_result`` in the next user message: a call whose result
  is missing (abort, branch or compaction cut) gets a synthetic error result
  "No result provided";
- a tool result whose call is not in the previous assistant message (an orphan) becomes
  plain user text, never a ``tool_result``; so does a second result for the same call;
- an assistant message with stopReason error/aborted is dropped when it has no content, when
  another assistant message follows it (it was superseded by a retry) or when it is the last
  message (the API would take it as a prefill);
- text blocks are never empty or whitespace-only.

System messages (pi 1.5) never become turns: ``providers.request`` folds them into the
request's system prompt.

Thinking blocks of the same model go back verbatim with their signature (redacted thinking as
``redacted_thinking`` with its data). A thinking block without a signature (a stream cut
before the signature arrived), or one written by another model or provider (its signature
would not verify), is sent as plain text; redacted thinking of another model is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from rpc_agent.protocol.shapes import BlockDict, Content, MessageDict
from rpc_agent.providers.models import PROVIDER

if TYPE_CHECKING:
    from anthropic.types import (
        AssistantMessageParam,
        CacheControlEphemeralParam,
        ImageBlockParam,
        MessageParam,
        RedactedThinkingBlockParam,
        TextBlockParam,
        ThinkingBlockParam,
        ToolResultBlockParam,
        ToolUseBlockParam,
        UserMessageParam,
    )

    UserBlock: TypeAlias = TextBlockParam | ImageBlockParam
    """What user content and a tool result's content hold."""
    TurnBlock: TypeAlias = ToolResultBlockParam | TextBlockParam | ImageBlockParam
    """What a user message of the request holds."""
    AssistantBlock: TypeAlias = (
        TextBlockParam | ThinkingBlockParam | RedactedThinkingBlockParam | ToolUseBlockParam
    )

API = "anthropic-messages"

EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}

BRANCH_SUMMARY_PREAMBLE = "The following is a summary of a branch that this conversation came back from:"
COMPACTION_SUMMARY_PREAMBLE = (
    "The conversation history before this point was compacted into the following summary:"
)
MISSING_RESULT_TEXT = "No result provided"
LEADING_PLACEHOLDER = "(Earlier parts of this conversation are not included.)"

ImageMediaType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
_MEDIA_TYPES: dict[str, ImageMediaType] = {
    "image/jpeg": "image/jpeg",
    "image/png": "image/png",
    "image/gif": "image/gif",
    "image/webp": "image/webp",
}
IMAGE_MEDIA_TYPES = frozenset(_MEDIA_TYPES)
BLOB_PREFIX = "blob:sha256:"

_TOOL_ID_BAD = re.compile(r"[^a-zA-Z0-9_-]")


# --- small helpers ------------------------------------------------------------------------


def clean_text(text: str) -> str:
    """Text safe to send: lone surrogates (which the API rejects) become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _text_block(text: str) -> TextBlockParam | None:
    if not text or not text.strip():
        return None
    return {"type": "text", "text": clean_text(text)}


def tool_call_id(raw: Any) -> str:
    """An id the API accepts (``^[a-zA-Z0-9_-]{1,64}$``); ids from other providers may not."""
    text = str(raw or "")
    fixed = _TOOL_ID_BAD.sub("_", text)[:64]
    return fixed or "toolu_missing"


def _image_block(block: BlockDict) -> UserBlock:
    data = block.get("data")
    mime = str(block.get("mimeType") or "")
    if not isinstance(data, str) or not data:
        return {"type": "text", "text": "[image omitted: no data]"}
    if data.startswith(BLOB_PREFIX):
        return {"type": "text", "text": f"[image omitted: its data ({mime or 'image'}) is not available]"}
    media_type = _MEDIA_TYPES.get(mime)
    if media_type is None:
        return {"type": "text", "text": f"[image omitted: unsupported type {mime or 'unknown'}]"}
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _stored_blocks(content: Content | None) -> list[BlockDict]:
    """The blocks of a stored content list (none for a string)."""
    if not isinstance(content, list):
        return []
    blocks: list[BlockDict] = []
    for item in content:
        stored: object = item
        if isinstance(stored, dict):  # files are not validated when read: a block may be anything
            blocks.append(item)
    return blocks


def _user_blocks(content: Content | None) -> list[UserBlock]:
    """Blocks of a user-side content value (a string or a list of text/image blocks): text
    (dropped when empty) and images."""
    if isinstance(content, str):
        block = _text_block(content)
        return [block] if block else []
    blocks: list[UserBlock] = []
    for item in _stored_blocks(content):
        kind = item.get("type")
        if kind == "text":
            text = _text_block(str(item.get("text") or ""))
            if text is not None:
                blocks.append(text)
        elif kind == "image":
            blocks.append(_image_block(item))
    return blocks


def bash_execution_text(message: MessageDict) -> str:
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output") or ""
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(exit_code, int) and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated"):
        path = message.get("fullOutputPath")
        text += f"\n\n[Output truncated. Full output: {path}]" if path else "\n\n[Output truncated]"
    return text


def summary_text(preamble: str, summary: str) -> str:
    return f"{preamble}\n\n<summary>\n{summary}\n</summary>"


# --- pass 1: each stored message to role + blocks -----------------------------------------


class _User:
    """A stored message that becomes part of a user turn."""

    __slots__ = ("blocks",)

    def __init__(self, blocks: list[UserBlock]) -> None:
        self.blocks = blocks


class _Assistant:
    __slots__ = ("blocks",)

    def __init__(self, blocks: list[AssistantBlock]) -> None:
        self.blocks = blocks


class _Result:
    """A tool result; ``content`` and ``is_error`` are what ``block`` holds, kept typed."""

    __slots__ = ("block", "content", "is_error", "name", "tool_id")

    def __init__(
        self, block: ToolResultBlockParam, content: list[UserBlock], is_error: bool, name: str
    ) -> None:
        self.block = block
        self.content = content
        self.is_error = is_error
        self.tool_id = block["tool_use_id"]
        self.name = name


def _assistant_blocks(message: MessageDict, model_id: str) -> list[AssistantBlock]:
    same_model = (
        message.get("model") == model_id
        and message.get("provider", PROVIDER) == PROVIDER
        and message.get("api", API) == API
    )
    blocks: list[AssistantBlock] = []
    for item in _stored_blocks(message.get("content")):
        if item.get("type") == "text":
            block: AssistantBlock | None = _text_block(str(item.get("text") or ""))
        else:
            block = _assistant_block(item, same_model)
        if block is not None:
            blocks.append(block)
    return blocks


def _assistant_block(item: BlockDict, same_model: bool) -> AssistantBlock | None:
    kind = item.get("type")
    if kind == "thinking":
        signature = item.get("thinkingSignature")
        thinking = str(item.get("thinking") or "")
        if item.get("redacted"):
            return {"type": "redacted_thinking", "data": signature} if same_model and signature else None
        if same_model and signature:
            return {"type": "thinking", "thinking": thinking, "signature": signature}
        return _text_block(thinking)
    if kind == "toolCall":
        arguments = item.get("arguments")
        return {
            "type": "tool_use",
            "id": tool_call_id(item.get("id")),
            "name": str(item.get("name") or "unknown"),
            "input": arguments if isinstance(arguments, dict) else {},
        }
    return None


def _result(message: MessageDict) -> _Result:
    result: ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": tool_call_id(message.get("toolCallId")),
    }
    content = _user_blocks(message.get("content"))
    if content:
        result["content"] = content
    is_error = bool(message.get("isError"))
    if is_error:
        result["is_error"] = True
    return _Result(result, content, is_error, str(message.get("toolName") or ""))


def _items(messages: Sequence[MessageDict], model_id: str) -> list[_User | _Assistant | _Result]:
    items: list[_User | _Assistant | _Result] = []
    count = len(messages)
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "user" or role == "custom":
            blocks = _user_blocks(message.get("content"))
            if blocks:
                items.append(_User(blocks))
        elif role == "assistant":
            assistant_blocks = _assistant_blocks(message, model_id)
            if message.get("stopReason") in ("error", "aborted"):
                following = messages[index + 1].get("role") if index + 1 < count else None
                if not assistant_blocks or following in (None, "assistant"):
                    continue
            if assistant_blocks:
                items.append(_Assistant(assistant_blocks))
        elif role == "toolResult":
            items.append(_result(message))
        elif role == "bashExecution":
            if message.get("excludeFromContext"):
                continue
            items.append(_User([{"type": "text", "text": clean_text(bash_execution_text(message))}]))
        elif role == "branchSummary":
            text = summary_text(BRANCH_SUMMARY_PREAMBLE, str(message.get("summary") or ""))
            items.append(_User([{"type": "text", "text": clean_text(text)}]))
        elif role == "compactionSummary":
            text = summary_text(COMPACTION_SUMMARY_PREAMBLE, str(message.get("summary") or ""))
            items.append(_User([{"type": "text", "text": clean_text(text)}]))
        # System messages are folded into the system prompt (``request.system_text``);
        # unknown roles never reach the model.
    return items


def _orphan_blocks(item: _Result) -> list[UserBlock]:
    label = f"`{item.name}`" if item.name else "a tool"
    status = " (error)" if item.is_error else ""
    header = f"[Result{status} of a call to {label} that is no longer in this conversation]"
    content = item.content
    if content and content[0]["type"] == "text":
        first: TextBlockParam = {"type": "text", "text": f"{header}\n{content[0]['text']}"}
        return [first, *content[1:]]
    return [{"type": "text", "text": header}, *content]


# --- pass 2: assemble valid turns ---------------------------------------------------------


class _UserTurn:
    __slots__ = ("answered", "others", "results")

    def __init__(self) -> None:
        self.results: dict[str, ToolResultBlockParam] = {}
        self.answered: set[str] = set()
        self.others: list[UserBlock] = []


def _finish_user_turn(turn: _UserTurn, pending: list[str]) -> list[TurnBlock]:
    """Tool results first, in the order of the calls; a synthetic error for each missing one."""
    blocks: list[TurnBlock] = []
    for tool_id in pending:
        result = turn.results.get(tool_id)
        if result is None:
            result = {
                "type": "tool_result",
                "tool_use_id": tool_id,
                "content": [{"type": "text", "text": MISSING_RESULT_TEXT}],
                "is_error": True,
            }
        blocks.append(result)
    blocks.extend(turn.others)
    return blocks


def _extend_assistant(
    content: list[AssistantBlock], blocks: list[AssistantBlock], pending: list[str]
) -> None:
    """Append blocks to an assistant message, keeping its tool_use ids unique (a repeated id
    is renamed, so its call gets the synthetic missing result)."""
    for block in blocks:
        if block["type"] == "tool_use":
            tool_id = block["id"]
            if tool_id in pending:
                suffix = 2
                while f"{tool_id[:58]}_{suffix}" in pending:
                    suffix += 1
                tool_id = f"{tool_id[:58]}_{suffix}"
                block = block.copy()
                block["id"] = tool_id
            pending.append(tool_id)
        content.append(block)


def convert_messages(
    messages: Sequence[MessageDict], *, model_id: str, cache: bool = True
) -> list[MessageParam]:
    """The ``messages`` param for a request to ``model_id`` (see the module docstring)."""
    out: list[MessageParam] = []
    user_contents: list[list[TurnBlock]] = []  # the content of each user message in ``out``
    assistant: list[AssistantBlock] | None = None  # the content of out[-1] when it is an assistant's
    pending: list[str] = []  # tool_use ids of the assistant message the open user turn answers
    turn: _UserTurn | None = None

    def close_turn() -> None:
        nonlocal turn, assistant
        if turn is not None:
            blocks = _finish_user_turn(turn, pending)
            if blocks:
                message: UserMessageParam = {"role": "user", "content": blocks}
                out.append(message)
                user_contents.append(blocks)
                assistant = None
            turn = None

    for item in _items(messages, model_id):
        if isinstance(item, _Assistant):
            if turn is None and assistant is not None:
                # Two assistant messages in a row: one message, whose calls all need answers.
                _extend_assistant(assistant, item.blocks, pending)
                continue
            close_turn()
            pending = []
            assistant = []
            reply: AssistantMessageParam = {"role": "assistant", "content": assistant}
            out.append(reply)
            _extend_assistant(assistant, item.blocks, pending)
            continue
        if turn is None:
            turn = _UserTurn()
        if isinstance(item, _Result):
            if item.tool_id in pending and item.tool_id not in turn.answered:
                turn.answered.add(item.tool_id)
                turn.results[item.tool_id] = item.block
            else:
                turn.others.extend(_orphan_blocks(item))
        else:
            turn.others.extend(item.blocks)
    if turn is None and pending:
        # The history ends with calls that were never answered (an abort mid-tool-call).
        turn = _UserTurn()
    close_turn()

    if out and out[0]["role"] == "assistant":
        placeholder: list[TurnBlock] = [{"type": "text", "text": LEADING_PLACEHOLDER}]
        first: UserMessageParam = {"role": "user", "content": placeholder}
        out.insert(0, first)
        user_contents.insert(0, placeholder)
    if cache:
        _mark_cache(user_contents)
    return out


def _mark_cache(user_contents: list[list[TurnBlock]]) -> None:
    """cache_control on the last block of the last two user messages (two breakpoints, so the
    previous turn's cache entry is read while the new one is written)."""
    marked = 0
    for content in reversed(user_contents):
        if content:
            block = content[-1].copy()
            block["cache_control"] = EPHEMERAL.copy()
            content[-1] = block
            marked += 1
        if marked == 2:
            break
