"""Params and results of every method."""

from typing import Annotated, Any, Literal

from pydantic import Field

from rpc_agent.protocol.base import Params, Result
from rpc_agent.protocol.checkpoints import RestoreFilesResult
from rpc_agent.protocol.entries import CompactionFields, ImageContent, ThinkingLevel, Usage
from rpc_agent.protocol.host import AcceptedCapabilities, ClientCapabilities
from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.protocol.loose import CheckedAs, Loose
from rpc_agent.protocol.sandbox import SandboxRequest, SandboxState
from rpc_agent.protocol.shapes import EntryDict
from rpc_agent.protocol.state_shapes import McpServerStateDict, ModelDescriptionDict, SandboxStateDict
from rpc_agent.protocol.stats import ContextUsage as ContextUsage
from rpc_agent.protocol.stats import SessionStats as SessionStats
from rpc_agent.protocol.stats import TokenTotals as TokenTotals
from rpc_agent.protocol.stored import StoredMessage
from rpc_agent.protocol.tree_methods import GetTreeParams as GetTreeParams
from rpc_agent.protocol.tree_methods import NavigateTreeParams as NavigateTreeParams
from rpc_agent.protocol.tree_methods import NavigateTreeResult as NavigateTreeResult
from rpc_agent.protocol.tree_methods import SetLabelParams as SetLabelParams
from rpc_agent.protocol.tree_methods import SetLabelResult as SetLabelResult
from rpc_agent.protocol.tree_methods import TreeColumns as TreeColumns
from rpc_agent.protocol.tree_methods import TreeNode as TreeNode
from rpc_agent.protocol.tree_methods import TreeResult as TreeResult

StreamingBehavior = Literal["steer", "followUp"]
QueueMode = Literal["all", "one-at-a-time"]


# --- handshake and state -------------------------------------------------------------------


class ClientInfo(Params):
    name: str
    version: str | None = None


class NameValue(Params):
    name: str
    value: str


class McpServerStdio(Params):
    """An MCP server run as a subprocess speaking over its stdin/stdout (ACP's shape)."""

    type: Literal["stdio"] | None = None
    name: str = Field(min_length=1)
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: list[NameValue] = Field(default_factory=list)


class McpServerHttp(Params):
    """An MCP server reached over streamable HTTP (ACP's shape)."""

    type: Literal["http"]
    name: str = Field(min_length=1)
    url: str = Field(min_length=1)
    headers: list[NameValue] = Field(default_factory=list)


McpServer = McpServerHttp | McpServerStdio
McpStatus = Literal["starting", "ready", "failed", "stopped"]


class McpServerState(Result):
    name: str
    transport: Literal["stdio", "http", "sse"]
    status: McpStatus
    toolCount: int
    error: str | None = None


class McpServersResult(Result):
    servers: list[McpServerState]


class McpRestartParams(Params):
    name: str | None = Field(default=None, description="the server to restart; all when left out")


class InitializeParams(Params):
    protocolVersion: str | None = None
    clientInfo: ClientInfo | None = None
    capabilities: ClientCapabilities | None = Field(
        default=None,
        description="what the client answers: approvals, hooks (pi's event names), its own tools",
    )
    mcpServers: list[McpServer] | None = Field(
        default=None, description="the client's MCP servers, added to those of the settings files"
    )
    additionalDirectories: list[str] | None = Field(
        default=None,
        description="workspace roots besides the cwd (absolute folders): the model is told of them; "
        "the cwd stays the base of relative paths",
    )
    sandbox: SandboxRequest | None = Field(
        default=None, description="the kernel sandbox of the agent's commands (over the settings files)"
    )


class ServerInfo(Result):
    name: str
    version: str


class ModelDescription(Result):
    id: str
    name: str
    api: str
    provider: str
    reasoning: bool
    input: list[str]
    contextWindow: int
    maxTokens: int
    cost: dict[str, float]


