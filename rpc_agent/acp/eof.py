"""Stop the work when the editor goes away, before the SDK tears the connection down.

At EOF the SDK closes its sender and then cancels the request handlers; a prompt that is still
storing its aborted turn would then answer into a closed sender and wait forever, keeping the
process (and the session lock) alive. So the SDK reads from a stream we feed: when the real
stdin ends, ``on_eof`` aborts every run and waits for them to finish first; only then does the
SDK see the end of its input.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import anyio.abc

_CHUNK = 65536


def stop_work_at_eof(
    source: asyncio.StreamReader,
    on_eof: Callable[[], Awaitable[None]],
    group: anyio.abc.TaskGroup,
    *,
    limit: int,
) -> asyncio.StreamReader:
    """A reader with ``source``'s bytes that ends only after ``on_eof`` has returned."""
    fed = asyncio.StreamReader(limit=limit)

    async def pump() -> None:
        try:
            while data := await source.read(_CHUNK):
                fed.feed_data(data)
            await on_eof()
        finally:
            fed.feed_eof()

    group.start_soon(pump, name="rpc_agent.acp.stdin")
    return fed
