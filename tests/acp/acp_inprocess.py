"""``rpc-agent --acp`` served in the test's event loop, behind the SDK's own client side.

Spawning the agent costs a fresh interpreter and every import (the SDK's included) for each
agent, and most ACP tests are about what the agent says and stores, not about the process. For
those, the command line goes through the real ``rpc_agent.cli.main`` (same flags, same settings
files, same start-up checks) and the resulting config is served by the real
``rpc_agent.acp.serve`` (never ``run``, which ends the interpreter); only its ends differ: its
stdin and stdout are two OS pipes owned by the test, its log records go to the log file its
stderr would have been, and its exit code is ``serve``'s return value. The client on the other
end is the SDK's ``ClientSideConnection`` over the other ends of the same pipes, as
``spawn_agent_process`` would build it.

What stays a subprocess (modules and tests without the ``in_process`` mark say why): the end of
stdin and how fast the process leaves, regular files as stdin and stdout, and which modules a
process imports.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from acp.client.connection import ClientSideConnection
from acp.interfaces import Client

import rpc_agent.acp
from inprocess_cli import config_from_cli, log_to
from rpc_agent.acp.transport import StdioTransport
from rpc_agent.runtime import ServerConfig

_STOP_WAIT = 30.0
"""Hang guard for the agent to stop once its stdin has ended."""

_STREAM_LIMIT = 1 << 26
"""Line limit of the client's reader: far above any line a test makes the agent write."""


def config_from_argv(argv: list[str]) -> ServerConfig:
    """The config ``rpc-agent ARGV`` would serve over ACP, built by the real command line."""
    return config_from_cli(argv, rpc_agent.acp)


@dataclass
class Served:
    """The test's ends of an agent served in a task: its stdout to read, its stdin to write, and
    (once the agent has stopped) a one-item list with its exit code."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    code: list[int]


@asynccontextmanager
async def serve_on_pipes(argv: list[str], log: Path) -> AsyncIterator[Served]:
    """``rpc-agent ARGV`` served in a task over two OS pipes, as a process's stdin and stdout
    would be; on leaving, its stdin is ended and the agent waited for.

    The caller sets the environment and working directory the process would have had."""
    config = config_from_argv(argv)
    loop = asyncio.get_running_loop()
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    # The agent owns its ends (its transport closes them); the test owns the others.
    server_in = os.fdopen(stdin_read, "rb", buffering=0)
    server_out = os.fdopen(stdout_write, "wb", buffering=0)
    client_in = os.fdopen(stdout_read, "rb", buffering=0)
    client_out = os.fdopen(stdin_write, "wb", buffering=0)
    files = [server_in, server_out, client_in, client_out]
    transport = StdioTransport(stdin=server_in, stdout=server_out)
    code: list[int] = []
    stopped = anyio.Event()
    try:
        reader = asyncio.StreamReader(limit=_STREAM_LIMIT)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), client_in
        )
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, client_out
        )
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        async with anyio.create_task_group() as group:

            async def serve() -> None:
                try:
                    with log_to(log):
                        code.append(await rpc_agent.acp.serve(config, transport))
                finally:
                    stopped.set()

            group.start_soon(serve)
            try:
                yield Served(reader, writer, code)
            finally:
                with anyio.CancelScope(shield=True):
                    # What a client does to a process: end its stdin, then wait for it to go.
                    writer.close()
                    with anyio.move_on_after(_STOP_WAIT):
                        await stopped.wait()
                    group.cancel_scope.cancel()  # a hang: the caller finds no exit code
        read_transport.close()
    finally:
        for file in files:
            with contextlib.suppress(OSError):
                file.close()


@asynccontextmanager
async def serve_in_task(
    client: Client, argv: list[str], log: Path, **connection_kwargs: Any
) -> AsyncIterator[tuple[ClientSideConnection, list[int]]]:
    """``rpc-agent ARGV`` served in a task behind the SDK's client side; yields the client
    connection and, once the agent has stopped, a one-item list with its exit code.

    The caller sets the environment and working directory the process would have had."""
    async with serve_on_pipes(argv, log) as served:
        conn = ClientSideConnection(client, served.writer, served.reader, **connection_kwargs)
        try:
            yield conn, served.code
        finally:
            with anyio.CancelScope(shield=True):
                await conn.close()  # the SDK's end of stdin (the pipes' own close follows)
