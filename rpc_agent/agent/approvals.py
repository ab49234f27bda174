"""The gate before a tool runs: the policy decides, and asks the host only when it must."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from rpc_agent.agent.host import Host
from rpc_agent.agent.policy import ApprovalPolicy, preview
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.host import ApprovalRequestParams
from rpc_agent.tools.base import Tool, ToolError


class ApprovalGate:
    def __init__(
        self,
        policy: ApprovalPolicy,
        host: Callable[[], Host],
        emit: Callable[[BaseModel], None],
        cwd: Callable[[], Path],
    ) -> None:
        self.policy = policy
        self._host = host
        self._emit = emit
        self._cwd = cwd

    async def check(self, tool: Tool, call_id: str, arguments: JsonDict) -> None:
        """Return when the call may run; raise ToolError (what the model reads) when not."""
        cwd = self._cwd()
        decision = self.policy.decide(tool, arguments, cwd)
        if decision.verdict != "ask":
            if decision.source == "policy":
                return  # nothing was in question: no event for every read
            self._announce(call_id, tool.name, decision.verdict, decision.source, decision.reason)
            if decision.verdict == "deny":
                raise ToolError(f"The {tool.name} call did not run: {decision.reason}.")
            return
        host = self._host()
        answer = None
        if host.capabilities.approvals:
            answer = await host.request_approval(
                ApprovalRequestParams(
                    toolCallId=call_id,
                    toolName=tool.name,
                    arguments=arguments,
                    preview=preview(tool.name, arguments, cwd),
                )
            )
        if answer is None or not host.capabilities.approvals:
            reason = (
                f"{decision.reason} and no client answered the approval request"
                if host.capabilities.approvals
                else f"{decision.reason} and there is no client to ask"
            )
            self._announce(call_id, tool.name, "deny", "no_answer", reason)
            raise ToolError(f"The {tool.name} call was not approved; it did not run ({reason}).")
        if answer.decision == "deny":
            self._announce(call_id, tool.name, "deny", "client", answer.message)
            text = f"The user denied the {tool.name} call; it did not run."
            raise ToolError(f"{text} {answer.message}" if answer.message else text)
        if answer.decision == "allow_always":
            self.policy.always_allowed.add(tool.name)
        self._announce(call_id, tool.name, "allow", "client", answer.message or answer.decision)

    def _announce(self, call_id: str, name: str, decision: str, source: str, reason: str | None) -> None:
        self._emit(
            ev.ApprovalEvent.model_validate(
                {
                    "toolCallId": call_id,
                    "toolName": name,
                    "decision": decision,
                    "source": source,
                    "reason": reason,
                }
            )
        )
