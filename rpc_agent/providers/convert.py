"""Stored messages -> Anthropic Messages API request params. Pure functions, no SDK import.

The request this builds is always valid, whatever the stored history looks like:

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

System messages (pi 1.5 stores the system prompt and tool set as ``role: "system"``
messages) never become turns. As pi-ai does for Claude models, which take no system
messages mid-conversation, they are folded into the request's one ``system`` prompt: the agent's
own prompt and tools stand where pi would declare its live prompt sections and tools over the
stored ones, and the ``content`` of each stored system message (instructions added from that
point on, which pi's replay keeps) follows it.

Thinking blocks of the same model go back verbatim with their signature (redacted thinking as
``redacted_thinking`` with its data). A thinking block without a signature (a stream cut
before the signature arrived), or one written by another model or provider (its signature
would not verify), is sent as plain text; redacted thinking of another model is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from rpc_agent.protocol.base import JsonDict
from rpc_agent.providers.base import ProviderRequest, ToolSpec
from rpc_agent.providers.models import DEFAULT_OUTPUT_TOKENS, PROVIDER, spec_for, thinking_params
from rpc_agent.store.projection import content_text

API = "anthropic-messages"

EPHEMERAL: JsonDict = {"type": "ephemeral"}

BRANCH_SUMMARY_PREAMBLE = "The following is a summary of a branch that this conversation came back from:"
COMPACTION_SUMMARY_PREAMBLE = (
    "The conversation history before this point was compacted into the following summary:"
)
MISSING_RESULT_TEXT = "No result provided"
LEADING_PLACEHOLDER = "(Earlier parts of this conversation are not included.)"

IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
BLOB_PREFIX = "blob:sha256:"

_TOOL_ID_BAD = re.compile(r"[^a-zA-Z0-9_-]")


# --- small helpers ------------------------------------------------------------------------


def _clean(text: str) -> str:
    """Text safe to send: lone surrogates (which the API rejects) become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _text_block(text: str) -> JsonDict | None:
    if not text or not text.strip():
        return None
    return {"type": "text", "text": _clean(text)}


def tool_call_id(raw: Any) -> str:
    """An id the API accepts (``^[a-zA-Z0-9_-]{1,64}$``); ids from other providers may not."""
    text = str(raw or "")
    fixed = _TOOL_ID_BAD.sub("_", text)[:64]
    return fixed or "toolu_missing"


def _image_block(block: JsonDict) -> JsonDict:
    data = block.get("data")
    mime = str(block.get("mimeType") or "")
    if not isinstance(data, str) or not data:
        return {"type": "text", "text": "[image omitted: no data]"}
    if data.startswith(BLOB_PREFIX):
        return {"type": "text", "text": f"[image omitted: its data ({mime or 'image'}) is not available]"}
    if mime not in IMAGE_MEDIA_TYPES:
        return {"type": "text", "text": f"[image omitted: unsupported type {mime or 'unknown'}]"}
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def _content_blocks(content: Any, convert: Callable[[JsonDict], JsonDict | None]) -> list[JsonDict]:
    """The API blocks of a stored content list: a text block as text (dropped when empty),
    any other block as ``convert`` makes it (None: dropped)."""
    if not isinstance(content, list):
        return []
    blocks: list[JsonDict] = []
    for item in content:
        if not isinstance(item, dict):
            continue
        block = _text_block(str(item.get("text") or "")) if item.get("type") == "text" else convert(item)
        if block is not None:
            blocks.append(block)
    return blocks


def _user_blocks(content: Any) -> list[JsonDict]:
    """Blocks of a user-side content value (a string or a list of text/image blocks)."""
    if isinstance(content, str):
        block = _text_block(content)
        return [block] if block else []
    return _content_blocks(content, lambda item: _image_block(item) if item.get("type") == "image" else None)


def bash_execution_text(message: JsonDict) -> str:
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


class _Item:
    """One stored message, converted: a user turn part, an assistant message or a result."""

    __slots__ = ("blocks", "kind", "name", "tool_id")

    def __init__(self, kind: str, blocks: list[JsonDict], *, tool_id: str = "", name: str = "") -> None:
        self.kind = kind  # "user" | "assistant" | "result"
        self.blocks = blocks
        self.tool_id = tool_id
        self.name = name


