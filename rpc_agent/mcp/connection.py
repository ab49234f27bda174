"""One MCP server connection, owned by one long-lived task.

The SDK's transports and ``ClientSession`` are async context managers holding task groups: they
must be entered and exited by the same task. ``McpConnection.run`` is that task: it opens the
transport and the session (within the start-up timeout), lists the tools, then waits until it is
told to stop or the server goes away, and closes everything on its way out. Tool calls are sent
from the caller's task through the open ``ClientSession`` (requests are only messages on its
streams), raced against the connection's end so that a server dying mid-call is an error, not a
hang.
"""

from __future__ import annotations

import logging
import sys
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from rpc_agent import __version__
from rpc_agent.mcp.config import McpServerConfig
from rpc_agent.mcp.elicitation import (
    Elicit,
    ElicitationAnswer,
    ElicitationDone,
    elicitation_request,
)
from rpc_agent.protocol import methods as m

if TYPE_CHECKING:
    from mcp import ClientSession, types

logger = logging.getLogger("rpc_agent.mcp")


def _load_sdk() -> None:
    """The SDK takes most of a second to import: done off the event loop, and only when a
    session has servers at all."""
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401


STOP_GRACE = 5.0
"""How long a stopping connection may take to close (the SDK gives a stdio server 2 s to exit on
its own before terminating it) before its task is cancelled outright."""


LIVENESS_INTERVAL = 2.0
"""While a call runs, the server is pinged this often, and at once when an HTTP response stream
breaks (``http_transport.py``): a streamable HTTP server that dies mid-call leaves the call
waiting on our side, and only a failing request shows it (a stdio server's death is seen at
once, as the end of its stdout)."""

LIVENESS_TIMEOUT = 10.0


class McpCallError(Exception):
    """The call could not be made or did not complete (not the tool's own error result)."""


class ConnectionOwner(Protocol):
    """What a connection asks of the manager that started it, each time it needs it: the front
    that answers the servers' questions is set on the manager, maybe after the server started."""

    cwd: str
    elicit: Elicit
    """Who answers the server's ``elicitation/create`` (the session's front)."""
    elicitation_done: ElicitationDone

    def connection_changed(self, connection: McpConnection) -> None:
        """The connection's status or error changed."""


