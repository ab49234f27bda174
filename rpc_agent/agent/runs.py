"""A session's runs: how a prompt starts one (or is queued while one goes on), how ``abort``
stops it, and how the end of a run is awaited.

A run is the agent loop from a prompt until the model stops, is stopped or reaches a limit. It
owns the run state no other feature touches: the cancel scope, the prompts counted as started
(an ``abort`` reaches a prompt whose run has not begun), whether an abort came.
"""

from __future__ import annotations

from typing import TypedDict

import anyio

from rpc_agent.agent import hooks, run_setup
from rpc_agent.agent.compaction_runner import auto_compact, needs_compaction
from rpc_agent.agent.core import AgentCore
from rpc_agent.agent.loop import RunOutcome, answer_aborted, error_message, run_turns, user_message
from rpc_agent.agent.pairing import EventPairing
from rpc_agent.agent.queue import QueuedMessage
from rpc_agent.agent.selection import record_before_prompt
from rpc_agent.agent.starts import PromptStarts
from rpc_agent.agent.structured import check_output_schema
from rpc_agent.agent.user_bash import UserBash
from rpc_agent.errors import AgentBusyError
from rpc_agent.protocol import builders as build
from rpc_agent.protocol import events as ev
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.protocol.shapes import BlockDict

__all__ = ["PromptOptions", "Runs"]


class PromptOptions(TypedDict, total=False):
    """What a prompt may say besides its text, images and streaming behaviour (``Runs.prompt``'s
    keywords): its own limits and answer schema, and the ticket ``prompt_ticket`` took when the
    request was read."""

    max_turns: int | None
    max_budget_usd: float | None
    output_schema: JsonSchema | None
    ticket: int | None


def _failure_text(failure: BaseException | None) -> str:
    if failure is None or isinstance(failure, anyio.get_cancelled_exc_class()):
        return "Request was aborted"
    return str(failure) or type(failure).__name__