def _assistant_blocks(message: JsonDict, model_id: str) -> list[JsonDict]:
    same_model = (
        message.get("model") == model_id
        and message.get("provider", PROVIDER) == PROVIDER
        and message.get("api", API) == API
    )
    return _content_blocks(message.get("content"), lambda item: _assistant_block(item, same_model))


def _assistant_block(item: JsonDict, same_model: bool) -> JsonDict | None:
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


def _result_content(message: JsonDict) -> list[JsonDict]:
    return _user_blocks(message.get("content"))


def _items(messages: Sequence[JsonDict], model_id: str) -> list[_Item]:
    items: list[_Item] = []
    count = len(messages)
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "user" or role == "custom":
            blocks = _user_blocks(message.get("content"))
            if blocks:
                items.append(_Item("user", blocks))
        elif role == "assistant":
            blocks = _assistant_blocks(message, model_id)
            if message.get("stopReason") in ("error", "aborted"):
                following = messages[index + 1].get("role") if index + 1 < count else None
                if not blocks or following in (None, "assistant"):
                    continue
            if blocks:
                items.append(_Item("assistant", blocks))
        elif role == "toolResult":
            result: JsonDict = {"type": "tool_result", "tool_use_id": tool_call_id(message.get("toolCallId"))}
            content = _result_content(message)
            if content:
                result["content"] = content
            if message.get("isError"):
                result["is_error"] = True
            items.append(
                _Item(
                    "result", [result], tool_id=result["tool_use_id"], name=str(message.get("toolName") or "")
                )
            )
        elif role == "bashExecution":
            if message.get("excludeFromContext"):
                continue
            items.append(_Item("user", [{"type": "text", "text": _clean(bash_execution_text(message))}]))
        elif role == "branchSummary":
            text = summary_text(BRANCH_SUMMARY_PREAMBLE, str(message.get("summary") or ""))
            items.append(_Item("user", [{"type": "text", "text": _clean(text)}]))
        elif role == "compactionSummary":
            text = summary_text(COMPACTION_SUMMARY_PREAMBLE, str(message.get("summary") or ""))
            items.append(_Item("user", [{"type": "text", "text": _clean(text)}]))
        # System messages are folded into the system prompt (``system_text``); unknown roles
        # never reach the model.
    return items


def _orphan_blocks(item: _Item) -> list[JsonDict]:
    result = item.blocks[0]
    label = f"`{item.name}`" if item.name else "a tool"
    status = " (error)" if result.get("is_error") else ""
    header = f"[Result{status} of a call to {label} that is no longer in this conversation]"
    content: list[JsonDict] = list(result.get("content") or [])
    if content and content[0].get("type") == "text":
        first = {"type": "text", "text": f"{header}\n{content[0]['text']}"}
        return [first, *content[1:]]
    return [{"type": "text", "text": header}, *content]


# --- pass 2: assemble valid turns ---------------------------------------------------------


class _UserTurn:
    __slots__ = ("answered", "others", "results")

    def __init__(self) -> None:
        self.results: dict[str, JsonDict] = {}
        self.answered: set[str] = set()
        self.others: list[JsonDict] = []


def _finish_user_turn(turn: _UserTurn, pending: list[str]) -> list[JsonDict]:
    """Tool results first, in the order of the calls; a synthetic error for each missing one."""
    blocks: list[JsonDict] = []
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


def _extend_assistant(content: list[JsonDict], blocks: list[JsonDict], pending: list[str]) -> None:
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
                block = {**block, "id": tool_id}
            pending.append(tool_id)
        content.append(block)


