"""The wire types of rpc-agent, generated from protocol/schema.json: do not edit.

Regenerate with ``python clients/python/scripts/generate_types.py``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypeAliasType


class OpenModel(BaseModel):
    model_config = ConfigDict(
        extra='allow',
    )


class ClosedModel(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )


class LaxModel(BaseModel):
    pass


class AbortResult(OpenModel):
    aborted: Annotated[bool, Field(description='false when nothing was running')]


class AcceptedCapabilities(OpenModel):
    approvalPolicy: Literal['never', 'writes', 'all']
    approvals: bool
    elicitation: Annotated[
        bool, Field(description="MCP servers' questions go to the client")
    ] = False
    hooks: list[str]
    rejected: Annotated[
        list[str] | None,
        Field(description='declared items the server did not accept, and why'),
    ] = None
    tools: list[str]


class AgentSettledEvent(ClosedModel):
    aborted: Annotated[bool, Field(description='the run ended because it was aborted')]
    type: Literal['agent_settled'] = 'agent_settled'


class AgentStartEvent(ClosedModel):
    type: Literal['agent_start'] = 'agent_start'


class AppendCustomEntryParams(ClosedModel):
    customType: str
    data: Any = None


class ApprovalEvent(ClosedModel):
    decision: Literal['allow', 'deny']
    reason: str | None = None
    source: Literal['policy', 'rule', 'session', 'client', 'no_answer']
    toolCallId: str
    toolName: str
    type: Literal['approval'] = 'approval'


class ApprovalRequestParams(OpenModel):
    arguments: dict[str, Any]
    preview: Annotated[
        dict[str, Any] | None,
        Field(
            description='edit/write: {path, diff} (nothing is written yet); bash: {command, cwd}'
        ),
    ] = None
    sandbox: Annotated[
        Literal['escape'] | None,
        Field(
            description='"escape": the sandbox refused this bash command; allow runs it once outside the sandbox'
        ),
    ] = None
    toolCallId: str
    toolName: str


class ApprovalResult(LaxModel):
    decision: Literal['allow', 'allow_always', 'deny']
    message: str | None = None


class AssistantMessageDelta(ClosedModel):
    content: str | None = None
    contentIndex: int | None = None
    delta: str | None = None
    id: Annotated[
        str | None, Field(description="toolcall_start: the tool call's id")
    ] = None
    reason: str | None = None
    toolCall: dict[str, Any] | None = None
    toolName: Annotated[
        str | None, Field(description="toolcall_start: the tool's name")
    ] = None
    type: Literal['start', 'text_start', 'text_delta', 'text_end', 'thinking_start', 'thinking_delta', 'thinking_end', 'toolcall_start', 'toolcall_delta', 'toolcall_end', 'done', 'error']


class AutoRetryEndEvent(ClosedModel):
    attempt: int
    finalError: str | None = None
    success: bool
    type: Literal['auto_retry_end'] = 'auto_retry_end'


class AutoRetryStartEvent(ClosedModel):
    attempt: int
    delayMs: int
    errorMessage: str
    maxAttempts: int
    type: Literal['auto_retry_start'] = 'auto_retry_start'


class BashExecutionMessage(OpenModel):
    cancelled: bool = False
    command: str
    excludeFromContext: bool | None = None
    exitCode: int | None = None
    fullOutputPath: str | None = None
    output: str
    role: Literal['bashExecution'] = 'bashExecution'
    timestamp: int
    truncated: bool = False


class BashExecutionUpdateEvent(ClosedModel):
    delta: str
    id: Annotated[
        str | int | float | None, Field(description='the id of the bash request')
    ] = None
    type: Literal['bash_execution_update'] = 'bash_execution_update'


class BashParams(ClosedModel):
    command: str
    excludeFromContext: bool = False


class BashResult(OpenModel):
    cancelled: bool
    exitCode: int | None
    fullOutputPath: str | None = None
    output: str
    truncated: bool


class BranchSummaryMessage(OpenModel):
    fromId: str | None
    role: Literal['branchSummary'] = 'branchSummary'
    summary: str
    timestamp: int


class CancelRequestParams(OpenModel):
    id: int


class Capabilities(OpenModel):
    compaction: bool
    errorCodes: dict[str, int]
    fork: bool = True
    images: bool = True
    providers: list[str]
    tree: bool = True


class CheckpointFailedEvent(ClosedModel):
    entryId: str | None = None
    error: str
    type: Literal['checkpoint_failed'] = 'checkpoint_failed'


class CheckpointSkippedEvent(ClosedModel):
    reason: str
    type: Literal['checkpoint_skipped'] = 'checkpoint_skipped'


class ClearQueueResult(OpenModel):
    followUp: list[str]
    steering: list[str]


class ClientInfo(ClosedModel):
    name: str
    version: str | None = None


class ClientTool(ClosedModel):
    description: str = ''
    name: Annotated[str, Field(pattern='^[A-Za-z0-9_-]{1,64}$')]
    parameters: Annotated[
        dict[str, Any] | None,
        Field(
            description='JSON Schema of the arguments; calls are validated against it before the client sees them'
        ),
    ] = None
    readOnly: Annotated[
        bool,
        Field(
            description="true: the tool changes nothing (the 'writes' approval policy does not ask)"
        ),
    ] = False


class CloneParams(ClosedModel):
    force: Annotated[
        bool,
        Field(description='with restoreFiles: overwrite files someone else changed'),
    ] = False
    restoreFiles: Annotated[
        bool, Field(description="make the working directory the leaf's state")
    ] = False


class CommandSourceInfo(OpenModel):
    baseDir: str | None = None
    origin: Literal['top-level', 'package']
    path: str
    scope: Literal['user', 'project', 'temporary']
    source: str


class CompactParams(ClosedModel):
    customInstructions: str | None = None


class CompactionHookResult(LaxModel):
    details: Any = None
    firstKeptEntryId: str
    summary: str
    tokensBefore: int


class CompactionStartEvent(ClosedModel):
    reason: Literal['manual', 'threshold', 'overflow']
    type: Literal['compaction_start'] = 'compaction_start'


class CompactionSummaryMessage(OpenModel):
    role: Literal['compactionSummary'] = 'compactionSummary'
    summary: str
    timestamp: int
    tokensBefore: Annotated[
        int | None, Field(description='absent when the compaction entry has none')
    ] = None


class ContextUsage(OpenModel):
    contextWindow: int
    percent: float | None
    tokens: Annotated[
        int | None,
        Field(
            description="the last answer's reported size plus an estimate of what follows it (all of it estimated after a later context edit); null after a compaction until an answer came back"
        ),
    ]


class Cost(OpenModel):
    cacheRead: float = 0
    cacheWrite: float = 0
    input: float = 0
    output: float = 0
    total: float = 0
    totalFromProvider: Annotated[
        bool | None,
        Field(
            description='pi 1.5: the total is what the provider billed, not an estimate'
        ),
    ] = None


class DeleteSessionParams(ClosedModel):
    sessionPath: Annotated[
        str, Field(description="a session file in this agent's session folders")
    ]


class DeleteSessionResult(OpenModel):
    blobsRemoved: Annotated[
        int, Field(description='stored images no other session used')
    ]
    path: str
    sessionId: str


class ElicitationRequestParams(OpenModel):
    elicitationId: Annotated[
        str | None, Field(description="url: the server's id of this request")
    ] = None
    message: str
    mode: Literal['form', 'url']
    requestedSchema: Annotated[
        dict[str, Any] | None,
        Field(description='form: a flat JSON Schema object of primitive properties'),
    ] = None
    server: Annotated[str, Field(description='the MCP server that asks')]
    toolCallId: Annotated[
        str | None, Field(description='the tool call during which the server asked')
    ] = None
    url: Annotated[
        str | None,
        Field(description="url: where the user goes, outside the agent's sight"),
    ] = None


class ElicitationResult(LaxModel):
    action: Literal['accept', 'decline', 'cancel']
    content: Annotated[
        dict[str, str | int | float | bool | list[str] | None] | None,
        Field(description='accept in form mode: the values, as the schema asks'),
    ] = None


class EntriesResult(OpenModel):
    entries: Annotated[
        list[dict[str, Any]],
        Field(description='raw session entries in file order (see the entry schemas)'),
    ]
    leafId: str | None


class EntryAppendedEvent(ClosedModel):
    entry: dict[str, Any]
    type: Literal['entry_appended'] = 'entry_appended'


class EntryIdResult(OpenModel):
    entryId: str | None


class ExportHtmlParams(ClosedModel):
    outputPath: str | None = None


class ExportHtmlResult(OpenModel):
    path: str


class FileChange(OpenModel):
    path: str
    status: Literal['added', 'modified', 'deleted']


class FileDiff(OpenModel):
    binary: bool = False
    diff: Annotated[
        str, Field(description="unified diff (git's format); empty for a binary file")
    ]
    path: str
    status: Literal['added', 'modified', 'deleted']
    truncated: Annotated[bool, Field(description='the diff was cut at 256 KiB')] = False


class ForkMessage(OpenModel):
    entryId: str
    text: str


class ForkMessagesResult(OpenModel):
    messages: list[ForkMessage]


class ForkParams(ClosedModel):
    entryId: Annotated[
        str, Field(description='a user message; the new session ends just before it')
    ]
    force: Annotated[
        bool,
        Field(description='with restoreFiles: overwrite files someone else changed'),
    ] = False
    restoreFiles: Annotated[
        bool, Field(description="make the working directory that message's state")
    ] = False


class GetEntriesParams(ClosedModel):
    since: Annotated[
        str | None, Field(description='entry id cursor: only entries after it')
    ] = None


class GetFileChangesParams(ClosedModel):
    entryId: str
    since: Annotated[
        str | None,
        Field(
            description="compare with this entry's state (default: the entry's parent)"
        ),
    ] = None


class GetTreeParams(ClosedModel):
    filter: Annotated[
        Literal['default', 'no-custom', 'user-only', 'labeled-only'],
        Field(
            description='default: every node; no-custom: without extension entries (custom, custom_message); user-only: user messages; labeled-only: nodes with a label. Kept nodes keep their depth and parentId.'
        ),
    ] = 'default'
    format: Annotated[
        Literal['nodes', 'columns'],
        Field(
            description='nodes: one object per node in nodes; columns: the same nodes in columns (nodes is then empty), the compact shape for a big tree'
        ),
    ] = 'nodes'
    maxDepth: Annotated[
        int | None,
        Field(
            description='only nodes at most this many levels below rootId (or the roots)',
            ge=0,
        ),
    ] = None
    rootId: Annotated[
        str | None, Field(description='only this entry and what hangs under it')
    ] = None
    since: Annotated[
        int | None,
        Field(
            description='a cursor from an earlier result: only nodes added or relabelled since, and their parents (whose childCount changed), in file order',
            ge=0,
        ),
    ] = None


class HookCustomMessage(LaxModel):
    content: str | list[dict[str, Any]]
    customType: str
    details: Any = None
    display: bool = True


class HookEvent(OpenModel):
    type: Literal['session_before_tree', 'session_before_compact', 'session_before_switch', 'session_before_fork', 'tool_call', 'tool_result', 'before_agent_start', 'context', 'input']


class HostRequestFailedEvent(ClosedModel):
    fallback: Literal['denied', 'no_change', 'tool_error', 'declined']
    message: str
    method: str
    reason: Literal['timeout', 'aborted', 'error', 'invalid_result', 'closed']
    requestId: int | None = None
    type: Literal['host_request_failed'] = 'host_request_failed'


class ImageBlock(LaxModel):
    data: str
    mimeType: str
    type: Literal['image']


class ImageContent(OpenModel):
    data: Annotated[
        str,
        Field(
            description="base64 data, or a blob reference 'blob:sha256:<hex>' on disk"
        ),
    ]
    mimeType: str
    type: Literal['image'] = 'image'


class InputHandledEvent(ClosedModel):
    text: str
    type: Literal['input_handled'] = 'input_handled'


class InputResult(LaxModel):
    action: Literal['continue', 'transform', 'handled'] = 'continue'
    images: list[dict[str, Any]] | None = None
    text: str | None = None


class LastAssistantTextResult(OpenModel):
    text: str | None


class ListSessionsParams(ClosedModel):
    all: Annotated[
        bool, Field(description='every working directory, not only this one')
    ] = False
    cursor: Annotated[
        str | None, Field(description='the nextCursor of the previous page')
    ] = None
    limit: Annotated[
        int | None,
        Field(
            description='at most this many sessions (all of them when absent)',
            ge=1,
            le=10000,
        ),
    ] = None


class McpRestartParams(ClosedModel):
    name: Annotated[
        str | None, Field(description='the server to restart; all when left out')
    ] = None


class McpServerState(OpenModel):
    error: str | None = None
    name: str
    status: Literal['starting', 'ready', 'failed', 'stopped']
    toolCount: int
    transport: Literal['stdio', 'http', 'sse']


class McpServerStatusEvent(ClosedModel):
    error: str | None = None
    name: str
    status: Literal['starting', 'ready', 'failed', 'stopped']
    toolCount: int
    transport: Literal['stdio', 'http', 'sse']
    type: Literal['mcp_server_status'] = 'mcp_server_status'


class McpServersResult(OpenModel):
    servers: list[McpServerState]


class ModelDescription(OpenModel):
    api: str
    contextWindow: int
    cost: dict[str, float]
    id: str
    input: list[str]
    maxTokens: int
    name: str
    provider: str
    reasoning: bool


class ModelsResult(OpenModel):
    models: list[ModelDescription]


class NameValue(ClosedModel):
    name: str
    value: str


class NavigateTreeParams(ClosedModel):
    customInstructions: str | None = None
    force: Annotated[
        bool,
        Field(description='with restoreFiles: overwrite files someone else changed'),
    ] = False
    label: str | None = None
    replaceInstructions: bool = False
    restoreFiles: Annotated[
        bool, Field(description="make the working directory the target's state")
    ] = False
    summarize: bool = False
    targetId: str


class Ok(OpenModel):
    pass


class PromptParams(ClosedModel):
    images: list[ImageContent] | None = None
    maxBudgetUsd: Annotated[
        float | None, Field(description='stop this run once it cost this much', gt=0.0)
    ] = None
    maxTurns: Annotated[
        int | None, Field(description='stop this run after N model calls', ge=1)
    ] = None
    message: str
    outputSchema: Annotated[
        dict[str, Any] | None,
        Field(
            description="a JSON Schema the run's final answer must match: the model answers by calling a structured_output tool with it as input schema, re-asked a few times when the answer does not validate; the answer comes back as structuredOutput (an invalid schema is refused)"
        ),
    ] = None
    streamingBehavior: Annotated[
        Literal['steer', 'followUp'] | None,
        Field(
            description='required while the agent is streaming: queue as steer or followUp'
        ),
    ] = None


class QueueParams(ClosedModel):
    images: list[ImageContent] | None = None
    message: str


class QueueResult(OpenModel):
    pendingMessageCount: int


class QueueUpdateEvent(ClosedModel):
    followUp: list[str]
    steering: list[str]
    type: Literal['queue_update'] = 'queue_update'


class RestoreFilesParams(ClosedModel):
    checkpointId: Annotated[
        str | None,
        Field(
            description='a state returned by an earlier restore (undoes that restore)'
        ),
    ] = None
    dryRun: Annotated[
        bool, Field(description='report what would change; write nothing')
    ] = False
    entryId: Annotated[
        str | None,
        Field(
            description='the entry whose state to restore (one of entryId or checkpointId)'
        ),
    ] = None
    force: Annotated[
        bool,
        Field(
            description='overwrite files someone else changed since the last checkpoint'
        ),
    ] = False
    paths: Annotated[
        list[str] | None, Field(description='only these files (default: all)')
    ] = None


class SandboxRequest(ClosedModel):
    mode: Annotated[
        Literal['off', 'read-only', 'workspace-write'] | None,
        Field(
            description="off: the user's rights; read-only: write only an own temp folder; workspace-write: also the cwd and the additional directories"
        ),
    ] = None
    network: Annotated[
        Literal['allow', 'deny'] | None,
        Field(
            description='deny: no network for commands (the default once a mode is on)'
        ),
    ] = None


class SandboxState(OpenModel):
    hideCredentials: Annotated[
        bool,
        Field(
            description='~/.ssh, ~/.aws, ~/.config/gcloud, ~/.netrc hidden ($RPC_AGENT_HOME always)'
        ),
    ] = True
    mechanism: Annotated[
        Literal['bubblewrap'] | None, Field(description='what enforces it (None: off)')
    ] = None
    mode: Literal['off', 'read-only', 'workspace-write'] = 'off'
    network: Literal['allow', 'deny'] = 'allow'


class SearchSessionsParams(ClosedModel):
    all: Annotated[
        bool, Field(description='every working directory, not only this one')
    ] = False
    cursor: Annotated[
        str | None, Field(description='the nextCursor of the previous page')
    ] = None
    limit: Annotated[
        int, Field(description='at most this many sessions', ge=1, le=1000)
    ] = 50
    query: Annotated[
        str,
        Field(
            description="case-insensitive text to find in user and assistant message text, the session's name and its entries' labels",
            min_length=1,
        ),
    ]


class SendCustomMessageParams(ClosedModel):
    content: str | list[dict[str, Any]]
    customType: str
    details: Any = None
    display: bool = True
    triggerTurn: Annotated[
        bool, Field(description='start a run with it when the agent is idle')
    ] = False


class ServerInfo(OpenModel):
    name: str
    version: str


class SessionBeforeCompactResult(LaxModel):
    cancel: bool | None = None
    compaction: CompactionHookResult | None = None


class SessionBeforeForkResult(LaxModel):
    cancel: bool | None = None
    skipConversationRestore: bool | None = None


class SessionBeforeSwitchResult(LaxModel):
    cancel: bool | None = None


class SessionChangedEvent(ClosedModel):
    leafId: str | None
    reason: Literal['new', 'switch', 'fork', 'clone', 'navigate']
    sessionFile: str | None
    sessionId: str
    type: Literal['session_changed'] = 'session_changed'


class SessionCompactEvent(ClosedModel):
    compactionEntry: dict[str, Any]
    fromExtension: bool
    type: Literal['session_compact'] = 'session_compact'


class SessionHeader(OpenModel):
    cwd: str = ''
    id: str
    parentSession: str | None = None
    timestamp: str
    type: Literal['session'] = 'session'
    version: Annotated[int | None, Field(description='absent in v1 files')] = None


class SessionInfoChangedEvent(ClosedModel):
    name: Annotated[
        str | None, Field(description='absent when the name was cleared')
    ] = None
    type: Literal['session_info_changed'] = 'session_info_changed'


class SessionInfoModel(OpenModel):
    created: str
    cwd: str
    firstMessage: str
    id: str
    messageCount: int
    modified: str
    name: str | None
    parentSession: str | None
    path: str


class SessionSearchHit(OpenModel):
    entryIds: Annotated[
        list[str],
        Field(
            description='matching messages, and entries whose label matches, in file order (at most 100)'
        ),
    ]
    moreMatches: Annotated[
        bool,
        Field(description='the session matches in more entries than entryIds lists'),
    ]
    nameMatched: Annotated[bool, Field(description="the session's name matches")]
    session: SessionInfoModel
    snippet: Annotated[
        str, Field(description='one line of text around the first match')
    ]


class SessionTreeEvent(ClosedModel):
    fromExtension: bool | None = None
    newLeafId: str | None
    oldLeafId: str | None
    summaryEntry: dict[str, Any] | None = None
    type: Literal['session_tree'] = 'session_tree'


class SetClientToolsParams(ClosedModel):
    tools: list[ClientTool]


class SetClientToolsResult(OpenModel):
    tools: list[str]


class SetEnabledParams(ClosedModel):
    enabled: bool


class SetLabelParams(ClosedModel):
    entryId: str
    label: str | None


class SetLabelResult(OpenModel):
    labelEntryId: str


class SetModelParams(ClosedModel):
    modelId: str
    provider: str | None = None


class SetQueueModeParams(ClosedModel):
    mode: Literal['all', 'one-at-a-time']


class SetSessionNameParams(ClosedModel):
    name: str


class SetThinkingLevelParams(ClosedModel):
    level: Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']


class SkippedFile(OpenModel):
    path: str
    reason: str


class SlashCommand(OpenModel):
    description: str | None = None
    name: str
    source: Literal['extension', 'prompt', 'skill']
    sourceInfo: CommandSourceInfo


class State(OpenModel):
    autoCompaction: bool
    autoRetry: bool
    cwd: str
    followUpMode: Literal['all', 'one-at-a-time']
    isCompacting: bool
    isStreaming: bool
    leafId: str | None
    mcpServers: list[McpServerState] | None = None
    messageCount: int
    model: ModelDescription | None
    pendingMessageCount: int
    sandbox: Annotated[
        SandboxState | None, Field(description='the sandbox in force')
    ] = None
    sessionFile: str | None
    sessionId: str
    sessionName: str | None
    steeringMode: Literal['all', 'one-at-a-time']
    thinkingLevel: Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']


class SummarizationRetryAttemptStartEvent(ClosedModel):
    reason: Annotated[
        Literal['manual', 'threshold', 'overflow'] | None,
        Field(description="a compaction's reason"),
    ] = None
    source: Literal['compaction', 'branchSummary']
    type: Literal['summarization_retry_attempt_start'] = (
        'summarization_retry_attempt_start'
    )


class SummarizationRetryFinishedEvent(ClosedModel):
    type: Literal['summarization_retry_finished'] = 'summarization_retry_finished'


class SummarizationRetryScheduledEvent(ClosedModel):
    attempt: int
    delayMs: int
    errorMessage: str
    maxAttempts: int
    type: Literal['summarization_retry_scheduled'] = 'summarization_retry_scheduled'


class TextBlock(LaxModel):
    text: str
    type: Literal['text']


class TextContent(OpenModel):
    text: str
    textSignature: str | None = None
    type: Literal['text'] = 'text'


class ThinkingContent(OpenModel):
    redacted: bool | None = None
    thinking: str
    thinkingSignature: str | None = None
    type: Literal['thinking'] = 'thinking'


class ThinkingLevelChangedEvent(ClosedModel):
    level: Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']
    type: Literal['thinking_level_changed'] = 'thinking_level_changed'


class ThinkingLevelResult(OpenModel):
    level: Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']


class ThinkingLevelsResult(OpenModel):
    levels: Annotated[
        list[Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']],
        Field(
            description='the levels the current model takes, lowest first; only off for a model without reasoning'
        ),
    ]


class TokenTotals(OpenModel):
    cacheRead: int
    cacheWrite: int
    input: int
    output: int
    total: int


class ToolCall(OpenModel):
    arguments: dict[str, Any]
    argumentsError: Annotated[
        str | None,
        Field(
            description="pi 1.5: why the model's arguments text was not a JSON object"
        ),
    ] = None
    id: str
    name: str
    namespace: Annotated[
        str | None, Field(description="pi 1.5: a namespaced tool's namespace")
    ] = None
    thoughtSignature: str | None = None
    type: Literal['toolCall'] = 'toolCall'


class ToolCallHookResult(LaxModel):
    block: bool | None = None
    input: Annotated[
        dict[str, Any] | None,
        Field(
            description="replacement arguments (pi's in-place mutation of event.input)"
        ),
    ] = None
    reason: str | None = None


class ToolCallParams(OpenModel):
    arguments: dict[str, Any]
    name: str
    toolCallId: str


class ToolCallResult(LaxModel):
    content: list[TextBlock | ImageBlock]
    details: Any = None
    isError: bool = False


class ToolDeclaration(OpenModel):
    description: str = ''
    name: str
    parameters: dict[str, Any] | None = None


class ToolExecutionStartEvent(ClosedModel):
    args: dict[str, Any]
    toolCallId: str
    toolName: str
    type: Literal['tool_execution_start'] = 'tool_execution_start'


class ToolReference(OpenModel):
    name: str


class ToolResultHookResult(LaxModel):
    content: list[TextBlock | ImageBlock] | None = None
    details: Any = None
    isError: bool | None = None


class ToolResultPayload(ClosedModel):
    content: list[dict[str, Any]]
    details: Any = None


class TreeColumns(OpenModel):
    childCount: list[int]
    depth: list[int]
    id: list[str]
    label: list[str | None]
    parentId: list[str | None]
    preview: Annotated[
        list[str],
        Field(description="one line of each entry's text, at most 100 characters"),
    ]
    role: list[str | None]
    timestamp: list[str]
    type: list[str]


class TreeNode(OpenModel):
    childCount: int
    depth: int
    id: str
    label: str | None
    parentId: str | None
    preview: Annotated[
        str, Field(description="one line of the entry's text, at most 100 characters")
    ]
    role: str | None
    timestamp: str
    type: str


class TreeResult(OpenModel):
    columns: Annotated[
        TreeColumns | None,
        Field(
            description='with format columns: the nodes, in the same order, as columns'
        ),
    ] = None
    cursor: Annotated[
        int | None,
        Field(description='pass as since to get only what changed after this result'),
    ] = None
    filesChanged: Annotated[
        dict[str, int] | None,
        Field(
            description='entry id -> how many files its checkpoint changed (entries that changed none are left out)'
        ),
    ] = None
    leafId: str | None
    nodes: Annotated[
        list[TreeNode],
        Field(
            description='depth-first, children oldest first; flat, never nested (empty with format columns)'
        ),
    ]


class TreeSummary(LaxModel):
    details: Any = None
    summary: str


class TurnStartEvent(ClosedModel):
    type: Literal['turn_start'] = 'turn_start'


class Usage(OpenModel):
    cacheRead: int = 0
    cacheWrite: int = 0
    cacheWrite1h: Annotated[
        int | None, Field(description='pi 1.5: the part of cacheWrite kept an hour')
    ] = None
    cost: Cost | None = None
    input: int = 0
    output: int = 0
    reasoning: Annotated[
        int | None, Field(description='pi 1.5: thinking tokens, a part of output')
    ] = None
    totalTokens: int = 0


AssistantContent = TypeAliasType(
    "AssistantContent",
    Annotated[
        TextContent | ThinkingContent | ToolCall, Field(discriminator='type')
    ],
)


UserContent = TypeAliasType(
    "UserContent", Annotated[TextContent | ImageContent, Field(discriminator='type')]
)


class EntryBase(OpenModel):
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]


class AssistantMessage(OpenModel):
    api: str = 'anthropic-messages'
    content: list[AssistantContent]
    durationMs: float | None = None
    endTurn: bool | None = None
    errorMessage: str | None = None
    model: str
    provider: str
    providerThinkingLevel: str | None = None
    rawStopReason: str | None = None
    responseId: str | None = None
    responseModel: str | None = None
    role: Literal['assistant'] = 'assistant'
    stopReason: Literal['stop', 'length', 'toolUse', 'error', 'aborted', 'pending', 'deferred'] = (
        'stop'
    )
    thinkingLevel: Annotated[
        Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] | None,
        Field(description='pi 1.5: the thinking level requested for this response'),
    ] = None
    timestamp: int
    usage: Usage | None = None


class BeforeAgentStartResult(LaxModel):
    message: HookCustomMessage | None = None
    systemPrompt: str | None = None


class BranchSummaryEntry(EntryBase):
    details: Any = None
    fromHook: bool | None = None
    fromId: str
    summary: str
    type: Literal['branch_summary'] = 'branch_summary'
    usage: Annotated[
        Usage | None, Field(description="pi 1.5: usage of the summary's model call")
    ] = None


class CheckpointEvent(ClosedModel):
    checkpointId: str
    entryId: str
    filesChanged: Annotated[
        int, Field(description="files that differ from the parent entry's state")
    ]
    skipped: list[SkippedFile] | None = None
    type: Literal['checkpoint'] = 'checkpoint'


class ClientCapabilities(ClosedModel):
    approvals: Annotated[
        bool | None, Field(description='the client answers approval/request')
    ] = None
    elicitation: Annotated[
        bool | None,
        Field(
            description='the client answers elicitation/request (an MCP server asking the user for input)'
        ),
    ] = None
    hooks: Annotated[
        list[str] | None,
        Field(description='hook names the client answers as hook/<name>'),
    ] = None
    tools: Annotated[
        list[ClientTool] | None, Field(description='tools the client runs (tool/call)')
    ] = None


class CommandsResult(OpenModel):
    commands: list[SlashCommand]


class CompactResult(OpenModel):
    details: Any = None
    estimatedTokensAfter: Annotated[
        int | None,
        Field(
            description='estimate of the context right after the compaction (not a provider count)'
        ),
    ] = None
    firstKeptEntryId: str
    summary: str
    tokensBefore: int
    usage: Annotated[
        Usage | None,
        Field(
            description="the summary calls' usage; absent when a hook supplied the summary"
        ),
    ] = None


class CompactionEndEvent(ClosedModel):
    aborted: bool
    errorMessage: str | None = None
    reason: Literal['manual', 'threshold', 'overflow']
    result: CompactResult | None
    type: Literal['compaction_end'] = 'compaction_end'
    willRetry: bool


class ContextReplacement(OpenModel):
    content: str | list[UserContent | ThinkingContent | ToolCall]


class CustomEntry(EntryBase):
    customType: str
    data: Any = None
    type: Literal['custom'] = 'custom'


class CustomMessage(OpenModel):
    content: str | list[UserContent]
    customType: str
    details: Any = None
    display: Annotated[bool | None, Field(description='absent means shown (true)')] = (
        None
    )
    role: Literal['custom'] = 'custom'
    timestamp: int


class CustomMessageEntry(EntryBase):
    content: str | list[UserContent]
    customType: str
    details: Any = None
    display: Annotated[bool | None, Field(description='absent means shown (true)')] = (
        None
    )
    type: Literal['custom_message'] = 'custom_message'


class CycleModelResult(OpenModel):
    model: ModelDescription
    thinkingLevel: Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']


class FileChangesResult(OpenModel):
    entryId: str
    files: list[FileDiff]
    fromCheckpointId: str | None
    toCheckpointId: str


class FilesRestoredEvent(ClosedModel):
    checkpointId: Annotated[str, Field(description='the disk before the restore')]
    entryId: str | None
    files: list[FileChange]
    skipped: list[SkippedFile] | None = None
    type: Literal['files_restored'] = 'files_restored'


class InitializeResult(OpenModel):
    capabilities: Capabilities
    client: Annotated[
        AcceptedCapabilities | None,
        Field(
            description='the client capabilities the server accepted (when some were declared)'
        ),
    ] = None
    methods: list[str]
    protocolVersion: str
    serverInfo: ServerInfo
    state: State


class LabelEntry(EntryBase):
    label: str | None = None
    targetId: str
    type: Literal['label'] = 'label'


class ListSessionsResult(OpenModel):
    nextCursor: Annotated[
        str | None,
        Field(
            description='pass it as cursor for the next page; null: this page is the last'
        ),
    ] = None
    sessions: list[SessionInfoModel]


class McpServerHttp(ClosedModel):
    headers: list[NameValue] | None = None
    name: Annotated[str, Field(min_length=1)]
    type: Literal['http']
    url: Annotated[str, Field(min_length=1)]


class McpServerStdio(ClosedModel):
    args: list[str] | None = None
    command: Annotated[str, Field(min_length=1)]
    env: list[NameValue] | None = None
    name: Annotated[str, Field(min_length=1)]
    type: Literal['stdio'] | None = None


class MessageUpdateEvent(ClosedModel):
    assistantMessageEvent: AssistantMessageDelta
    type: Literal['message_update'] = 'message_update'
    usage: Annotated[
        Usage | None,
        Field(
            description="the answer's usage so far, as the provider last reported it (may stay zero until the end)"
        ),
    ] = None


class ModeChangeEntry(EntryBase):
    data: Any = None
    mode: str = 'none'
    type: Literal['mode_change'] = 'mode_change'


class ModelChangeEntry(EntryBase):
    model: str | None = None
    modelId: str | None = None
    provider: str | None = None
    role: str | None = None
    type: Literal['model_change'] = 'model_change'


class NewSessionParams(ClosedModel):
    additionalDirectories: Annotated[
        list[str] | None,
        Field(
            description='replace the workspace roots besides the cwd (absolute folders) for the new session'
        ),
    ] = None
    mcpServers: Annotated[
        list[McpServerHttp | McpServerStdio] | None,
        Field(description="replace the client's MCP servers for the new session"),
    ] = None
    parentSession: str | None = None
    sandbox: Annotated[
        SandboxRequest | None, Field(description="the new session's sandbox")
    ] = None


class RestoreFilesResult(OpenModel):
    checkpointId: Annotated[
        str,
        Field(
            description='the state of the disk before the restore: restore it to undo'
        ),
    ]
    conflicts: Annotated[
        list[str] | None,
        Field(description='files changed by someone else since the last checkpoint'),
    ] = None
    dryRun: bool
    files: Annotated[
        list[FileChange],
        Field(description='what was (or, on a dry run, would be) changed'),
    ]
    skipped: list[SkippedFile] | None = None


class SearchSessionsResult(OpenModel):
    nextCursor: Annotated[
        str | None,
        Field(
            description='pass it as cursor for the next page; null: this page is the last'
        ),
    ] = None
    sessions: Annotated[
        list[SessionSearchHit], Field(description='most recently written first')
    ]


class SessionBeforeTreeResult(LaxModel):
    cancel: bool | None = None
    customInstructions: str | None = None
    label: str | None = None
    replaceInstructions: bool | None = None
    summary: TreeSummary | None = None


class SessionChangeResult(OpenModel):
    cancelled: bool = False
    leafId: str | None
    restore: Annotated[
        RestoreFilesResult | None, Field(description='what restoreFiles changed')
    ] = None
    sessionFile: str | None
    sessionId: str


class SessionInfoEntry(EntryBase):
    name: str | None = None
    type: Literal['session_info'] = 'session_info'


class SessionInitEntry(EntryBase):
    type: Literal['session_init'] = 'session_init'


class SessionStats(OpenModel):
    assistantMessages: int
    contextUsage: Annotated[
        ContextUsage | None,
        Field(description="absent when the model's window is unknown"),
    ] = None
    cost: float
    sessionFile: str | None
    sessionId: str
    tokens: TokenTotals
    toolCalls: int
    toolResults: int
    totalMessages: int
    userMessages: int


class SwitchSessionParams(ClosedModel):
    mcpServers: Annotated[
        list[McpServerHttp | McpServerStdio] | None,
        Field(description="replace the client's MCP servers for the opened session"),
    ] = None
    sessionPath: str


class SystemMessage(OpenModel):
    content: Annotated[
        str | list[TextContent],
        Field(
            description='instructions; on the first system message, the base prompt',
            validate_default=True,
        ),
    ] = ''
    role: Literal['system'] = 'system'
    sections: dict[str, str | None] | None = None
    timestamp: int = 0
    toolsAdded: list[ToolDeclaration] | None = None
    toolsRemoved: list[ToolReference] | None = None


class ThinkingLevelChangeEntry(EntryBase):
    thinkingLevel: str
    type: Literal['thinking_level_change'] = 'thinking_level_change'


class ToolExecutionEndEvent(ClosedModel):
    durationMs: Annotated[
        int | None,
        Field(
            description='how long the tool ran (monotonic clock); absent when it did not run'
        ),
    ] = None
    isError: bool
    result: ToolResultPayload
    toolCallId: str
    toolName: str
    type: Literal['tool_execution_end'] = 'tool_execution_end'


class ToolExecutionUpdateEvent(ClosedModel):
    args: dict[str, Any]
    partialResult: ToolResultPayload
    toolCallId: str
    toolName: str
    type: Literal['tool_execution_update'] = 'tool_execution_update'


class ToolResultMessage(OpenModel):
    content: list[UserContent]
    details: Any = None
    durationMs: float | None = None
    isError: bool = False
    nestedCalls: Annotated[
        Any, Field(description='pi 1.5: calls the tool made to other tools')
    ] = None
    role: Literal['toolResult'] = 'toolResult'
    timestamp: int
    toolCallId: str
    toolName: str
    usage: Annotated[
        Usage | None, Field(description="pi 1.5: usage of the tool's own model calls")
    ] = None


class TtsrInjectionEntry(EntryBase):
    injectedRules: list[str] | None = None
    type: Literal['ttsr_injection'] = 'ttsr_injection'


class UsageEntry(EntryBase):
    kind: str
    model: str
    note: str | None = None
    provider: str
    type: Literal['usage'] = 'usage'
    usage: Usage


class UserMessage(OpenModel):
    content: str | list[UserContent]
    role: Literal['user'] = 'user'
    timestamp: Annotated[int, Field(description='Unix time in milliseconds')]


class CompactionEntry(EntryBase):
    details: Any = None
    firstKeptEntryId: str
    fromHook: bool | None = None
    summary: str
    systemMessage: Annotated[
        SystemMessage | None,
        Field(
            description='pi 1.5: the system prompt and tools at this point; it leads the context'
        ),
    ] = None
    tokensBefore: int
    type: Literal['compaction'] = 'compaction'
    usage: Annotated[
        Usage | None, Field(description="pi 1.5: usage of the summary's model calls")
    ] = None


class ContextEditEntry(EntryBase):
    replacement: ContextReplacement | None
    targetId: str
    type: Literal['context_edit'] = 'context_edit'


class ForkResult(OpenModel):
    cancelled: bool = False
    leafId: str | None
    restore: Annotated[
        RestoreFilesResult | None, Field(description='what restoreFiles changed')
    ] = None
    sessionFile: str | None
    sessionId: str
    text: Annotated[
        str, Field(description="the user message's text, to edit and resubmit")
    ]


class InitializeParams(ClosedModel):
    additionalDirectories: Annotated[
        list[str] | None,
        Field(
            description='workspace roots besides the cwd (absolute folders): the model is told of them; the cwd stays the base of relative paths'
        ),
    ] = None
    capabilities: Annotated[
        ClientCapabilities | None,
        Field(
            description="what the client answers: approvals, hooks (pi's event names), its own tools"
        ),
    ] = None
    clientInfo: ClientInfo | None = None
    mcpServers: Annotated[
        list[McpServerHttp | McpServerStdio] | None,
        Field(
            description="the client's MCP servers, added to those of the settings files"
        ),
    ] = None
    protocolVersion: str | None = None
    sandbox: Annotated[
        SandboxRequest | None,
        Field(
            description="the kernel sandbox of the agent's commands (over the settings files)"
        ),
    ] = None


MessageSchema = TypeAliasType(
    "MessageSchema",
    Annotated[
        SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage,
        Field(
            description='A message as stored and as returned by get_messages.',
            discriminator='role',
            title='MessageSchema',
        ),
    ],
)


class MessageStartEvent(ClosedModel):
    message: MessageSchema
    type: Literal['message_start'] = 'message_start'


class MessagesResult(OpenModel):
    messages: list[MessageSchema]


class NavigateTreeResult(OpenModel):
    cancelled: bool
    editorText: Annotated[
        str | None, Field(description='text of the selected user message, to edit')
    ] = None
    leafId: str | None
    restore: Annotated[
        RestoreFilesResult | None, Field(description='what restoreFiles changed')
    ] = None
    summaryEntryId: str | None = None


class PromptResult(OpenModel):
    errorMessage: str | None = None
    messages: Annotated[
        list[MessageSchema] | None, Field(description='messages the run added')
    ] = None
    queued: Annotated[
        bool,
        Field(
            description='true when the prompt was queued (streamingBehavior) instead of run'
        ),
    ]
    stopReason: Annotated[
        str | None,
        Field(
            description='how the run ended: stop, length, error, aborted, max_turns, max_budget, handled, or invalid_output (an outputSchema run that never produced a matching answer)'
        ),
    ] = None
    structuredOutput: Annotated[
        Any,
        Field(
            description='with outputSchema: the final answer, valid against the schema'
        ),
    ] = None


class TurnEndEvent(ClosedModel):
    message: MessageSchema
    toolResults: list[MessageSchema]
    type: Literal['turn_end'] = 'turn_end'


class AgentEndEvent(ClosedModel):
    messages: list[MessageSchema]
    type: Literal['agent_end'] = 'agent_end'
    willRetry: Annotated[
        bool,
        Field(
            description='whether another agent_start follows on its own (pi retries after agent_end; this server retries and recovers from overflow inside the run, so it is false here)'
        ),
    ] = False


class ContextResult(LaxModel):
    messages: list[MessageSchema] | None = None


class MessageEndEvent(ClosedModel):
    entryId: Annotated[
        str | None, Field(description='the session entry that stores it')
    ] = None
    message: MessageSchema
    type: Literal['message_end'] = 'message_end'


class MessageEntry(EntryBase):
    message: MessageSchema
    type: Literal['message'] = 'message'


EntrySchema = TypeAliasType(
    "EntrySchema",
    Annotated[
        MessageEntry | ThinkingLevelChangeEntry | ModelChangeEntry | CompactionEntry | BranchSummaryEntry | CustomEntry | CustomMessageEntry | UsageEntry | ContextEditEntry | LabelEntry | SessionInfoEntry | TtsrInjectionEntry | SessionInitEntry | ModeChangeEntry,
        Field(
            description='One line of a session file after the header; unknown types are kept as they are.',
            discriminator='type',
            title='EntrySchema',
        ),
    ],
)


EventSchema = TypeAliasType(
    "EventSchema",
    Annotated[
        AgentStartEvent | AgentEndEvent | AgentSettledEvent | TurnStartEvent | TurnEndEvent | MessageStartEvent | MessageUpdateEvent | MessageEndEvent | ToolExecutionStartEvent | ToolExecutionUpdateEvent | ToolExecutionEndEvent | QueueUpdateEvent | CompactionStartEvent | CompactionEndEvent | AutoRetryStartEvent | AutoRetryEndEvent | SessionChangedEvent | ApprovalEvent | HostRequestFailedEvent | SessionTreeEvent | SessionCompactEvent | InputHandledEvent | McpServerStatusEvent | SummarizationRetryScheduledEvent | SummarizationRetryAttemptStartEvent | SummarizationRetryFinishedEvent | BashExecutionUpdateEvent | ThinkingLevelChangedEvent | SessionInfoChangedEvent | EntryAppendedEvent | CheckpointEvent | CheckpointFailedEvent | CheckpointSkippedEvent | FilesRestoredEvent,
        Field(
            description='A server-to-client notification\'s params (method "event").',
            discriminator='type',
            title='EventSchema',
        ),
    ],
)
