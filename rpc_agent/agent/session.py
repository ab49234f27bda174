"""AgentSession: one conversation driven by a front end (JSON-RPC now, ACP later).

It owns the current SessionManager (switching, forking and cloning replace it), the run state
(streaming, queues, abort), and the settings. It knows nothing of JSON-RPC: it raises domain
errors (``AgentBusyError``, session errors, provider errors) and emits typed events through
the ``emit`` callback it was given.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.to_thread
import orjson
from pydantic import BaseModel

from .. import export
from ..errors import (
    AgentBusyError,
    InvalidRequestError,
    NothingToCompactError,
    OperationCancelledError,
    PersistenceError,
    ProviderError,
    SessionNotFoundError,
)
from ..protocol import events as ev
from ..protocol import host as h
from ..protocol import methods as m
from ..protocol.base import trusted
from ..providers.base import ModelInfo, Provider, ToolSpec
from ..quoting import quote
from ..session import files
from ..session.store import SessionManager
from ..tools.base import CommandRunner, FileAccess, Tool, ToolOutput, tool_schema
from ..tools.temp_files import TempFiles
from . import hooks
from .approvals import ApprovalGate
from .branch_summary import generate_branch_summary, prepare_branch_summary
from .compaction import context_tokens, generate_compaction_summary, prepare_compaction
from .host import Host, NoHost
from .loop import Authorize, RunContext, RunOutcome, error_message, now_ms, run_turns
from .pairing import EventPairing
from .policy import ApprovalPolicy, parse_rules
from .queue import MessageQueue, QueuedMessage
from .settings import AgentSettings
from .system_prompt import build_system_prompt

JsonDict = dict[str, Any]
Emit = Callable[[BaseModel], None]

logger = logging.getLogger("rpc_agent")

THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"]


def _article(word: str) -> str:
    """``an assistant``, ``a custom``: the word with its indefinite article."""
    return f"{'an' if word[:1].lower() in 'aeio' else 'a'} {word}"


class SessionTools(Protocol):
    """Tools that live and die with the session (its MCP servers), beside the built-in ones."""

    async def ready(self) -> None: ...
    def tools(self) -> list[Tool]: ...
    def state_json(self) -> list[dict[str, object]]: ...
    async def aclose(self) -> None: ...


def _failure_text(failure: BaseException | None) -> str:
    if failure is None or isinstance(failure, anyio.get_cancelled_exc_class()):
        return "Request was aborted"
    return str(failure) or type(failure).__name__


def message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


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
        self.settings = settings or AgentSettings()
        self.session_dir = session_dir
        self.home = home
        self.queue = MessageQueue()
        self.is_streaming = False
        self.is_compacting = False
        self._operation: str | None = None
        self._run_scope: anyio.CancelScope | None = None
        self._bash_scope: anyio.CancelScope | None = None
        self.temp_files = TempFiles()
        """Files the session's tools left (full bash outputs): removed when the session closes."""
        self._run_context: RunContext | None = None
        self._pending_bash: list[JsonDict] = []
        self.authorize: Authorize | None = None
        self.mcp: SessionTools | None = None
        """The session's MCP servers (the front that runs them sets this)."""
        """Permission hook for tool calls (the ACP front asks the editor); None allows all."""
        self.files: FileAccess | None = None
        """How the model's file tools reach files (the ACP front: the editor's buffers); None: disk."""
        self.commands: CommandRunner | None = None
        """Where the model's ``bash`` runs (the ACP front: the editor's terminal); None: locally."""
        self.host: Host = NoHost()
        """Who governs the agent (approvals, hooks, client tools); each front sets its own."""
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
        self._gate = ApprovalGate(
            self.policy, lambda: self.host, lambda e: self.emit(e), lambda: Path(self.manager.cwd)
        )
        context = manager.context_settings()
        chosen = model_id or (context.model.modelId if context.model else None)
        self.model: ModelInfo = provider.resolve_model(chosen) if chosen else provider.models()[0]
        self.thinking_level = thinking_level or context.thinkingLevel or "off"

    @property
    def tools(self) -> list[Tool]:
        """The tools, built on first use (a factory keeps their imports off the startup path)."""
        if callable(self._tools):
            self._tools = list(self._tools())
        return self._tools

    # --- state --------------------------------------------------------------------------

    def state(self) -> m.State:
        return trusted(m.State, **self.state_json())

    def state_json(self) -> dict[str, Any]:
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
        }

    def _model_json(self) -> dict[str, Any]:
        if self._model_json_cache is None or self._model_json_cache[0] is not self.model:
            self._model_json_cache = (self.model, self.model.to_json())
        return self._model_json_cache[1]

    _model_json_cache: tuple[ModelInfo, dict[str, Any]] | None = None

    def _require_idle(self, what: str) -> None:
        if self.is_streaming or self.is_compacting:
            raise AgentBusyError(f"cannot {what} while the agent is running; abort first")
        if self._operation is not None:
            raise AgentBusyError(f"cannot {what} while the agent is busy ({self._operation})")

    @contextlib.contextmanager
    def _exclusive(self, what: str) -> Iterator[None]:
        """Run an operation that must not overlap a run or another such operation.

        Navigation (with its summary), fork, clone, new and switch wait for the model or the
        disk; a prompt that started meanwhile would append to a branch that is being left or to
        a session that is being closed.
        """
        self._require_idle(what)
        self._operation = what
        try:
            yield
        finally:
            self._operation = None

    @contextlib.asynccontextmanager
    async def _mutation(self) -> AsyncIterator[None]:
        """Persist first, apply after: the one way every mutation of the session goes.

        A latched write error is raised before anything is computed or moved; entries appended
        inside are awaited to the disk, and if they cannot be stored the session's memory is
        rolled back to where it was. Callers change their own state (model, thinking level)
        only after the block, so a mutation that fails changes nothing.
        """
        self.manager.check_writable()
        manager = self.manager
        point = manager.savepoint()
        try:
            yield
            await manager.flush()
        except PersistenceError:
            manager.rollback(point)
            raise

    def run_tools(self) -> list[Tool]:
        """The built-in tools, the client's, and those of the session's MCP servers that are up."""
        mcp_tools = self.mcp.tools() if self.mcp is not None else []
        return [*self.tools, *self.client_tools, *mcp_tools]

    def _tool_specs(self, tools: list[Tool] | None = None) -> list[ToolSpec]:
        return [
            ToolSpec(name=t.name, description=t.description, parameters=tool_schema(t))
            for t in (tools if tools is not None else self.run_tools())
        ]

    def _authorize(self) -> Authorize | None:
        """The ACP front's permission callback, else the approval policy with the host."""
        if self.authorize is not None:
            return self.authorize
        gate = self._gate

        async def authorize(call_id: str, name: str, arguments: JsonDict) -> bool:
            tool = next((t for t in [*self.tools, *self.client_tools] if t.name == name), None)
            if tool is not None:
                await gate.check(tool, call_id, arguments)
            return True

        return authorize

    # --- prompting ----------------------------------------------------------------------

    def _announce_queue(self) -> None:
        steering, follow_up = self.queue.snapshot()
        self.emit(ev.QueueUpdateEvent(steering=steering, followUp=follow_up))

    def enqueue(self, kind: str, text: str, images: list[JsonDict] | None) -> int:
        queued = QueuedMessage(text, list(images or []))
        (self.queue.steering if kind == "steer" else self.queue.follow_up).append(queued)
        self._announce_queue()
        return len(self.queue)

    async def prompt(
        self,
        text: str,
        images: list[JsonDict] | None = None,
        streaming_behavior: str | None = None,
        *,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> m.PromptResult:
        if self.mcp is not None and not (self.is_streaming or self.is_compacting):
            await self.mcp.ready()  # servers still starting: their tools belong in this run
        if hooks.declared(self.host, "input"):  # pi: every prompt, queued ones too
            handled, text, images = await hooks.input_(self.host, text, images)
            if handled:
                self.emit(ev.InputHandledEvent(text=text))
                return m.PromptResult(queued=False, stopReason="handled")
        if self.is_streaming or self.is_compacting:
            if streaming_behavior is None:
                raise AgentBusyError(
                    "the agent is already running; send streamingBehavior 'steer' or 'followUp' to queue this prompt"
                )
            self.enqueue("steer" if streaming_behavior == "steer" else "followUp", text, images)
            return m.PromptResult(queued=True)
        self._require_idle("prompt")
        return await self._run(
            [QueuedMessage(text, list(images or []))], max_turns=max_turns, max_budget_usd=max_budget_usd
        )

    async def _run(
        self, first: list[QueuedMessage], *, max_turns: int | None = None, max_budget_usd: float | None = None
    ) -> m.PromptResult:
        self.is_streaming = True
        done = self._run_done = anyio.Event()
        outcome = RunOutcome()
        tools = self.run_tools()
        specs = self._tool_specs(tools)
        system_prompt = self.system_prompt_override or build_system_prompt(Path(self.manager.cwd), specs)
        if self.append_system_prompt:
            system_prompt = f"{system_prompt}\n\n{self.append_system_prompt}"
        ctx = RunContext(
            manager=self.manager,
            provider=self.provider,
            model=self.model,
            thinking_level=self.thinking_level,
            system_prompt=system_prompt,
            tools=tools,
            settings=self.settings,
            queue=self.queue,
            emit=self.emit,
            cwd=Path(self.manager.cwd),
            on_queue_change=self._announce_queue,
            tool_specs=specs,
            authorize=self._authorize(),
            files=self.files,
            commands=self.commands,
            session_folders=files.store_folders(self.home, (self.session_dir,)),
            temp_files=self.temp_files,
            host=self.host,
            max_turns=max_turns if max_turns is not None else self.max_turns,
            max_budget_usd=max_budget_usd if max_budget_usd is not None else self.max_budget_usd,
        )
        pairing = EventPairing(self.emit, lambda text: error_message(ctx, text))
        ctx.emit = pairing
        self._run_context = ctx
        self.emit(ev.AgentStartEvent())
        failure: BaseException | None = None
        try:
            await self._flush_pending_bash()
            with anyio.CancelScope() as scope:
                self._run_scope = scope
                if first:
                    await hooks.before_agent_start(self.host, ctx, first[0].text, first[0].images)
                await run_turns(ctx, first, outcome)
                compaction = self.settings.compaction
                if outcome.overflow and compaction is not None and compaction.enabled:
                    # The prompt no longer fits: compact, then answer the same request once more.
                    if await self._auto_compact("overflow"):
                        outcome.overflow = False
                        outcome.error_message = None
                        await run_turns(ctx, [], outcome)
                elif outcome.stop_reason not in ("error", "aborted") and self._needs_compaction():
                    await self._auto_compact("threshold")
            if scope.cancelled_caught:
                outcome.stop_reason = "aborted"
                outcome.error_message = outcome.error_message or "aborted by the client"
        except BaseException as exc:
            failure = exc
            raise
        finally:
            self._run_scope = None
            self._run_context = None
            self.is_streaming = False
            try:
                if self.queue:
                    self.queue.clear()
                    self._announce_queue()
                with anyio.CancelScope(shield=True):
                    for custom in ctx.extra_first:  # sent too late for this run: the next one sees it
                        await self.manager.append_custom_message_entry(
                            custom["customType"],
                            custom["content"],
                            custom.get("display", True),
                            custom.get("details"),
                        )
                    await self.manager.flush()
            except Exception as exc:
                failure = failure or exc
                raise
            finally:
                # Whatever stopped the run (a failed write, any error): everything it opened is
                # closed before agent_end, so a client never waits for an end that never comes.
                pairing.close_all(_failure_text(failure))
                self.emit(trusted(ev.AgentEndEvent, messages=ctx.new_messages))
                done.set()
        return trusted(
            m.PromptResult,
            queued=False,
            stopReason=outcome.stop_reason,
            messages=ctx.new_messages,
            errorMessage=outcome.error_message,
        )

    _op_scope: anyio.CancelScope | None = None
    _run_done: anyio.Event | None = None

    async def wait_idle(self) -> None:
        """Return once no run is going on (at once when none is): after ``abort``, the run has
        stored what it had by then."""
        while self.is_streaming and self._run_done is not None:
            await self._run_done.wait()

    def abort(self) -> bool:
        """Stop the run (or compaction/summary) in progress; False when nothing was running."""
        aborted = False
        if self._run_scope is not None:
            self._run_scope.cancel()
            aborted = True
        if self._op_scope is not None:
            self._op_scope.cancel()
            aborted = True
        return aborted

    def abort_retry(self) -> bool:
        """Stop the wait before an automatic retry; False when no retry is pending.

        Only a pending retry is stopped: a request that arrives while the model streams must
        not cancel a retry that has not started yet.
        """
        if self._run_context is None or not self._run_context.retry_waiting:
            return False
        self._run_context.abort_retry.set()
        return True

    # --- reading ------------------------------------------------------------------------

    def messages(self) -> list[JsonDict]:
        return self.manager.build_session_context().messages

    def last_assistant_text(self) -> str | None:
        for message in reversed(self.messages()):
            if message.get("role") == "assistant":
                text = message_text(message.get("content"))
                if text or message.get("stopReason") != "aborted":
                    return text
        return None

    def session_stats(self) -> m.SessionStats:
        counts = {"user": 0, "assistant": 0, "toolResult": 0}
        tool_calls = 0
        total = 0
        tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        cost = 0.0
        for entry in self.manager.entries:
            if entry.get("type") != "message":
                continue
            message = entry.get("message") or {}
            role = message.get("role")
            total += 1
            if role in counts:
                counts[role] += 1
            if role == "assistant":
                tool_calls += sum(
                    1
                    for b in message.get("content") or []
                    if isinstance(b, dict) and b.get("type") == "toolCall"
                )
                usage = message.get("usage") or {}
                for key in tokens:
                    tokens[key] += int(usage.get(key) or 0)
                cost += float((usage.get("cost") or {}).get("total") or 0)
        return m.SessionStats(
            sessionFile=str(self.manager.session_file) if self.manager.session_file else None,
            sessionId=self.manager.session_id,
            userMessages=counts["user"],
            assistantMessages=counts["assistant"],
            toolCalls=tool_calls,
            toolResults=counts["toolResult"],
            totalMessages=total,
            tokens=m.TokenTotals(total=sum(tokens.values()), **tokens),
            cost=round(cost, 6),
        )

    def tree(self, params: m.GetTreeParams | None = None) -> JsonDict:
        """The flat tree as plain dicts (for fronts that want objects, not JSON bytes)."""
        p = params or m.GetTreeParams()
        manager = self.manager
        nodes = manager.tree_json(root=p.rootId, max_depth=p.maxDepth, keep=p.filter, since=p.since)
        return {"leafId": manager.leaf_id, "nodes": orjson.loads(nodes), "cursor": manager.tree_cursor}

    # --- the tree -----------------------------------------------------------------------

    async def navigate_tree(self, params: m.NavigateTreeParams) -> m.NavigateTreeResult:
        with self._exclusive("navigating the tree"):
            async with self._mutation():
                return await self._navigate_tree(params)

    async def _navigate_tree(self, params: m.NavigateTreeParams) -> m.NavigateTreeResult:
        manager = self.manager
        target = manager.require_entry(params.targetId)
        old_leaf = manager.leaf_id
        if params.targetId == old_leaf:
            return m.NavigateTreeResult(cancelled=False, leafId=old_leaf)
        message = target.get("message") if target.get("type") == "message" else None
        is_user_like = (
            isinstance(message, dict) and message.get("role") in ("user", "custom")
        ) or target.get("type") == "custom_message"
        editor_text: str | None = None
        new_leaf: str | None = params.targetId
        if is_user_like:
            content = message.get("content") if isinstance(message, dict) else target.get("content")
            editor_text = message_text(content)
            parent = target.get("parentId")
            new_leaf = parent if isinstance(parent, str) and manager.get_entry(parent) is not None else None
        summary_entry_id: str | None = None
        hook_summary: h.TreeSummary | None = None
        if hooks.declared(self.host, "session_before_tree"):
            tree_hook = await hooks.before_tree(self.host, manager, params, old_leaf, new_leaf)
            if tree_hook is None:
                return m.NavigateTreeResult(cancelled=True, leafId=old_leaf)
            params, hook_summary = tree_hook
        if hook_summary is not None:
            details = hook_summary.details
            summary_entry_id = await manager.branch_with_summary(
                new_leaf, hook_summary.summary, details, from_hook=True
            )
        elif params.summarize:
            preparation = prepare_branch_summary(manager, old_leaf, new_leaf)
            if preparation.entries:
                try:
                    with anyio.CancelScope() as scope:
                        self._op_scope = scope
                        summary, details = await generate_branch_summary(
                            self.provider,
                            self.model,
                            preparation.entries,
                            custom_instructions=params.customInstructions,
                            replace_instructions=params.replaceInstructions,
                        )
                finally:
                    self._op_scope = None
                if scope.cancelled_caught:
                    return m.NavigateTreeResult(cancelled=True, leafId=old_leaf)
                details["fromLeafId"] = old_leaf
                summary_entry_id = await manager.branch_with_summary(new_leaf, summary, details)
        if summary_entry_id is None:
            await (manager.branch(new_leaf) if new_leaf is not None else manager.reset_leaf())
        label_target = summary_entry_id or params.targetId
        if params.label:
            await manager.append_label_change(label_target, params.label, move_leaf=False)
        await manager.flush()
        self._announce_session("navigate")
        self.emit(
            ev.SessionTreeEvent(
                newLeafId=manager.leaf_id,
                oldLeafId=old_leaf,
                summaryEntry=manager.get_entry(summary_entry_id) if summary_entry_id else None,
                fromExtension=hook_summary is not None,
            )
        )
        return m.NavigateTreeResult(
            cancelled=False, editorText=editor_text, leafId=manager.leaf_id, summaryEntryId=summary_entry_id
        )

    async def set_label(self, entry_id: str, label: str | None) -> str:
        async with self._mutation():
            label_id = await self.manager.append_label_change(entry_id, label, move_leaf=False)
        assert label_id is not None
        return label_id

    # --- sessions -----------------------------------------------------------------------

    def _announce_session(self, reason: str) -> None:
        self.emit(
            ev.SessionChangedEvent(
                reason=reason,
                sessionId=self.manager.session_id,
                sessionFile=str(self.manager.session_file) if self.manager.session_file else None,
                leafId=self.manager.leaf_id,
            )
        )

    def _change_result(self) -> JsonDict:
        return {
            "cancelled": False,
            "sessionId": self.manager.session_id,
            "sessionFile": str(self.manager.session_file) if self.manager.session_file else None,
            "leafId": self.manager.leaf_id,
        }

    async def _replace_manager(self, new: SessionManager, reason: str) -> None:
        old = self.manager
        self.manager = new
        self.temp_files.remove_all()  # the old session's tool results were the only references
        try:
            await old.aclose()
        finally:
            context = new.context_settings()
            self.thinking_level = context.thinkingLevel
            if context.model is not None:
                self.model = self.provider.resolve_model(context.model.modelId)
            self._announce_session(reason)

    def _session_folder(self) -> Path:
        if self.session_dir is not None:
            return self.session_dir
        if self.manager.session_dir is not None:
            return self.manager.session_dir
        return files.default_session_dir(self.manager.cwd, self.home)

    async def new_session(self, parent_session: str | None) -> m.SessionChangeResult:
        with self._exclusive("starting a new session"):
            return await self._new_session(parent_session)

    async def _hook_cancels(self, name: str, event: JsonDict) -> bool:
        """pi's session_before_switch / session_before_fork: may the change go ahead?"""
        if name == "session_before_switch":
            switch = await hooks.run(self.host, name, event, h.SessionBeforeSwitchResult)
            return bool(switch is not None and switch.cancel)
        fork = await hooks.run(self.host, name, event, h.SessionBeforeForkResult)
        return bool(fork is not None and fork.cancel)

    def _unchanged(self) -> m.SessionChangeResult:
        return m.SessionChangeResult(**{**self._change_result(), "cancelled": True})

    async def _new_session(self, parent_session: str | None) -> m.SessionChangeResult:
        if await self._hook_cancels("session_before_switch", {"reason": "new"}):
            return self._unchanged()
        if not self.manager.is_persisted:
            new = SessionManager.in_memory(self.manager.cwd)
        else:
            new = await anyio.to_thread.run_sync(
                lambda: SessionManager.create(
                    self.manager.cwd, self._session_folder(), parent_session=parent_session, home=self.home
                )
            )
        await self._replace_manager(new, "new")
        return m.SessionChangeResult(**self._change_result())

    async def switch_session(self, path: str) -> m.SessionChangeResult:
        with self._exclusive("switching sessions"):
            return await self._switch_session(path)

    async def _switch_session(self, path: str) -> m.SessionChangeResult:
        target = Path(path).expanduser()
        if self.manager.session_file is not None and files.same_file(target, self.manager.session_file):
            return m.SessionChangeResult(**self._change_result())  # this session, by any name
        if not target.exists():
            # Checked here as well as in the store: taking the lock first would create the
            # missing folders of a mistyped path. (What is there but is not a regular file,
            # the store refuses with the reason.)
            raise SessionNotFoundError(target.absolute())
        if await self._hook_cancels(
            "session_before_switch", {"reason": "resume", "targetSessionFile": str(target.absolute())}
        ):
            return self._unchanged()

        def open_session() -> SessionManager:
            opened = SessionManager.open(target, cwd=self.manager.cwd, home=self.home, must_exist=True)
            try:
                opened.warm_up()
            except BaseException:
                opened.close()
                raise
            return opened

        new = await anyio.to_thread.run_sync(open_session)
        await self._replace_manager(new, "switch")
        return m.SessionChangeResult(**self._change_result())

    def fork_messages(self) -> list[m.ForkMessage]:
        return [
            m.ForkMessage(entryId=e["id"], text=message_text(e["message"].get("content")))
            for e in self.manager.entries
            if e.get("type") == "message"
            and isinstance(e.get("message"), dict)
            and e["message"].get("role") == "user"
        ]

    async def fork(self, entry_id: str) -> m.ForkResult:
        with self._exclusive("forking"):
            return await self._fork(entry_id)

    async def _fork(self, entry_id: str) -> m.ForkResult:
        entry = self.manager.require_entry(entry_id)
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "user":
            # The entry exists: "not found" would send the client looking for the wrong problem.
            kind = (
                f"{_article(str(message.get('role')))} message"
                if isinstance(message, dict)
                else f"{_article(str(entry.get('type')))} entry"
            )
            raise InvalidRequestError(f"fork needs a user message; entry {entry_id} is {kind}")
        text = message_text(message.get("content"))
        fork_answer = await hooks.run(
            self.host,
            "session_before_fork",
            {"entryId": entry_id, "position": "before"},
            h.SessionBeforeForkResult,
        )
        if fork_answer is not None and fork_answer.cancel:
            return m.ForkResult(text="", **{**self._change_result(), "cancelled": True})
        if fork_answer is not None and fork_answer.skipConversationRestore:
            text = ""
        parent = entry.get("parentId")
        parent_file = str(self.manager.session_file) if self.manager.session_file else None
        if isinstance(parent, str) and self.manager.get_entry(parent) is not None:
            new = await anyio.to_thread.run_sync(
                lambda: self.manager.create_branched_session(parent, home=self.home)
            )
        elif self.manager.is_persisted:
            new = await anyio.to_thread.run_sync(
                lambda: SessionManager.create(
                    self.manager.cwd, self._session_folder(), parent_session=parent_file, home=self.home
                )
            )
        else:
            new = SessionManager.in_memory(self.manager.cwd)
        await self._replace_manager(new, "fork")
        return m.ForkResult(text=text, **self._change_result())

    async def clone(self) -> m.SessionChangeResult:
        with self._exclusive("cloning"):
            return await self._clone()

    async def _clone(self) -> m.SessionChangeResult:
        leaf = self.manager.leaf_id
        if leaf is not None and await self._hook_cancels(
            "session_before_fork", {"entryId": leaf, "position": "at"}
        ):
            return self._unchanged()
        if leaf is None:
            return await self._new_session(
                str(self.manager.session_file) if self.manager.session_file else None
            )
        new = await anyio.to_thread.run_sync(
            lambda: self.manager.create_branched_session(leaf, home=self.home)
        )
        await self._replace_manager(new, "clone")
        return m.SessionChangeResult(**self._change_result())

    async def set_session_name(self, name: str) -> None:
        async with self._mutation():
            await self.manager.append_session_info(name)

    # --- settings -----------------------------------------------------------------------

    async def set_model(self, model_id: str, provider: str | None = None) -> ModelInfo:
        """Switch to a model of this server's provider; unknown ids and other providers are refused."""
        if provider is not None and provider != self.provider.name:
            raise InvalidRequestError(
                f"provider {quote(provider)} is not available: this server runs the "
                f"{self.provider.name} provider (start it with --provider to use another)"
            )
        if not self.provider.knows_model(model_id):
            known = ", ".join(model.id for model in self.provider.models())
            raise InvalidRequestError(
                f"unknown model {quote(model_id)} for provider {self.provider.name}; known models: {known}"
            )
        model = self.provider.resolve_model(model_id)
        async with self._mutation():
            await self.manager.append_model_change(model.provider, model.id)
        self.model = model
        return model

    async def cycle_model(self) -> ModelInfo:
        models = self.provider.models()
        ids = [model.id for model in models]
        index = ids.index(self.model.id) if self.model.id in ids else -1
        return await self.set_model(models[(index + 1) % len(models)].id)

    async def set_thinking_level(self, level: str) -> None:
        if level not in THINKING_LEVELS:
            raise InvalidRequestError(f"unknown thinking level {quote(level)}")
        async with self._mutation():
            await self.manager.append_thinking_level_change(level)
        self.thinking_level = level

    async def cycle_thinking_level(self) -> str:
        index = THINKING_LEVELS.index(self.thinking_level) if self.thinking_level in THINKING_LEVELS else 0
        level = THINKING_LEVELS[(index + 1) % len(THINKING_LEVELS)]
        await self.set_thinking_level(level)
        return level

    # --- bash ---------------------------------------------------------------------------

    async def bash(self, command: str, exclude_from_context: bool = False) -> m.BashResult:
        from ..tools.base import ToolContext
        from ..tools.bash import BashTool

        tool = BashTool()
        cancelled = False
        output_text = ""
        details: JsonDict = {}

        def on_update(partial: ToolOutput) -> None:
            # An aborted command keeps what it printed so far (the tool raises, no result).
            nonlocal output_text
            output_text = message_text(partial.content)

        with anyio.CancelScope() as scope:
            self._bash_scope = scope
            try:
                result = await tool.execute(
                    tool.Args.model_validate({"command": command}),
                    ToolContext(
                        cwd=Path(self.manager.cwd),
                        tool_call_id=f"user_bash_{now_ms()}",
                        on_update=on_update,
                        env=self.settings.shell_environment.environ(),
                        temp_files=self.temp_files,
                    ),
                )
                output_text = message_text(result.content)
                details = result.details if isinstance(result.details, dict) else {}
            finally:
                self._bash_scope = None
        if scope.cancelled_caught:
            cancelled = True
        message: JsonDict = {
            "role": "bashExecution",
            "command": command,
            "output": output_text,
            "exitCode": details.get("exitCode"),
            "cancelled": cancelled,
            "truncated": bool(details.get("truncated")),
            "timestamp": now_ms(),
        }
        if details.get("fullOutputPath"):
            message["fullOutputPath"] = details["fullOutputPath"]
        if exclude_from_context:
            message["excludeFromContext"] = True
        if self.is_streaming or self.is_compacting or self._operation is not None:
            # The leaf is moving (a run, a compaction, a navigation, a session change): the
            # output joins the context at the start of the next prompt instead.
            self._pending_bash.append(message)
        else:
            async with self._mutation():
                await self.manager.append_message(message)
        return m.BashResult(
            output=output_text,
            exitCode=message["exitCode"],
            cancelled=cancelled,
            truncated=message["truncated"],
            fullOutputPath=message.get("fullOutputPath"),
        )

    async def _flush_pending_bash(self) -> None:
        while self._pending_bash:
            await self.manager.append_message(self._pending_bash.pop(0))

    def abort_bash(self) -> bool:
        if self._bash_scope is None:
            return False
        self._bash_scope.cancel()
        return True

    # --- compaction -----------------------------------------------------------------------

    async def compact(self, custom_instructions: str | None, reason: str = "manual") -> m.CompactResult:
        """Summarize the old part of the current branch; raises when it fails or is aborted.

        A failed or aborted compaction appends nothing. ``compaction_start``/``compaction_end``
        tell the client, whatever the outcome.
        """
        if reason == "manual":
            self._require_idle("compact")
        self.is_compacting = True
        self.emit(ev.CompactionStartEvent(reason=reason))
        result: m.CompactResult | None = None
        error: str | None = None
        aborted = False
        try:
            with anyio.CancelScope() as scope:
                self._op_scope = scope
                result = await self._compact(custom_instructions)
            aborted = scope.cancelled_caught
        except (NothingToCompactError, ProviderError, PersistenceError) as exc:
            error = str(exc)
            raise
        finally:
            self._op_scope = None
            self.is_compacting = False
            self.emit(
                ev.CompactionEndEvent(
                    reason=reason,
                    result=result,
                    aborted=aborted,
                    willRetry=reason == "overflow" and result is not None,
                    errorMessage=error or ("compaction aborted" if aborted else None),
                )
            )
        if result is None:
            raise OperationCancelledError("compaction was aborted; nothing was changed")
        return result

    async def _compact(self, custom_instructions: str | None) -> m.CompactResult:
        compaction = self.settings.compaction
        assert compaction is not None
        async with self._mutation():
            return await self._compact_branch(compaction.keep_recent_tokens, custom_instructions)

    async def _compact_branch(
        self, keep_recent_tokens: int, custom_instructions: str | None
    ) -> m.CompactResult:
        path = self.manager.get_branch()
        tokens_before = context_tokens(self.manager.build_session_context().messages)
        preparation = prepare_compaction(path, keep_recent_tokens, tokens_before)
        answer = await hooks.before_compact(self.host, path, preparation, tokens_before, custom_instructions)
        if answer is not None and answer.cancel:
            raise OperationCancelledError(
                "compaction was cancelled by the client's hook; nothing was changed"
            )
        from_hook = answer is not None and answer.compaction is not None
        if answer is not None and answer.compaction is not None:
            given = answer.compaction
            summary, first_kept, tokens_before, details = (
                given.summary,
                given.firstKeptEntryId,
                given.tokensBefore,
                given.details,
            )
            self.manager.require_entry(first_kept)
        else:
            summary, details = await generate_compaction_summary(
                self.provider, self.model, preparation, custom_instructions
            )
            first_kept = preparation.first_kept_entry_id
        entry_id = await self.manager.append_compaction(
            summary, first_kept, tokens_before, details, from_hook=True if from_hook else None
        )
        entry = self.manager.get_entry(entry_id) if entry_id else None
        if entry is not None:
            self.emit(ev.SessionCompactEvent(compactionEntry=entry, fromExtension=from_hook))
        return m.CompactResult(
            summary=summary,
            firstKeptEntryId=first_kept,
            tokensBefore=tokens_before,
            details=details,
        )

    def _needs_compaction(self) -> bool:
        compaction = self.settings.compaction
        if compaction is None or not compaction.enabled:
            return False
        tokens = context_tokens(self.manager.build_session_context().messages)
        return tokens > self.model.contextWindow - compaction.reserve_tokens

    async def _auto_compact(self, reason: str) -> bool:
        """Compact after a run (threshold) or on overflow; True when it succeeded."""
        try:
            await self.compact(None, reason)
        except (NothingToCompactError, ProviderError, OperationCancelledError):
            return False
        return True

    # --- export -------------------------------------------------------------------------

    async def export_html(self, output_path: str | None) -> str:
        """The whole tree as one self-contained page (see ``rpc_agent.export``)."""
        data = export.page_data(self.manager)  # here, on the loop: the manager is not thread-safe
        target = Path(output_path).expanduser() if output_path else export.default_output_path(self.manager)
        # Never over a session file: the live one under any name, or any other session.
        await anyio.to_thread.run_sync(
            lambda: files.check_write_target(target, live=self.manager.session_file)
        )
        await anyio.to_thread.run_sync(export.write_page, data, target)
        return str(target)

    # --- host-made entries (pi's sendMessage / appendEntry) ---------------------------------

    async def send_custom_message(
        self, custom_type: str, content: str | list[JsonDict], display: bool, details: Any, trigger_turn: bool
    ) -> str | None:
        """A custom_message that reaches the model; with ``trigger_turn`` the model answers it.

        During a run it steers the run (stored when the next turn starts; None is returned)."""
        custom: JsonDict = {
            "customType": custom_type,
            "content": content,
            "display": display,
            "details": details,
        }
        if self._run_context is not None:
            self._run_context.extra_first.append(custom)
            return None
        self._require_idle("add a custom message")
        entry_id = await self.manager.append_custom_message_entry(custom_type, content, display, details)
        message: JsonDict = {
            "role": "custom",
            "customType": custom_type,
            "content": content,
            "display": display,
            "details": details,
            "timestamp": now_ms(),
        }
        self.emit(trusted(ev.MessageStartEvent, message=message))
        self.emit(trusted(ev.MessageEndEvent, message=message, entryId=entry_id))
        if trigger_turn:
            await self._run([])
        return entry_id

    async def append_custom_entry(self, custom_type: str, data: Any) -> str | None:
        """Extension state: stored in the session, never sent to the model."""
        entry_id = await self.manager.append_custom_entry(custom_type, data)
        await self.manager.flush()
        return entry_id

    # --- lifetime -----------------------------------------------------------------------

    async def shutdown(self) -> None:
        self.abort()
        self.abort_bash()
        self.temp_files.remove_all()
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