def _sandbox_off() -> SandboxStateDict:
    """A state without a sandbox: the defaults of ``SandboxState`` (tests/test_state_shapes.py)."""
    return {"mode": "off", "network": "allow", "hideCredentials": True, "mechanism": None}


class State(Result):
    sessionId: str
    sessionFile: str | None
    sessionName: str | None
    cwd: str
    leafId: str | None
    model: Annotated[ModelDescriptionDict, CheckedAs(ModelDescription)] | None
    thinkingLevel: ThinkingLevel
    isStreaming: bool
    isCompacting: bool
    autoCompaction: bool
    autoRetry: bool
    steeringMode: QueueMode
    followUpMode: QueueMode
    messageCount: int
    pendingMessageCount: int
    mcpServers: list[Annotated[McpServerStateDict, CheckedAs(McpServerState)]] = Field(default_factory=list)
    sandbox: Annotated[SandboxStateDict, CheckedAs(SandboxState)] = Field(
        default_factory=lambda: _sandbox_off(), description="the sandbox in force"
    )


class Capabilities(Result):
    tree: bool = True
    fork: bool = True
    compaction: bool
    images: bool = True
    providers: list[str]
    errorCodes: dict[str, int]


class InitializeResult(Result):
    protocolVersion: str
    serverInfo: ServerInfo
    capabilities: Capabilities
    methods: list[str]
    state: State
    client: AcceptedCapabilities | None = Field(
        default=None, description="the client capabilities the server accepted (when some were declared)"
    )


# --- prompting -----------------------------------------------------------------------------


class PromptParams(Params):
    message: str
    images: list[ImageContent] | None = None
    streamingBehavior: StreamingBehavior | None = Field(
        default=None, description="required while the agent is streaming: queue as steer or followUp"
    )
    maxTurns: int | None = Field(default=None, ge=1, description="stop this run after N model calls")
    maxBudgetUsd: float | None = Field(default=None, gt=0, description="stop this run once it cost this much")
    outputSchema: Loose[JsonSchema] | None = Field(
        default=None,
        description="a JSON Schema the run's final answer must match: the model answers by calling "
        "a structured_output tool with it as input schema, re-asked a few times when the answer does "
        "not validate; the answer comes back as structuredOutput (an invalid schema is refused)",
    )


class PromptResult(Result):
    queued: bool = Field(description="true when the prompt was queued (streamingBehavior) instead of run")
    stopReason: str | None = Field(
        default=None,
        description="how the run ended: stop, length, error, aborted, max_turns, max_budget, handled, "
        "or invalid_output (an outputSchema run that never produced a matching answer)",
    )
    messages: list[StoredMessage] = Field(default_factory=list, description="messages the run added")
    errorMessage: str | None = None
    structuredOutput: Any = Field(
        default=None, description="with outputSchema: the final answer, valid against the schema"
    )


class QueueParams(Params):
    message: str
    images: list[ImageContent] | None = None


class QueueResult(Result):
    pendingMessageCount: int


class AbortResult(Result):
    aborted: bool = Field(description="false when nothing was running")


class ClearQueueResult(Result):
    """The texts taken off the queues (to put back in the client's editor, say)."""

    steering: list[str]
    followUp: list[str]


# --- reading the conversation ----------------------------------------------------------------


class MessagesResult(Result):
    messages: list[StoredMessage]


class GetEntriesParams(Params):
    since: str | None = Field(default=None, description="entry id cursor: only entries after it")


class EntriesResult(Result):
    entries: list[Loose[EntryDict]] = Field(
        description="raw session entries in file order (see the entry schemas)"
    )
    leafId: str | None


class LastAssistantTextResult(Result):
    text: str | None


# --- sessions ------------------------------------------------------------------------------


class NewSessionParams(Params):
    parentSession: str | None = None
    mcpServers: list[McpServer] | None = Field(
        default=None, description="replace the client's MCP servers for the new session"
    )
    additionalDirectories: list[str] | None = Field(
        default=None,
        description="replace the workspace roots besides the cwd (absolute folders) for the new session",
    )
    sandbox: SandboxRequest | None = Field(default=None, description="the new session's sandbox")


