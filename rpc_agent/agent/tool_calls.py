"""One tool call of a run: checked, authorized, hooked, executed, and its result stored.

A tool that fails or is cancelled still leaves a result (an error one), so every tool call the
model made has its answer in the session.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio
from pydantic import ValidationError

from rpc_agent.agent import hooks
from rpc_agent.agent.run_context import RunContext, append_and_announce, now_ms
from rpc_agent.agent.sandboxing import escape_asker
from rpc_agent.protocol import builders as build
from rpc_agent.protocol.shapes import BlockDict, MessageDict
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput, is_read_only
from rpc_agent.validation import describe


async def execute_tool_call(ctx: RunContext, call: BlockDict) -> MessageDict:
    """Run one tool call and store its result (an error result when anything goes wrong)."""
    name = str(call.get("name"))
    call_id = str(call.get("id"))
    given = call.get("arguments")
    arguments = given if isinstance(given, dict) else {}
    tool = next((t for t in ctx.tools if t.name == name), None)
    hook_event = hooks.call_event(call_id, name, dict(arguments))
    if ctx.checkpoints is not None and tool is not None and not is_read_only(tool):
        await ctx.checkpoints.barrier()  # the state before this tool is stored first
    ctx.emit(build.tool_execution_start(call_id, name, arguments))
    output: ToolOutput
    last_update = 0.0
    duration_ms: int | None = None

    def on_update(partial_output: ToolOutput) -> None:
        nonlocal last_update
        last_update = time.monotonic()
        partial = build.tool_result(partial_output.content, partial_output.details)
        ctx.emit(build.tool_execution_update(call_id, name, arguments, partial))

    try:
        if tool is None:
            raise ToolError(
                f"Tool {name!r} not found. Available tools: {', '.join(t.name for t in ctx.tools)}"
            )
        try:
            args = tool.Args.model_validate(arguments)
        except ValidationError as exc:
            raise ToolError(f"Invalid arguments for {name}: {describe(exc, whole='(arguments)')}") from None
        if ctx.authorize is not None and not await ctx.authorize(call_id, name, dict(arguments or {})):
            raise ToolError(f"The user rejected the {name} tool call; it did not run.")
        if ctx.host is not None:
            args = await hooks.tool_call(ctx.host, tool, hook_event, args)
        tool_ctx = ToolContext(
            cwd=ctx.cwd,
            tool_call_id=call_id,
            on_update=on_update,
            session_file=ctx.manager.session_file,
            session_folders=ctx.session_folders,
            commands=ctx.commands,
            env=ctx.settings.shell_environment.environ(),
            temp_files=ctx.temp_files,
            reaper=ctx.reaper,
            sandbox=ctx.sandbox,
            escape=(
                escape_asker(ctx.host, call_id, Path(ctx.cwd), ctx.sandbox.policy, ctx.emit)
                if ctx.sandbox is not None and ctx.host is not None
                else None
            ),
        )
        if ctx.files is not None:
            tool_ctx.files = ctx.files
        started = time.monotonic()
        try:
            output = await tool.execute(args, tool_ctx)
        finally:
            duration_ms = round((time.monotonic() - started) * 1000)
    except ToolError as exc:
        output = ToolOutput.text(str(exc), is_error=True)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await _store_tool_result(
                ctx, call_id, name, ToolOutput.text("Tool execution was aborted", is_error=True), duration_ms
            )
        raise
    except Exception as exc:
        output = ToolOutput.text(f"Tool {name} failed: {type(exc).__name__}: {exc}", is_error=True)
    if tool is not None and hooks.declared(ctx.host, "tool_result"):
        output = await hooks.tool_result(ctx.host, hook_event, output)
    return await _store_tool_result(ctx, call_id, name, output, duration_ms)


async def _store_tool_result(
    ctx: RunContext, call_id: str, name: str, output: ToolOutput, duration_ms: int | None
) -> MessageDict:
    """``duration_ms``: how long the tool ran (None when it never did)."""
    result: MessageDict = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": output.content,
        "isError": output.is_error,
        "timestamp": now_ms(),
    }
    if output.details is not None:
        result["details"] = output.details
    result_payload = build.tool_result(output.content, output.details)
    ctx.emit(build.tool_execution_end(call_id, name, result_payload, output.is_error, duration_ms))
    entry_id = await append_and_announce(ctx, result)
    if ctx.checkpoints is not None:
        tool = next((t for t in ctx.tools if t.name == name), None)
        ctx.checkpoints.entry_appended(entry_id, may_change=tool is not None and not is_read_only(tool))
    return result
