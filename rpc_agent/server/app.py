"""The stdio JSON-RPC front: the runtime's AgentSession behind the router, until EOF, a
signal or ``shutdown``."""

from __future__ import annotations

import logging
import os
import signal
import stat
import sys

import anyio
import anyio.to_thread
from pydantic import BaseModel

from rpc_agent.io.background import Background
from rpc_agent.methods.errors import map_error
from rpc_agent.methods.handlers import Methods
from rpc_agent.protocol.payload import event_payload
from rpc_agent.runtime import Runtime, ServerConfig, event_loop_options
from rpc_agent.server.host_bridge import HostTimeouts, JsonRpcHost
from rpc_agent.server.router import Router
from rpc_agent.server.transport import open_stdio
from rpc_agent.store.files import agent_home

logger = logging.getLogger("rpc_agent")


async def serve(config: ServerConfig) -> int:
    background = Background()  # the store's threads give way to this server's requests and lines
    reader, writer = open_stdio(foreground=background.foreground)
    runtime = Runtime(config)
    manager = await anyio.to_thread.run_sync(runtime.open_session)
    provider = runtime.provider
    stop = anyio.Event()
    served = anyio.Event()
    router: Router | None = None

    def emit(event: BaseModel) -> None:
        if router is not None:
            router.notify("event", event_payload(event))

    agent = runtime.agent(manager, emit, background)
    methods = Methods(agent, providers=[provider.name], on_shutdown=stop.set)
    router = Router(methods.registry, writer, error_mapper=map_error, foreground=background.foreground)
    settings = agent.settings
    host = JsonRpcHost(
        router, emit, HostTimeouts(settings.approval_timeout, settings.hook_timeout, settings.tool_timeout)
    )
    methods.accept_host(host)

    async def watch_signals() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _signum in signals:
                stop.set()
                return

    async def serve_until_stopped() -> None:
        assert router is not None
        # The host closing its end of the pipe means nobody is left to read the answers: stop
        # the work at once (as SIGTERM does) instead of finishing it. Requests read from a file
        # have no host that could leave; they run to their end.
        await router.serve(reader, on_eof=stop.set if _stdin_is_a_host() else None)
        served.set()
        stop.set()

    try:
        async with writer, anyio.create_task_group() as group:
            from rpc_agent.mcp import McpManager

            mcp = McpManager(group, emit, cwd=str(config.cwd), home=config.home or agent_home())
            agent.mcp = methods.mcp = mcp
            mcp.elicit = host.request_elicitation
            mcp.start([])
            group.start_soon(serve_until_stopped)
            group.start_soon(watch_signals)
            warm_up = getattr(provider, "warm_up", None)
            if warm_up is not None:
                group.start_soon(warm_up)
            await stop.wait()
            # EOF, SIGTERM or shutdown: the path ``abort`` takes, for the run going on and for a
            # prompt read but not started yet; each stores what it has (the prompt, the partial
            # message, the aborted tool result) and answers, then the file is flushed and closed.
            # The session is closed only once nothing is running: a run still appending to a
            # closed session would lose its last entries.
            agent.abort(stopping=True)
            agent.abort_bash()
            reader.close()
            with anyio.move_on_after(DRAIN_SECONDS):
                # Until the router is done: a line the reader had in hand as it closed (a prompt
                # right before SIGTERM) is still dispatched, and its request must end before the
                # session closes; waiting for idle alone would miss a request not started yet.
                await served.wait()
            if router.cancel_all():
                with anyio.move_on_after(DRAIN_SECONDS):
                    await router.wait_idle()
            await agent.shutdown()
            group.cancel_scope.cancel()
    finally:
        # However serve ends, cancelled by whoever runs it too: nothing the tools started
        # (their reaper included) outlives it.
        runtime.close()
    return 0


DRAIN_SECONDS = 5.0
"""How long an aborted request may take to store what it has before it is cancelled outright."""


def _stdin_is_a_host() -> bool:
    """Whether stdin is a pipe, socket or terminal (something a host holds), not a file."""
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return True
    return not stat.S_ISREG(mode)


def run(config: ServerConfig) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="rpc-agent: %(levelname)s %(message)s"
    )
    return anyio.run(serve, config, backend_options=event_loop_options())
