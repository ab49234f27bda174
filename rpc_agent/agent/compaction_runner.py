"""Running a compaction on an AgentSession: by request, past the threshold, or on overflow.

``compaction.py`` decides what to cut and asks the model for the summary; this module owns
what happens around it: the busy flag, the start/end events whatever the outcome, the
abort scope, the host's ``session_before_compact`` hook and the stored entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import anyio

from rpc_agent.agent import hooks
from rpc_agent.agent.compaction import (
    context_tokens,
    estimate_tokens,
    generate_compaction_summary,
    prepare_compaction,
)
from rpc_agent.agent.summary_calls import SummaryCalls
from rpc_agent.errors import NothingToCompactError, OperationCancelledError, PersistenceError, ProviderError
from rpc_agent.protocol import builders as build
from rpc_agent.protocol import events as ev
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.events import CompactionReason

if TYPE_CHECKING:
    from rpc_agent.agent.core import AgentCore


async def compact(
    session: AgentCore, custom_instructions: str | None, reason: str = "manual"
) -> m.CompactResult:
    """Summarize the old part of the current branch; raises when it fails or is aborted.

    A failed or aborted compaction appends nothing. ``compaction_start``/``compaction_end``
    tell the client, whatever the outcome.
    """
    if reason == "manual":
        session.require_idle("compact")
    session.is_compacting = True
    session.emit(ev.CompactionStartEvent(reason=reason))
    result: m.CompactResult | None = None
    error: str | None = None
    aborted = False
    try:
        with anyio.CancelScope() as scope:
            session.op_scope = scope
            compaction = session.settings.compaction
            assert compaction is not None
            async with session.mutation():
                result = await compact_branch(
                    session, compaction.keep_recent_tokens, custom_instructions, reason
                )
        aborted = scope.cancelled_caught
    except (NothingToCompactError, ProviderError, PersistenceError) as exc:
        error = str(exc)
        raise
    finally:
        session.op_scope = None
        session.is_compacting = False
        session.emit(
            ev.CompactionEndEvent(
                reason=reason,
                result=result,
                aborted=aborted,
                willRetry=reason == "overflow" and result is not None,
                errorMessage=error or ("compaction aborted" if aborted else None),
            )
        )
    if result is None:
        raise OperationCancelledError("compaction was aborted; nothing was changed")
    return result


async def compact_branch(
    session: AgentCore, keep_recent_tokens: int, custom_instructions: str | None, reason: str = "manual"
) -> m.CompactResult:
    manager = session.manager
    path = manager.get_branch()
    tokens_before = context_tokens(manager.build_session_context().messages)
    preparation = prepare_compaction(path, keep_recent_tokens, tokens_before)
    answer = await hooks.before_compact(session.host, path, preparation, tokens_before, custom_instructions)
    if answer is not None and answer.cancel:
        raise OperationCancelledError("compaction was cancelled by the client's hook; nothing was changed")
    from_hook = answer is not None and answer.compaction is not None
    calls: SummaryCalls | None = None
    if answer is not None and answer.compaction is not None:
        given = answer.compaction
        summary, first_kept, tokens_before, details = (
            given.summary,
            given.firstKeptEntryId,
            given.tokensBefore,
            given.details,
        )
        manager.require_entry(first_kept)
    else:
        calls = SummaryCalls(
            session.settings.retry, session.emit, "compaction", cast(CompactionReason, reason)
        )
        summary, details = await generate_compaction_summary(
            session.provider, session.model, preparation, custom_instructions, calls
        )
        first_kept = preparation.first_kept_entry_id
    entry_id = await manager.append_compaction(
        summary,
        first_kept,
        tokens_before,
        details,
        from_hook=True if from_hook else None,
        usage=calls.usage if calls is not None else None,  # as pi: counted in the session's totals
    )
    entry = manager.get_entry(entry_id) if entry_id else None
    if entry is not None:
        session.emit(ev.SessionCompactEvent(compactionEntry=entry, fromExtension=from_hook))
    return m.CompactResult(
        summary=summary,
        firstKeptEntryId=first_kept,
        tokensBefore=tokens_before,
        details=details,
        # pi's estimate over the context as rebuilt after the compaction, and what the summary cost
        estimatedTokensAfter=sum(map(estimate_tokens, manager.build_session_context().messages)),
        usage=build.usage(calls.usage) if calls is not None else None,
    )


def needs_compaction(session: AgentCore) -> bool:
    compaction = session.settings.compaction
    if compaction is None or not compaction.enabled:
        return False
    tokens = context_tokens(session.manager.build_session_context().messages)
    return tokens > session.model.contextWindow - compaction.reserve_tokens


async def auto_compact(session: AgentCore, reason: str) -> bool:
    """Compact after a run (threshold) or on overflow; True when it succeeded."""
    try:
        await compact(session, None, reason)
    except (NothingToCompactError, ProviderError, OperationCancelledError):
        return False
    return True
