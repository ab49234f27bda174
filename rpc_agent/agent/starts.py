"""Prompts between their request and their run, which an abort must reach as well.

A prompt waits before its run has a cancel scope (MCP servers still starting, an input hook,
the task the router made for it not scheduled yet). An ``abort`` in that gap used to find
nothing to cancel, and the prompt then ran to its end; SIGTERM, EOF and ``shutdown`` take the
same path and lost the same way.
"""

from __future__ import annotations


class PromptStarts:
    """Counts aborts and the prompts that have not reached their run yet."""

    def __init__(self) -> None:
        self._aborts = 0
        self._starting = 0
        self.stopping = False
        """Every prompt from now on is aborted as it starts (the server is stopping)."""

    def ticket(self) -> int:
        """A prompt is starting (an abort from now on reaches it); give the ticket to ``ended``
        and ``aborted`` later."""
        self._starting += 1
        return self._aborts

    def ended(self) -> None:
        """A prompt took by ``ticket`` left ``prompt`` (run, queued or failed)."""
        self._starting -= 1

    def abort(self, *, stopping: bool) -> bool:
        """Record an abort; True when a prompt was starting (it is aborted when its run begins)."""
        self._aborts += 1
        self.stopping = self.stopping or stopping
        return self._starting > 0

    def aborted(self, ticket: int | None) -> bool:
        """Whether a run whose prompt took ``ticket`` must stop as it begins."""
        return self.stopping or (ticket is not None and ticket != self._aborts)
