"""The method table: JSON-RPC names bound to the AgentSession, with their params/result models.

Thin on purpose: each handler turns validated params into one AgentSession call. The models
given here are the ones the protocol generator publishes. Handlers marked inline are
synchronous and never wait, so the router runs them on its fast path.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import anyio.to_thread

from rpc_agent import __version__
from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.workspace import check_directories
from rpc_agent.mcp import McpManager, from_wire
from rpc_agent.methods.answers import (
    EntriesAnswer,
    InitializeAnswer,
    MessagesAnswer,
    ServersAnswer,
    TreeAnswer,
)
from rpc_agent.methods.deferred import Deferred
from rpc_agent.methods.host_methods import configure, set_client_tools
from rpc_agent.methods.raw_json import RawJson
from rpc_agent.methods.registry import MethodRegistry, dump_result
from rpc_agent.methods.request_id import CURRENT_REQUEST_ID
from rpc_agent.protocol import PROTOCOL_VERSION
from rpc_agent.protocol import host as h
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.base import Empty, Ok
from rpc_agent.protocol.entries import ImageContent
from rpc_agent.protocol.errors import ERROR_CODES
from rpc_agent.protocol.shapes import BlockDict
from rpc_agent.protocol.state_shapes import StateDict
from rpc_agent.protocol.table import METHODS, protocol_model
from rpc_agent.providers.base import ModelInfo
from rpc_agent.store import files, listing, paging
from rpc_agent.store.manager import SessionManager

if TYPE_CHECKING:
    from rpc_agent.agent.host import Host
    from rpc_agent.protocol import checkpoints as c
    from rpc_agent.protocol import finding as f


def _model(info: ModelInfo) -> m.ModelDescription:
    return m.ModelDescription(**info.to_json())


def _image_blocks(images: list[ImageContent] | None) -> list[BlockDict]:
    """A prompt's images as its user message holds them (validated by ``PromptParams``)."""
    return cast(list[BlockDict], [image.model_dump(mode="json", exclude_none=True) for image in images or []])


