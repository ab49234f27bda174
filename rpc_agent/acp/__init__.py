"""``rpc-agent --acp``: the Agent Client Protocol (v1) front, for editors (Zed, JetBrains, ...).

It speaks ACP over stdio with the official SDK (``agent-client-protocol``, module ``acp``) and
drives the same AgentSession and session files as the JSON-RPC server. Imported only when
``--acp`` is given: the JSON-RPC server's startup never pays for the SDK.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys

import anyio
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.stdio import _windows_stdio_streams, stdio_streams

from acp import run_agent

from ..server.app import ServerConfig
from .agent import RpcAgentAcp
from .eof import stop_work_at_eof

__all__ = ["RpcAgentAcp", "run", "serve"]


def _is_stream(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


async def open_stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Asyncio streams on stdin/stdout.

    The SDK's POSIX streams need pipes (or sockets, ttys); with a regular file on either side
    (``rpc-agent --acp < requests > replies``) we use its thread-backed streams instead.
    """
    limit = DEFAULT_STDIO_BUFFER_LIMIT_BYTES
    if _is_stream(sys.stdin.fileno()) and _is_stream(sys.stdout.fileno()):
        return await stdio_streams(limit=limit)
    return await _windows_stdio_streams(asyncio.get_running_loop(), limit=limit)


async def serve(config: ServerConfig) -> int:
    stdin, writer = await open_stdio()
    async with anyio.create_task_group() as group:
        agent = RpcAgentAcp(config, group)
        reader = stop_work_at_eof(stdin, agent.stop_all, group, limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
        try:
            # session/fork, session/resume and session/close are "unstable" in the SDK.
            await run_agent(agent, writer, reader, use_unstable_protocol=True)
        finally:
            with anyio.CancelScope(shield=True):
                await agent.shutdown()
            group.cancel_scope.cancel()
    return 0


def run(config: ServerConfig) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="rpc-agent: %(levelname)s %(message)s"
    )
    return anyio.run(serve, config)
