"""The host's side of the conversation: approvals, hooks and client tools the server asks for."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.abc

from rpc_agent_client._connection import Connection, Handler, JsonDict


class HostConnection(Connection):
    """A connection that answers the server's approval, hook and tool requests."""

    def __init__(self, process: anyio.abc.Process) -> None:
        super().__init__(process)
        self._tools: list[JsonDict] = []
        self._tool_functions: dict[str, Callable[..., Any]] = {}

    def on_approval(self, callback: Callable[[JsonDict], Awaitable[Any] | Any]) -> None:
        """``callback(params)`` answers approval/request: "allow", "allow_always", "deny", or a
        dict ``{"decision": ..., "message": ...}``. Declared by the next ``initialize``."""

        self._handlers["approval/request"] = _answering("decision", callback)

    def on_elicitation(self, callback: Callable[[JsonDict], Awaitable[Any] | Any]) -> None:
        """``callback(params)`` answers elicitation/request, an MCP server asking the user for
        input (params: server, mode "form" with requestedSchema or "url" with url, message): a
        dict ``{"action": "accept", "content": {...}}``, or "decline" / "cancel". Declared by the
        next ``initialize``; without it the servers' questions are declined."""

        self._handlers["elicitation/request"] = _answering("action", callback)

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
        if "elicitation/request" in self._handlers:
            caps["elicitation"] = True
        if self._tools:
            caps["tools"] = list(self._tools)
        return caps

    async def set_client_tools(self) -> JsonDict:
        """Send the current tool list (after ``add_tool`` calls made after initialize)."""
        result: JsonDict = await self.call("set_client_tools", {"tools": list(self._tools)})
        return result


def _answering(key: str, callback: Callable[[JsonDict], Awaitable[Any] | Any]) -> Handler:
    """A request handler answering with what ``callback`` returns (awaited if it must be): a
    string is the answer's ``key``, a dict the whole answer."""

    async def handle(params: JsonDict) -> JsonDict:
        answer = callback(params)
        if inspect.isawaitable(answer):
            answer = await answer
        return {key: answer} if isinstance(answer, str) else dict(answer)

    return handle
