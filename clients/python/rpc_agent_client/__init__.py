"""A small typed async client for rpc-agent: spawn the server, call methods, read events.

    async with RpcAgentClient.spawn("--provider", "faux") as client:
        await client.initialize()
        result = await client.prompt("hello")
        tree = await client.get_tree()

Framing is strict: one JSON value per LF-terminated line, never split on U+2028/U+2029.
When the server exits, every pending call fails with ``ServerExitedError``.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import anyio.abc
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel

from . import types as m

JsonDict = dict[str, Any]
ResultT = TypeVar("ResultT", bound=BaseModel)
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
QueueMode = Literal["all", "one-at-a-time"]
Handler = Callable[[JsonDict], Awaitable[Any] | Any]
"""Answers one server-to-client request: takes its params, returns its result (sync or async)."""

__all__ = ["RpcAgentClient", "RpcCallError", "ServerExitedError"]


class RpcCallError(Exception):
    """The server answered a call with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: {message} (code {code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class ServerExitedError(Exception):
    """The server process ended while a call was waiting for its answer."""


class RpcAgentClient:
    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, anyio.Event, list[Any]]] = {}
        send, receive = anyio.create_memory_object_stream[JsonDict](max_buffer_size=100_000)
        self._event_send: MemoryObjectSendStream[JsonDict] = send
        self._event_receive: MemoryObjectReceiveStream[JsonDict] = receive
        self.events_seen: list[JsonDict] = []
        """Every event received so far, in order (handy in tests)."""
        self._event_listeners: list[Callable[[JsonDict], None]] = []
        self.protocol_errors: list[bytes] = []
        """Lines on the server's stdout that were not JSON-RPC 2.0 messages (there should be none)."""
        self.unmatched: list[JsonDict] = []
        """Responses that answered no pending call: parse errors (id null), answers to ``send_raw``."""
        self._closed = False
        self._write_lock = anyio.Lock()
        self._handlers: dict[str, Handler] = {}
        self._tools: list[JsonDict] = []
        self._tool_functions: dict[str, Callable[..., Any]] = {}
        self._answering: dict[Any, anyio.CancelScope] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self.cancelled_requests: list[Any] = []
        """Ids of server requests the server gave up on ($/cancelRequest); their handlers were cancelled."""

    # --- lifetime -----------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls,
        *args: str,
        command: Sequence[str] | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        stderr: int | None = None,
    ) -> AsyncIterator[RpcAgentClient]:
        """Start ``rpc-agent`` (default: this Python's ``-m rpc_agent``) and connect to it."""
        argv = [*(command or [sys.executable, "-m", "rpc_agent"]), *args]
        full_env = {**os.environ, **(env or {})}
        process = await anyio.open_process(argv, cwd=cwd, env=full_env, stderr=stderr)
        client = cls(process)
        async with anyio.create_task_group() as group:
            client._group = group
            group.start_soon(client._read_loop)
            try:
                yield client
            finally:
                await client.close()
                group.cancel_scope.cancel()
        # Both ends of the event stream are closed (an unclosed one warns when collected).
        client._event_send.close()
        client._event_receive.close()

    async def close(self, timeout: float = 10, grace: float = 3) -> int | None:  # noqa: ASYNC109 (public API)
        """Close stdin and wait for the exit code.

        The server takes EOF as the host going away: it aborts whatever is running (the turn is
        stored as aborted), flushes the session and exits. One still running after ``timeout``
        seconds gets SIGTERM (the same abort), and SIGKILL ``grace`` seconds after that.
        """
        if not self._closed:
            self._closed = True
            if self.process.stdin is not None:
                with (
                    anyio.CancelScope(shield=True),
                    contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError),
                ):
                    await self.process.stdin.aclose()
        code: int | None = None
        with anyio.move_on_after(timeout, shield=True):
            code = await self.process.wait()
        if code is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            with anyio.move_on_after(grace, shield=True):
                code = await self.process.wait()
        if code is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            with anyio.CancelScope(shield=True):
                code = await self.process.wait()
        return code

    async def _read_loop(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        try:
            async for chunk in self.process.stdout:
                buffer += chunk
                while True:
                    newline = buffer.find(b"\n")
                    if newline < 0:
                        break
                    line, buffer = buffer[:newline], buffer[newline + 1 :]
                    if not line.strip():
                        continue
                    try:
                        message = orjson.loads(line)
                    except orjson.JSONDecodeError:
                        # Not JSON: note it and keep reading; one bad line must not stop the client.
                        self.protocol_errors.append(line)
                        continue
                    self._dispatch(message, line)
            if buffer.strip():
                self.protocol_errors.append(buffer)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            for method, done, box in list(self._pending.values()):
                box.append(ServerExitedError(f"{method}: the server exited before answering"))
                done.set()
            self._pending.clear()
            self._event_send.close()

    def _dispatch(self, message: Any, line: bytes) -> None:
        if isinstance(message, list) and message:
            for item in message:
                self._dispatch(item, line)
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.protocol_errors.append(line)
            return
        if "method" in message and "id" in message:
            self._answer_server_request(message)
            return
        if "method" in message and "id" not in message:
            if message["method"] == "$/cancelRequest" and isinstance(message.get("params"), dict):
                request_id = message["params"].get("id")
                self.cancelled_requests.append(request_id)
                scope = self._answering.pop(request_id, None)
                if scope is not None:
                    scope.cancel()
                return
            if message["method"] == "event" and isinstance(message.get("params"), dict):
                event = message["params"]
                self.events_seen.append(event)
                for listener in list(self._event_listeners):
                    listener(event)
                with contextlib.suppress(anyio.WouldBlock):  # nobody reads events(): drop
                    self._event_send.send_nowait(event)
            return
        request_id = message.get("id")
        pending = self._pending.pop(request_id, None) if type(request_id) is int else None
        if pending is None:
            self.unmatched.append(message)
            return
        method, done, box = pending
        if "error" in message:
            error = message["error"] or {}
            box.append(
                RpcCallError(method, error.get("code", 0), error.get("message", ""), error.get("data"))
            )
        else:
            box.append(message.get("result"))
        done.set()

    # --- the host's side: approvals, hooks, client tools -----------------------------

    def on_approval(self, callback: Callable[[JsonDict], Awaitable[Any] | Any]) -> None:
        """``callback(params)`` answers approval/request: "allow", "allow_always", "deny", or a
        dict ``{"decision": ..., "message": ...}``. Declared by the next ``initialize``."""

        async def handle(params: JsonDict) -> JsonDict:
            answer = callback(params)
            if inspect.isawaitable(answer):
                answer = await answer
            return {"decision": answer} if isinstance(answer, str) else dict(answer)

        self._handlers["approval/request"] = handle

    def on_hook(self, name: str, handler: Handler) -> None:
        """``handler(event)`` answers ``hook/<name>`` with pi's result object (None: no change)."""

        async def handle(params: JsonDict) -> Any:
            answer = handler(params)
            if inspect.isawaitable(answer):
                answer = await answer
            return {} if answer is None else answer

        self._handlers[f"hook/{name}"] = handle

    def add_tool(
        self,
        function: Callable[..., Any],
        *,
        parameters: JsonDict,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
    ) -> None:
        """Offer ``function(**arguments)`` to the model as a tool. It returns a string, a list of
        content blocks, or a dict ``{"content": [...], "isError"?, "details"?}``; an exception
        becomes an error result."""
        tool_name = name or function.__name__
        self._tools = [t for t in self._tools if t["name"] != tool_name]
        self._tools.append(
            {
                "name": tool_name,
                "description": description or inspect.getdoc(function) or "",
                "parameters": parameters,
                "readOnly": read_only,
            }
        )
        self._tool_functions[tool_name] = function
        self._handlers["tool/call"] = self._call_tool

    async def _call_tool(self, params: JsonDict) -> JsonDict:
        function = self._tool_functions.get(str(params.get("name")))
        if function is None:
            return {
                "content": [{"type": "text", "text": f"unknown tool {params.get('name')}"}],
                "isError": True,
            }
        try:
            value = function(**(params.get("arguments") or {}))
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            return {"content": [{"type": "text", "text": f"{type(exc).__name__}: {exc}"}], "isError": True}
        if isinstance(value, str):
            return {"content": [{"type": "text", "text": value}]}
        if isinstance(value, list):
            return {"content": value}
        return dict(value)

    def capabilities(self) -> JsonDict:
        """What ``initialize`` declares, from the registered handlers and tools."""
        hooks = sorted(name[5:] for name in self._handlers if name.startswith("hook/"))
        caps: JsonDict = {"approvals": "approval/request" in self._handlers, "hooks": hooks}
        if self._tools:
            caps["tools"] = list(self._tools)
        return caps

    async def set_client_tools(self) -> JsonDict:
        """Send the current tool list (after ``add_tool`` calls made after initialize)."""
        result: JsonDict = await self.call("set_client_tools", {"tools": list(self._tools)})
        return result

    def _answer_server_request(self, message: JsonDict) -> None:
        request_id = message.get("id")
        handler = self._handlers.get(str(message.get("method")))
        if handler is None or self._group is None:
            self._reply(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}}
            )
            return
        scope = anyio.CancelScope()
        self._answering[request_id] = scope
        self._group.start_soon(self._run_handler, handler, message, scope)

    async def _run_handler(self, handler: Handler, message: JsonDict, scope: anyio.CancelScope) -> None:
        request_id = message.get("id")
        reply: JsonDict | None = None
        with scope:
            try:
                value = handler(message.get("params") or {})
                if inspect.isawaitable(value):
                    value = await value
                reply = {"jsonrpc": "2.0", "id": request_id, "result": value}
            except Exception as exc:
                reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": str(exc)}}
        self._answering.pop(request_id, None)
        if reply is not None and not scope.cancelled_caught:
            self._reply(reply)

    def _reply(self, reply: JsonDict) -> None:
        if self._group is None:
            return

        async def send() -> None:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await self.send_raw(orjson.dumps(reply, option=orjson.OPT_APPEND_NEWLINE))

        self._group.start_soon(send)

    # --- calls ------------------------------------------------------------------------

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (tests use it for malformed input)."""
        assert self.process.stdin is not None
        async with self._write_lock:
            await self.process.stdin.send(data)

    async def call(self, method: str, params: JsonDict | BaseModel | None = None) -> Any:
        """Call a method; returns the raw result or raises RpcCallError."""
        request_id = next(self._ids)
        done = anyio.Event()
        box: list[Any] = []
        self._pending[request_id] = (method, done, box)
        request: JsonDict = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if isinstance(params, BaseModel):
            request["params"] = params.model_dump(mode="json", exclude_none=True)
        elif params is not None:
            request["params"] = params
        try:
            await self.send_raw(orjson.dumps(request, option=orjson.OPT_APPEND_NEWLINE))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            self._pending.pop(request_id, None)
            raise ServerExitedError(f"{method}: the server is not running") from exc
        await done.wait()
        outcome = box[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def _typed(self, model: type[ResultT], method: str, params: JsonDict | None = None) -> ResultT:
        return model.model_validate(await self.call(method, params))

    # --- events -----------------------------------------------------------------------

    def events(self) -> MemoryObjectReceiveStream[JsonDict]:
        """The event stream (each event once, shared by all readers)."""
        return self._event_receive

    async def wait_for_event(
        self, event_type: str, predicate: Callable[[JsonDict], bool] | None = None, *, after: int = 0
    ) -> JsonDict:
        """The first event of that type (seen at index >= ``after``), waiting if needed."""
        for event in self.events_seen[after:]:
            if event.get("type") == event_type and (predicate is None or predicate(event)):
                return event
        found = anyio.Event()
        box: list[JsonDict] = []

        def listener(event: JsonDict) -> None:
            if not box and event.get("type") == event_type and (predicate is None or predicate(event)):
                box.append(event)
                found.set()

        self._event_listeners.append(listener)
        try:
            await found.wait()
        finally:
            self._event_listeners.remove(listener)
        return box[0]

    # --- typed methods ----------------------------------------------------------------

    async def initialize(self, client_name: str = "rpc-agent-client") -> m.InitializeResult:
        """Handshake; declares the approval callback, hooks and tools registered so far."""
        params: JsonDict = {"clientInfo": {"name": client_name}}
        caps = self.capabilities()
        if caps["approvals"] or caps["hooks"] or caps.get("tools"):
            params["capabilities"] = caps
        return await self._typed(m.InitializeResult, "initialize", params)

    async def get_state(self) -> m.State:
        return await self._typed(m.State, "get_state")

    async def prompt(
        self,
        message: str,
        *,
        images: list[JsonDict] | None = None,
        streaming_behavior: str | None = None,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> m.PromptResult:
        params: JsonDict = {"message": message}
        if max_turns is not None:
            params["maxTurns"] = max_turns
        if max_budget_usd is not None:
            params["maxBudgetUsd"] = max_budget_usd
        if images:
            params["images"] = images
        if streaming_behavior:
            params["streamingBehavior"] = streaming_behavior
        return await self._typed(m.PromptResult, "prompt", params)

    async def steer(self, message: str) -> m.QueueResult:
        return await self._typed(m.QueueResult, "steer", {"message": message})

    async def follow_up(self, message: str) -> m.QueueResult:
        return await self._typed(m.QueueResult, "follow_up", {"message": message})

    async def abort(self) -> m.AbortResult:
        return await self._typed(m.AbortResult, "abort")

    async def get_messages(self) -> m.MessagesResult:
        return await self._typed(m.MessagesResult, "get_messages")

    async def get_entries(self, since: str | None = None) -> m.EntriesResult:
        return await self._typed(m.EntriesResult, "get_entries", {"since": since} if since else None)

    async def get_tree(
        self,
        *,
        filter: str = "default",
        root_id: str | None = None,
        max_depth: int | None = None,
        since: int | None = None,
        format: str = "nodes",
    ) -> m.TreeResult:
        """The tree; ``since`` takes the ``cursor`` of an earlier result, ``format="columns"``
        gives the nodes in ``columns`` instead of ``nodes`` (see GetTreeParams)."""
        params: dict[str, Any] = {"filter": filter} if filter != "default" else {}
        if format != "nodes":
            params["format"] = format
        if root_id is not None:
            params["rootId"] = root_id
        if max_depth is not None:
            params["maxDepth"] = max_depth
        if since is not None:
            params["since"] = since
        return await self._typed(m.TreeResult, "get_tree", params or None)

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> m.NavigateTreeResult:
        params: JsonDict = {
            "targetId": target_id,
            "summarize": summarize,
            "replaceInstructions": replace_instructions,
        }
        if custom_instructions is not None:
            params["customInstructions"] = custom_instructions
        if label is not None:
            params["label"] = label
        return await self._typed(m.NavigateTreeResult, "navigate_tree", params)

    async def set_label(self, entry_id: str, label: str | None) -> m.SetLabelResult:
        return await self._typed(m.SetLabelResult, "set_label", {"entryId": entry_id, "label": label})

    async def fork(self, entry_id: str) -> m.ForkResult:
        return await self._typed(m.ForkResult, "fork", {"entryId": entry_id})

    async def clone(self) -> m.SessionChangeResult:
        return await self._typed(m.SessionChangeResult, "clone")

    async def new_session(self, parent_session: str | None = None) -> m.SessionChangeResult:
        return await self._typed(
            m.SessionChangeResult,
            "new_session",
            {"parentSession": parent_session} if parent_session else None,
        )

    async def switch_session(self, session_path: str) -> m.SessionChangeResult:
        return await self._typed(m.SessionChangeResult, "switch_session", {"sessionPath": session_path})

    async def list_sessions(self, *, all_cwds: bool = False) -> m.ListSessionsResult:
        return await self._typed(m.ListSessionsResult, "list_sessions", {"all": all_cwds})

    async def get_fork_messages(self) -> m.ForkMessagesResult:
        return await self._typed(m.ForkMessagesResult, "get_fork_messages")

    async def get_session_stats(self) -> m.SessionStats:
        return await self._typed(m.SessionStats, "get_session_stats")

    async def get_last_assistant_text(self) -> str | None:
        return (await self._typed(m.LastAssistantTextResult, "get_last_assistant_text")).text

    async def set_session_name(self, name: str) -> None:
        await self.call("set_session_name", {"name": name})

    async def bash(self, command: str) -> m.BashResult:
        return await self._typed(m.BashResult, "bash", {"command": command})

    async def abort_bash(self) -> m.AbortResult:
        return await self._typed(m.AbortResult, "abort_bash")

    async def abort_retry(self) -> m.AbortResult:
        return await self._typed(m.AbortResult, "abort_retry")

    async def compact(self, custom_instructions: str | None = None) -> m.CompactResult:
        params = {"customInstructions": custom_instructions} if custom_instructions is not None else None
        return await self._typed(m.CompactResult, "compact", params)

    async def get_available_models(self) -> m.ModelsResult:
        return await self._typed(m.ModelsResult, "get_available_models")

    async def set_model(self, model_id: str, provider: str | None = None) -> m.ModelDescription:
        params: JsonDict = {"modelId": model_id}
        if provider is not None:
            params["provider"] = provider
        return await self._typed(m.ModelDescription, "set_model", params)

    async def cycle_model(self) -> m.CycleModelResult:
        return await self._typed(m.CycleModelResult, "cycle_model")

    async def set_thinking_level(self, level: ThinkingLevel) -> None:
        await self.call("set_thinking_level", {"level": level})

    async def cycle_thinking_level(self) -> m.ThinkingLevelResult:
        return await self._typed(m.ThinkingLevelResult, "cycle_thinking_level")

    async def set_steering_mode(self, mode: QueueMode) -> None:
        await self.call("set_steering_mode", {"mode": mode})

    async def set_follow_up_mode(self, mode: QueueMode) -> None:
        await self.call("set_follow_up_mode", {"mode": mode})

    async def set_auto_compaction(self, enabled: bool) -> None:
        await self.call("set_auto_compaction", {"enabled": enabled})

    async def set_auto_retry(self, enabled: bool) -> None:
        await self.call("set_auto_retry", {"enabled": enabled})

    async def export_html(self, output_path: str | None = None) -> str:
        """Write the session as an HTML page; returns the path written."""
        params = {"outputPath": output_path} if output_path is not None else None
        return (await self._typed(m.ExportHtmlResult, "export_html", params)).path

    async def send_custom_message(
        self,
        custom_type: str,
        content: str | list[JsonDict],
        *,
        display: bool = True,
        details: Any = None,
        trigger_turn: bool = False,
    ) -> str | None:
        result = await self.call(
            "send_custom_message",
            {
                "customType": custom_type,
                "content": content,
                "display": display,
                "details": details,
                "triggerTurn": trigger_turn,
            },
        )
        return result.get("entryId") if isinstance(result, dict) else None

    async def append_custom_entry(self, custom_type: str, data: Any = None) -> str | None:
        result = await self.call("append_custom_entry", {"customType": custom_type, "data": data})
        return result.get("entryId") if isinstance(result, dict) else None

    async def mcp_servers(self) -> m.McpServersResult:
        return await self._typed(m.McpServersResult, "mcp_servers")

    async def mcp_restart(self, name: str | None = None) -> m.McpServersResult:
        return await self._typed(m.McpServersResult, "mcp_restart", {"name": name} if name else None)

    async def shutdown(self) -> None:
        await self.call("shutdown")
