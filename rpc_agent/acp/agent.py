"""The ACP agent: ``acp.Agent`` on top of AgentSession and the session store.

Each ACP session is one AgentSession (its own SessionManager); the ACP session id is the id in
the session file's header, so ``session/load`` in a later process finds the same conversation.
Events from a session go through a per-session queue drained by one task: updates reach the
client in order, and a prompt (or a permission request) waits until everything before it has
been sent.
"""

from __future__ import annotations

import logging
import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
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
    TextContentBlock,
    ToolCallUpdate,
    UnstructuredCommandInput,
)
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text, update_tool_call

from .. import __version__
from ..agent.session import THINKING_LEVELS, AgentBusyError, AgentSession
from ..protocol import methods as m
from ..providers.base import Provider
from ..server.app import ServerConfig, make_provider, make_tools
from ..session import files
from ..session.errors import SessionNotFoundError
from ..session.store import SessionManager
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
]

EXTENSION_METHODS = frozenset(
    {"rpc_agent/get_tree", "rpc_agent/navigate_tree", "rpc_agent/set_label", "rpc_agent/compact"}
)
"""Tree features ACP lacks, as extension methods (``_rpc_agent/...`` on the wire, with sessionId)."""

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
    always_allowed: set[str] = field(default_factory=set)
    cancelled: bool = False
    closed: bool = False

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
        self.provider: Provider = make_provider(config)
        self.sessions: dict[str, AcpSession] = {}
        self.conn: Client | None = None

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

    async def _open(self, manager: SessionManager) -> AcpSession:
        """Wrap a session manager in an AgentSession and start its update pump."""
        send, receive = anyio.create_memory_object_stream[Update | _Flush](math.inf)
        translator = EventTranslator(manager.cwd)
        holder: list[AcpSession] = []

        def emit(event: BaseModel) -> None:
            if holder:
                for update in translator.translate(event):
                    holder[0].push(update)

        config = self.config
        agent = AgentSession(
            manager=manager,
            provider=self.provider,
            emit=emit,
            tools=lambda: make_tools(config),
            model_id=config.model,
            thinking_level=config.thinking,
            session_dir=config.session_dir,
            home=config.home,
            settings=config.settings,
        )
        session = AcpSession(id=manager.session_id, agent=agent, send=send)
        holder.append(session)

        async def authorize(call_id: str, name: str, args: JsonDict) -> bool:
            return await self._authorize(session, call_id, name, args)

        agent.authorize = authorize
        self.sessions[session.id] = session
        self.group.start_soon(self._pump, session.id, receive)
        return session

    async def _pump(self, session_id: str, receive: MemoryObjectReceiveStream[Update | _Flush]) -> None:
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
        await session.flush()
        session.closed = True
        session.send.close()
        self.sessions.pop(session.id, None)
        await session.agent.shutdown()

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

    async def _open_existing(self, session_id: str, cwd: str) -> AcpSession:
        existing = self.sessions.get(session_id)
        if existing is not None:
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
        return await self._open(manager)

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
        ]

    def _announce_commands(self, session: AcpSession, *, later: bool) -> None:
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
        if not later:
            session.push(update)
            return

        async def push_after_answer() -> None:
            # The client learns the session id from our answer; a notification about the
            # session should not overtake it.
            await anyio.sleep(0.05)
            session.push(update)

        self.group.start_soon(push_after_answer)

    # --- acp.Agent --------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
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
        return AuthenticateResponse()

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        folder = self._session_dir(cwd)
        manager = await anyio.to_thread.run_sync(
            lambda: SessionManager.create(cwd, folder, home=self.config.home)
        )
        session = await self._open(manager)
        self._announce_commands(session, later=True)
        return NewSessionResponse(session_id=session.id, config_options=self._config_options(session))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        session = await self._open_existing(session_id, cwd)
        for update in replay_updates(session.agent.manager.get_branch(), session.agent.manager.cwd):
            session.push(update)
        self._announce_commands(session, later=False)
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
        session = await self._open_existing(session_id, cwd)
        self._announce_commands(session, later=True)
        return ResumeSessionResponse(config_options=self._config_options(session))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        if cwd is not None:
            infos = await anyio.to_thread.run_sync(files.list_sessions, self._session_dir(cwd))
        else:
            infos = await anyio.to_thread.run_sync(files.list_all_sessions, files.sessions_root(self.home))
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=info.cwd or (cwd or ""),
                    title=info.name or info.firstMessage,
                    updated_at=info.modified,
                )
                for info in infos
            ]
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
        source = await self._open_existing(session_id, cwd)
        fork = await self._fork(source)
        self._announce_commands(fork, later=True)
        return ForkSessionResponse(session_id=fork.id, config_options=self._config_options(fork))

    async def _fork(self, source: AcpSession) -> AcpSession:
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
        fork = await self._open(new)
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
            else:
                raise RequestError.invalid_params({"details": f"unknown config option {config_id}={value!r}"})
        except (ValueError, KeyError) as exc:
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
        command = text.strip()
        if command.startswith("/") and command[1:].split(" ", 1)[0] in {name for name, _, _ in COMMANDS}:
            reply = await self._run_command(session, command)
            session.push(update_agent_message_text(reply))
            await session.flush()
            return PromptResponse(stop_reason="end_turn")
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

    async def _authorize(self, session: AcpSession, call_id: str, name: str, args: JsonDict) -> bool:
        allowed = True
        if name in PERMISSION_TOOLS and name not in session.always_allowed:
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
                    ),
                    options=PERMISSION_OPTIONS,
                )
            except (RequestError, ConnectionError) as exc:
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
                fork = await self._fork(session)
                self._announce_commands(fork, later=True)
                return f"Forked into session {fork.id}; load it to continue there."
            if name == "name":
                if not rest:
                    return "Usage: /name <session name>"
                await agent.set_session_name(rest)
                session.push(SessionInfoUpdate(session_update="session_info_update", title=rest))
                return f"Session named {rest!r}."
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
        if method not in EXTENSION_METHODS:
            raise RequestError.method_not_found(f"_{method}")
        session = self._session(str(params.get("sessionId")))
        agent = session.agent
        rest = {key: value for key, value in params.items() if key != "sessionId"}
        try:
            if method == "rpc_agent/get_tree":
                return agent.tree(m.GetTreeParams.model_validate(rest))
            if method == "rpc_agent/navigate_tree":
                navigate = m.NavigateTreeParams.model_validate(rest)
                return (await agent.navigate_tree(navigate)).model_dump(mode="json", exclude_none=True)
            if method == "rpc_agent/set_label":
                label = m.SetLabelParams.model_validate(rest)
                return {"labelEntryId": await agent.set_label(label.entryId, label.label)}
            compact = m.CompactParams.model_validate(rest)
            result = await agent.compact(compact.customInstructions)
            return result.model_dump(mode="json", exclude_none=True)
        except RequestError:
            raise
        except Exception as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from exc

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


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
