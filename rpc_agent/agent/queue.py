"""Messages queued while the agent runs: steering (between turns) and follow-ups (after)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Required, TypedDict

from rpc_agent.protocol.shapes import BlockDict, Content


@dataclass(slots=True)
class QueuedMessage:
    text: str
    images: list[BlockDict] = field(default_factory=list)


class QueuedCustom(TypedDict, total=False):
    """A custom message that waits for a run's next turn (``RunContext.extra_first``), with the
    fields of ``protocol.host.CustomMessageFields`` that were given: the role and the timestamp
    come when it is stored, and a field nobody set stays out of the stored message."""

    customType: Required[str]
    content: Required[Content]
    display: bool
    details: Any


class MessageQueue:
    def __init__(self) -> None:
        self.steering: deque[QueuedMessage] = deque()
        self.follow_up: deque[QueuedMessage] = deque()

    def __len__(self) -> int:
        return len(self.steering) + len(self.follow_up)

    @staticmethod
    def _take(queue: deque[QueuedMessage], mode: str) -> list[QueuedMessage]:
        if not queue:
            return []
        if mode == "all":
            taken = list(queue)
            queue.clear()
            return taken
        return [queue.popleft()]

    def take_steering(self, mode: str) -> list[QueuedMessage]:
        return self._take(self.steering, mode)

    def take_follow_up(self, mode: str) -> list[QueuedMessage]:
        return self._take(self.follow_up, mode)

    def clear(self) -> list[QueuedMessage]:
        dropped = [*self.steering, *self.follow_up]
        self.steering.clear()
        self.follow_up.clear()
        return dropped

    def snapshot(self) -> tuple[list[str], list[str]]:
        return [m.text for m in self.steering], [m.text for m in self.follow_up]
