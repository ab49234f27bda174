"""The requests running in their own tasks: listed, awaited, and cancelled by id or all at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio

from rpc_agent.io.background import Foreground


@dataclass(slots=True)
class InFlight:
    """One running request; ``reason`` is set when it is cancelled, for its CANCELLED answer."""

    request_id: Any
    method: str
    scope: anyio.CancelScope
    reason: str = ""


class InFlightRequests:
    """What runs now, keyed by a token of its own (ids may repeat, notifications have none).

    Each running request counts as foreground work (``rpc_agent.io.background``) until it ends,
    so background threads hold back while it runs.
    """

    def __init__(self, foreground: Foreground | None = None) -> None:
        self.foreground = foreground if foreground is not None else Foreground()
        self._entries: dict[int, InFlight] = {}
        self._tokens = 0
        self._idle: anyio.Event | None = None
        """Set when the last running request ends (made by ``wait_idle`` when it must wait)."""

    def start(self, request_id: Any, method: str) -> tuple[int, InFlight]:
        """Track a request about to run (``request_id`` None for a notification)."""
        self._tokens += 1
        entry = InFlight(request_id, method, anyio.CancelScope())
        self._entries[self._tokens] = entry
        self.foreground.begin()
        return self._tokens, entry

    def finish(self, token: int) -> None:
        if self._entries.pop(token, None) is not None:
            self.foreground.end()
        if not self._entries and self._idle is not None:
            self._idle.set()
            self._idle = None

    def listing(self) -> list[tuple[Any, str]]:
        return [(entry.request_id, entry.method) for entry in self._entries.values()]

    async def wait_idle(self) -> None:
        """Return once no request is running (at once when none is)."""
        while self._entries:
            if self._idle is None:
                self._idle = anyio.Event()
            await self._idle.wait()

    def cancel(self, request_id: Any, reason: str) -> bool:
        """Cancel the running request(s) with this id; True if there was one."""
        found = False
        for entry in list(self._entries.values()):
            if entry.request_id == request_id and type(entry.request_id) is type(request_id):
                entry.reason = reason
                entry.scope.cancel()
                found = True
        return found

    def cancel_all(self, reason: str) -> int:
        """Cancel every running request; returns how many."""
        entries = list(self._entries.values())
        for entry in entries:
            entry.reason = reason
            entry.scope.cancel()
        return len(entries)