def convert_messages(messages: Sequence[JsonDict], *, model_id: str, cache: bool = True) -> list[JsonDict]:
    """The ``messages`` param for a request to ``model_id`` (see the module docstring)."""
    out: list[JsonDict] = []
    pending: list[str] = []  # tool_use ids of the assistant message the open user turn answers
    turn: _UserTurn | None = None

    def close_turn() -> None:
        nonlocal turn
        if turn is not None:
            blocks = _finish_user_turn(turn, pending)
            if blocks:
                out.append({"role": "user", "content": blocks})
            turn = None

    for item in _items(messages, model_id):
        if item.kind == "assistant":
            if turn is None and out and out[-1]["role"] == "assistant":
                # Two assistant messages in a row: one message, whose calls all need answers.
                _extend_assistant(out[-1]["content"], item.blocks, pending)
                continue
            close_turn()
            pending = []
            out.append({"role": "assistant", "content": []})
            _extend_assistant(out[-1]["content"], item.blocks, pending)
            continue
        if turn is None:
            turn = _UserTurn()
        if item.kind == "result":
            if item.tool_id in pending and item.tool_id not in turn.answered:
                turn.answered.add(item.tool_id)
                turn.results[item.tool_id] = item.blocks[0]
            else:
                turn.others.extend(_orphan_blocks(item))
        else:
            turn.others.extend(item.blocks)
    if turn is None and pending:
        # The history ends with calls that were never answered (an abort mid-tool-call).
        turn = _UserTurn()
    close_turn()

    if out and out[0]["role"] == "assistant":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": LEADING_PLACEHOLDER}]})
    if cache:
        _mark_cache(out)
    return out


def _mark_cache(out: list[JsonDict]) -> None:
    """cache_control on the last block of the last two user messages (two breakpoints, so the
    previous turn's cache entry is read while the new one is written)."""
    marked = 0
    for message in reversed(out):
        if message["role"] != "user":
            continue
        content = message["content"]
        if content:
            content[-1] = {**content[-1], "cache_control": dict(EPHEMERAL)}
            marked += 1
        if marked == 2:
            break


# --- system, tools, whole request ---------------------------------------------------------


def convert_system(system_prompt: str, *, cache: bool = True) -> list[JsonDict] | None:
    if not system_prompt or not system_prompt.strip():
        return None
    block: JsonDict = {"type": "text", "text": _clean(system_prompt)}
    if cache:
        block["cache_control"] = dict(EPHEMERAL)
    return [block]


def system_text(system_prompt: str, messages: Sequence[JsonDict]) -> str:
    """The request's system prompt: the agent's own, then the instructions the context's
    system messages add (see the module docstring), separated by blank lines as pi-ai's
    replay joins them."""
    parts = [system_prompt] if system_prompt else []
    for message in messages:
        if message.get("role") == "system":
            text = content_text(message.get("content"))
            if text:
                parts.append(text)
    return "\n\n".join(parts)


def convert_tools(tools: Iterable[ToolSpec]) -> list[JsonDict]:
    converted: list[JsonDict] = []
    for tool in tools:
        schema = dict(tool.parameters) if isinstance(tool.parameters, dict) else {}
        schema.setdefault("type", "object")
        if schema["type"] == "object":
            schema.setdefault("properties", {})
        converted.append({"name": tool.name, "description": tool.description, "input_schema": schema})
    return converted


def build_params(request: ProviderRequest, *, cache: bool = True) -> JsonDict:
    """Everything the Messages API call needs except ``stream``: model, max_tokens, system,
    messages, tools, and the thinking fields for the request's level and model."""
    model = request.model
    spec = spec_for(model.id)
    if spec.max_tokens != model.maxTokens:
        spec = replace(spec, max_tokens=model.maxTokens)
    answer_tokens = request.max_tokens or min(model.maxTokens, DEFAULT_OUTPUT_TOKENS)
    if model.reasoning:
        thinking, max_tokens = thinking_params(spec, request.thinking_level, answer_tokens)
    else:
        thinking, max_tokens = {}, max(1, min(answer_tokens, model.maxTokens))
    params: JsonDict = {
        "model": model.id,
        "max_tokens": max_tokens,
        "messages": convert_messages(request.messages, model_id=model.id, cache=cache),
    }
    system = convert_system(system_text(request.system_prompt, request.messages), cache=cache)
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = convert_tools(request.tools)
    params.update(thinking)
    forced = request.tool_choice
    if forced and any(tool.name == forced for tool in request.tools) and not _thinks(params):
        params["tool_choice"] = {"type": "tool", "name": forced}
    return params


def _thinks(params: JsonDict) -> bool:
    """Whether the call may think: the API refuses a forced tool_choice with thinking on."""
    thinking = params.get("thinking")
    if thinking is not None:
        return bool(thinking.get("type") != "disabled")
    return "output_config" in params  # adaptive models think unless told not to
