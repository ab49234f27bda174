"""An httpx transport that says when a response stream breaks.

A streamable HTTP server that dies in the middle of a call cuts the call's event stream; the
SDK's transport takes that for a stream it may resume and waits on, so the call would hang
until the next liveness ping. This transport reports the break at once, and the connection pings
the server right away instead of at the next interval. Imported only with the SDK (httpx comes
with it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx


class BreakWatchingTransport(httpx.AsyncBaseTransport):
    def __init__(self, on_break: Callable[[], None]) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._on_break = on_break

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _WatchedStream(response.stream, self._on_break)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _WatchedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, on_break: Callable[[], None]) -> None:
        self._inner = inner
        self._on_break = on_break

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except httpx.TransportError:
            self._on_break()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()
