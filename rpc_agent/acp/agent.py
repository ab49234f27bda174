"""The ACP agent: ``acp.Agent`` on top of AgentSession and the session store.

Each ACP session is one AgentSession (its own SessionManager); the ACP session id is the id in
the session file's header, so ``session/load`` in a later process finds the same conversation.
Events from a session go through a per-session queue drained by one task: updates reach the
client in order, and a prompt (or a permission request) waits until everything before it has
been sent. The queue of a session the client does not know yet (``session/new``, ``fork``,
``resume``) opens only once the transport has written the answer that names it.
"""

from __future__ import annotations

import logging
import math
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import anyio.to_thread
import orjson
from acp.interfaces import Client
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AudioContentBlock,
    AuthenticateResponse,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CloseSessionResponse,
    EmbeddedResourceContentBlock,
    ForkSessionResponse,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerStdio,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionForkCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    SseMcpServer,
    StopReason,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallUpdate,
    UnstructuredCommandInput,
)
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text, update_tool_call
from rpc_agent.errors import AgentBusyError, InvalidRequestError, SessionNotFoundError

from .. import __version__
from ..agent.session import THINKING_LEVELS, AgentSession
from ..mcp import McpManager, McpServerConfig, from_wire_json
from ..protocol import methods as m
from ..providers.base import Provider
from ..runtime import Runtime, ServerConfig
from ..server.errors import RpcError
from ..server.methods import Methods, map_error
from ..session import files
from ..session.store import SessionManager
from ..tools.access import DiskFiles
from ..tools.base import is_read_only
from . import auth, listing
from .fs import file_access
from .preview import file_change
from .terminal import EditorTerminal
from .updates import PERMISSION_TOOLS, EventTranslator, Update, replay_updates, tool_kind, tool_title

logger = logging.getLogger("rpc_agent.acp")

JsonDict = dict[str, Any]
McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean

COMMANDS: list[tuple[str, str, str | None]] = [
    ("tree", "Show the conversation tree; /tree <entry-id> moves to that entry", "entry id (optional)"),
    ("compact", "Summarize older messages to free context", "custom instructions (optional)"),
    ("fork", "Copy this conversation (current branch) into a new session", None),
    ("name", "Name this session", "session name"),
    ("label", "Label an entry of the tree (no label clears it)", "entry id and label"),
    ("mcp", "Show the MCP servers: status, tool count, last error", None),
    (
        "mcp-restart",
        "Restart an MCP server (all without a name) and show their status",
        "server name (optional)",
    ),
]

EXTENSION_METHODS = frozenset(
    {
        "get_tree",
        "navigate_tree",
        "set_label",
        "compact",
        "get_entries",
        "get_messages",
        "get_session_stats",
        "export_html",
    }
)
"""Methods of the JSON-RPC table that ACP lacks, as extension methods (``_rpc_agent/<name>`` on
the wire, with the params of the table plus ``sessionId``). The session's lifecycle, prompts and
settings stay ACP's own."""

SUPPORTED_VERSIONS = frozenset({PROTOCOL_VERSION})

APPROVAL_POLICIES: dict[str, tuple[str, str]] = {
    "writes": ("Ask before changes", "Ask before write, edit and bash; other tools only read"),
    "all": ("Ask for every tool", "Ask before every tool call"),
    "never": ("Never ask", "Run every tool call without asking"),
}
"""The ``approval_policy`` config option: when the client is asked before a tool runs."""

STOP_SECONDS = 1.5
"""How long aborted runs may take to store what they have once the editor is gone."""

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
]


@dataclass
class _Flush:
    """Put in a session's update queue; set once everything before it was sent."""

    done: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class AcpSession:
    id: str
    agent: AgentSession
    send: MemoryObjectSendStream[Update | _Flush]
    translator: EventTranslator
    answered: anyio.Event = field(default_factory=anyio.Event)
    """Set once the client has the answer that told it about this session."""
    methods: Methods = field(init=False)
    """The JSON-RPC method table bound to this session's agent (for the extension methods)."""
    approval: str = "writes"
    always_allowed: set[str] = field(default_factory=set)
    cancelled: bool = False
    closed: bool = False

    def __post_init__(self) -> None:
        self.methods = Methods(self.agent, providers=[self.agent.provider.name], on_shutdown=lambda: None)

    def push(self, update: Update) -> None:
        if not self.closed:
            self.send.send_nowait(update)

    async def flush(self) -> None:
        """Wait until every update queued so far has been sent to the client."""
        if self.closed:
            return
        marker = _Flush()
        self.send.send_nowait(marker)
        await marker.done.wait()


