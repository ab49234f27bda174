"""Answers that wait for the disk without a task per request.

A durable mutation (``set_label``) is quick to make and slow to acknowledge: its line must be
fsynced before the client hears of it. Run as an ordinary request, each one costs a task, a
cancel scope and a few event wake-ups, which is most of the cost of a pipelined burst of them
(the fsyncs themselves are shared by group commit). So such a handler is a plain function that
makes the change at once, in the router's reading loop, and returns a :class:`Deferred`: the
result, and how to wait until it may be sent. The router keeps the deferred answers in arrival
order and one task per router waits on them in turn: the first wait of a burst covers the
fsync of every line queued with it, and the waits behind it return without suspending, so a
thousand labels cost a handful of fsyncs and wake-ups, and no answer goes out before its line
is on the disk.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any

from rpc_agent.protocol.jsonrpc import Reply


class Deferred:
    """A handler's result that may be sent once ``ready()`` returns; ``ready()`` raising is
    the request's error (mapped as a handler's would be). Awaiting it waits and gives the
    result, for the callers of a method that are not the router (``MethodSpec.invoke``)."""

    __slots__ = ("ready", "result")

    def __init__(self, result: Any, ready: Callable[[], Awaitable[object]]) -> None:
        self.result = result
        self.ready = ready

    def __await__(self) -> Generator[Any, None, Any]:
        yield from _wait(self.ready()).__await__()
        return self.result


async def _wait(awaitable: Awaitable[object]) -> None:
    await awaitable


DeferredAnswer = tuple[Deferred, str, Any, Callable[[Reply], None] | None]
"""What the router keeps per deferred request: the result, the method, the request id, and
where its answer goes (None for a notification)."""
