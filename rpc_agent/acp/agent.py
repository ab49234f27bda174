"""The ACP agent: ``acp.Agent`` on top of the connection's sessions.

Each method checks what ACP asks of its params and hands over to the module with that job:
``sessions`` opens, forks and closes them, ``config`` holds the config options, ``commands``
runs the slash commands, ``permissions`` asks before tools run, ``extensions`` serves the
JSON-RPC methods ACP lacks.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from acp.interfaces import Client
from acp.schema import (
    AgentAuthCapabilities,
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    LogoutCapabilities,
    LogoutResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from rpc_agent import __version__
from rpc_agent.acp import auth, listing
from rpc_agent.acp.cancellation import Cancellations, cancellable
from rpc_agent.acp.commands import announce, run_command, slash_command
from rpc_agent.acp.config import config_options, set_config_option
from rpc_agent.acp.extensions import call_extension, extension_name
from rpc_agent.acp.prompt import PromptBlock, prompt_content, stop_reason
from rpc_agent.acp.session_methods import McpServer, Sessions, workspace_roots
from rpc_agent.acp.status import prompt_usage, title_of
from rpc_agent.acp.updates import replay_updates
from rpc_agent.agent import deletion
from rpc_agent.credentials import CredentialStore
from rpc_agent.errors import AgentBusyError, AgentError
from rpc_agent.protocol.errors import ERROR_CODES
from rpc_agent.providers.base import Provider
from rpc_agent.runtime import Runtime, ServerConfig

SUPPORTED_VERSIONS = frozenset({PROTOCOL_VERSION})


class RpcAgentAcp:
    """The ``acp.Agent`` implementation (one per connection)."""

    def __init__(
        self, config: ServerConfig, group: anyio.abc.TaskGroup, cancellations: Cancellations | None = None
    ) -> None:
        self.config = config
        self.cancellations = cancellations or Cancellations()
        """What ``$/cancel_request`` cancels (the transport's, when served over one)."""
        self.runtime = Runtime(config)
        self.provider: Provider = self.runtime.provider
        self.conn: Client | None = None
        self.sessions = Sessions(config, self.runtime, group, self._client)

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    def _client(self) -> Client:
        if self.conn is None:
            raise RequestError.internal_error({"details": "not connected"})
        return self.conn

    # --- for the transport and ``serve`` ------------------------------------------------

    def answered(self, session_id: str) -> None:
        """The transport wrote an answer about ``session_id``: its updates may follow."""
        self.sessions.answered(session_id)

    async def stop_all(self) -> None:
        await self.sessions.stop_all()

    async def shutdown(self) -> None:
        try:
            await self.sessions.close_all()
        finally:
            self.runtime.close()

    # --- acp.Agent ----------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.sessions.client_capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            # The requested version when we speak it, else the latest we do (ACP's rule).
            protocol_version=protocol_version if protocol_version in SUPPORTED_VERSIONS else PROTOCOL_VERSION,
            auth_methods=list(auth.auth_methods(self.provider, client_capabilities)),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                auth=AgentAuthCapabilities(logout=LogoutCapabilities()),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    fork=SessionForkCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                    delete=SessionDeleteCapabilities(),
                ),
            ),
            agent_info=Implementation(name="rpc-agent", title="rpc-agent", version=__version__),
        )

    @cancellable
    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        auth.authenticate(self.provider, method_id)
        return AuthenticateResponse()

    @cancellable
    async def logout(self, **kwargs: Any) -> LogoutResponse:
        """``logout`` (routed by ``routes``): the stored key is forgotten."""
        left = auth.logout(self.provider, CredentialStore(self.sessions.home))
        return LogoutResponse(field_meta={"rpc-agent": left})

    @cancellable
    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        roots = workspace_roots(additional_directories, cwd)
        session = await self.sessions.create(cwd, mcp_servers, roots)
        announce(session)
        return NewSessionResponse(session_id=session.id, config_options=config_options(session))

    @cancellable
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        roots = workspace_roots(additional_directories, cwd)
        session = await self.sessions.open_existing(session_id, cwd, mcp_servers, announced=True, roots=roots)
        for update in replay_updates(session.agent.manager.get_branch(), session.agent.manager.cwd):
            session.push(update)
        announce(session)
        await session.flush()
        return LoadSessionResponse(config_options=config_options(session))

    @cancellable
    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        roots = workspace_roots(additional_directories, cwd)
        session = await self.sessions.open_existing(
            session_id, cwd, mcp_servers, announced=False, roots=roots
        )
        announce(session)
        return ResumeSessionResponse(config_options=config_options(session))

    @cancellable
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        if cwd is not None and not os.path.isabs(cwd):
            raise RequestError.invalid_params({"details": "cwd must be an absolute path"})
        found = await anyio.to_thread.run_sync(
            listing.find_sessions, self.config.session_dir, self.sessions.home, cwd
        )
        infos, next_cursor = listing.page(found, cursor)
        return ListSessionsResponse(
            next_cursor=next_cursor,
            sessions=[
                SessionInfo(
                    session_id=listed.info.id,
                    cwd=listed.cwd or (cwd or ""),
                    additional_directories=list(listed.additional_directories) or None,
                    title=listed.info.name or title_of(listed.info.firstMessage),
                    updated_at=listed.info.modified,
                )
                for listed in infos
            ],
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        session = self.sessions.open_sessions.get(session_id)
        if session is not None:
            await self.sessions.close(session)
        return CloseSessionResponse()

    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """``session/delete`` (routed by ``routes``): the JSON-RPC front's deletion, by id.

        A session open on this connection is refused as the live one is over JSON-RPC: the
        editor closes it first (``session/close``)."""
        if session_id in self.sessions.open_sessions:
            raise RequestError.invalid_request(
                {"details": f"session {session_id} is open; close it (session/close) before deleting it"}
            )
        path = await anyio.to_thread.run_sync(self.sessions.find_session_file, session_id)
        if path is None:
            raise RequestError.resource_not_found(session_id)
        live = [
            file
            for session in self.sessions.open_sessions.values()
            if (file := session.agent.manager.session_file) is not None
        ]
        try:
            await anyio.to_thread.run_sync(
                lambda: deletion.delete_session(
                    path, home=self.sessions.home, session_dir=self.config.session_dir, live=live
                )
            )
        except AgentError as exc:
            raise RequestError(ERROR_CODES[exc.kind].code, str(exc), exc.data()) from exc
        return DeleteSessionResponse()

    @cancellable
    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        roots = workspace_roots(additional_directories, cwd)
        source = await self.sessions.open_existing(session_id, cwd, mcp_servers, announced=True, roots=roots)
        fork = await self.sessions.fork(source, mcp_servers, announced=False, roots=roots)
        announce(fork)
        return ForkSessionResponse(session_id=fork.id, config_options=config_options(fork))

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        raise RequestError.method_not_found("session/set_mode")

    @cancellable
    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        session = self.sessions.get(session_id)
        await set_config_option(session, config_id, value)
        return SetSessionConfigOptionResponse(config_options=config_options(session))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.sessions.cancel(session_id)

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **kwargs: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        text, images = prompt_content(prompt)
        session.start_prompt()
        command = slash_command(prompt)
        if command is not None:
            with self.cancellations.guard():
                reply = await run_command(self.sessions, session, command)
                session.push(update_agent_message_text(reply))
                await session.flush()
                return PromptResponse(stop_reason="end_turn")
        # ``$/cancel_request`` for this prompt stops it as ``session/cancel`` would.
        if self.cancellations.on_cancel(session.cancel):
            return PromptResponse(stop_reason="cancelled")
        auth.require_credentials(self.provider)
        try:
            result = await session.agent.prompt(text, images or None)
        except AgentBusyError as exc:
            raise RequestError.invalid_request({"details": str(exc)}) from exc
        except Exception as exc:
            for update in session.status.prompt_ended():
                session.push(update)
            await session.flush()
            if session.cancelled:
                return PromptResponse(stop_reason="cancelled")
            raise RequestError.internal_error({"details": str(exc)}) from exc
        for update in session.status.prompt_ended():
            session.push(update)
        await session.flush()
        return PromptResponse(
            stop_reason=stop_reason(result, session.cancelled), usage=prompt_usage(result.messages or [])
        )

    @cancellable
    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        name = extension_name(method)
        return await call_extension(self.sessions.get(str(params.get("sessionId"))), name, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