class McpConnection:
    def __init__(self, config: McpServerConfig, owner: ConnectionOwner, *, startup_timeout: float) -> None:
        self.config = config
        self.owner = owner
        self.startup_timeout = startup_timeout
        self.status: m.McpStatus = "starting"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.session: ClientSession | None = None
        self.settled = anyio.Event()
        """Set once the server is ready or failed: a prompt waits for this before listing tools."""
        self.closed = anyio.Event()
        self._stop = anyio.Event()
        self._starting: anyio.CancelScope | None = None
        self._outer: anyio.CancelScope | None = None
        self._stop_requested = False
        self.liveness_interval = LIVENESS_INTERVAL
        self._stream_broke = anyio.Event()
        """Set when an HTTP response stream broke: the probe of a running call pings at once."""
        self._calls: list[str] = []
        """Tools being called now (to say which call a dying server took down)."""
        self._call_ids: list[str | None] = []
        """The tool call ids of those calls (an elicitation names the call when there is one)."""
        self._asking: dict[str, set[anyio.CancelScope]] = {}
        """Questions for the user still open, by the tool call they came during: withdrawn when
        that call ends (an aborted run), since the server no longer waits for the answer."""

    @property
    def name(self) -> str:
        return self.config.name

    def state(self) -> m.McpServerState:
        return m.McpServerState(
            name=self.name,
            transport=self.config.transport,
            status=self.status,
            toolCount=len(self.tools) if self.status == "ready" else 0,
            error=self.error,
        )

    def _set(self, status: m.McpStatus, error: str | None = None) -> None:
        if self.status == status and self.error == error:
            return
        self.status, self.error = status, error
        if status != "starting":
            self.settled.set()
        if error:
            logger.warning("MCP server %s: %s", self.name, error)
        self.owner.connection_changed(self)

    # --- the owning task ------------------------------------------------------------------

    async def run(self) -> None:
        """Open, serve until stopped or dead, close. Never raises (but for cancellation)."""
        try:
            # Shielded from the task group's cancellation: closing a stdio server must run to
            # the end (close stdin, wait, terminate) or the process outlives us. ``aclose``
            # bounds it instead. Every scope below is entered and left in nesting order, inside
            # the transport's and session's context managers, as anyio requires.
            with anyio.CancelScope(shield=True) as outer:
                self._outer = outer
                if self._stop_requested:
                    return
                try:
                    with anyio.CancelScope() as teardown:
                        async with AsyncExitStack() as stack:
                            if await self._open(stack):
                                await self._stop.wait()
                            else:
                                # It never answered: closing it under cancellation kills the
                                # process at once instead of giving it seconds to exit.
                                teardown.cancel()
                except Exception as exc:
                    if self.status in ("starting", "ready"):
                        self._set("failed", _describe(exc))
                    else:
                        logger.info("MCP server %s closed with %s", self.name, _describe(exc))
        finally:
            self.session = None
            if self.status in ("starting", "ready"):
                self._set("stopped" if self._stop_requested else "failed", self.error or "connection closed")
            self.settled.set()
            self.closed.set()

    async def _open(self, stack: AsyncExitStack) -> bool:
        """Connect, initialize, list the tools; False when stopped or timed out meanwhile."""
        config = self.config
        with anyio.CancelScope() as loading:  # not part of the server's start-up time
            self._starting = loading
            await anyio.to_thread.run_sync(_load_sdk)
        if loading.cancel_called:
            return False
        deadline = anyio.current_time() + self.startup_timeout
        import httpx
        from mcp import ClientSession, StdioServerParameters, types
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        from rpc_agent.mcp.http_transport import BreakWatchingTransport

        # The transports close the streams they hand out only when they exit uncancelled (a
        # server that never answered is closed under cancellation), and the HTTP one never
        # closes its receiving end: both are closed here, after the transport has exited.
        streams: list[MemoryObjectReceiveStream[Any] | MemoryObjectSendStream[Any]] = []
        stack.callback(lambda: [stream.close() for stream in streams])
        if config.transport == "stdio":
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env), cwd=self.owner.cwd
            )
            # The server's stderr is our stderr (the log); stdout is the protocol.
            read, write = await stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
        elif config.transport == "http":
            client = await stack.enter_async_context(
                httpx.AsyncClient(
                    headers=dict(config.headers) or None,
                    follow_redirects=True,
                    timeout=httpx.Timeout(30.0, read=300.0),
                    transport=BreakWatchingTransport(lambda: self._stream_broke.set()),
                )
            )
            read, write, _ = await stack.enter_async_context(
                streamable_http_client(config.url, http_client=client)
            )
        else:
            raise McpCallError(f"the {config.transport} transport is not supported")
        streams += [read, write]
        read = await self._watch_end(stack, read)
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                client_info=types.Implementation(name="rpc-agent", version=__version__),
                elicitation_callback=self._on_elicitation,
                message_handler=self._on_message,
            )
        )
        tools: list[types.Tool] = []
        if self._stop_requested:
            return False
        with anyio.CancelScope(deadline=deadline) as starting:
            self._starting = starting
            await session.initialize()
            cursor: str | None = None
            while True:
                listed = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
                tools += listed.tools
                cursor = listed.nextCursor
                if not cursor:
                    break
        self._starting = None
        if starting.cancel_called:
            return self._start_failed()
        self.tools = tools
        self.session = session
        self._set("ready")
        return True

    async def _watch_end(
        self, stack: AsyncExitStack, read: MemoryObjectReceiveStream[Any]
    ) -> MemoryObjectReceiveStream[Any]:
        """Relay the server's messages, so that the end of them (a stdio server that exited
        while idle) is seen at once and reported, not at the next call."""
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def relay() -> None:
            async with send:
                async for message in read:
                    await send.send(message)
            self._died(self._exit_message())

        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)  # runs first on the way out
        group.start_soon(relay)
        stack.push_async_callback(receive.aclose)
        return receive

    def _exit_message(self) -> str:
        during = f" during a call to {self._calls[-1]}" if self._calls else ""
        return f"the server exited{during}"

    def _start_failed(self) -> bool:
        if not self._stop_requested:
            self._set("failed", f"did not start within {self.startup_timeout:g} s")
        return False

    # --- control from other tasks ---------------------------------------------------------

    def stop(self) -> None:
        self._stop_requested = True
        if self.status in ("starting", "ready"):
            self._set("stopped")
        self._stop.set()
        if self._starting is not None:
            self._starting.cancel()

    async def aclose(self) -> None:
        """Stop and wait until the server is closed (its process gone), within a grace period."""
        self.stop()
        with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_GRACE):
            await self.closed.wait()
        if not self.closed.is_set() and self._outer is not None:
            logger.warning("MCP server %s did not close in time; cancelling it", self.name)
            self._outer.cancel()

    def _died(self, error: str) -> None:
        """The server went away: say so, and let the owning task close what is left."""
        if self.status == "ready":
            self._set("failed", error)
        self._stop.set()

    async def _on_elicitation(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """The server asks the user something: the session's front answers (see elicitation)."""
        from mcp import types

        calls = [call_id for call_id in self._call_ids if call_id is not None]
        request = elicitation_request(self.name, params, calls[0] if len(calls) == 1 else None)
        if request is None:
            return types.ErrorData(code=types.INVALID_PARAMS, message="unknown elicitation mode")
        answer = ElicitationAnswer("cancel")
        with anyio.CancelScope() as scope:
            asking = self._asking.setdefault(request.toolCallId or "", set())
            asking.add(scope)
            try:
                answer = await self.owner.elicit(request)
            except Exception:  # a front that failed to ask: the server is told "cancel", not an error
                logger.warning("elicitation from MCP server %s failed", self.name, exc_info=True)
            finally:
                asking.discard(scope)
        return types.ElicitResult(
            action=answer.action, content=answer.content if answer.action == "accept" else None
        )

    async def _on_message(self, message: Any) -> None:
        """Notifications the SDK does not act on: a URL-mode elicitation that finished."""
        from mcp import types

        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ElicitCompleteNotification
        ):
            try:
                await self.owner.elicitation_done(self.name, message.root.params.elicitationId)
            except Exception:  # telling the front is a courtesy: the server goes on regardless
                logger.warning(
                    "elicitation/complete from MCP server %s was not passed on", self.name, exc_info=True
                )

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], tool_call_id: str | None = None
    ) -> types.CallToolResult:
        from mcp import McpError, types

        session = self.session
        if session is None or self.status != "ready":
            raise McpCallError(
                f"MCP server {self.name!r} is not running ({self.status}"
                + (f": {self.error}" if self.error else "")
                + ")"
            )
        result: types.CallToolResult | None = None
        failure: str | None = None

        async def call() -> None:
            nonlocal result, failure
            try:
                result = await session.call_tool(tool, arguments)
            except McpError as exc:
                failure = exc.error.message
                if exc.error.code == types.CONNECTION_CLOSED:
                    self._died(self._exit_message())
            except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                failure = "connection closed"
                self._died(f"the server went away during a call to {tool}: {_describe(exc)}")
            finally:
                group.cancel_scope.cancel()

        async def watch() -> None:
            await self.closed.wait()
            group.cancel_scope.cancel()

        async def probe() -> None:
            while True:
                with anyio.move_on_after(self.liveness_interval):
                    await self._stream_broke.wait()
                if self._stream_broke.is_set():
                    self._stream_broke = anyio.Event()
                try:
                    with anyio.fail_after(LIVENESS_TIMEOUT):
                        await session.send_ping()
                except Exception as exc:
                    self._died(f"the server stopped answering during a call to {tool}: {_describe(exc)}")
                    group.cancel_scope.cancel()
                    return

        self._calls.append(tool)
        self._call_ids.append(tool_call_id)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                group.start_soon(probe)
                group.start_soon(call)
        finally:
            self._calls.remove(tool)
            self._call_ids.remove(tool_call_id)
            if tool_call_id is not None:
                for asking in self._asking.pop(tool_call_id, set()):
                    asking.cancel()
        if result is not None:
            return result
        raise McpCallError(
            f"MCP server {self.name!r} failed during {tool}: "
            + (failure or self.error or "the server stopped")
        )


def _describe(exc: BaseException) -> str:
    """The first real cause of an exception group, as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, McpCallError) else f"{type(exc).__name__}: {text}"
