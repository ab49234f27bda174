"""AgentSession: one conversation driven by a front end (JSON-RPC now, ACP later).

It owns the current SessionManager (switching, forking and cloning replace it), the run state
(streaming, queues, abort), and the settings. It knows nothing of JSON-RPC: it raises domain
errors (``AgentBusyError``, session errors, provider errors) and emits typed events through
the ``emit`` callback it was given.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import orjson
from pydantic import BaseModel

from ..protocol import events as ev
from ..protocol import methods as m
from ..protocol.base import trusted
from ..providers.base import ModelInfo, Provider, ProviderError, ToolSpec
from ..session import files
from ..session.errors import SessionNotFoundError
from ..session.store import SessionManager
from ..tools.base import Tool, ToolOutput, tool_schema
from .branch_summary import generate_branch_summary, prepare_branch_summary
from .compaction import NothingToCompactError, context_tokens, generate_compaction_summary, prepare_compaction
from .loop import Authorize, RunContext, RunOutcome, now_ms, run_turns
from .queue import MessageQueue, QueuedMessage
from .settings import AgentSettings
from .system_prompt import build_system_prompt

JsonDict = dict[str, Any]
Emit = Callable[[BaseModel], None]

THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"]


class AgentBusyError(Exception):
    """The agent is streaming and the request needs it idle (or a streamingBehavior)."""


class NotAvailableError(Exception):
    """The method exists but its machinery is not in this build yet."""


class OperationCancelledError(Exception):
    """An operation was aborted by the client."""


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
        self._run_context: RunContext | None = None
        self._pending_bash: list[JsonDict] = []
        self.authorize: Authorize | None = None
        """Permission hook for tool calls (the ACP front asks the editor); None allows all."""
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

    def _tool_specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(name=t.name, description=t.description, parameters=tool_schema(t)) for t in self.tools
        ]

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
        self, text: str, images: list[JsonDict] | None = None, streaming_behavior: str | None = None
    ) -> m.PromptResult:
        if self.is_streaming or self.is_compacting:
            if streaming_behavior is None:
                raise AgentBusyError(
                    "the agent is already running; send streamingBehavior 'steer' or 'followUp' to queue this prompt"
                )
            self.enqueue("steer" if streaming_behavior == "steer" else "followUp", text, images)
            return m.PromptResult(queued=True)
        self._require_idle("prompt")
        return await self._run([QueuedMessage(text, list(images or []))])

    async def _run(self, first: list[QueuedMessage]) -> m.PromptResult:
        self.is_streaming = True
        outcome = RunOutcome()
        specs = self._tool_specs()
        ctx = RunContext(
            manager=self.manager,
            provider=self.provider,
            model=self.model,
            thinking_level=self.thinking_level,
            system_prompt=build_system_prompt(Path(self.manager.cwd), specs),
            tools=self.tools,
            settings=self.settings,
            queue=self.queue,
            emit=self.emit,
            cwd=Path(self.manager.cwd),
            on_queue_change=self._announce_queue,
            tool_specs=specs,
            authorize=self.authorize,
        )
        self._run_context = ctx
        self.emit(ev.AgentStartEvent())
        try:
            await self._flush_pending_bash()
            with anyio.CancelScope() as scope:
                self._run_scope = scope
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
        finally:
            self._run_scope = None
            self._run_context = None
            self.is_streaming = False
            if self.queue:
                self.queue.clear()
                self._announce_queue()
            with anyio.CancelScope(shield=True):
                await self.manager.flush()
            self.emit(trusted(ev.AgentEndEvent, messages=ctx.new_messages))
        return trusted(
            m.PromptResult,
            queued=False,
            stopReason=outcome.stop_reason,
            messages=ctx.new_messages,
            errorMessage=outcome.error_message,
        )

    _op_scope: anyio.CancelScope | None = None

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
        if params.summarize:
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
        return m.NavigateTreeResult(
            cancelled=False, editorText=editor_text, leafId=manager.leaf_id, summaryEntryId=summary_entry_id
        )

    async def set_label(self, entry_id: str, label: str | None) -> str:
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

    async def _new_session(self, parent_session: str | None) -> m.SessionChangeResult:
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
        if self.manager.session_file is not None and target.absolute() == self.manager.session_file:
            return m.SessionChangeResult(**self._change_result())
        if not target.is_file():
            # Checked here as well as in the store: taking the lock first would create the
            # missing folders of a mistyped path.
            raise SessionNotFoundError(target.absolute())

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
                f"a {message.get('role')} message"
                if isinstance(message, dict)
                else f"a {entry.get('type')} entry"
            )
            raise ValueError(f"fork needs a user message; entry {entry_id} is {kind}")
        text = message_text(message.get("content"))
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
        await self.manager.append_session_info(name)

    # --- settings -----------------------------------------------------------------------

    async def set_model(self, model_id: str) -> ModelInfo:
        model = self.provider.resolve_model(model_id)
        self.model = model
        await self.manager.append_model_change(model.provider, model.id)
        return model

    async def cycle_model(self) -> ModelInfo:
        models = self.provider.models()
        ids = [model.id for model in models]
        index = ids.index(self.model.id) if self.model.id in ids else -1
        return await self.set_model(models[(index + 1) % len(models)].id)

    async def set_thinking_level(self, level: str) -> None:
        if level not in THINKING_LEVELS:
            raise ValueError(f"unknown thinking level {level!r}")
        self.thinking_level = level
        await self.manager.append_thinking_level_change(level)

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
                        cwd=Path(self.manager.cwd), tool_call_id=f"user_bash_{now_ms()}", on_update=on_update
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
        except (NothingToCompactError, ProviderError) as exc:
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
        path = self.manager.get_branch()
        tokens_before = context_tokens(self.manager.build_session_context().messages)
        preparation = prepare_compaction(path, compaction.keep_recent_tokens, tokens_before)
        summary, details = await generate_compaction_summary(
            self.provider, self.model, preparation, custom_instructions
        )
        await self.manager.append_compaction(summary, preparation.first_kept_entry_id, tokens_before, details)
        return m.CompactResult(
            summary=summary,
            firstKeptEntryId=preparation.first_kept_entry_id,
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
        messages = self.messages()
        rows = []
        for message in messages:
            role = str(message.get("role"))
            if role in ("branchSummary", "compactionSummary"):
                body = str(message.get("summary", ""))
            elif role == "bashExecution":
                body = f"$ {message.get('command')}\n{message.get('output', '')}"
            else:
                body = message_text(message.get("content"))
                calls = [
                    f"→ {b.get('name')} {b.get('arguments')}"
                    for b in message.get("content") or []
                    if isinstance(b, dict) and b.get("type") == "toolCall"
                ]
                body = "\n".join([body, *calls]).strip()
            rows.append(
                f'<div class="msg {html.escape(role)}"><b>{html.escape(role)}</b><pre>{html.escape(body)}</pre></div>'
            )
        title = html.escape(self.manager.session_name or self.manager.session_id)
        page = (
            "<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{title}</title><style>body{{font-family:sans-serif;max-width:60em;margin:auto}}"
            "pre{white-space:pre-wrap}.user{background:#eef}.assistant{background:#efe}"
            ".toolResult{background:#f6f6f6}</style></head><body>"
            f"<h1>{title}</h1>{''.join(rows)}</body></html>"
        )
        if output_path:
            target = Path(output_path).expanduser()
        elif self.manager.session_file is not None:
            target = self.manager.session_file.with_suffix(".html")
        else:
            target = Path(self.manager.cwd) / f"session-{self.manager.session_id}.html"
        await anyio.to_thread.run_sync(lambda: files.atomic_write(target, page.encode()))
        return str(target)

    # --- lifetime -----------------------------------------------------------------------

    async def shutdown(self) -> None:
        self.abort()
        self.abort_bash()
        with anyio.CancelScope(shield=True):
            await self.manager.aclose()
