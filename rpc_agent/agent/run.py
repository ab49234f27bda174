"""One run of the agent: from ``agent_start`` to ``agent_end``, whatever stops it.

The run stores what it has on every way out: the prompt and an aborted answer when an abort
came before the model answered (``answer_aborted``), host messages sent too late, then a
flush; and every event it opened is closed before ``agent_end``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from rpc_agent.protocol.base import JsonDict

from ..protocol import events as ev
from ..protocol import methods as m
from ..protocol.base import trusted
from . import hooks, run_setup
from .compaction_runner import auto_compact, needs_compaction
from .loop import RunContext, RunOutcome, append_and_announce, error_message, run_turns, user_message
from .pairing import EventPairing
from .queue import QueuedMessage

if TYPE_CHECKING:
    from .session import AgentSession


def _failure_text(failure: BaseException | None) -> str:
    if failure is None or isinstance(failure, anyio.get_cancelled_exc_class()):
        return "Request was aborted"
    return str(failure) or type(failure).__name__


async def run(
    session: AgentSession,
    first: list[QueuedMessage],
    *,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
    ticket: int | None = None,
) -> m.PromptResult:
    session.is_streaming = True
    done = session._run_done = anyio.Event()
    outcome = RunOutcome()
    ctx = run_setup.run_context(session, max_turns=max_turns, max_budget_usd=max_budget_usd)
    pairing = EventPairing(session.emit, lambda text: error_message(ctx, text))
    ctx.emit = pairing
    session._run_context = ctx
    session.emit(ev.AgentStartEvent())
    failure: BaseException | None = None
    try:
        await session._user_bash.flush(session.manager)
        with anyio.CancelScope() as scope:
            session._run_scope = scope
            if session._starts.aborted(ticket):
                # Aborted between the request and here: the prompt is still stored, with
                # its (empty) aborted answer, as an abort a moment later would leave it.
                scope.cancel()
            if first:
                await hooks.before_agent_start(session.host, ctx, first[0].text, first[0].images)
            await run_turns(ctx, first, outcome)
            compaction = session.settings.compaction
            if outcome.overflow and compaction is not None and compaction.enabled:
                # The prompt no longer fits: compact, then answer the same request once more.
                if await auto_compact(session, "overflow"):
                    outcome.overflow = False
                    outcome.error_message = None
                    await run_turns(ctx, [], outcome)
            elif outcome.stop_reason not in ("error", "aborted") and needs_compaction(session):
                await auto_compact(session, "threshold")
        if scope.cancelled_caught:
            outcome.stop_reason = "aborted"
            outcome.error_message = outcome.error_message or "aborted by the client"
    except BaseException as exc:
        failure = exc
        raise
    finally:
        session._run_scope = None
        session._run_context = None
        session.is_streaming = False
        try:
            if session.queue:
                session.queue.clear()
                session._announce_queue()
            with anyio.CancelScope(shield=True):
                if outcome.stop_reason == "aborted" or isinstance(failure, anyio.get_cancelled_exc_class()):
                    await answer_aborted(ctx, [user_message(q.text, q.images) for q in first])
                for custom in ctx.extra_first:  # sent too late for this run: the next one sees it
                    await session.manager.append_custom_message_entry(
                        custom["customType"],
                        custom["content"],
                        custom.get("display", True),
                        custom.get("details"),
                    )
                await session.manager.flush()
        except Exception as exc:
            failure = failure or exc
            raise
        finally:
            # Whatever stopped the run (a failed write, any error): everything it opened is
            # closed before agent_end, so a client never waits for an end that never comes.
            pairing.close_all(_failure_text(failure))
            session.emit(trusted(ev.AgentEndEvent, messages=ctx.new_messages))
            done.set()
    return trusted(
        m.PromptResult,
        queued=False,
        stopReason=outcome.stop_reason,
        messages=ctx.new_messages,
        errorMessage=outcome.error_message,
    )


async def answer_aborted(ctx: RunContext, prompt: list[JsonDict]) -> None:
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
