"""The JSON-RPC front's Host: the agent's questions become server-to-client requests.

Each kind of request has its own timeout (an approval waits for a person, a hook for a
program). When the answer does not come in time, or the run is aborted while waiting, the
server sends ``$/cancelRequest {id}`` and goes on without it; an error answer or a result of
the wrong shape is treated the same way. Every such case is told in a ``host_request_failed``
event, and none of them raises into the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import anyio
from pydantic import BaseModel, ValidationError

from rpc_agent.agent.host import (
    ClientToolAnswer,
    HostCapabilities,
    host_blocks,
)
from rpc_agent.mcp.elicitation import DECLINE, ElicitationAnswer
from rpc_agent.protocol import events as ev
from rpc_agent.protocol import host as h
from rpc_agent.protocol.base import JsonDict
from rpc_agent.server.errors import ConnectionClosedError, RpcError
from rpc_agent.server.router import Router
from rpc_agent.validation import describe

logger = logging.getLogger(__name__)
Fallback = Literal["denied", "no_change", "tool_error", "declined"]
AnswerT = TypeVar("AnswerT", bound=BaseModel)


@dataclass(slots=True)
class HostTimeouts:
    approval: float = 300.0
    hook: float = 30.0
    tool: float = 600.0


class _NoAnswer(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class JsonRpcHost:
    def __init__(
        self, router: Router, emit: Callable[[BaseModel], None], timeouts: HostTimeouts | None = None
    ) -> None:
        self.router = router
        self.emit = emit
        self.timeouts = timeouts or HostTimeouts()
        self.capabilities = HostCapabilities()

    async def _ask(
        self,
        method: str,
        params: Mapping[str, Any] | BaseModel,
        model: type[AnswerT],
        limit: float,
        fallback: Fallback,
    ) -> AnswerT | None:
        """The client's answer as ``model``, or None after telling why there was none."""
        if isinstance(params, BaseModel):
            params = params.model_dump(mode="json", exclude_none=True)
        sent: list[int] = []
        try:
            try:
                with anyio.fail_after(limit):
                    raw = await self.router.request(method, params, on_sent=sent.append)
            except TimeoutError:
                self._cancel_request(sent)
                raise _NoAnswer("timeout", f"no answer to {method} within {limit:g} s") from None
            except anyio.get_cancelled_exc_class():
                self._cancel_request(sent)
                self._failed(method, sent, "aborted", f"{method} was given up: the run was aborted", fallback)
                raise
            except RpcError as exc:
                raise _NoAnswer(
                    "error", f"the client answered {method} with an error: {exc.message}"
                ) from None
            except ConnectionClosedError as exc:
                raise _NoAnswer("closed", str(exc)) from None
            if raw is None and fallback == "no_change":
                return None  # a hook answered null: no change, nothing to report
            try:
                return model.model_validate(raw)
            except ValidationError as exc:
                raise _NoAnswer("invalid_result", f"unusable answer to {method}: {describe(exc)}") from None
        except _NoAnswer as failure:
            self._failed(method, sent, failure.reason, failure.message, fallback)
            return None

    def _cancel_request(self, sent: list[int]) -> None:
        if sent:
            try:
                self.router.notify("$/cancelRequest", {"id": sent[0]})
            except Exception:  # the output is gone: nobody to tell
                logger.debug("could not send $/cancelRequest", exc_info=True)

    def _failed(self, method: str, sent: list[int], reason: str, message: str, fallback: Fallback) -> None:
        self.emit(
            ev.HostRequestFailedEvent.model_validate(
                {
                    "method": method,
                    "requestId": sent[0] if sent else None,
                    "reason": reason,
                    "message": message,
                    "fallback": fallback,
                }
            )
        )

    # --- the Host interface -----------------------------------------------------------------

    async def request_approval(self, question: h.ApprovalRequestParams) -> h.ApprovalResult | None:
        return await self._ask(
            "approval/request", question, h.ApprovalResult, self.timeouts.approval, "denied"
        )

    async def run_hook(self, name: str, event: Mapping[str, Any]) -> BaseModel | None:
        model = h.HOOK_RESULTS.get(name)
        if model is None or name not in self.capabilities.hooks:
            return None
        return await self._ask(f"hook/{name}", event, model, self.timeouts.hook, "no_change")

    async def request_elicitation(self, request: h.ElicitationRequestParams) -> ElicitationAnswer:
        """An MCP server's question for the user, to a client that declared ``elicitation``
        (the session's MCP servers hear ``decline`` otherwise, and when no usable answer came
        within the approval timeout: a person answers it)."""
        if not self.capabilities.elicitation:
            return DECLINE
        answer = await self._ask(
            "elicitation/request", request, h.ElicitationResult, self.timeouts.approval, "declined"
        )
        if answer is None:
            return DECLINE
        return ElicitationAnswer(answer.action, answer.content if answer.action == "accept" else None)

    async def call_client_tool(self, tool_call_id: str, name: str, arguments: JsonDict) -> ClientToolAnswer:
        answer = await self._ask(
            "tool/call",
            {"toolCallId": tool_call_id, "name": name, "arguments": arguments},
            h.ToolCallResult,
            self.timeouts.tool,
            "tool_error",
        )
        if answer is None:
            return ClientToolAnswer(
                [{"type": "text", "text": f"The client gave no usable result for {name}."}], True
            )
        return ClientToolAnswer(host_blocks(answer.content), answer.isError, answer.details)
