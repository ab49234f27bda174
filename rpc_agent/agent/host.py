"""What the agent may ask of the program that hosts it: approvals, hooks and its own tools.

AgentSession and the turn loop ask through this interface and never learn how the host
answers (the JSON-RPC front sends server-to-client requests; headless mode has nobody to ask).
Every method returns ``None`` when the host gave no usable answer (an error, a timeout, an
abort, a wrong shape): the caller then treats an approval as denied and a hook as "no change",
so a broken host can never break a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, get_args

from pydantic import BaseModel

from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.host import ApprovalRequestParams, ApprovalResult, HookName, ImageBlock, TextBlock
from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.protocol.shapes import BlockDict

HOOK_NAMES: tuple[str, ...] = get_args(HookName)
"""The hook points a host may declare: pi 0.73.1's extension events of the same names."""


@dataclass(slots=True)
class ClientToolSpec:
    """A tool the host implements: offered to the model like a built-in one."""

    name: str
    description: str
    parameters: JsonSchema
    read_only: bool = False


@dataclass(slots=True)
class ClientToolAnswer:
    content: list[BlockDict]
    is_error: bool = False
    details: Any = None


def host_blocks(blocks: Sequence[TextBlock | ImageBlock]) -> list[BlockDict]:
    """A host's text and image blocks (a tool's result, a hook's content) as a message holds them."""
    return [
        {"type": "text", "text": block.text}
        if isinstance(block, TextBlock)
        else {"type": "image", "data": block.data, "mimeType": block.mimeType}
        for block in blocks
    ]


@dataclass(slots=True)
class HostCapabilities:
    """What the host declared it can do (the server's accepted set)."""

    approvals: bool = False
    hooks: set[str] = field(default_factory=set)
    tools: list[ClientToolSpec] = field(default_factory=list)
    elicitation: bool = False
    """The host answers MCP servers' questions for the user (``elicitation/request``)."""


class Host(Protocol):
    """The agent's side of the host: each front implements it."""

    capabilities: HostCapabilities

    async def request_approval(self, question: ApprovalRequestParams) -> ApprovalResult | None:
        """The host's decision, or None when it gave none (treated as a denial). The question
        is the protocol's ``approval/request`` (``sandbox`` "escape" asks to run a command the
        sandbox refused once outside it), so that a front that sends it has nothing to convert."""
        ...

    async def run_hook(self, name: str, event: Mapping[str, Any]) -> BaseModel | None:
        """The hook's result, validated as pi's result object of that hook; None: no change."""
        ...

    async def call_client_tool(self, tool_call_id: str, name: str, arguments: JsonDict) -> ClientToolAnswer:
        """Run a host tool; a failure comes back as an error answer, never an exception."""
        ...


class NoHost:
    """Nobody to ask (headless mode, or a client that declared nothing)."""

    def __init__(self) -> None:
        self.capabilities = HostCapabilities()

    async def request_approval(self, question: ApprovalRequestParams) -> ApprovalResult | None:
        return ApprovalResult(decision="deny", message="no client is connected to approve this tool call")

    async def run_hook(self, name: str, event: Mapping[str, Any]) -> BaseModel | None:
        return None

    async def call_client_tool(self, tool_call_id: str, name: str, arguments: JsonDict) -> ClientToolAnswer:
        return ClientToolAnswer([{"type": "text", "text": f"no client provides the tool {name}"}], True)
