"""The methods through which the client takes part: its capabilities, tools and entries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpc_agent.agent.client_tools import check_schema, make_client_tool
from rpc_agent.agent.host import HOOK_NAMES, ClientToolSpec, Host
from rpc_agent.errors import InvalidRequestError, NotAvailableError
from rpc_agent.protocol import host as h

if TYPE_CHECKING:
    from rpc_agent.agent.agent_session import AgentSession


def _tool_specs(agent: AgentSession, tools: list[h.ClientTool], rejected: list[str]) -> list[ClientToolSpec]:
    if not tools:
        # Nothing to check against the built-in tools' names: a client declaring approvals or
        # hooks only (most do, in initialize) leaves the tools unbuilt until the first run.
        return []
    builtin = {t.name for t in agent.tools}
    accepted: list[ClientToolSpec] = []
    for tool in tools:
        if tool.name in builtin or any(t.name == tool.name for t in accepted):
            rejected.append(f"tool {tool.name}: the name is already taken")
            continue
        problem = check_schema(tool.parameters)
        if problem is not None:
            rejected.append(f"tool {tool.name}: invalid JSON Schema: {problem}")
            continue
        accepted.append(ClientToolSpec(tool.name, tool.description, tool.parameters, tool.readOnly))
    return accepted


def configure(agent: AgentSession, bridge: Host, declared: h.ClientCapabilities) -> h.AcceptedCapabilities:
    """Take what the client declared; the approval policy defaults to ``writes`` with approvals."""
    rejected: list[str] = []
    hooks = []
    for name in declared.hooks or []:
        if name in HOOK_NAMES:
            hooks.append(name)
        else:
            rejected.append(f"hook {name}: unknown (known: {', '.join(HOOK_NAMES)})")
    specs = _tool_specs(agent, declared.tools or [], rejected)
    caps = bridge.capabilities
    caps.approvals = bool(declared.approvals)
    caps.hooks = set(hooks)
    caps.tools = specs
    caps.elicitation = bool(declared.elicitation)
    if agent.settings.approval is None:
        agent.policy.mode = "writes" if caps.approvals else "never"
    agent.client_tools = [make_client_tool(spec, bridge) for spec in specs]
    return h.AcceptedCapabilities(
        approvals=caps.approvals,
        approvalPolicy=agent.policy.mode,
        hooks=hooks,
        tools=[spec.name for spec in specs],
        elicitation=caps.elicitation,
        rejected=rejected,
    )


def set_client_tools(
    agent: AgentSession, host: Host | None, p: h.SetClientToolsParams
) -> h.SetClientToolsResult:
    rejected: list[str] = []
    specs = _tool_specs(agent, p.tools, rejected)
    if rejected:
        raise InvalidRequestError("; ".join(rejected))
    if host is None:
        raise NotAvailableError("this front has no client host (client tools are a JSON-RPC feature)")
    host.capabilities.tools = specs
    agent.client_tools = [make_client_tool(spec, host) for spec in specs]
    return h.SetClientToolsResult(tools=[spec.name for spec in specs])


__all__ = ["configure", "set_client_tools"]
