"""The method table: JSON-RPC names bound to the AgentSession, with their params/result models.

Thin on purpose: each handler turns validated params into one AgentSession call. The models
given here are the ones the protocol generator publishes. Handlers marked inline are
synchronous and never wait, so the router runs them on its fast path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, cast

import anyio.to_thread
from pydantic import ValidationError

from .. import __version__
from ..agent.compaction import NothingToCompactError
from ..agent.session import AgentBusyError, AgentSession, NotAvailableError, OperationCancelledError
from ..protocol import PROTOCOL_VERSION
from ..protocol import methods as m
from ..protocol.base import Empty, Ok
from ..providers.base import ModelInfo, ProviderError, ProviderNotConfiguredError
from ..session import files
from ..session.errors import (
    EntryNotFoundError,
    InvalidSessionFileError,
    PersistenceError,
    SessionLockedError,
    SessionNotFoundError,
)
from ..session.store import SessionManager
from . import errors as codes
from .errors import ERROR_CODES, RpcError
from .router import MethodRegistry, RawJson

JsonDict = dict[str, Any]


def map_error(exc: BaseException) -> RpcError | None:
    """Domain errors to their documented JSON-RPC codes (None: an internal error)."""
    if isinstance(exc, RpcError):
        return exc
    table: list[tuple[type[BaseException], int]] = [
        (AgentBusyError, codes.AGENT_BUSY),
        (EntryNotFoundError, codes.ENTRY_NOT_FOUND),
        (SessionNotFoundError, codes.SESSION_NOT_FOUND),
        (SessionLockedError, codes.SESSION_LOCKED),
        (InvalidSessionFileError, codes.INVALID_SESSION_FILE),
        (PersistenceError, codes.PERSISTENCE_FAILED),
        (ProviderNotConfiguredError, codes.PROVIDER_NOT_CONFIGURED),
        (ProviderError, codes.PROVIDER_ERROR),
        (OperationCancelledError, codes.CANCELLED),
        (NothingToCompactError, codes.NOTHING_TO_COMPACT),
        (NotAvailableError, codes.NOT_AVAILABLE),
    ]
    for kind, code in table:
        if isinstance(exc, kind):
            data: JsonDict | None = None
            if isinstance(exc, SessionLockedError):
                data = {"path": exc.path, "pid": exc.pid}
            elif isinstance(exc, EntryNotFoundError):
                data = {"entryId": exc.entry_id}
            elif isinstance(exc, SessionNotFoundError | InvalidSessionFileError | PersistenceError):
                data = {"path": exc.path}
            elif isinstance(exc, ProviderError):
                data = {"status": exc.status, "retryable": exc.retryable, "overflow": exc.overflow}
            return RpcError(code, str(exc), data)
    if isinstance(exc, ValidationError):
        return RpcError(codes.INVALID_PARAMS, "invalid params", exc.errors(include_url=False))
    if isinstance(exc, ValueError):
        return RpcError(codes.INVALID_PARAMS, str(exc))
    return None


def _model(info: ModelInfo) -> m.ModelDescription:
    return m.ModelDescription(**info.to_json())


class Methods:
    """Holds the AgentSession and the registry; ``registry`` is what the router serves."""

    def __init__(self, agent: AgentSession, *, providers: list[str], on_shutdown: Callable[[], None]) -> None:
        self.agent = agent
        self.providers = providers
        self.on_shutdown = on_shutdown
        self.registry = MethodRegistry()
        self._register()

    @classmethod
    def for_docs(cls) -> Methods:
        """The table without a live agent: names, models and descriptions for the generator.

        Its handlers must not be called (there is no AgentSession behind them).
        """
        return cls(cast(AgentSession, None), providers=[], on_shutdown=lambda: None)

    def _register(self) -> None:
        add = self.registry.add
        a = self.agent
        add(
            "initialize",
            self.initialize,
            params=m.InitializeParams,
            result=m.InitializeResult,
            inline=True,
            description="Handshake: protocol version, server info, capabilities, the method list and the state.",
        )
        add(
            "get_state",
            lambda _p: a.state_json(),
            params=None,
            result=m.State,
            inline=True,
            description="The session and agent state.",
        )
        add(
            "shutdown",
            self.shutdown,
            params=None,
            result=Ok,
            inline=True,
            description="Finish: abort any run, flush the session file, exit 0 after answering.",
        )
        # prompting
        add(
            "prompt",
            self.prompt,
            params=m.PromptParams,
            result=m.PromptResult,
            description="Run the agent on a user message; resolves when the run ends. While a run is going, "
            "needs streamingBehavior and is queued.",
        )
        add(
            "steer",
            self.steer,
            params=m.QueueParams,
            result=m.QueueResult,
            inline=True,
            description="Queue a message delivered between turns of the current run.",
        )
        add(
            "follow_up",
            self.follow_up,
            params=m.QueueParams,
            result=m.QueueResult,
            inline=True,
            description="Queue a message delivered when the current run would stop.",
        )
        add(
            "abort",
            lambda _p: m.AbortResult(aborted=a.abort()),
            params=None,
            result=m.AbortResult,
            inline=True,
            description="Abort the run, compaction or summary in progress.",
        )
        add(
            "abort_retry",
            lambda _p: m.AbortResult(aborted=a.abort_retry()),
            params=None,
            result=m.AbortResult,
            inline=True,
            description="Stop waiting for an automatic retry.",
        )
        # reading
        add(
            "get_messages",
            self.get_messages,
            params=None,
            result=m.MessagesResult,
            description="The context as the model sees it.",
        )
        add(
            "get_entries",
            self.get_entries,
            params=m.GetEntriesParams,
            result=m.EntriesResult,
            description="Raw session entries in file order, optionally only those after an entry id.",
        )
        add(
            "get_last_assistant_text",
            lambda _p: m.LastAssistantTextResult(text=a.last_assistant_text()),
            params=None,
            result=m.LastAssistantTextResult,
            inline=True,
            description="Text of the last assistant message on the current branch.",
        )
        add(
            "get_session_stats",
            lambda _p: a.session_stats(),
            params=None,
            result=m.SessionStats,
            inline=True,
            description="Message counts, token usage and cost of the session.",
        )
        # tree
        add(
            "get_tree",
            self.get_tree,
            params=m.GetTreeParams,
            result=m.TreeResult,
            description="The tree as a flat depth-first list, children oldest first; "
            "optionally filtered, a subtree, depth-limited, or only what changed since a cursor.",
        )
        add(
            "navigate_tree",
            self.navigate_tree,
            params=m.NavigateTreeParams,
            result=m.NavigateTreeResult,
            description="Move the leaf to any entry, optionally summarizing the branch left behind.",
        )
        add(
            "set_label",
            self.set_label,
            params=m.SetLabelParams,
            result=m.SetLabelResult,
            description="Set or clear (null) the label of an entry.",
        )
        # sessions
        add(
            "new_session",
            self.new_session,
            params=m.NewSessionParams,
            result=m.SessionChangeResult,
            description="Start a new session.",
        )
        add(
            "switch_session",
            self.switch_session,
            params=m.SwitchSessionParams,
            result=m.SessionChangeResult,
            description="Open another session file.",
        )
        add(
            "list_sessions",
            self.list_sessions,
            params=m.ListSessionsParams,
            result=m.ListSessionsResult,
            description="Sessions of this working directory (or all), most recent first.",
        )
        add(
            "fork",
            self.fork,
            params=m.ForkParams,
            result=m.ForkResult,
            description="New session file from the path before a user message; returns its text.",
        )
        add(
            "clone",
            self.clone,
            params=None,
            result=m.SessionChangeResult,
            description="New session file holding the current branch.",
        )
        add(
            "get_fork_messages",
            lambda _p: m.ForkMessagesResult(messages=a.fork_messages()),
            params=None,
            result=m.ForkMessagesResult,
            inline=True,
            description="User messages that fork can start from.",
        )
        add(
            "set_session_name",
            self.set_session_name,
            params=m.SetSessionNameParams,
            result=Ok,
            description="Set the session's display name.",
        )
        # settings
        add(
            "set_model",
            self.set_model,
            params=m.SetModelParams,
            result=m.ModelDescription,
            description="Switch the model (unknown ids get sane defaults).",
        )
        add(
            "cycle_model",
            self.cycle_model,
            params=None,
            result=m.CycleModelResult,
            description="Switch to the next available model.",
        )
        add(
            "get_available_models",
            lambda _p: m.ModelsResult(models=[_model(x) for x in a.provider.models()]),
            params=None,
            result=m.ModelsResult,
            inline=True,
            description="Models of the current provider.",
        )
        add(
            "set_thinking_level",
            self.set_thinking_level,
            params=m.SetThinkingLevelParams,
            result=Ok,
            description="Set the thinking level.",
        )
        add(
            "cycle_thinking_level",
            self.cycle_thinking_level,
            params=None,
            result=m.ThinkingLevelResult,
            description="Switch to the next thinking level.",
        )
        add(
            "set_steering_mode",
            self.set_steering_mode,
            params=m.SetQueueModeParams,
            result=Ok,
            inline=True,
            description="Deliver queued steering messages all at once or one per turn.",
        )
        add(
            "set_follow_up_mode",
            self.set_follow_up_mode,
            params=m.SetQueueModeParams,
            result=Ok,
            inline=True,
            description="Deliver queued follow-up messages all at once or one per run.",
        )
        add(
            "set_auto_compaction",
            self.set_auto_compaction,
            params=m.SetEnabledParams,
            result=Ok,
            inline=True,
            description="Turn automatic compaction on or off.",
        )
        add(
            "set_auto_retry",
            self.set_auto_retry,
            params=m.SetEnabledParams,
            result=Ok,
            inline=True,
            description="Turn automatic retries of transient provider errors on or off.",
        )
        # bash, compaction, export
        add(
            "bash",
            self.bash,
            params=m.BashParams,
            result=m.BashResult,
            description="Run a shell command; its output joins the context of the next prompt.",
        )
        add(
            "abort_bash",
            lambda _p: m.AbortResult(aborted=a.abort_bash()),
            params=None,
            result=m.AbortResult,
            inline=True,
            description="Abort the running bash command.",
        )
        add(
            "compact",
            self.compact,
            params=m.CompactParams,
            result=m.CompactResult,
            description="Replace old context by a summary.",
        )
        add(
            "export_html",
            self.export_html,
            params=m.ExportHtmlParams,
            result=m.ExportHtmlResult,
            description="Write the current branch as an HTML page.",
        )

    # --- handlers ---------------------------------------------------------------------

    def initialize(self, _params: m.InitializeParams | None) -> m.InitializeResult:
        return m.InitializeResult(
            protocolVersion=PROTOCOL_VERSION,
            serverInfo=m.ServerInfo(name="rpc-agent", version=__version__),
            capabilities=m.Capabilities(
                compaction=True,
                providers=self.providers,
                errorCodes={name: code for name, (code, _desc) in ERROR_CODES.items()},
            ),
            methods=[spec.name for spec in self.registry.methods],
            state=self.agent.state(),
        )

    def shutdown(self, _params: Empty | None) -> Ok:
        self.on_shutdown()
        return Ok()

    async def prompt(self, p: m.PromptParams) -> m.PromptResult:
        images = [image.model_dump(mode="json", exclude_none=True) for image in p.images or []]
        return await self.agent.prompt(p.message, images, p.streamingBehavior)

    def _queue(self, kind: str, p: m.QueueParams) -> m.QueueResult:
        images = [image.model_dump(mode="json", exclude_none=True) for image in p.images or []]
        return m.QueueResult(pendingMessageCount=self.agent.enqueue(kind, p.message, images))

    def steer(self, p: m.QueueParams) -> m.QueueResult:
        return self._queue("steer", p)

    def follow_up(self, p: m.QueueParams) -> m.QueueResult:
        return self._queue("followUp", p)

    async def get_messages(self, _p: Empty | None) -> JsonDict:
        manager = self.agent.manager
        return {"messages": RawJson(await _off_loop(manager, manager.messages_json))}

    async def get_entries(self, p: m.GetEntriesParams | None) -> JsonDict:
        """Entries can be a whole 75 MB session: stored lines go out as they are."""
        manager = self.agent.manager
        since = p.since if p else None
        leaf = manager.leaf_id
        entries = await _off_loop(manager, lambda: manager.entries_json(since))
        return {"entries": RawJson(entries), "leafId": leaf}

    async def get_tree(self, p: m.GetTreeParams | None) -> JsonDict:
        manager = self.agent.manager
        p = p or m.GetTreeParams()
        leaf, cursor = manager.leaf_id, manager.tree_cursor
        nodes = await _off_loop(
            manager,
            lambda: manager.tree_json(root=p.rootId, max_depth=p.maxDepth, keep=p.filter, since=p.since),
        )
        return {"leafId": leaf, "nodes": RawJson(nodes), "cursor": cursor}

    async def navigate_tree(self, p: m.NavigateTreeParams) -> m.NavigateTreeResult:
        return await self.agent.navigate_tree(p)

    async def set_label(self, p: m.SetLabelParams) -> m.SetLabelResult:
        return m.SetLabelResult(labelEntryId=await self.agent.set_label(p.entryId, p.label))

    async def new_session(self, p: m.NewSessionParams | None) -> m.SessionChangeResult:
        return await self.agent.new_session(p.parentSession if p else None)

    async def switch_session(self, p: m.SwitchSessionParams) -> m.SessionChangeResult:
        return await self.agent.switch_session(p.sessionPath)

    async def list_sessions(self, p: m.ListSessionsParams | None) -> m.ListSessionsResult:
        import anyio.to_thread

        agent = self.agent
        if p is not None and p.all:
            root = files.sessions_root(agent.home)
            infos = await anyio.to_thread.run_sync(files.list_all_sessions, root)
        else:
            folder = (
                agent.session_dir
                or agent.manager.session_dir
                or files.default_session_dir(agent.manager.cwd, agent.home)
            )
            infos = await anyio.to_thread.run_sync(files.list_sessions, folder)
        return m.ListSessionsResult(sessions=[m.SessionInfoModel(**dataclasses.asdict(i)) for i in infos])

    async def fork(self, p: m.ForkParams) -> m.ForkResult:
        return await self.agent.fork(p.entryId)

    async def clone(self, _p: Empty | None) -> m.SessionChangeResult:
        return await self.agent.clone()

    async def set_session_name(self, p: m.SetSessionNameParams) -> Ok:
        await self.agent.set_session_name(p.name)
        return Ok()

    async def set_model(self, p: m.SetModelParams) -> m.ModelDescription:
        return _model(await self.agent.set_model(p.modelId))

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
        return await self.agent.bash(p.command, p.excludeFromContext)

    async def compact(self, p: m.CompactParams | None) -> m.CompactResult:
        return await self.agent.compact(p.customInstructions if p else None)

    async def export_html(self, p: m.ExportHtmlParams | None) -> m.ExportHtmlResult:
        return m.ExportHtmlResult(path=await self.agent.export_html(p.outputPath if p else None))


OFF_LOOP_ENTRIES = 2000
"""Reading a session at least this long runs in a worker thread, so that the loop keeps
answering (get_state, abort) meanwhile; a short one is quicker read where it is."""


async def _off_loop(manager: SessionManager, read: Callable[[], bytes]) -> bytes:
    if manager.tree_cursor < OFF_LOOP_ENTRIES:
        return read()
    return await anyio.to_thread.run_sync(read)