class Methods:
    """Holds the AgentSession and the registry; ``registry`` is what the router serves."""

    def __init__(self, agent: AgentSession, *, providers: list[str], on_shutdown: Callable[[], None]) -> None:
        self.agent = agent
        self.providers = providers
        self.on_shutdown = on_shutdown
        self.mcp: McpManager | None = None
        """The session's MCP servers (set by the app once its task group runs)."""
        self.registry = MethodRegistry()
        self._prompt_tickets: dict[int, int] = {}
        """Prompts read but not yet started, by id of their params: their ``prompt_ticket``."""
        self.host_bridge: Host | None = None
        self.on_capabilities: Callable[[h.ClientCapabilities], h.AcceptedCapabilities] | None = None
        """Set by the front that can answer the client's capabilities (the host bridge)."""
        self._register()

    @classmethod
    def for_docs(cls) -> Methods:
        """The table without a live agent: names, models and descriptions for the generator.

        Its handlers must not be called (there is no AgentSession behind them).
        """
        return cls(cast(AgentSession, None), providers=[], on_shutdown=lambda: None)

    def _register(self) -> None:
        """Bind a handler to every method of the protocol's table: the handler is the method of
        this class with the wire name. Plain functions never wait and run on the router's
        inline fast path; coroutine functions each get a task."""
        for method in METHODS:
            handler = getattr(self, method.name, None)
            if handler is None:
                raise TypeError(f"no handler for the protocol method {method.name!r}")
            self.registry.add(
                method.name,
                handler,
                params=None if method.params_model is None else partial(protocol_model, method.params_model),
                result=None if method.result_model is None else partial(protocol_model, method.result_model),
                inline=not inspect.iscoroutinefunction(handler),
                description=method.description,
                accepted=self._prompt_accepted if method.name == "prompt" else None,
            )

    # --- handlers, one per method of the table ----------------------------------------

    def get_state(self, _p: Empty | None) -> StateDict:
        return self.agent.state_json()

    def abort(self, _p: Empty | None) -> m.AbortResult:
        return m.AbortResult(aborted=self.agent.abort())

    def clear_queue(self, _p: Empty | None) -> m.ClearQueueResult:
        steering, follow_up = self.agent.clear_queue()
        return m.ClearQueueResult(steering=steering, followUp=follow_up)

    def get_available_thinking_levels(self, _p: Empty | None) -> m.ThinkingLevelsResult:
        return m.ThinkingLevelsResult(levels=self.agent.available_thinking_levels())

    def get_commands(self, _p: Empty | None) -> m.CommandsResult:
        """None to list: this front has no slash commands, prompt templates or skills (the
        tree, compaction, names and labels are methods), and a prompt's text reaches the
        model as written, a leading "/" included."""
        return m.CommandsResult(commands=[])

    def abort_retry(self, _p: Empty | None) -> m.AbortResult:
        return m.AbortResult(aborted=self.agent.abort_retry())

    def abort_bash(self, _p: Empty | None) -> m.AbortResult:
        return m.AbortResult(aborted=self.agent.abort_bash())

    def get_last_assistant_text(self, _p: Empty | None) -> m.LastAssistantTextResult:
        return m.LastAssistantTextResult(text=self.agent.last_assistant_text())

    def get_session_stats(self, _p: Empty | None) -> m.SessionStats:
        return self.agent.session_stats()

    def get_fork_messages(self, _p: Empty | None) -> m.ForkMessagesResult:
        return m.ForkMessagesResult(messages=self.agent.fork_messages())

    def mcp_servers(self, _p: Empty | None) -> ServersAnswer:
        return {"servers": self.mcp.state_json() if self.mcp else []}

    def get_available_models(self, _p: Empty | None) -> m.ModelsResult:
        return m.ModelsResult(models=[_model(x) for x in self.agent.provider.models()])

    def _roots(self, paths: list[str] | None) -> list[str] | None:
        return None if paths is None else check_directories(paths, self.agent.manager.cwd)

    def initialize(self, params: m.InitializeParams | None) -> InitializeAnswer:
        """Answered in wire shape (``methods/answers.py``), as ``get_state`` is: the first
        answer of most sessions builds no result model."""
        roots = self._roots(params.additionalDirectories if params else None)
        if params is not None and params.sandbox is not None:  # may refuse: before any change
            self.agent.set_sandbox(params.sandbox.mode, params.sandbox.network)
        if roots is not None:
            self.agent.settings.additional_directories = roots
        if params is not None and params.mcpServers is not None and self.mcp is not None:
            self.mcp.update_client_servers(from_wire(params.mcpServers))
        accepted = (
            self.on_capabilities(params.capabilities)
            if params is not None and params.capabilities is not None and self.on_capabilities is not None
            else None
        )
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "serverInfo": {"name": "rpc-agent", "version": __version__},
            "capabilities": {
                "tree": True,
                "fork": True,
                "compaction": True,
                "images": True,
                "providers": self.providers,
                "errorCodes": {name: code for name, (code, _desc) in ERROR_CODES.items()},
            },
            "methods": [spec.name for spec in self.registry.methods],
            "state": self.agent.state_json(),
            "client": dump_result("initialize", accepted) if accepted is not None else None,
        }

    def set_client_tools(self, p: h.SetClientToolsParams) -> h.SetClientToolsResult:
        return set_client_tools(self.agent, self.host_bridge, p)

    def accept_host(self, bridge: Host) -> None:
        """Wire the front's host (the JSON-RPC front's host bridge) into the method table and the agent."""
        self.host_bridge = bridge
        self.agent.host = bridge
        self.on_capabilities = lambda declared: configure(self.agent, bridge, declared)

    async def send_custom_message(self, p: h.SendCustomMessageParams) -> h.EntryIdResult:
        entry_id = await self.agent.send_custom_message(
            p.customType, p.content, p.display, p.details, p.triggerTurn
        )
        return h.EntryIdResult(entryId=entry_id)

    async def append_custom_entry(self, p: h.AppendCustomEntryParams) -> h.EntryIdResult:
        return h.EntryIdResult(entryId=await self.agent.append_custom_entry(p.customType, p.data))

    def shutdown(self, _params: Empty | None) -> Ok:
        self.on_shutdown()
        return Ok()

    def _prompt_accepted(self, p: m.PromptParams) -> None:
        # The prompt's task starts after the lines read with it are handled: an ``abort`` among
        # them must reach this prompt too.
        self._prompt_tickets[id(p)] = self.agent.prompt_ticket()

    async def prompt(self, p: m.PromptParams) -> m.PromptResult:
        ticket = self._prompt_tickets.pop(id(p), None)
        images = _image_blocks(p.images)
        return await self.agent.prompt(
            p.message,
            images,
            p.streamingBehavior,
            max_turns=p.maxTurns,
            max_budget_usd=p.maxBudgetUsd,
            output_schema=p.outputSchema,
            ticket=ticket,
        )

    def _queue(self, kind: str, p: m.QueueParams) -> m.QueueResult:
        images = _image_blocks(p.images)
        return m.QueueResult(pendingMessageCount=self.agent.enqueue(kind, p.message, images))

    def steer(self, p: m.QueueParams) -> m.QueueResult:
        return self._queue("steer", p)

    def follow_up(self, p: m.QueueParams) -> m.QueueResult:
        return self._queue("followUp", p)

    async def get_messages(self, _p: Empty | None) -> MessagesAnswer:
        manager = self.agent.manager
        return {"messages": RawJson(await _off_loop(manager, manager.messages_pieces))}

    async def get_entries(self, p: m.GetEntriesParams | None) -> EntriesAnswer:
        """Entries can be a whole 75 MB session: stored lines go out as they are."""
        manager = self.agent.manager
        since = p.since if p else None
        leaf = manager.leaf_id
        entries = await _off_loop(manager, lambda: manager.entries_pieces(since))
        return {"entries": RawJson(entries), "leafId": leaf}

    async def get_tree(self, p: m.GetTreeParams | None) -> TreeAnswer:
        manager = self.agent.manager
        p = p or m.GetTreeParams()
        leaf, cursor = manager.leaf_id, manager.tree_cursor
        columns = p.format == "columns"
        nodes = await _off_loop(
            manager,
            lambda: manager.tree_json(
                root=p.rootId, max_depth=p.maxDepth, keep=p.filter, since=p.since, columns=columns
            ),
        )
        changed = self.agent.checkpoints.files_changed_map()
        if columns:
            return {
                "leafId": leaf,
                "nodes": [],
                "columns": RawJson(nodes),
                "cursor": cursor,
                "filesChanged": changed,
            }
        return {"leafId": leaf, "nodes": RawJson(nodes), "cursor": cursor, "filesChanged": changed}

    async def navigate_tree(self, p: m.NavigateTreeParams) -> m.NavigateTreeResult:
        return await self.agent.navigate_tree(p)

    def set_label(self, p: m.SetLabelParams) -> Deferred:
        """Labelled now, answered once the label's line is fsynced (``methods/deferred.py``): a
        pipelined burst of labels shares its fsyncs and needs no task per request. The result
        is ``SetLabelResult`` in wire shape."""
        label_id, stored = self.agent.queue_label(p.entryId, p.label)
        return Deferred({"labelEntryId": label_id}, stored)

    async def new_session(self, p: m.NewSessionParams | None) -> m.SessionChangeResult:
        roots = self._roots(p.additionalDirectories if p else None)
        if p is not None and p.sandbox is not None:
            self.agent.set_sandbox(p.sandbox.mode, p.sandbox.network)
        result = await self.agent.new_session(p.parentSession if p else None)
        if roots is not None:
            self.agent.settings.additional_directories = roots
        await self._restart_mcp(p.mcpServers if p else None)
        return result

    async def switch_session(self, p: m.SwitchSessionParams) -> m.SessionChangeResult:
        # The id, not the manager: the old one is freed once nothing holds it (and the new
        # one was made while the old one lived, so the two ids differ).
        before = id(self.agent.manager)
        result = await self.agent.switch_session(p.sessionPath)
        if id(self.agent.manager) != before:
            await self._restart_mcp(p.mcpServers)
        return result

    async def _restart_mcp(self, servers: list[m.McpServer] | None) -> None:
        """MCP servers belong to a session: the next one gets fresh ones."""
        if self.mcp is not None:
            await self.mcp.replace(from_wire(servers) if servers is not None else None)

    async def mcp_restart(self, p: m.McpRestartParams | None) -> ServersAnswer:
        if self.mcp is None:
            return {"servers": []}
        await self.mcp.restart(p.name if p else None)
        return {"servers": self.mcp.state_json()}

    def _this_folder(self) -> Path:
        agent = self.agent
        return (
            agent.session_dir
            or agent.manager.session_dir
            or files.default_session_dir(agent.manager.cwd, agent.home)
        )

    async def list_sessions(self, p: m.ListSessionsParams | None) -> m.ListSessionsResult:
        if p is not None and p.all:
            root = files.sessions_root(self.agent.home)
            infos = await anyio.to_thread.run_sync(listing.list_all_sessions, root)
        else:
            infos = await anyio.to_thread.run_sync(listing.list_sessions, self._this_folder())
        if p is None or (p.limit is None and p.cursor is None):
            return m.ListSessionsResult(sessions=infos)
        chosen, next_cursor = paging.page(infos, listing.listing_key, "list", p.limit, p.cursor)
        return m.ListSessionsResult(sessions=chosen, nextCursor=next_cursor)

    async def search_sessions(self, p: f.SearchSessionsParams) -> f.SearchSessionsResult:
        from rpc_agent.methods import session_files  # the first search or deletion, not start-up

        return await session_files.search_sessions(self.agent, self._this_folder(), p)

    async def delete_session(self, p: f.DeleteSessionParams) -> f.DeleteSessionResult:
        from rpc_agent.methods import session_files

        return await session_files.delete_session(self.agent, p)

    async def fork(self, p: m.ForkParams) -> m.ForkResult:
        return await self.agent.fork(p.entryId, restore_files=p.restoreFiles, force=p.force)

    async def clone(self, p: m.CloneParams | None) -> m.SessionChangeResult:
        p = p or m.CloneParams()
        return await self.agent.clone(restore_files=p.restoreFiles, force=p.force)

    async def restore_files(self, p: c.RestoreFilesParams) -> c.RestoreFilesResult:
        return await self.agent.restore_files(p)

    async def get_file_changes(self, p: c.GetFileChangesParams) -> c.FileChangesResult:
        return await self.agent.file_changes(p.entryId, p.since)

    async def set_session_name(self, p: m.SetSessionNameParams) -> Ok:
        await self.agent.set_session_name(p.name)
        return Ok()

    async def set_model(self, p: m.SetModelParams) -> m.ModelDescription:
        return _model(await self.agent.set_model(p.modelId, p.provider))

    async def cycle_model(self, _p: Empty | None) -> m.CycleModelResult:
        model = await self.agent.cycle_model()
        return m.CycleModelResult(model=_model(model), thinkingLevel=self.agent.thinking_level)

    async def set_thinking_level(self, p: m.SetThinkingLevelParams) -> Ok:
        await self.agent.set_thinking_level(p.level)
        return Ok()

    async def cycle_thinking_level(self, _p: Empty | None) -> m.ThinkingLevelResult:
        return m.ThinkingLevelResult(level=await self.agent.cycle_thinking_level())

    def set_steering_mode(self, p: m.SetQueueModeParams) -> Ok:
        self.agent.settings.steering_mode = p.mode
        return Ok()

    def set_follow_up_mode(self, p: m.SetQueueModeParams) -> Ok:
        self.agent.settings.follow_up_mode = p.mode
        return Ok()

    def set_auto_compaction(self, p: m.SetEnabledParams) -> Ok:
        assert self.agent.settings.compaction is not None
        self.agent.settings.compaction.enabled = p.enabled
        return Ok()

    def set_auto_retry(self, p: m.SetEnabledParams) -> Ok:
        assert self.agent.settings.retry is not None
        self.agent.settings.retry.enabled = p.enabled
        return Ok()

    async def bash(self, p: m.BashParams) -> m.BashResult:
        request_id = CURRENT_REQUEST_ID.get()
        update_id = (
            request_id
            if isinstance(request_id, str | int | float) and not isinstance(request_id, bool)
            else None
        )
        return await self.agent.bash(p.command, p.excludeFromContext, update_id)

    async def compact(self, p: m.CompactParams | None) -> m.CompactResult:
        return await self.agent.compact(p.customInstructions if p else None)

    async def export_html(self, p: m.ExportHtmlParams | None) -> m.ExportHtmlResult:
        return m.ExportHtmlResult(path=await self.agent.export_html(p.outputPath if p else None))


OFF_LOOP_ENTRIES = 2000
"""Reading a session at least this long runs in a worker thread, so that the loop keeps
answering (get_state, abort) meanwhile; a short one is quicker read where it is."""

_T = TypeVar("_T")


async def _off_loop(manager: SessionManager, read: Callable[[], _T]) -> _T:
    if manager.tree_cursor < OFF_LOOP_ENTRIES:
        return read()
    return await anyio.to_thread.run_sync(read)
