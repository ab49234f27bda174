"""The sessions of one connection: opening (new, from a file), forking and closing them.

Each ACP session is one AgentSession (its own SessionManager) built by the shared Runtime; the
ACP session id is the id in the session file's header, so ``session/load`` in a later process
finds the same conversation. Opening wires the session to the editor: permissions, the
editor's files and terminal when it offers them, and the MCP servers it names.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from acp.interfaces import Client
from acp.schema import (
    AcpMcpServer,
    ClientCapabilities,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
    TerminalToolCallContent,
)
from pydantic import BaseModel

from acp import RequestError, update_tool_call
from rpc_agent.acp import permissions
from rpc_agent.acp.elicitation import editor_completion, editor_elicitation
from rpc_agent.acp.fs import file_access, restored_to_editor
from rpc_agent.acp.session_state import AcpSession, Flush
from rpc_agent.acp.terminal import EditorTerminal
from rpc_agent.acp.updates import EventTranslator, Update
from rpc_agent.agent.workspace import check_directories
from rpc_agent.errors import InvalidRequestError, SessionNotFoundError
from rpc_agent.mcp import McpManager, McpServerConfig, from_wire_json
from rpc_agent.runtime import Runtime, ServerConfig
from rpc_agent.store import files
from rpc_agent.store.manager import SessionManager
from rpc_agent.store.workspaces import WorkspaceIndex

McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio

logger = logging.getLogger("rpc_agent.acp")

STOP_SECONDS = 1.5
"""How long aborted runs may take to store what they have once the editor is gone."""


@dataclass
class McpServers:
    """A client's MCP servers already converted (a fork takes its source's)."""

    configs: list[McpServerConfig]


def client_servers(servers: list[McpServer]) -> list[McpServerConfig]:
    return from_wire_json(
        [server.model_dump(mode="json", by_alias=True, exclude_none=True) for server in servers]
    )


def check_cwd(cwd: str) -> None:
    """ACP's cwd is an absolute path to a folder; anything else is the client's mistake."""
    if not os.path.isabs(cwd):
        raise RequestError.invalid_params({"details": f"cwd must be an absolute path, got {cwd[:200]!r}"})
    if not os.path.isdir(cwd):
        raise RequestError.invalid_params({"details": f"cwd is not a directory: {cwd[:200]!r}"})


def workspace_roots(directories: list[str] | None, cwd: str) -> list[str]:
    """ACP's ``additionalDirectories``, checked (absolute folders), for a session in ``cwd``,
    which is checked first: every method that opens a session takes both."""
    check_cwd(cwd)
    try:
        return check_directories(directories or [], cwd)
    except InvalidRequestError as exc:
        raise RequestError.invalid_params({"details": str(exc)}) from exc


class Sessions:
    """The open sessions by id, and the Runtime that builds their agents."""

    def __init__(
        self, config: ServerConfig, runtime: Runtime, group: anyio.abc.TaskGroup, client: Callable[[], Client]
    ) -> None:
        self.config = config
        self.home = config.home or files.agent_home()
        self.runtime = runtime
        self.group = group
        self.client = client
        self.client_capabilities = ClientCapabilities()
        """What the editor offers (its files, its terminal), from ``initialize``."""
        self.open_sessions: dict[str, AcpSession] = {}

    def get(self, session_id: str) -> AcpSession:
        session = self.open_sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"details": f"unknown session {session_id}"})
        return session

    def session_dir(self, cwd: str) -> Path:
        return self.config.session_dir or files.default_session_dir(cwd, self.home)

    async def create(
        self, cwd: str, mcp_servers: list[McpServer] | None, roots: list[str] | None = None
    ) -> AcpSession:
        folder = self.session_dir(cwd)
        manager = await anyio.to_thread.run_sync(
            lambda: SessionManager.create(cwd, folder, home=self.config.home)
        )
        session = await self.open(manager, mcp_servers, roots=roots)
        await self.record_workspace(session, cwd)
        return session

    async def open(
        self,
        manager: SessionManager,
        mcp_servers: list[McpServer] | McpServers | None = None,
        *,
        announced: bool = False,
        roots: list[str] | None = None,
    ) -> AcpSession:
        """Wrap a session manager in an AgentSession, start its update pump and MCP servers.

        ``announced``: the client already knows the session (else updates wait for the answer).
        ``roots``: its additional directories (checked by ``workspace_roots``).
        """
        send, receive = anyio.create_memory_object_stream[Update | Flush](math.inf)
        translator = EventTranslator(manager.cwd)
        holder: list[AcpSession] = []

        def emit(event: BaseModel) -> None:
            if holder:
                for update in translator.translate(event):
                    holder[0].push(update)
                for update in holder[0].status.translate(event):
                    holder[0].push(update)

        agent = self.runtime.agent(manager, emit)
        agent.settings.additional_directories = list(roots or [])
        session = AcpSession(id=manager.session_id, agent=agent, send=send, translator=translator)
        await session.status.load()
        if announced:
            session.answered.set()
        holder.append(session)

        async def authorize(call_id: str, name: str, args: Mapping[str, Any]) -> bool:
            return await permissions.authorize(session, self.client, call_id, name, args)

        agent.authorize = authorize
        agent.files = file_access(self.client_capabilities, self.client, session.id)
        agent.checkpoints.on_restored = restored_to_editor(self.client_capabilities, self.client, session.id)
        if self.client_capabilities.terminal:

            def show_terminal(call_id: str, terminal_id: str) -> None:
                translator.terminals[call_id] = terminal_id
                shown = TerminalToolCallContent(type="terminal", terminal_id=terminal_id)
                session.push(update_tool_call(call_id, status="in_progress", content=[shown]))

            agent.commands = EditorTerminal(self.client, session.id, show_terminal)
        mcp = McpManager(self.group, emit, cwd=manager.cwd, home=self.home)
        mcp.elicit = editor_elicitation(session, self.client, self.client_capabilities)
        mcp.elicitation_done = editor_completion(self.client, self.client_capabilities)
        agent.mcp = mcp
        mcp.start(
            mcp_servers.configs if isinstance(mcp_servers, McpServers) else client_servers(mcp_servers or [])
        )
        self.open_sessions[session.id] = session
        self.group.start_soon(session.pump, receive, self.client)
        return session

    def answered(self, session_id: str) -> None:
        """The transport wrote an answer about ``session_id``: its updates may follow."""
        session = self.open_sessions.get(session_id)
        if session is not None:
            session.answered.set()

    def find_session_file(self, session_id: str) -> Path | None:
        roots = [files.sessions_root(self.home)]
        if self.config.session_dir is not None:
            roots.insert(0, self.config.session_dir)
        for root in roots:
            if not root.is_dir():
                continue
            for path in sorted(root.rglob(f"*{session_id}.jsonl")):
                header = files.read_header(path)
                if header is not None and header.get("id") == session_id:
                    return path
        return None

    async def open_existing(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: list[McpServer] | None = None,
        *,
        announced: bool,
        roots: list[str] | None = None,
    ) -> AcpSession:
        """An open session or one from its file, set to run its tools in ``cwd`` with the
        additional directories ``roots`` (the full list: ACP sends it again each time).

        ACP says the agent MUST use the cwd the client sends with load and resume (the project
        may have moved since the file was written); the file's own header stays as written, and
        the workspace index remembers the new place so that ``session/list`` finds it there.
        """
        existing = self.open_sessions.get(session_id)
        if existing is not None:
            existing.move_to(cwd)
            existing.agent.settings.additional_directories = list(roots or [])
            await self.record_workspace(existing, None)
            return existing
        path = await anyio.to_thread.run_sync(self.find_session_file, session_id)
        if path is None:
            raise RequestError.resource_not_found(session_id)
        try:
            manager = await anyio.to_thread.run_sync(
                lambda: SessionManager.open(path, cwd=cwd, home=self.config.home, must_exist=True)
            )
        except SessionNotFoundError as exc:
            raise RequestError.resource_not_found(session_id) from exc
        manager.cwd = cwd
        session = await self.open(manager, mcp_servers, announced=announced, roots=roots)
        await self.record_workspace(session, None)
        return session

    async def record_workspace(self, session: AcpSession, header_cwd: str | None) -> None:
        """Note in the workspace index where the session is open now (``header_cwd``: the cwd
        its file's header names, None to read it). A failure costs only the listing."""
        manager = session.agent.manager
        path = manager.session_file
        if path is None:
            return
        cwd, roots = manager.cwd, list(session.agent.settings.additional_directories)

        def record() -> None:
            began = header_cwd
            if began is None:
                header = files.read_header(Path(path))
                began = str(header.get("cwd", "")) if header is not None else ""
            WorkspaceIndex(self.home).record(session.id, Path(path), began, cwd, roots)

        try:
            await anyio.to_thread.run_sync(record)
        except OSError as exc:
            logger.warning("cannot record where session %s is open: %s", session.id, exc)

    async def fork(
        self,
        source: AcpSession,
        mcp_servers: list[McpServer] | None = None,
        *,
        announced: bool,
        roots: list[str] | None = None,
    ) -> AcpSession:
        """A new session with a copy of the source's current branch; the source stays open."""
        manager = source.agent.manager
        await manager.flush()
        leaf = manager.leaf_id
        parent = str(manager.session_file) if manager.session_file else None
        if leaf is None:
            new = await anyio.to_thread.run_sync(
                lambda: SessionManager.create(
                    manager.cwd, self.session_dir(manager.cwd), parent_session=parent, home=self.config.home
                )
            )
        else:
            new = await anyio.to_thread.run_sync(
                lambda: manager.create_branched_session(leaf, home=self.config.home)
            )
        inherited = source.agent.mcp.client_servers if isinstance(source.agent.mcp, McpManager) else None
        # A fork without a list of its own (the /fork command) keeps the editor's servers.
        servers = mcp_servers if mcp_servers is not None else McpServers(inherited or [])
        if roots is None:  # the /fork command: the source's roots
            roots = list(source.agent.settings.additional_directories)
        fork = await self.open(new, servers, announced=announced, roots=roots)
        await self.record_workspace(fork, new.cwd)
        await fork.agent.checkpoints.carry_to(source.agent.checkpoints.current_engine(), new)
        if source.agent.model.id != fork.agent.model.id:
            fork.agent.model = source.agent.model
        fork.agent.thinking_level = source.agent.thinking_level
        return fork

    async def close(self, session: AcpSession) -> None:
        session.agent.abort(stopping=True)
        session.answered.set()
        with anyio.move_on_after(STOP_SECONDS):  # a client that stopped reading cannot block us
            await session.agent.wait_idle()
            await session.flush()
        session.closed = True
        session.send.close()
        self.open_sessions.pop(session.id, None)
        await session.agent.shutdown()

    def cancel(self, session_id: str) -> None:
        session = self.open_sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def stop_all(self) -> None:
        """The editor is gone: abort every run and wait (a bounded time) until each has stored
        what it had, while the connection can still carry the answers."""
        for session in self.open_sessions.values():
            session.cancel()
        with anyio.move_on_after(STOP_SECONDS):
            for session in list(self.open_sessions.values()):
                await session.agent.wait_idle()

    async def close_all(self) -> None:
        for session in list(self.open_sessions.values()):
            await self.close(session)
