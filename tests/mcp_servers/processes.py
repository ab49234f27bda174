"""Starting the test MCP server: ``mcp_server.py`` over stdio, or over HTTP on a free port."""

from __future__ import annotations

import contextlib
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx

from proc_table import pid_alive

SERVER = Path(__file__).with_name("mcp_server.py")

JsonDict = dict[str, Any]


def stdio_server(name: str = "srv", *extra: str) -> JsonDict:
    """The server in ACP's (and JSON-RPC's) shape."""
    return {"name": name, "command": sys.executable, "args": [str(SERVER), *extra], "env": []}


async def wait_gone(pid: int, seconds: float = 10) -> bool:
    with anyio.move_on_after(seconds):
        while pid_alive(pid):  # noqa: ASYNC110 (another process: no event to wait on)
            await anyio.sleep(0.05)
    return not pid_alive(pid)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def http_server(*, sdk: bool = False) -> AsyncIterator[str]:
    """The test server on streamable HTTP, written by hand or with the SDK (``sdk``); yields its
    URL once it answers."""
    port = free_port()
    process = await anyio.open_process(
        [sys.executable, str(SERVER), "sdk-http" if sdk else "http", str(port)], stdout=None, stderr=None
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with anyio.fail_after(30):
            async with httpx.AsyncClient() as client:
                while True:
                    try:
                        await client.get(url, timeout=1)
                        break
                    except httpx.TransportError:
                        await anyio.sleep(0.1)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):  # the test may have crashed it
            process.terminate()
        with anyio.CancelScope(shield=True):
            await process.wait()
