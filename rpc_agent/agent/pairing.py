"""Every ``*_start`` a run emits gets its ``*_end``, however the run ends.

The loop closes what it opens on the paths it knows (a stop, an abort, a provider error). Any
other failure (a session write that fails, a bug) leaves through an exception from anywhere in
the loop; a client that saw ``message_start`` or ``turn_start`` would then wait for their ends
forever. The run's emit goes through :class:`EventPairing`, which remembers what is open, so
that the run's ``finally`` can end it all (innermost first) before ``agent_end``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from pydantic import BaseModel

from rpc_agent.protocol import builders as build
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.shapes import MessageDict

_START_OF = {
    "turn_end": "turn_start",
    "message_end": "message_start",
    "tool_execution_end": "tool_execution_start",
    "auto_retry_end": "auto_retry_start",
    "compaction_end": "compaction_start",
}
_STARTS = frozenset(_START_OF.values())


class EventPairing:
    """A wrapping ``emit`` that knows which starts still wait for their end."""

    def __init__(
        self, emit: Callable[[BaseModel], None], error_message: Callable[[str], MessageDict]
    ) -> None:
        self._emit = emit
        self._error_message = error_message
        """Makes the assistant message a turn ends with when it never got one."""
        self._open: list[BaseModel] = []
        self._last_assistant: MessageDict | None = None

    def __call__(self, event: BaseModel) -> None:
        kind = getattr(event, "type", None)
        if kind in _STARTS:
            self._open.append(event)
        elif kind in _START_OF:
            self._forget(_START_OF[kind], event)
        if isinstance(event, ev.MessageStartEvent | ev.MessageEndEvent):
            if event.message.get("role") == "assistant":
                self._last_assistant = event.message
        elif isinstance(event, ev.TurnStartEvent):
            self._last_assistant = None
        self._emit(event)

    @property
    def open_count(self) -> int:
        return len(self._open)

    def _forget(self, start_kind: str, end: BaseModel) -> None:
        call_id = getattr(end, "toolCallId", None)
        for index in range(len(self._open) - 1, -1, -1):
            start = self._open[index]
            if getattr(start, "type", None) == start_kind and getattr(start, "toolCallId", None) == call_id:
                del self._open[index]
                return

    def close_all(self, reason: str) -> None:
        """End every open start, innermost first, saying why the run stopped."""
        while self._open:
            start = self._open.pop()
            self._emit(self._end_of(start, reason))

    def _end_of(self, start: BaseModel, reason: str) -> BaseModel:
        if isinstance(start, ev.MessageStartEvent):
            # Not stored (no entryId): the message as it began, marked with why it stopped.
            message = copy.deepcopy(start.message)
            if message.get("role") == "assistant":
                message["stopReason"] = "error"
                message["errorMessage"] = reason
            return build.message_end(message)
        if isinstance(start, ev.ToolExecutionStartEvent):
            return build.tool_execution_end(
                start.toolCallId,
                start.toolName,
                build.tool_result([{"type": "text", "text": reason}]),
                is_error=True,
            )
        if isinstance(start, ev.AutoRetryStartEvent):
            return ev.AutoRetryEndEvent(success=False, attempt=start.attempt, finalError=reason)
        if isinstance(start, ev.CompactionStartEvent):
            return ev.CompactionEndEvent(
                reason=start.reason, result=None, aborted=False, willRetry=False, errorMessage=reason
            )
        message = self._last_assistant or self._error_message(reason)
        return build.turn_end(message, [])