class SwitchSessionParams(Params):
    sessionPath: str
    mcpServers: list[McpServer] | None = Field(
        default=None, description="replace the client's MCP servers for the opened session"
    )


class SessionChangeResult(Result):
    cancelled: bool = False
    sessionId: str
    sessionFile: str | None
    leafId: str | None
    restore: RestoreFilesResult | None = Field(default=None, description="what restoreFiles changed")


class ListSessionsParams(Params):
    all: bool = Field(default=False, description="every working directory, not only this one")
    limit: int | None = Field(
        default=None, ge=1, le=10000, description="at most this many sessions (all of them when absent)"
    )
    cursor: str | None = Field(default=None, description="the nextCursor of the previous page")


class SessionInfoModel(Result):
    path: str
    id: str
    cwd: str
    name: str | None
    parentSession: str | None
    created: str
    modified: str
    messageCount: int
    firstMessage: str


class ListSessionsResult(Result):
    sessions: list[SessionInfoModel]
    nextCursor: str | None = Field(
        default=None, description="pass it as cursor for the next page; null: this page is the last"
    )


class ForkParams(Params):
    entryId: str = Field(description="a user message; the new session ends just before it")
    restoreFiles: bool = Field(default=False, description="make the working directory that message's state")
    force: bool = Field(default=False, description="with restoreFiles: overwrite files someone else changed")


class CloneParams(Params):
    restoreFiles: bool = Field(default=False, description="make the working directory the leaf's state")
    force: bool = Field(default=False, description="with restoreFiles: overwrite files someone else changed")


class ForkResult(SessionChangeResult):
    text: str = Field(description="the user message's text, to edit and resubmit")


class ForkMessage(Result):
    entryId: str
    text: str


class ForkMessagesResult(Result):
    messages: list[ForkMessage]


class SetSessionNameParams(Params):
    name: str


# --- settings ------------------------------------------------------------------------------


class SetModelParams(Params):
    modelId: str
    provider: str | None = None


class CycleModelResult(Result):
    model: ModelDescription
    thinkingLevel: ThinkingLevel


class ModelsResult(Result):
    models: list[ModelDescription]


class SetThinkingLevelParams(Params):
    level: ThinkingLevel


class ThinkingLevelResult(Result):
    level: ThinkingLevel


class ThinkingLevelsResult(Result):
    levels: list[ThinkingLevel] = Field(
        description="the levels the current model takes, lowest first; only off for a model without reasoning"
    )


class CommandSourceInfo(Result):
    """Where a command comes from (pi's SourceInfo)."""

    path: str
    source: str
    scope: Literal["user", "project", "temporary"]
    origin: Literal["top-level", "package"]
    baseDir: str | None = None


class SlashCommand(Result):
    """A command a prompt can run by starting with ``/name`` (pi's RpcSlashCommand)."""

    name: str
    description: str | None = None
    source: Literal["extension", "prompt", "skill"]
    sourceInfo: CommandSourceInfo


class CommandsResult(Result):
    commands: list[SlashCommand]


class SetQueueModeParams(Params):
    mode: QueueMode


class SetEnabledParams(Params):
    enabled: bool


# --- bash, compaction, export --------------------------------------------------------------


class BashParams(Params):
    command: str
    excludeFromContext: bool = False


class BashResult(Result):
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: str | None = None


class CompactParams(Params):
    customInstructions: str | None = None


class CompactResult(CompactionFields, Result):
    estimatedTokensAfter: int | None = Field(
        default=None, description="estimate of the context right after the compaction (not a provider count)"
    )
    usage: Usage | None = Field(
        default=None, description="the summary calls' usage; absent when a hook supplied the summary"
    )


class ExportHtmlParams(Params):
    outputPath: str | None = None


class ExportHtmlResult(Result):
    path: str
