"""The MCP servers of one session: started together, listed, restarted, stopped together.

Connections run in a task group that outlives the request that started them (the front's own
group); the manager starts them all at once, each with its start-up timeout, and a prompt waits
only until each has settled (ready or failed). Status changes go out as ``mcp_server_status``
events through the session's ``emit``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

import anyio
import anyio.abc
from pydantic import BaseModel

from rpc_agent.errors import InvalidRequestError
from rpc_agent.mcp.config import (
    McpConfigError,
    McpServerConfig,
    McpSettings,
    config_paths,
    load_file_settings,
    merge,
)
from rpc_agent.mcp.elicitation import (
    Elicit,
    ElicitationDone,
    decline,
    nobody_to_tell,
)
from rpc_agent.protocol import events as ev
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.state_shapes import McpServerStateDict
from rpc_agent.tools.base import Tool

if TYPE_CHECKING:
    from rpc_agent.mcp.connection import McpConnection

logger = logging.getLogger("rpc_agent.mcp")


class UnknownServerError(InvalidRequestError):
    pass


class McpManager:
    def __init__(
        self,
        group: anyio.abc.TaskGroup,
        emit: Callable[[BaseModel], None],
        *,
        cwd: str,
        home: Path,
    ) -> None:
        self.group = group
        self.emit = emit
        self.cwd = cwd
        self.home = home
        self.client_servers: list[McpServerConfig] = []
        self.connections: dict[str, McpConnection] = {}
        self._tools: list[Tool] | None = None
        self.startup_timeout = 10.0
        self.elicit: Elicit = decline
        """Who answers the servers' questions for the user (the front sets it; else declined)."""
        self.elicitation_done: ElicitationDone = nobody_to_tell
        """Who hears that a URL-mode question was dealt with (the front that asked it)."""

    def _file_settings(self) -> McpSettings:
        try:
            return load_file_settings(config_paths(self.home, Path(self.cwd)))
        except McpConfigError as exc:
            logger.warning("%s", exc)
            return McpSettings()

    # --- starting and stopping ------------------------------------------------------------

    def start(self, client_servers: list[McpServerConfig] | None = None) -> None:
        """Start the servers of the files and of the client (None: the client's last list)."""
        if client_servers is not None:
            self.client_servers = list(client_servers)
        settings = self._file_settings()
        self.startup_timeout = settings.startup_timeout
        for config in merge(settings.servers, self.client_servers):
            self._start(config)

    def _start(self, config: McpServerConfig) -> None:
        from rpc_agent.mcp.connection import McpConnection  # the SDK itself is imported by the connection

        connection = McpConnection(config, self, startup_timeout=self.startup_timeout)
        self.connections[config.name] = connection
        self._tools = None
        self.emit(self._event(connection))
        self.group.start_soon(connection.run, name=f"mcp server {config.name}")

    def connection_changed(self, connection: McpConnection) -> None:
        if self.connections.get(connection.name) is connection:
            self._tools = None
            self.emit(self._event(connection))

    @staticmethod
    def _event(connection: McpConnection) -> ev.McpServerStatusEvent:
        state = connection.state()
        return ev.McpServerStatusEvent(
            name=state.name,
            transport=state.transport,
            status=state.status,
            toolCount=state.toolCount,
            error=state.error,
        )

    async def stop_all(self) -> None:
        connections = list(self.connections.values())
        for connection in connections:
            connection.stop()  # announced as stopped while still listed
        self.connections.clear()
        self._tools = None
        async with anyio.create_task_group() as group:
            for connection in connections:
                group.start_soon(connection.aclose)

    async def replace(self, client_servers: list[McpServerConfig] | None) -> None:
        """A new session: stop every server, start the (possibly new) list."""
        await self.stop_all()
        self.start(client_servers)

    def update_client_servers(self, client_servers: list[McpServerConfig]) -> None:
        """The client named its servers (JSON-RPC ``initialize``): start new or changed ones,
        stop those it replaced (their tasks close them), keep the rest running."""
        self.client_servers = list(client_servers)
        wanted = {c.name: c for c in merge(self._file_settings().servers, self.client_servers)}
        for name, connection in list(self.connections.items()):
            if wanted.get(name) != connection.config:
                connection.stop()
                del self.connections[name]
                self._tools = None
        for name, config in wanted.items():
            if name not in self.connections:
                self._start(config)

    async def restart(self, name: str | None = None) -> list[m.McpServerState]:
        """Restart one server (or all) and wait until it has settled."""
        if name is not None and name not in self.connections:
            raise UnknownServerError(f"no MCP server named {name!r}")
        targets = [self.connections[name]] if name is not None else list(self.connections.values())
        for connection in targets:
            await connection.aclose()
            self._start(connection.config)
        await self.ready()
        return self.servers()

    async def aclose(self) -> None:
        await self.stop_all()

    # --- what the session reads -----------------------------------------------------------

    async def ready(self) -> None:
        """Wait until every server has started or failed (each bounded by its timeout)."""
        for connection in list(self.connections.values()):
            await connection.settled.wait()

    def servers(self) -> list[m.McpServerState]:
        return [connection.state() for connection in self.connections.values()]

    def state_json(self) -> list[McpServerStateDict]:
        return [
            cast(McpServerStateDict, state.model_dump(mode="json", exclude_none=True))
            for state in self.servers()
        ]

    def tools(self) -> list[Tool]:
        if self._tools is None:
            tools: list[Tool] = []
            ready = [c for c in self.connections.values() if c.status == "ready"]
            if ready:  # the SDK (imported by .tools) is loaded only when a server runs
                from rpc_agent.mcp.tools import make_tool

                for connection in ready:
                    tools += [make_tool(connection, tool) for tool in connection.tools]
            self._tools = tools
        return list(self._tools)
