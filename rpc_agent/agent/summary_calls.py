"""The model calls of one compaction or branch summary: retried like a turn's, usage added up.

A summary that breaks on a transient error (overloaded, a dropped stream) would otherwise fail
the whole compaction or navigation. The calls use the session's retry settings, and the client
hears about each retry as pi reports it: ``summarization_retry_scheduled`` before the wait,
``summarization_retry_attempt_start`` after it, and one ``summarization_retry_finished`` when
the call that was retried ends, however it ends (an abort included).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal

import anyio
from pydantic import BaseModel

from rpc_agent.agent.settings import RetrySettings
from rpc_agent.errors import ProviderError
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.shapes import MessageDict, UsageDict
from rpc_agent.providers.base import Provider, ProviderRequest, empty_usage

_FAILED = "summary failed: "
"""How a summary call that broke mid-stream is reported (the retry event gives the bare error)."""

_COUNTS: Final = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
_COSTS: Final = ("input", "output", "cacheRead", "cacheWrite", "total")


def add_usage(total: UsageDict, usage: object) -> None:
    """Add a message's usage (counts and cost) into ``total``; anything malformed counts 0."""
    if not isinstance(usage, dict):
        return
    for key in _COUNTS:
        value = usage.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            total[key] += int(value)
    cost = usage.get("cost")
    if isinstance(cost, dict):
        for cost_key in _COSTS:
            value = cost.get(cost_key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                total["cost"][cost_key] += float(value)


@dataclass
class SummaryCalls:
    retry: RetrySettings | None
    emit: Callable[[BaseModel], None]
    source: Literal["compaction", "branchSummary"]
    reason: ev.CompactionReason | None = None
    usage: UsageDict = field(default_factory=empty_usage)
    """What every call made so far reported, failed attempts included (they were billed)."""

    async def complete(self, provider: Provider, request: ProviderRequest) -> MessageDict:
        """The final message of one call, retried on transient errors; raises ProviderError
        when it fails for good."""
        attempt = 0
        try:
            while True:
                error: ProviderError | None = None
                final: MessageDict | None = None
                try:
                    final, error = await self._once(provider, request)
                except ProviderError as exc:
                    error = exc
                if error is None and final is not None:
                    return final
                assert error is not None
                retry = self.retry
                if not (
                    error.retryable
                    and not error.overflow
                    and retry is not None
                    and retry.enabled
                    and attempt < retry.max_attempts
                ):
                    raise error
                attempt += 1
                delay_ms = self._delay_ms(retry, attempt, error)
                self.emit(
                    ev.SummarizationRetryScheduledEvent(
                        attempt=attempt,
                        maxAttempts=retry.max_attempts,
                        delayMs=delay_ms,
                        errorMessage=str(error).removeprefix(_FAILED),
                    )
                )
                await anyio.sleep(delay_ms / 1000)
                self.emit(ev.SummarizationRetryAttemptStartEvent(source=self.source, reason=self.reason))
        finally:
            if attempt:
                self.emit(ev.SummarizationRetryFinishedEvent())

    async def _once(
        self, provider: Provider, request: ProviderRequest
    ) -> tuple[MessageDict | None, ProviderError | None]:
        final: MessageDict | None = None
        error: ProviderError | None = None
        async for event in provider.stream(request):
            if event.type in ("done", "error"):
                final = event.partial
                error = event.error
        if final is None:
            return None, ProviderError(f"{_FAILED}no response")
        add_usage(self.usage, final.get("usage"))
        if final.get("stopReason") == "error":
            reason = f"{_FAILED}{final.get('errorMessage') or 'no response'}"
            if error is None:
                return final, ProviderError(reason)
            return final, ProviderError(
                reason,
                status=error.status,
                retryable=error.retryable,
                overflow=error.overflow,
                retry_after=error.retry_after,
            )
        return final, None

    @staticmethod
    def _delay_ms(retry: RetrySettings, attempt: int, error: ProviderError) -> int:
        """The turn's backoff: doubling from the base, or what the provider asked for, capped."""
        delay = min(retry.base_delay_ms * 2 ** (attempt - 1), retry.max_delay_ms)
        if error.retry_after is not None:
            delay = min(int(error.retry_after * 1000), retry.max_delay_ms)
        return int(delay * (0.9 + 0.2 * random.random())) if delay > 0 else 0
