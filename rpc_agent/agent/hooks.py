"""Applying the host's hook results exactly as pi 0.73.1 applies its extensions' results.

Each function sends one pi extension event (only when the host declared that hook) and
returns what changes; "no answer" is always "no change".
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..protocol import host as h
from ..tools.base import Tool, ToolError, ToolOutput
from ..validation import describe
from .host import Host

JsonDict = dict[str, Any]
ResultT = TypeVar("ResultT", bound=BaseModel)


def declared(host: Host | None, name: str) -> bool:
    return host is not None and name in host.capabilities.hooks


async def run(host: Host | None, name: str, event: JsonDict, model: type[ResultT]) -> ResultT | None:
    """The hook's result, or None when it is not declared or gave no usable answer."""
    if host is None or not declared(host, name):
        return None
    result = await host.run_hook(name, {"type": name, **event})
    return result if isinstance(result, model) else None


def _blocks(blocks: list[h.TextBlock | h.ImageBlock]) -> list[JsonDict]:
    return [b.model_dump(exclude_none=True) for b in blocks]


async def tool_call(host: Host | None, tool: Tool, call_id: str, arguments: JsonDict, args: Any) -> Any:
    """pi's ``tool_call``: block with a reason, or patch the input (pi mutates ``event.input``)."""
    result = await run(
        host,
        "tool_call",
        {"toolCallId": call_id, "toolName": tool.name, "input": arguments},
        h.ToolCallHookResult,
    )
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


async def tool_result(
    host: Host | None, name: str, call_id: str, arguments: JsonDict, output: ToolOutput
) -> ToolOutput:
    """pi's ``tool_result``: each field the hook returns replaces the result's."""
    result = await run(
        host,
        "tool_result",
        {
            "toolCallId": call_id,
            "toolName": name,
            "input": arguments,
            "content": output.content,
            "isError": output.is_error,
            "details": output.details,
        },
        h.ToolResultHookResult,
    )
    if result is None:
        return output
    fields = result.model_fields_set
    return ToolOutput(
        content=_blocks(result.content) if result.content is not None else output.content,
        details=result.details if "details" in fields else output.details,
        is_error=result.isError if result.isError is not None else output.is_error,
    )


async def context(host: Host | None, messages: list[JsonDict]) -> list[JsonDict]:
    """pi's ``context``: replace the messages sent for this one model call (nothing is stored)."""
    result = await run(host, "context", {"messages": messages}, h.ContextResult)
    if result is None or result.messages is None:
        return messages
    raw = result.model_dump(mode="json", exclude_unset=True, by_alias=True)["messages"]
    return [dict(m) for m in raw]
