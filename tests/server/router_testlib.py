"""The router in process: a sink and a reader the test drives, the models and handlers its
tests register, and the ways they serve (not a test module)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson
from pydantic import BaseModel, Field

from rpc_agent.io.background import Foreground
from rpc_agent.server import MethodRegistry, Router


class Sink:
    """Collects what the router writes, checking that each write is one whole JSON line."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.changed = anyio.Event()

    def write_line(self, line: bytes) -> None:
        assert line.endswith(b"\n")
        assert b"\n" not in line[:-1]
        self.messages.append(orjson.loads(line))
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for(self, count: int) -> None:
        with anyio.fail_after(30):
            while len(self.messages) < count:
                await self.changed.wait()


class Lines:
    """A reader whose lines the test feeds one by one; ``end()`` is EOF."""

    def __init__(self) -> None:
        self.send, self.receive = anyio.create_memory_object_stream[list[bytes]](100)

    def feed(self, *messages: Any) -> None:
        self.send.send_nowait([orjson.dumps(message) for message in messages])

    def end(self) -> None:
        self.send.close()

    async def __aiter__(self) -> AsyncIterator[list[bytes]]:
        async with self.receive:
            async for lines in self.receive:
                yield lines


class Params(BaseModel):
    entry_id: str = Field(alias="entryId")
    limit: int = 10


class Result(BaseModel):
    value: Any = None


async def forever(_p: None) -> Result:
    await anyio.sleep(3600)
    return Result()


class Started:
    """A ``forever`` handler that reports how many calls have started."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = anyio.Event()

    async def __call__(self, _p: None) -> Result:
        self.count += 1
        self.changed.set()
        self.changed = anyio.Event()
        return await forever(None)

    async def wait_for(self, count: int) -> None:
        with anyio.fail_after(30):
            while self.count < count:
                await self.changed.wait()


def forever_registry() -> tuple[MethodRegistry, Started]:
    """A registry whose one method, ``forever``, never returns."""
    registry, started = MethodRegistry(), Started()
    registry.add("forever", started, params=None, result=Result)
    return registry, started


@asynccontextmanager
async def serving(
    registry: MethodRegistry, foreground: Foreground | None = None
) -> AsyncIterator[tuple[Router, Sink, Lines]]:
    """A router serving ``registry`` in a task; its input ends with the block."""
    sink, lines = Sink(), Lines()
    router = Router(registry, sink, foreground=foreground)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(router.serve, lines)
        yield router, sink, lines
        lines.end()


async def served(registry: MethodRegistry, *messages: Any, **options: Any) -> Sink:
    """What a router answers to ``messages``, served to the end of the input."""
    sink, lines = Sink(), Lines()
    lines.feed(*messages)
    lines.end()
    await Router(registry, sink, **options).serve(lines)
    return sink


def request(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message