def _stop_reason(result: m.PromptResult, cancelled: bool, messages: list[Any]) -> StopReason:
    if cancelled or result.stopReason == "aborted":
        return "cancelled"
    if result.stopReason == "length":
        return "max_tokens"
    last = next(
        (msg for msg in reversed(messages) if isinstance(msg, dict) and msg.get("role") == "assistant"), None
    )
    if last is not None and "refusal" in str(last.get("errorMessage") or ""):
        return "refusal"
    return "end_turn"


class RpcAgentAcp:
    """The ``acp.Agent`` implementation (one per connection)."""

    def __init__(self, config: ServerConfig, group: anyio.abc.TaskGroup) -> None:
        self.config = config
        self.group = group
        self.home = config.home or files.agent_home()
        self.runtime = Runtime(config)
        self.provider: Provider = self.runtime.provider
        self.sessions: dict[str, AcpSession] = {}
        self.conn: Client | None = None
        self.client_capabilities = ClientCapabilities()

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    def _client(self) -> Client:
        if self.conn is None:
            raise RequestError.internal_error({"details": "not connected"})
        return self.conn

    # --- sessions ---------------------------------------------------------------------------

    def _session_dir(self, cwd: str) -> Path:
        return self.config.session_dir or files.default_session_dir(cwd, self.home)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"details": f"unknown session {session_id}"})
        return session

    async def _open(
        self,
        manager: SessionManager,
        mcp_servers: list[McpServer] | McpServers | None = None,
        *,
        announced: bool = False,
    ) -> AcpSession:
        """Wrap a session manager in an AgentSession, start its update pump and MCP servers.

        ``announced``: the client already knows the session (else updates wait for the answer).
        """
        send, receive = anyio.create_memory_object_stream[Update | _Flush](math.inf)
        translator = EventTranslator(manager.cwd)
        holder: list[AcpSession] = []

        def emit(event: BaseModel) -> None:
            if holder:
                for update in translator.translate(event):
                    holder[0].push(update)

        agent = self.runtime.agent(manager, emit)
        session = AcpSession(id=manager.session_id, agent=agent, send=send, translator=translator)
        if announced:
            session.answered.set()
        holder.append(session)

        async def authorize(call_id: str, name: str, args: JsonDict) -> bool:
            return await self._authorize(session, call_id, name, args)

        agent.authorize = authorize
        agent.files = file_access(self.client_capabilities, self._client, session.id)
        if self.client_capabilities.terminal:

            def show_terminal(call_id: str, terminal_id: str) -> None:
                translator.terminals[call_id] = terminal_id
                shown = TerminalToolCallContent(type="terminal", terminal_id=terminal_id)
                session.push(update_tool_call(call_id, status="in_progress", content=[shown]))

            agent.commands = EditorTerminal(self._client, session.id, show_terminal)
        mcp = McpManager(self.group, emit, cwd=manager.cwd, home=self.home)
        agent.mcp = mcp
        mcp.start(
            mcp_servers.configs if isinstance(mcp_servers, McpServers) else _client_servers(mcp_servers or [])
        )
        self.sessions[session.id] = session
        self.group.start_soon(self._pump, session.id, receive)
        return session

    def answered(self, session_id: str) -> None:
        """The transport wrote an answer about ``session_id``: its updates may follow."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.answered.set()

    async def _pump(self, session_id: str, receive: MemoryObjectReceiveStream[Update | _Flush]) -> None:
        session = self.sessions[session_id]
        await session.answered.wait()
        async with receive:
            async for item in receive:
                if isinstance(item, _Flush):
                    item.done.set()
                    continue
                try:
                    await self._client().session_update(session_id=session_id, update=item)
                except Exception as exc:  # a gone client must not stop the agent
                    logger.warning("session/update failed: %s", exc)

    async def _close(self, session: AcpSession) -> None:
        session.agent.abort()
        session.answered.set()
        with anyio.move_on_after(STOP_SECONDS):  # a client that stopped reading cannot block us
            await session.agent.wait_idle()
            await session.flush()
        session.closed = True
        session.send.close()
        self.sessions.pop(session.id, None)
        await session.agent.shutdown()

    async def stop_all(self) -> None:
        """The editor is gone: abort every run and wait (a bounded time) until each has stored
        what it had, while the connection can still carry the answers."""
        for session in self.sessions.values():
            session.cancelled = True
            session.agent.abort()
        with anyio.move_on_after(STOP_SECONDS):
            for session in list(self.sessions.values()):
                await session.agent.wait_idle()

    async def shutdown(self) -> None:
        for session in list(self.sessions.values()):
            await self._close(session)

    def _find_session_file(self, session_id: str) -> Path | None:
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

    async def _open_existing(
        self, session_id: str, cwd: str, mcp_servers: list[McpServer] | None = None, *, announced: bool
    ) -> AcpSession:
        """An open session or one from its file, set to run its tools in ``cwd``.

        ACP says the agent MUST use the cwd the client sends with load and resume (the project
        may have moved since the file was written); the file's own header stays as written.
        """
        existing = self.sessions.get(session_id)
        if existing is not None:
            _move_to(existing, cwd)
            return existing
        path = await anyio.to_thread.run_sync(self._find_session_file, session_id)
        if path is None:
            raise RequestError.resource_not_found(session_id)
        try:
            manager = await anyio.to_thread.run_sync(
                lambda: SessionManager.open(path, cwd=cwd, home=self.config.home, must_exist=True)
            )
        except SessionNotFoundError as exc:
            raise RequestError.resource_not_found(session_id) from exc
        manager.cwd = cwd
        return await self._open(manager, mcp_servers, announced=announced)

    def _config_options(self, session: AcpSession) -> list[ConfigOption]:
        agent = session.agent
        models = self.provider.models()
        model_options = [SessionConfigSelectOption(value=model.id, name=model.name) for model in models]
        if agent.model.id not in {model.id for model in models}:
            model_options.insert(0, SessionConfigSelectOption(value=agent.model.id, name=agent.model.name))
        return [
            SessionConfigOptionSelect(
                type="select",
                id="model",
                name="Model",
                category="model",
                current_value=agent.model.id,
                options=model_options,
            ),
            SessionConfigOptionSelect(
                type="select",
                id="thinking_level",
                name="Thinking level",
                category="thought_level",
                current_value=agent.thinking_level,
                options=[SessionConfigSelectOption(value=level, name=level) for level in THINKING_LEVELS],
            ),
            SessionConfigOptionSelect(
                type="select",
                id="approval_policy",
                name="Approval",
                description="When to ask before a tool runs",
                category="mode",
                current_value=session.approval,
                options=[
                    SessionConfigSelectOption(value=value, name=name, description=description)
                    for value, (name, description) in APPROVAL_POLICIES.items()
                ],
            ),
        ]

    def _announce_commands(self, session: AcpSession) -> None:
        commands = [
            AvailableCommand(
                name=name,
                description=description,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
            )
            for name, description, hint in COMMANDS
        ]
        update = AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=commands
        )
        session.push(update)  # held back until the client has the answer naming the session

    # --- acp.Agent --------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            # The requested version when we speak it, else the latest we do (ACP's rule).
            protocol_version=protocol_version if protocol_version in SUPPORTED_VERSIONS else PROTOCOL_VERSION,
            auth_methods=list(auth.auth_methods(self.provider)),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    fork=SessionForkCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            agent_info=Implementation(name="rpc-agent", title="rpc-agent", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        auth.authenticate(self.provider, method_id)
        return AuthenticateResponse()

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        _check_cwd(cwd)
        folder = self._session_dir(cwd)
        manager = await anyio.to_thread.run_sync(
            lambda: SessionManager.create(cwd, folder, home=self.config.home)
        )
        session = await self._open(manager, mcp_servers)
        self._announce_commands(session)
        return NewSessionResponse(session_id=session.id, config_options=self._config_options(session))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        _check_cwd(cwd)
        session = await self._open_existing(session_id, cwd, mcp_servers, announced=True)
        for update in replay_updates(session.agent.manager.get_branch(), session.agent.manager.cwd):
            session.push(update)
        self._announce_commands(session)
        await session.flush()
        return LoadSessionResponse(config_options=self._config_options(session))

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        _check_cwd(cwd)
        session = await self._open_existing(session_id, cwd, mcp_servers, announced=False)
        self._announce_commands(session)
        return ResumeSessionResponse(config_options=self._config_options(session))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        if cwd is not None and not os.path.isabs(cwd):
            raise RequestError.invalid_params({"details": "cwd must be an absolute path"})
        found = await anyio.to_thread.run_sync(listing.find_sessions, self.config.session_dir, self.home, cwd)
        infos, next_cursor = listing.page(found, cursor)
        return ListSessionsResponse(
            next_cursor=next_cursor,
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=info.cwd or (cwd or ""),
                    title=info.name or info.firstMessage,
                    updated_at=info.modified,
                )
                for info in infos
            ],
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        session = self.sessions.get(session_id)
        if session is not None:
            await self._close(session)
        return CloseSessionResponse()

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        _check_cwd(cwd)
        source = await self._open_existing(session_id, cwd, mcp_servers, announced=True)
        fork = await self._fork(source, mcp_servers, announced=False)
        self._announce_commands(fork)
        return ForkSessionResponse(session_id=fork.id, config_options=self._config_options(fork))

    async def _fork(
        self, source: AcpSession, mcp_servers: list[McpServer] | None = None, *, announced: bool
    ) -> AcpSession:
        manager = source.agent.manager
        await manager.flush()
        leaf = manager.leaf_id
        parent = str(manager.session_file) if manager.session_file else None
        if leaf is None:
            new = await anyio.to_thread.run_sync(
                lambda: SessionManager.create(
                    manager.cwd, self._session_dir(manager.cwd), parent_session=parent, home=self.config.home
                )
            )
        else:
            new = await anyio.to_thread.run_sync(
                lambda: manager.create_branched_session(leaf, home=self.config.home)
            )
        inherited = source.agent.mcp.client_servers if isinstance(source.agent.mcp, McpManager) else None
        # A fork without a list of its own (the /fork command) keeps the editor's servers.
        servers = mcp_servers if mcp_servers is not None else McpServers(inherited or [])
        fork = await self._open(new, servers, announced=announced)
        if source.agent.model.id != fork.agent.model.id:
            fork.agent.model = source.agent.model
        fork.agent.thinking_level = source.agent.thinking_level
        return fork

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        raise RequestError.method_not_found("session/set_mode")

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        session = self._session(session_id)
        try:
            if config_id == "model" and isinstance(value, str):
                await session.agent.set_model(value)
            elif config_id == "thinking_level" and isinstance(value, str):
                await session.agent.set_thinking_level(value)
            elif config_id == "approval_policy" and value in APPROVAL_POLICIES:
                assert isinstance(value, str)
                session.approval = value
            else:
                raise RequestError.invalid_params({"details": f"unknown config option {config_id}={value!r}"})
        except (InvalidRequestError, ValueError, KeyError) as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from exc
        return SetSessionConfigOptionResponse(config_options=self._config_options(session))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancelled = True
            session.agent.abort()

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        text, images = _prompt_content(prompt)
        session.cancelled = False
        command = _slash_command(prompt)
        if command is not None:
            reply = await self._run_command(session, command)
            session.push(update_agent_message_text(reply))
            await session.flush()
            return PromptResponse(stop_reason="end_turn")
        auth.require_credentials(self.provider)
        try:
            result = await session.agent.prompt(text, images or None)
        except AgentBusyError as exc:
            raise RequestError.invalid_request({"details": str(exc)}) from exc
        except Exception as exc:
            await session.flush()
            if session.cancelled:
                return PromptResponse(stop_reason="cancelled")
            raise RequestError.internal_error({"details": str(exc)}) from exc
        await session.flush()
        return PromptResponse(stop_reason=_stop_reason(result, session.cancelled, result.messages or []))

    def _needs_permission(self, session: AcpSession, name: str) -> bool:
        if session.approval == "never" or name in session.always_allowed:
            return False
        return session.approval == "all" or _asks_permission(session.agent, name)

    async def _authorize(self, session: AcpSession, call_id: str, name: str, args: JsonDict) -> bool:
        allowed = True
        agent = session.agent
        change = await file_change(name, args, agent.manager.cwd, agent.files or DiskFiles())
        content = [change.diff()] if change is not None else None
        locations = [change.location()] if change is not None else None
        if change is not None:
            session.translator.diffs[call_id] = change.diff()
            session.push(update_tool_call(call_id, content=content, locations=locations))
        if self._needs_permission(session, name):
            await session.flush()  # the client sees the tool call before the question about it
            try:
                response = await self._client().request_permission(
                    session_id=session.id,
                    tool_call=ToolCallUpdate(
                        tool_call_id=call_id,
                        title=tool_title(name, args),
                        kind=tool_kind(name),
                        status="pending",
                        raw_input=args,
                        content=content,
                        locations=locations,
                    ),
                    options=PERMISSION_OPTIONS,
                )
            except ConnectionError:
                # The editor is gone and nobody will answer: stop the run (stored as aborted).
                session.cancelled = True
                session.agent.abort()
                await anyio.lowlevel.checkpoint()
                allowed = False
            except RequestError as exc:
                logger.warning("session/request_permission failed: %s", exc)
                allowed = False
            else:
                outcome = response.outcome
                chosen = getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None
                allowed = chosen in ("allow_once", "allow_always")
                if chosen == "allow_always":
                    session.always_allowed.add(name)
        if allowed:
            session.push(update_tool_call(call_id, status="in_progress"))
        return allowed

    # --- slash commands and extension methods ----------------------------------------------

    async def _run_command(self, session: AcpSession, command: str) -> str:
        name, _, rest = command[1:].partition(" ")
        rest = rest.strip()
        agent = session.agent
        try:
            if name == "tree":
                if rest:
                    result = await agent.navigate_tree(m.NavigateTreeParams(targetId=rest))
                    return f"Moved to {result.leafId or 'the root'}." + (
                        f"\n\nEditor text: {result.editorText}" if result.editorText else ""
                    )
                return _format_tree(agent.tree())
            if name == "compact":
                compacted = await agent.compact(rest or None)
                return f"Compacted {compacted.tokensBefore} tokens into a summary."
            if name == "fork":
                fork = await self._fork(session, announced=True)
                self._announce_commands(fork)
                return f"Forked into session {fork.id}; load it to continue there."
            if name == "name":
                if not rest:
                    return "Usage: /name <session name>"
                await agent.set_session_name(rest)
                session.push(SessionInfoUpdate(session_update="session_info_update", title=rest))
                return f"Session named {rest!r}."
            if name == "mcp":
                return _format_mcp(agent)
            if name == "mcp-restart":
                mcp = agent.mcp
                if isinstance(mcp, McpManager):
                    await mcp.restart(rest or None)
                return _format_mcp(agent)
            if name == "label":
                words = shlex.split(rest) if rest else []
                if not words:
                    return "Usage: /label <entry-id> [label]"
                label = " ".join(words[1:]) or None
                await agent.set_label(words[0], label)
                return f"Label of {words[0]} {'set to ' + repr(label) if label else 'cleared'}."
        except Exception as exc:
            return f"/{name} failed: {exc}"
        return f"Unknown command /{name}"

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        prefix, _, name = method.partition("/")
        if prefix != "rpc_agent" or name not in EXTENSION_METHODS:
            raise RequestError.method_not_found(f"_{method}")
        session = self._session(str(params.get("sessionId")))
        spec = session.methods.registry.get(name)
        assert spec is not None, name
        rest = {key: value for key, value in params.items() if key != "sessionId"}
        try:
            result = await spec.invoke(rest)
        except RpcError as exc:
            raise RequestError(exc.code, exc.message, exc.data) from exc
        except Exception as exc:
            mapped = map_error(exc)
            if mapped is None:
                raise
            raise RequestError(mapped.code, mapped.message, mapped.data) from exc
        # Stored JSON sent as it is (orjson fragments) becomes plain data for the SDK's encoder.
        plain: dict[str, Any] = orjson.loads(orjson.dumps(result))
        return plain

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def _slash_command(prompt: list[PromptBlock]) -> str | None:
    """``/name args`` at the start of a text block of the prompt, for a command we have.

    Editors put context (files, selections) in blocks of their own, before or after what the
    user typed, so only the block's own start counts, not the start of the joined prompt.
    """
    known = {name for name, _, _ in COMMANDS}
    for block in prompt:
        if isinstance(block, TextContentBlock):
            text = block.text.strip()
            words = text[1:].split(None, 1) if text.startswith("/") else []
            if words and words[0] in known:
                return text
    return None


def _check_cwd(cwd: str) -> None:
    """ACP's cwd is an absolute path to a folder; anything else is the client's mistake."""
    if not os.path.isabs(cwd):
        raise RequestError.invalid_params({"details": f"cwd must be an absolute path, got {cwd[:200]!r}"})
    if not os.path.isdir(cwd):
        raise RequestError.invalid_params({"details": f"cwd is not a directory: {cwd[:200]!r}"})


def _move_to(session: AcpSession, cwd: str) -> None:
    session.agent.manager.cwd = cwd
    session.translator.cwd = cwd


@dataclass
class McpServers:
    """A client's MCP servers already converted (a fork takes its source's)."""

    configs: list[McpServerConfig]


def _client_servers(servers: list[McpServer]) -> list[McpServerConfig]:
    return from_wire_json(
        [server.model_dump(mode="json", by_alias=True, exclude_none=True) for server in servers]
    )


def _asks_permission(agent: AgentSession, name: str) -> bool:
    """Tools that change the machine ask first: the built-in ones that do, and MCP tools
    unless their server marks them read-only."""
    if name in PERMISSION_TOOLS:
        return True
    if not name.startswith("mcp__") or agent.mcp is None:
        return False
    tool = next((t for t in agent.mcp.tools() if t.name == name), None)
    return tool is None or not is_read_only(tool)


def _format_mcp(agent: AgentSession) -> str:
    servers = agent.mcp.state_json() if agent.mcp is not None else []
    if not servers:
        return "No MCP servers."
    return "\n".join(
        f"- {s['name']} ({s['transport']}): {s['status']}, {s['toolCount']} tools"
        + (f" ({s['error']})" if s.get("error") else "")
        for s in servers
    )


def _prompt_content(prompt: list[PromptBlock]) -> tuple[str, list[JsonDict]]:
    texts: list[str] = []
    images: list[JsonDict] = []
    for block in prompt:
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            images.append({"type": "image", "data": block.data, "mimeType": block.mime_type})
        elif isinstance(block, ResourceContentBlock):
            texts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            body = getattr(resource, "text", None)
            if isinstance(body, str):
                texts.append(f'<file uri="{resource.uri}">\n{body}\n</file>')
            else:
                texts.append(f"[{resource.uri}]")
    return "\n".join(texts), images


def _format_tree(tree: JsonDict) -> str:
    leaf = tree.get("leafId")
    lines = []
    for node in tree.get("nodes", []):
        if node.get("type") not in ("message", "branch_summary", "compaction"):
            continue
        marker = "*" if node["id"] == leaf else " "
        label = f" [{node['label']}]" if node.get("label") else ""
        role = node.get("role") or node.get("type")
        lines.append(
            f"{marker} {'  ' * int(node.get('depth') or 0)}{node['id']} {role}{label}: {node.get('preview')}"
        )
    return "```\n" + ("\n".join(lines) or "(empty)") + "\n```"
