"""Helpers shared by the in-process AgentSession tests (imported by them; not a test module)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
from pydantic import BaseModel

JsonDict = dict[str, Any]


class Recorder:
    """Collects emitted events as their wire dicts."""

    def __init__(self) -> None:
        self.events: list[JsonDict] = []
        self._arrived = anyio.Event()

    def __call__(self, event: BaseModel) -> None:
        self.events.append(event.model_dump(mode="json", warnings=False))
        self._arrived.set()
        self._arrived = anyio.Event()

    async def until(self, predicate: Callable[[JsonDict], bool]) -> JsonDict:
        """The first event (past or future) that matches."""
        with anyio.fail_after(10):
            seen = 0
            while True:
                for event in self.events[seen:]:
                    if predicate(event):
                        return event
                seen = len(self.events)
                await self._arrived.wait()

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def assert_balanced(self) -> None:
        """Every ``*_start`` has its ``*_end`` (what a host waits for)."""
        counts = Counter(self.types())
        for kind, started in counts.items():
            if kind.endswith("_start") and kind not in ("auto_retry_start",):
                assert counts[kind.removesuffix("_start") + "_end"] == started, (kind, self.types())

    def of(self, kind: str) -> list[JsonDict]:
        return [e for e in self.events if e["type"] == kind]
