"""The turn loop: model call, tool calls, results, next call, until the model stops.

Every message is appended to the session (and fsynced) before its ``message_end`` event goes
out, so a client that saw an event can rely on the entry being on disk. Cancellation (abort)
comes in as an anyio cancellation of the task running the loop: whatever is in flight is
stored (the partial assistant message with stopReason "aborted", a tool result saying the
tool was cancelled) under a shield, then the cancellation continues. What a run carries is in
``run_context.py``, one tool call in ``tool_calls.py``.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from rpc_agent.agent import hooks
from rpc_agent.agent.queue import QueuedCustom, QueuedMessage
from rpc_agent.agent.run_context import (
    Authorize,
    Emit,
    RunContext,
    RunOutcome,
    append_and_announce,
    now_ms,
    user_message,
)
from rpc_agent.agent.structured import INVALID_OUTPUT
from rpc_agent.agent.structured import TOOL_NAME as STRUCTURED_TOOL
from rpc_agent.agent.tool_calls import execute_tool_call
from rpc_agent.errors import ProviderError
from rpc_agent.protocol import builders as build
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.providers.base import empty_usage

__all__ = [
    "Authorize",
    "Emit",
    "RunContext",
    "RunOutcome",
    "answer_aborted",
    "append_and_announce",
    "error_message",
    "execute_tool_call",
    "run_turns",
    "stream_assistant",
    "stream_with_retry",
    "user_message",
]


async def run_turns(ctx: RunContext, first: list[QueuedMessage], outcome: RunOutcome) -> None:
    """Run until the model stops and no steering or follow-up message is waiting."""
    pending = first
    turns = 0
    while True:
        for queued in pending:
            entry_id = await append_and_announce(ctx, user_message(queued.text, queued.images))
            if ctx.checkpoints is not None:
                ctx.checkpoints.entry_appended(entry_id)
        pending = []
        while ctx.extra_first:
            await _append_custom_message(ctx, ctx.extra_first.pop(0))
        turns += 1
        ctx.emit(ev.TurnStartEvent())
        turn_start = len(ctx.new_messages)
        try:
            assistant = await stream_with_retry(ctx, outcome)
            tool_results: list[MessageDict] = []
            if assistant is None:
                return
            calls = [
                b for b in assistant.get("content", []) if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            if assistant.get("stopReason") in ("error", "aborted"):
                ctx.emit(build.turn_end(assistant, []))
                return
            for call in calls:
                tool_results.append(await execute_tool_call(ctx, call))
        except anyio.get_cancelled_exc_class():
            _end_aborted_turn(ctx, turn_start)
            raise
        ctx.emit(build.turn_end(assistant, tool_results))
        outcome.stop_reason = assistant.get("stopReason")
        if ctx.structured is not None:
            verdict = ctx.structured.settle(calls)
            if verdict.ends:
                outcome.stop_reason = "stop" if verdict.error is None else INVALID_OUTPUT
                outcome.error_message = verdict.error
                return
            if verdict.force_tool:
                ctx.request.tool_choice = STRUCTURED_TOOL
            if verdict.remind:
                ctx.extra_first.append(verdict.reminder())
        if _limit_reached(ctx, outcome, turns, bool(calls or ctx.extra_first)):
            return
        pending = _dequeue(ctx, ctx.queue.take_steering, ctx.settings.steering_mode)
        # Host messages sent during the run (``extra_first``) steer it, as in pi.
        if pending or ctx.extra_first or (calls and turns < ctx.settings.max_turns):
            continue
        pending = _dequeue(ctx, ctx.queue.take_follow_up, ctx.settings.follow_up_mode)
        if not pending:
            return


async def answer_aborted(ctx: RunContext, prompt: list[MessageDict]) -> None:
    """Close an aborted run the way an abort mid-stream closes it: the prompt stored, then an
    assistant message with ``stopReason: "aborted"`` (empty when nothing streamed yet).

    An abort that lands before the model call (while the prompt's line waits for the disk,
    or before the run stored anything) would otherwise leave a file that ends with the user's
    message. A run that ended on its answer or on an aborted tool result is left as it is.
    """
    if not ctx.new_messages:
        for message in prompt:
            await append_and_announce(ctx, message)
    if not ctx.new_messages or ctx.new_messages[-1].get("role") in ("assistant", "toolResult"):
        return
    aborted = error_message(ctx, "Request was aborted")
    aborted["stopReason"] = "aborted"
    await append_and_announce(ctx, aborted)


def _dequeue(ctx: RunContext, take: Callable[[str], list[QueuedMessage]], mode: str) -> list[QueuedMessage]:
    """What ``take`` lets through in ``mode`` from its queue; the client hears that it changed."""
    taken = take(mode)
    if taken:
        ctx.on_queue_change()
    return taken


def _end_aborted_turn(ctx: RunContext, turn_start: int) -> None:
    """Close a turn that an abort cut short: its (aborted) answer and the results stored so far.

    Whatever was in flight has been stored by then (the partial answer, the aborted tool
    result), so the turn's messages are the tail of ``new_messages``.
    """
    added = ctx.new_messages[turn_start:]
    answer = next((i for i in range(len(added) - 1, -1, -1) if added[i].get("role") == "assistant"), None)
    if answer is None:
        return
    results = [m for m in added[answer + 1 :] if m.get("role") == "toolResult"]
    ctx.emit(build.turn_end(added[answer], results))


def _limit_reached(ctx: RunContext, outcome: RunOutcome, turns: int, more: bool) -> bool:
    """Stop a run at its turn or budget limit, with a stop reason naming the limit."""
    if ctx.max_budget_usd is not None:
        spent = sum(_cost(m) for m in ctx.new_messages if m.get("role") == "assistant")
        if spent >= ctx.max_budget_usd and more:
            outcome.stop_reason = "max_budget"
            outcome.error_message = (
                f"stopped: the run cost ${spent:.4f}, the budget is ${ctx.max_budget_usd:.4f}"
            )
            return True
    if ctx.max_turns is not None and more and turns >= ctx.max_turns:
        outcome.stop_reason = "max_turns"
        outcome.error_message = f"stopped: the run reached its limit of {ctx.max_turns} turns"
        return True
    return False


def _cost(message: MessageDict) -> float:
    """What one answer cost; 0 when its usage says nothing (a message a hook or a file gave)."""
    usage: Mapping[str, Any] = message.get("usage") or {}
    cost: Mapping[str, Any] = usage.get("cost") or {}
    return float(cost.get("total") or 0)


async def _append_custom_message(ctx: RunContext, custom: QueuedCustom) -> None:
    entry_id = await ctx.manager.append_custom_message_entry(
        custom["customType"], custom["content"], custom.get("display", True), custom.get("details")
    )
    message: MessageDict = {
        "role": "custom",
        "customType": custom["customType"],
        "content": custom["content"],
    }
    if "display" in custom:
        message["display"] = custom["display"]
    if "details" in custom:
        message["details"] = custom["details"]
    message["timestamp"] = now_ms()
    ctx.new_messages.append(message)
    ctx.emit(build.message_start(message))
    ctx.emit(build.message_end(message, entry_id))


async def stream_with_retry(ctx: RunContext, outcome: RunOutcome) -> MessageDict | None:
    """One assistant message, retried with backoff on transient provider errors."""
    retry = ctx.settings.retry
    assert retry is not None
    attempt = 0
    while True:
        try:
            message = await stream_assistant(ctx)
        except ProviderError as exc:
            error = exc
            partial = None
        else:
            if message.get("stopReason") != "error":
                if attempt:
                    ctx.emit(ev.AutoRetryEndEvent(success=True, attempt=attempt))
                await append_and_announce(ctx, message, announce_start=False)
                outcome.stop_reason = message.get("stopReason")
                outcome.error_message = message.get("errorMessage")
                return message
            # The stream broke mid-message: the provider classified why on its error event.
            error = ctx.stream_error or ProviderError(
                str(message.get("errorMessage")), retryable=bool(message.get("retryable", False))
            )
            if not _nothing_useful(message):
                # Something arrived already: retrying would throw it away; keep it as it is.
                error = ProviderError(str(error), status=error.status, overflow=error.overflow)
            partial = message
        can_retry = error.retryable and retry.enabled and attempt < retry.max_attempts and not error.overflow
        if not can_retry:
            if attempt:
                ctx.emit(ev.AutoRetryEndEvent(success=False, attempt=attempt, finalError=str(error)))
            outcome.overflow = error.overflow
            return await _store_failure(ctx, outcome, partial, "error", str(error))
        attempt += 1
        delay_ms = min(retry.base_delay_ms * 2 ** (attempt - 1), retry.max_delay_ms)
        if error.retry_after is not None:
            delay_ms = min(int(error.retry_after * 1000), retry.max_delay_ms)
        delay_ms = int(delay_ms * (0.9 + 0.2 * random.random())) if delay_ms > 0 else 0
        if partial is not None:
            # The broken message is dropped, not stored: close it for the client (no entryId)
            # before the retry streams a new one.
            ctx.emit(build.message_end(partial))
            partial = None
        ctx.emit(
            ev.AutoRetryStartEvent(
                attempt=attempt, maxAttempts=retry.max_attempts, delayMs=delay_ms, errorMessage=str(error)
            )
        )
        ctx.retry_waiting = True
        try:
            with anyio.move_on_after(delay_ms / 1000):
                await ctx.abort_retry.wait()
        except anyio.get_cancelled_exc_class():
            # The whole run was aborted while waiting: the client still hears how the retry
            # ended, and the turn gets its aborted answer, as when an abort hits a stream.
            ctx.emit(ev.AutoRetryEndEvent(success=False, attempt=attempt, finalError="aborted"))
            with anyio.CancelScope(shield=True):
                await _store_failure(ctx, None, None, "aborted", "Request was aborted")
            raise
        finally:
            ctx.retry_waiting = False
        if ctx.abort_retry.is_set():
            ctx.abort_retry = anyio.Event()
            ctx.emit(ev.AutoRetryEndEvent(success=False, attempt=attempt, finalError="retry aborted"))
            return await _store_failure(ctx, outcome, partial, "aborted", "retry aborted")


async def _store_failure(
    ctx: RunContext, outcome: RunOutcome | None, partial: MessageDict | None, stop_reason: str, text: str
) -> MessageDict:
    """Store the message an attempt that failed for good ends with: what arrived of it, or one
    that only says why (announced first: the client saw no start of it)."""
    failed = partial or error_message(ctx, text)
    failed["stopReason"] = stop_reason
    failed["errorMessage"] = text
    if partial is None:
        ctx.emit(build.message_start(failed))
    await append_and_announce(ctx, failed, announce_start=False)
    if outcome is not None:
        outcome.stop_reason = stop_reason
        outcome.error_message = text
    return failed


def _nothing_useful(message: MessageDict) -> bool:
    """A stream that broke mid-message is retried only when nothing useful arrived yet."""
    return not any(
        isinstance(b, dict) and (b.get("text") or b.get("thinking") or b.get("type") == "toolCall")
        for b in message.get("content", [])
    )


def error_message(ctx: RunContext, text: str) -> MessageDict:
    """An assistant message that holds nothing but why there is no answer."""
    return {
        "role": "assistant",
        "content": [],
        "api": ctx.request.model.provider,
        "provider": ctx.request.model.provider,
        "model": ctx.request.model.id,
        "usage": empty_usage(),
        "stopReason": "error",
        "errorMessage": text,
        "timestamp": now_ms(),
    }


async def stream_assistant(ctx: RunContext) -> MessageDict:
    """Stream one assistant message, forwarding deltas; returns the final message (not stored).

    On cancellation the partial message is stored with stopReason "aborted" before the
    cancellation goes on.
    """
    context = ctx.manager.build_session_context()
    request = dataclasses.replace(ctx.request, messages=context.messages)
    partial: MessageDict | None = None
    started = False
    ctx.stream_error = None
    try:
        if hooks.declared(ctx.host, "context"):
            request.messages = await hooks.context(ctx.host, request.messages)
        async for event in ctx.provider.stream(request):
            partial = event.partial
            if event.type == "error":
                ctx.stream_error = event.error
            if not started:
                started = True
                ctx.emit(build.message_start(copy.deepcopy(partial)))
            ctx.emit(build.message_update(event.step(), partial.get("usage")))
            if event.type in ("done", "error"):
                return copy.deepcopy(partial)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            aborted = copy.deepcopy(partial) if partial is not None else error_message(ctx, "aborted")
            aborted["stopReason"] = "aborted"
            aborted["errorMessage"] = "Request was aborted"
            if not started:
                ctx.emit(build.message_start(aborted))
            await append_and_announce(ctx, aborted, announce_start=False)
        raise
    if partial is None:
        raise ProviderError("the provider ended the stream without a message", retryable=True)
    final = copy.deepcopy(partial)
    if final.get("stopReason") not in ("stop", "length", "toolUse"):
        final["stopReason"] = "stop"
    return final
