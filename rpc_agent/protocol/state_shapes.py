"""``get_state``'s result as the code builds it: typed dicts, not models.

Clients poll ``get_state``; the agent builds its answer in wire shape without a model in
between (see ``AgentSession.state_json``). These TypedDicts give that dict a checked shape;
the models of ``protocol.methods`` (``State``, ``ModelDescription``, ``McpServerState``) and
``protocol.sandbox`` (``SandboxState``) stay the truth the schema is generated from, and a test
holds the two together, key by key and type by type (``tests/test_state_shapes.py``).
"""

from typing import Literal, NotRequired, TypedDict

from rpc_agent.protocol.sandbox import SandboxMode, SandboxNetwork


class ModelDescriptionDict(TypedDict):
    id: str
    name: str
    api: str
    provider: str
    reasoning: bool
    input: list[str]
    contextWindow: int
    maxTokens: int
    cost: dict[str, float]


class McpServerStateDict(TypedDict):
    """One MCP server's state, as ``model_dump(exclude_none=True)`` gives it."""

    name: str
    transport: Literal["stdio", "http", "sse"]
    status: Literal["starting", "ready", "failed", "stopped"]
    toolCount: int
    error: NotRequired[str]


class SandboxStateDict(TypedDict):
    mode: SandboxMode
    network: SandboxNetwork
    hideCredentials: bool
    mechanism: Literal["bubblewrap"] | None


class StateDict(TypedDict):
    sessionId: str
    sessionFile: str | None
    sessionName: str | None
    cwd: str
    leafId: str | None
    model: ModelDescriptionDict | None
    thinkingLevel: str
    isStreaming: bool
    isCompacting: bool
    autoCompaction: bool
    autoRetry: bool
    steeringMode: str
    followUpMode: str
    messageCount: int
    pendingMessageCount: int
    mcpServers: list[McpServerStateDict]
    sandbox: SandboxStateDict