class Runs:
    """The runs of one session (``AgentSession.runs``); the session's prompt, run, abort and
    wait_idle are these."""

    def __init__(self, session: AgentCore, user_bash: UserBash) -> None:
        self._session = session
        self._user_bash = user_bash
        """The user's commands: what they left to store goes in before the run's first message."""
        self._starts = PromptStarts()
        self._scope: anyio.CancelScope | None = None
        self._done: anyio.Event | None = None
        self.abort_requested = False
        """An abort came during the current run (``agent_settled`` says so)."""

    def enqueue(self, kind: str, text: str, images: list[BlockDict] | None) -> int:
        session = self._session
        queued = QueuedMessage(text, list(images or []))
        (session.queue.steering if kind == "steer" else session.queue.follow_up).append(queued)
        session.announce_queue()
        return len(session.queue)

    def ticket(self) -> int:
        """Count a prompt as starting from now (an ``abort`` reaches it); ``prompt`` takes it."""
        return self._starts.ticket()

    async def prompt(
        self,
        text: str,
        images: list[BlockDict] | None,
        streaming_behavior: str | None,
        *,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
        output_schema: JsonSchema | None = None,
        ticket: int | None = None,
    ) -> m.PromptResult:
        if ticket is None:
            ticket = self._starts.ticket()
        try:
            return await self._prompt(
                text, images, streaming_behavior, ticket, max_turns, max_budget_usd, output_schema
            )
        finally:
            self._starts.ended()

    async def _prompt(
        self,
        text: str,
        images: list[BlockDict] | None,
        streaming_behavior: str | None,
        ticket: int,
        max_turns: int | None,
        max_budget_usd: float | None,
        output_schema: JsonSchema | None,
    ) -> m.PromptResult:
        session = self._session
        if output_schema is not None:
            check_output_schema(output_schema)  # refused before anything runs
        if session.mcp is not None and not (session.is_streaming or session.is_compacting):
            await session.mcp.ready()  # servers still starting: their tools belong in this run
        if hooks.declared(session.host, "input"):  # pi: every prompt, queued ones too
            handled, text, images = await hooks.input_(session.host, text, images)
            if handled:
                session.emit(ev.InputHandledEvent(text=text))
                return m.PromptResult(queued=False, stopReason="handled")
        if session.is_streaming or session.is_compacting:
            if output_schema is not None:
                raise AgentBusyError("a prompt with an outputSchema starts a run; it cannot be queued")
            if streaming_behavior is None:
                raise AgentBusyError(
                    "the agent is already running; send streamingBehavior 'steer' or 'followUp' to queue this prompt"
                )
            self.enqueue("steer" if streaming_behavior == "steer" else "followUp", text, images)
            return m.PromptResult(queued=True)
        session.require_idle("prompt")
        return await self.run(
            [QueuedMessage(text, list(images or []))],
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            ticket=ticket,
            output_schema=output_schema,
        )

    async def run(
        self,
        first: list[QueuedMessage],
        *,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
        ticket: int | None = None,
        output_schema: JsonSchema | None = None,
    ) -> m.PromptResult:
        """Run the agent loop from ``first`` (the prompt and what it brought; empty: continue
        from the session as it is) until the model stops, is stopped or a limit is reached."""
        session = self._session
        session.is_streaming = True
        self.abort_requested = False
        done = self._done = anyio.Event()
        outcome = RunOutcome()
        ctx = run_setup.run_context(
            session, max_turns=max_turns, max_budget_usd=max_budget_usd, output_schema=output_schema
        )
        pairing = EventPairing(session.emit, lambda text: error_message(ctx, text))
        ctx.emit = pairing
        session.run_context = ctx
        session.emit(ev.AgentStartEvent())
        failure: BaseException | None = None
        try:
            await self._user_bash.flush(session.manager)
            await record_before_prompt(session)
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._starts.aborted(ticket):
                    # Aborted between the request and here: the prompt is still stored, with
                    # its (empty) aborted answer, as an abort a moment later would leave it.
                    self.abort_requested = True
                    scope.cancel()
                if first:
                    await hooks.before_agent_start(session.host, ctx, first[0].text, first[0].images)
                async with session.checkpoints.during_run():
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
            self._scope = None
            session.run_context = None
            session.is_streaming = False
            try:
                if session.queue:
                    session.queue.clear()
                    session.announce_queue()
                with anyio.CancelScope(shield=True):
                    if outcome.stop_reason == "aborted" or isinstance(
                        failure, anyio.get_cancelled_exc_class()
                    ):
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
                session.emit(build.agent_end(ctx.new_messages))
                session.emit(ev.AgentSettledEvent(aborted=self.abort_requested))
                done.set()
        return build.prompt_result(
            outcome.stop_reason,
            ctx.new_messages,
            outcome.error_message,
            ctx.structured.value if ctx.structured is not None else None,
        )

    async def wait_idle(self) -> None:
        """Return once no run is going on (at once when none is): after ``abort``, the run has
        stored what it had by then."""
        while self._session.is_streaming and self._done is not None:
            await self._done.wait()

    def abort(self, *, stopping: bool = False) -> bool:
        """Stop the run in progress; False when nothing was running.

        A prompt that was asked for but whose run has not begun (it waits for MCP servers or a
        hook) is aborted too, when its run begins. ``stopping`` (EOF, SIGTERM, ``shutdown``)
        aborts every prompt that comes after as well: a request read just before the server
        stopped may not have started yet, and must leave the same file an abort leaves.
        """
        aborted = self._starts.abort(stopping=stopping)
        if self._scope is not None:
            self._scope.cancel()
            self.abort_requested = aborted = True
        return aborted

    def abort_retry(self) -> bool:
        """Stop the wait before an automatic retry; False when no retry is pending.

        Only a pending retry is stopped: a request that arrives while the model streams must
        not cancel a retry that has not started yet.
        """
        ctx = self._session.run_context
        if ctx is None or not ctx.retry_waiting:
            return False
        ctx.abort_retry.set()
        return True
