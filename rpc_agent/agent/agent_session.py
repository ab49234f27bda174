"""AgentSession: one conversation driven by a front end (JSON-RPC or ACP).

It owns the current SessionManager, the settings and the guards every change goes through
(``_exclusive``, ``mutation``). Features with logic of their own live beside it and take the
session, through its public members only (``AgentCore`` in ``core.py``): prompts, runs and
their abort (``runs``), persisting changes (``writes``), model and level changes
(``settings_ops``, checked in ``model_choice``), switching and forking (``switching``), tree
navigation (``navigation``), the user's bash (``user_bash``), compaction
(``compaction_runner``), the read-only views and the page export (``views``), and what a run
starts with (``run_setup``).
It knows nothing of JSON-RPC: it raises domain errors and emits typed events through ``emit``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Unpack

import anyio
from pydantic import BaseModel

from rpc_agent.agent import (
    compaction_runner,
    custom_entries,
    model_choice,
    navigation,
    settings_ops,
    switching,
    views,
    writes,
)
from rpc_agent.agent.approvals import ApprovalGate
from rpc_agent.agent.checkpointing import Checkpointing
from rpc_agent.agent.core import SessionTools
from rpc_agent.agent.host import Host, NoHost
from rpc_agent.agent.loop import (
    Authorize,
    RunContext,
)
from rpc_agent.agent.policy import ApprovalPolicy, parse_rules
from rpc_agent.agent.queue import MessageQueue, QueuedMessage
from rpc_agent.agent.runs import PromptOptions, Runs
from rpc_agent.agent.sandboxing import SessionSandbox
from rpc_agent.agent.selection import opening_level
from rpc_agent.agent.settings import AgentSettings
from rpc_agent.agent.stats import session_stats
from rpc_agent.agent.user_bash import UserBash
from rpc_agent.errors import AgentBusyError, PersistenceError
from rpc_agent.io.background import Background
from rpc_agent.protocol import builders as build
from rpc_agent.protocol import checkpoints as c
from rpc_agent.protocol import events as ev
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.entries import THINKING_LEVELS
from rpc_agent.protocol.shapes import BlockDict, Content, MessageDict
from rpc_agent.protocol.state_shapes import ModelDescriptionDict, StateDict
from rpc_agent.providers.base import ModelInfo, Provider
from rpc_agent.sandbox.policy import chosen as chosen_sandbox
from rpc_agent.store.manager import SessionManager
from rpc_agent.tools.base import CommandRunner, FileAccess, Tool
from rpc_agent.tools.reaper import Reaper
from rpc_agent.tools.temp_files import TempFiles

__all__ = ["THINKING_LEVELS", "AgentSession", "SessionTools"]

Emit = Callable[[BaseModel], None]

logger = logging.getLogger("rpc_agent")


class AgentSession:
    def __init__(
        self,
        *,
        manager: SessionManager,
        provider: Provider,
        emit: Emit,
        tools: list[Tool] | Callable[[], list[Tool]] | None = None,
        settings: AgentSettings | None = None,
        model_id: str | None = None,
        thinking_level: str | None = None,
        session_dir: Path | None = None,
        home: Path | None = None,
    ) -> None:
        self.manager = manager
        self.provider = provider
        self.emit = emit
        self._tools: list[Tool] | Callable[[], list[Tool]] = tools if tools is not None else []
        # A copy: what one session changes (its workspace roots, say) is not another's, when
        # a front builds every session from one configured AgentSettings.
        self.settings = replace(settings) if settings is not None else AgentSettings()
        self.session_dir = session_dir
        self.home = home
        self.queue = MessageQueue()
        self.is_streaming = False
        self.is_compacting = False
        self.operation: str | None = None
        """What an exclusive operation under way is doing (``_exclusive``), for busy errors."""
        self.sandbox = SessionSandbox(self.settings.sandbox, home)
        """The kernel sandbox of the commands the agent runs (``off`` by default)."""
        self.temp_files = TempFiles()
        """Files the session's tools left (full bash outputs): removed when the session closes."""
        self.run_context: RunContext | None = None
        """The run under way (None between runs): a custom message sent during it joins it."""
        self._user_bash = UserBash()
        self.runs = Runs(self, self._user_bash)
        """Prompts, runs and their abort (``agent/runs.py``)."""
        self.authorize: Authorize | None = None
        """Permission hook for tool calls (the ACP front asks the editor); None allows all."""
        self.mcp: SessionTools | None = None
        """The session's MCP servers (the front that runs them sets this)."""
        self.files: FileAccess | None = None
        """How the model's file tools reach files (the ACP front: the editor's buffers); None: disk."""
        self.commands: CommandRunner | None = None
        """Where the model's ``bash`` runs (the ACP front: the editor's terminal); None: locally."""
        self.host: Host = NoHost()
        """Who governs the agent (approvals, hooks, client tools); each front sets its own."""
        self.background: Background | None = None
        """Threads for a session's tree build and for freeing a session left (the server's);
        None: no thread, the work is done when a request needs it."""
        self.reaper: Reaper | None = None
        self.on_opened: Callable[[], None] | None = None
        """Called once the session is replaced (switch, new, fork, clone): the runtime's
        ``on_session_opened``; None: nothing."""
        """Kills the commands' process groups if the process is killed (the runtime's); None:
        only the paths the process controls kill them."""
        self.policy = ApprovalPolicy(
            mode="never" if self.settings.approval is None else self.settings.approval,  # type: ignore[arg-type]
            allow=parse_rules(self.settings.allow_rules),
            deny=parse_rules(self.settings.deny_rules),
        )
        self.client_tools: list[Tool] = []
        self.system_prompt_override: str | None = None
        self.append_system_prompt: str | None = None
        self.max_budget_usd: float | None = self.settings.max_budget_usd
        self.max_turns: int | None = self.settings.prompt_max_turns
        self.gate = ApprovalGate(
            self.policy, lambda: self.host, lambda e: self.emit(e), lambda: Path(self.manager.cwd)
        )
        context = manager.context_settings()
        chosen = model_id or (context.model.modelId if context.model else None)
        self.model: ModelInfo = provider.resolve_model(chosen) if chosen else provider.models()[0]
        self.thinking_level = thinking_level or opening_level(context, self.settings)
        self.checkpoints = Checkpointing(self)
        """Workspace states per entry (``agent/checkpointing.py``)."""

    @property
    def tools(self) -> list[Tool]:
        """The tools, built on first use (a factory keeps their imports off the startup path)."""
        if callable(self._tools):
            self._tools = list(self._tools())
        return self._tools

    # --- state --------------------------------------------------------------------------

    def state(self) -> m.State:
        return build.state(self.state_json())

    def state_json(self) -> StateDict:
        """The state in its wire shape, without a model in between: clients poll get_state,
        and building a pydantic model per call would be most of its cost. The State model
        in the protocol describes it (and the end-to-end tests validate it against that)."""
        manager, settings = self.manager, self.settings
        return {
            "sessionId": manager.session_id,
            "sessionFile": str(manager.session_file) if manager.session_file else None,
            "sessionName": manager.session_name,
            "cwd": manager.cwd,
            "leafId": manager.leaf_id,
            "model": self._model_json(),
            "thinkingLevel": self.thinking_level,
            "isStreaming": self.is_streaming,
            "isCompacting": self.is_compacting,
            "autoCompaction": bool(settings.compaction and settings.compaction.enabled),
            "autoRetry": bool(settings.retry and settings.retry.enabled),
            "steeringMode": settings.steering_mode,
            "followUpMode": settings.follow_up_mode,
            "messageCount": manager.context_message_count(),
            "pendingMessageCount": len(self.queue),
            "mcpServers": self.mcp.state_json() if self.mcp is not None else [],
            "sandbox": self.sandbox.state_json(),
        }

    def _model_json(self) -> ModelDescriptionDict:
        if self._model_json_cache is None or self._model_json_cache[0] is not self.model:
            self._model_json_cache = (self.model, self.model.to_json())
        return self._model_json_cache[1]

    _model_json_cache: tuple[ModelInfo, ModelDescriptionDict] | None = None

    def require_idle(self, what: str) -> None:
        """Raise AgentBusyError (naming ``what`` was asked) while a run, a compaction or an
        exclusive operation is under way."""
        if self.is_streaming or self.is_compacting:
            raise AgentBusyError(f"cannot {what} while the agent is running; abort first")
        if self.operation is not None:
            raise AgentBusyError(f"cannot {what} while the agent is busy ({self.operation})")

    @contextlib.contextmanager
    def _exclusive(self, what: str) -> Iterator[None]:
        """Run an operation that must not overlap a run or another such operation.

        Navigation (with its summary), fork, clone, new and switch wait for the model or the
        disk; a prompt that started meanwhile would append to a branch that is being left or to
        a session that is being closed.
        """
        self.require_idle(what)
        self.operation = what
        try:
            yield
        finally:
            self.operation = None

    def mutation(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Persist first, apply after (``agent/writes.py``): the one way every mutation goes."""
        return writes.mutation(self.manager)

    def run_tools(self) -> list[Tool]:
        """The built-in tools, the client's, and those of the session's MCP servers that are up."""
        mcp_tools = self.mcp.tools() if self.mcp is not None else []
        return [*self.tools, *self.client_tools, *mcp_tools]

    # --- prompting ----------------------------------------------------------------------

    def announce_queue(self) -> None:
        """Tell the client what is queued now (after any change to the queue)."""
        steering, follow_up = self.queue.snapshot()
        self.emit(ev.QueueUpdateEvent(steering=steering, followUp=follow_up))

    def clear_queue(self) -> tuple[list[str], list[str]]:
        """Empty both queues (pi's Esc: the texts go back to the editor); their texts."""
        steering, follow_up = self.queue.snapshot()
        self.queue.clear()
        self.announce_queue()
        return steering, follow_up

    def enqueue(self, kind: str, text: str, images: list[BlockDict] | None) -> int:
        return self.runs.enqueue(kind, text, images)

    async def prompt(
        self,
        text: str,
        images: list[BlockDict] | None = None,
        streaming_behavior: str | None = None,
        **options: Unpack[PromptOptions],
    ) -> m.PromptResult:
        """Run a prompt (or queue it while a run goes on)."""
        return await self.runs.prompt(text, images, streaming_behavior, **options)

    def prompt_ticket(self) -> int:
        """Count a prompt as starting from now (an ``abort`` reaches it); ``prompt`` takes it."""
        return self.runs.ticket()

    async def run(
        self, first: list[QueuedMessage], *, max_turns: int | None = None, max_budget_usd: float | None = None
    ) -> m.PromptResult:
        """Run the agent loop from ``first`` (empty: continue from the session as it is)."""
        return await self.runs.run(first, max_turns=max_turns, max_budget_usd=max_budget_usd)

    op_scope: anyio.CancelScope | None = None
    """The scope of a compaction or a branch summary under way: ``abort`` cancels it."""

    async def wait_idle(self) -> None:
        """Return once no run is going on (at once when none is)."""
        await self.runs.wait_idle()

    def abort(self, *, stopping: bool = False) -> bool:
        """Stop the run (or compaction/summary) in progress; False when nothing was running
        (``Runs.abort`` tells what ``stopping`` does)."""
        aborted = self.runs.abort(stopping=stopping)
        if self.op_scope is not None:
            self.op_scope.cancel()
            aborted = True
        return aborted

    def abort_retry(self) -> bool:
        """Stop the wait before an automatic retry; False when no retry is pending."""
        return self.runs.abort_retry()

    def set_sandbox(self, mode: str | None, network: str | None) -> None:
        """The client's choice of sandbox, over the settings files' (SettingsError, with the
        reason, when the mode cannot be provided here: nothing changes then)."""
        self.sandbox.set(chosen_sandbox(mode, network, self.sandbox.policy))

    # --- reading (agent/views.py) ---------------------------------------------------------

    def messages(self) -> list[MessageDict]:
        return views.messages(self.manager)

    def last_assistant_text(self) -> str | None:
        return views.last_assistant_text(self.manager)

    def session_stats(self) -> m.SessionStats:
        return session_stats(self.manager, self.model.contextWindow)

    def tree(self, params: m.GetTreeParams | None = None) -> views.TreeDict:
        return views.tree(self.manager, params)

    def fork_messages(self) -> list[m.ForkMessage]:
        return views.fork_messages(self.manager)

    async def export_html(self, output_path: str | None) -> str:
        return await views.export_html(self.manager, output_path, self.checkpoints.current_engine())

    # --- the tree (agent/navigation.py) ---------------------------------------------------

    async def navigate_tree(self, params: m.NavigateTreeParams) -> m.NavigateTreeResult:
        with self._exclusive("navigating the tree"):
            return await self.checkpoints.moving(
                params.targetId, params.force, lambda: self._navigate(params), restore=params.restoreFiles
            )

    async def _navigate(self, params: m.NavigateTreeParams) -> m.NavigateTreeResult:
        async with self.mutation():
            return await navigation.navigate_tree(self, params)

    async def set_label(self, entry_id: str, label: str | None) -> str:
        label_id, stored = self.queue_label(entry_id, label)
        await stored()
        return label_id

    def queue_label(self, entry_id: str, label: str | None) -> tuple[str, Callable[[], Awaitable[None]]]:
        """``set_label`` with the wait for the disk handed to the caller (``writes.queue_label``)."""
        return writes.queue_label(self.manager, entry_id, label)

    # --- sessions (agent/switching.py) ----------------------------------------------------

    async def new_session(self, parent_session: str | None) -> m.SessionChangeResult:
        with self._exclusive("starting a new session"):
            return await switching.new_session(self, parent_session)

    async def switch_session(self, path: str) -> m.SessionChangeResult:
        with self._exclusive("switching sessions"):
            return await switching.switch_session(self, path)

    async def fork(self, entry_id: str, *, restore_files: bool = False, force: bool = False) -> m.ForkResult:
        with self._exclusive("forking"):
            return await self.checkpoints.moving(
                entry_id, force, lambda: switching.fork(self, entry_id), restore=restore_files
            )

    async def clone(self, *, restore_files: bool = False, force: bool = False) -> m.SessionChangeResult:
        with self._exclusive("cloning"):
            return await self.checkpoints.moving(
                self.manager.leaf_id, force, lambda: switching.clone(self), restore=restore_files
            )

    # --- workspace checkpoints (agent/checkpointing.py) -------------------------------------

    async def restore_files(self, p: c.RestoreFilesParams) -> c.RestoreFilesResult:
        with self._exclusive("restoring files"):
            return await self.checkpoints.restore(p)

    async def file_changes(self, entry_id: str, since: str | None) -> c.FileChangesResult:
        return await self.checkpoints.file_changes(entry_id, since)

    # --- settings (agent/settings_ops.py, checked in agent/model_choice.py) -------------

    async def set_session_name(self, name: str) -> None:
        await settings_ops.set_session_name(self, name)

    async def set_model(self, model_id: str, provider: str | None = None) -> ModelInfo:
        return await settings_ops.set_model(self, model_id, provider)

    async def cycle_model(self) -> ModelInfo:
        return await settings_ops.cycle_model(self)

    async def set_thinking_level(self, level: str) -> None:
        await settings_ops.set_thinking_level(self, level)

    def available_thinking_levels(self) -> list[str]:
        return model_choice.thinking_levels(self.model)

    async def cycle_thinking_level(self) -> str:
        return await settings_ops.cycle_thinking_level(self)

    # --- the user's bash (agent/user_bash.py) and compaction (agent/compaction_runner.py) ---

    async def bash(
        self, command: str, exclude_from_context: bool = False, update_id: str | int | float | None = None
    ) -> m.BashResult:
        """``update_id`` names the command in its ``bash_execution_update`` events."""
        return await self._user_bash.run(self, command, exclude_from_context, update_id)

    def abort_bash(self) -> bool:
        return self._user_bash.abort()

    async def compact(self, custom_instructions: str | None, reason: str = "manual") -> m.CompactResult:
        """Summarize the old part of the current branch; raises when it fails or is aborted."""
        return await compaction_runner.compact(self, custom_instructions, reason)

    # --- host-made entries (agent/custom_entries.py) --------------------------------------

    async def send_custom_message(
        self, custom_type: str, content: Content, display: bool, details: Any, trigger_turn: bool
    ) -> str | None:
        return await custom_entries.send_custom_message(
            self, custom_type, content, display, details, trigger_turn
        )

    async def append_custom_entry(self, custom_type: str, data: Any) -> str | None:
        return await custom_entries.append_custom_entry(self, custom_type, data)

    # --- lifetime -----------------------------------------------------------------------

    async def shutdown(self) -> None:
        self.abort(stopping=True)
        self.abort_bash()
        self.temp_files.remove_all()
        self.sandbox.close()
        chain = self.manager.write_chain
        reported = chain is not None and chain.error is not None
        try:
            with anyio.CancelScope(shield=True):
                await self.manager.aclose()
        except PersistenceError as exc:
            if not reported:
                raise
            # The host was told with the request that met it; the file is closed all the same.
            logger.warning("%s", exc)
        with anyio.CancelScope(shield=True):
            if self.mcp is not None:
                await self.mcp.aclose()
            await self.provider.aclose()
