"""Applying the host's hook results exactly as pi 0.73.1 applies its extensions' results.

Each function sends one pi extension event (only when the host declared that hook) and
returns what changes; "no answer" is always "no change".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from rpc_agent.agent.branch_summary import prepare_branch_summary
from rpc_agent.agent.compaction import CompactionPreparation
from rpc_agent.agent.host import Host, host_blocks
from rpc_agent.agent.queue import QueuedCustom
from rpc_agent.protocol import host as h
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.shapes import BlockDict, EntryDict, MessageDict
from rpc_agent.providers.base import ProviderRequest
from rpc_agent.store.manager import SessionManager
from rpc_agent.tools.base import Tool, ToolError, ToolOutput
from rpc_agent.validation import describe

ResultT = TypeVar("ResultT", bound=BaseModel)


class RunStart(Protocol):
    """What ``before_agent_start`` reads and sets of a run about to start (the loop's
    ``RunContext``)."""

    request: ProviderRequest
    cwd: Any
    extra_first: list[QueuedCustom]


def declared(host: Host | None, name: str) -> bool:
    return host is not None and name in host.capabilities.hooks


async def run(
    host: Host | None, name: str, event: Mapping[str, object], model: type[ResultT]
) -> ResultT | None:
    """The hook's result, or None when it is not declared or gave no usable answer.

    ``event`` is pi's event object of that hook, without its ``type`` (added here); each hook
    has its own fields (``protocol.host.HOOK_EVENTS``)."""
    if host is None or not declared(host, name):
        return None
    result = await host.run_hook(name, {"type": name, **event})
    return result if isinstance(result, model) else None


def call_event(call_id: str, tool_name: str, arguments: Mapping[str, object]) -> dict[str, object]:
    """What pi's ``tool_call`` and ``tool_result`` events both say: which call, of which tool,
    with which input (the model's arguments, before a ``tool_call`` hook patched them)."""
    return {"toolCallId": call_id, "toolName": tool_name, "input": arguments}


async def tool_call(host: Host | None, tool: Tool, call: Mapping[str, object], args: Any) -> Any:
    """pi's ``tool_call``: block with a reason, or patch the input (pi mutates ``event.input``)."""
    result = await run(host, "tool_call", call, h.ToolCallHookResult)
    if result is None:
        return args
    if result.block:
        raise ToolError(result.reason or "Tool execution was blocked by an extension")
    if result.input is not None:
        try:
            return tool.Args.model_validate(result.input)
        except ValidationError as exc:
            raise ToolError(
                f"Invalid arguments for {tool.name} (from the tool_call hook): {describe(exc, whole='(arguments)')}"
            ) from None
    return args


async def tool_result(host: Host | None, call: Mapping[str, object], output: ToolOutput) -> ToolOutput:
    """pi's ``tool_result``: each field the hook returns replaces the result's."""
    result = await run(
        host,
        "tool_result",
        {**call, "content": output.content, "isError": output.is_error, "details": output.details},
        h.ToolResultHookResult,
    )
    if result is None:
        return output
    fields = result.model_fields_set
    return ToolOutput(
        content=host_blocks(result.content) if result.content is not None else output.content,
        details=result.details if "details" in fields else output.details,
        is_error=result.isError if result.isError is not None else output.is_error,
    )


async def context(host: Host | None, messages: list[MessageDict]) -> list[MessageDict]:
    """pi's ``context``: replace the messages sent for this one model call (nothing is stored)."""
    result = await run(host, "context", {"messages": messages}, h.ContextResult)
    if result is None or result.messages is None:
        return messages
    # The hook's messages, validated as pi's messages, as the store would hold them.
    replaced: list[MessageDict] = result.model_dump(mode="json", exclude_unset=True, by_alias=True)[
        "messages"
    ]
    return replaced


async def input_(
    host: Host | None, text: str, images: list[BlockDict] | None
) -> tuple[bool, str, list[BlockDict] | None]:
    """pi's ``input``: (handled, text, images); "transform" replaces the prompt."""
    answer = await run(host, "input", {"text": text, "images": images, "source": "rpc"}, h.InputResult)
    if answer is None:
        return False, text, images
    if answer.action == "handled":
        return True, text, images
    if answer.action == "transform":
        text = answer.text if answer.text is not None else text
        images = answer.images if answer.images is not None else images
    return False, text, images


async def before_agent_start(
    host: Host | None, ctx: RunStart, prompt: str, images: list[BlockDict] | None
) -> None:
    """pi's ``before_agent_start``: a custom message stored after the prompt, and the system
    prompt for this run."""
    start = await run(
        host,
        "before_agent_start",
        {
            "prompt": prompt,
            "images": images or None,
            "systemPrompt": ctx.request.system_prompt,
            "systemPromptOptions": {"cwd": str(ctx.cwd)},
        },
        h.BeforeAgentStartResult,
    )
    if start is None:
        return
    if start.systemPrompt:
        ctx.request.system_prompt = start.systemPrompt
    if start.message is not None:
        ctx.extra_first.append(_queued(start.message))


def _queued(message: h.HookCustomMessage) -> QueuedCustom:
    """The hook's custom message with the fields it gave (what it left out stays out)."""
    custom: QueuedCustom = {"customType": message.customType, "content": message.content}
    given = message.model_fields_set
    if "display" in given:
        custom["display"] = message.display
    if "details" in given:
        custom["details"] = message.details
    return custom


async def before_tree(
    host: Host | None,
    manager: SessionManager,
    params: m.NavigateTreeParams,
    old_leaf: str | None,
    new_leaf: str | None,
) -> tuple[m.NavigateTreeParams, h.TreeSummary | None] | None:
    """pi's ``session_before_tree``: None when the hook cancels the navigation; else the
    request with the hook's instructions and label, and its summary (used only when a summary
    was asked for, as pi does)."""
    preparation = prepare_branch_summary(manager, old_leaf, new_leaf)
    answer = await run(
        host,
        "session_before_tree",
        {
            "preparation": {
                "targetId": params.targetId,
                "oldLeafId": old_leaf,
                "commonAncestorId": preparation.common_ancestor_id,
                "entriesToSummarize": preparation.entries,
                "userWantsSummary": params.summarize,
                "customInstructions": params.customInstructions,
                "replaceInstructions": params.replaceInstructions,
                "label": params.label,
            }
        },
        h.SessionBeforeTreeResult,
    )
    if answer is None:
        return params, None
    if answer.cancel:
        return None
    overrides = {
        key: getattr(answer, key)
        for key in ("customInstructions", "replaceInstructions", "label")
        if getattr(answer, key) is not None
    }
    summary = answer.summary if params.summarize else None
    return params.model_copy(update=overrides), summary


async def before_compact(
    host: Host | None,
    branch: list[EntryDict],
    preparation: CompactionPreparation,
    tokens_before: int,
    custom_instructions: str | None,
) -> h.SessionBeforeCompactResult | None:
    """pi's ``session_before_compact``: the caller cancels, or stores the given compaction."""
    return await run(
        host,
        "session_before_compact",
        {
            "preparation": {
                "firstKeptEntryId": preparation.first_kept_entry_id,
                "messagesToSummarize": preparation.messages_to_summarize,
                "turnPrefixMessages": preparation.turn_prefix_messages,
                "isSplitTurn": preparation.is_split_turn,
                "tokensBefore": tokens_before,
                "previousSummary": preparation.previous_summary,
            },
            "branchEntries": branch,
            "customInstructions": custom_instructions,
        },
        h.SessionBeforeCompactResult,
    )
