"""The wire types of rpc-agent, generated from protocol/schema.json: do not edit.

Regenerate with ``python clients/python/scripts/generate_types.py``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel


class AbortResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    aborted: Annotated[bool, Field(description='false when nothing was running')]


class AcceptedCapabilities(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    approvalPolicy: Literal['never', 'writes', 'all']
    approvals: bool
    hooks: list[str]
    rejected: Annotated[
        list[str] | None,
        Field(description='declared items the server did not accept, and why'),
    ] = None
    tools: list[str]


class AgentStartEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['agent_start'] = 'agent_start'


class AppendCustomEntryParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    customType: str
    data: Any = None


class ApprovalEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    decision: Literal['allow', 'deny']
    reason: str | None = None
    source: Literal['policy', 'rule', 'session', 'client', 'no_answer']
    toolCallId: str
    toolName: str
    type: Literal['approval'] = 'approval'


class ApprovalRequestParams(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    arguments: dict[str, Any]
    preview: Annotated[
        dict[str, Any] | None,
        Field(
            description='edit/write: {path, diff} (nothing is written yet); bash: {command, cwd}'
        ),
    ] = None
    toolCallId: str
    toolName: str


class ApprovalResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    decision: Literal['allow', 'allow_always', 'deny']
    message: str | None = None


class AssistantMessageDelta(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    content: str | None = None
    contentIndex: int | None = None
    delta: str | None = None
    reason: str | None = None
    toolCall: dict[str, Any] | None = None
    type: Literal['start', 'text_start', 'text_delta', 'text_end', 'thinking_start', 'thinking_delta', 'thinking_end', 'toolcall_start', 'toolcall_delta', 'toolcall_end', 'done', 'error']


class AutoRetryEndEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    attempt: int
    finalError: str | None = None
    success: bool
    type: Literal['auto_retry_end'] = 'auto_retry_end'


class AutoRetryStartEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    attempt: int
    delayMs: int
    errorMessage: str
    maxAttempts: int
    type: Literal['auto_retry_start'] = 'auto_retry_start'


class BashExecutionMessage(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    cancelled: bool = False
    command: str
    excludeFromContext: bool | None = None
    exitCode: int | None = None
    fullOutputPath: str | None = None
    output: str
    role: Literal['bashExecution'] = 'bashExecution'
    timestamp: int
    truncated: bool = False


class BashParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    command: str
    excludeFromContext: bool = False


class BashResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    cancelled: bool
    exitCode: int | None
    fullOutputPath: str | None = None
    output: str
    truncated: bool


class BranchSummaryEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    details: Any = None
    fromHook: bool | None = None
    fromId: str
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    summary: str
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['branch_summary'] = 'branch_summary'


class BranchSummaryMessage(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    fromId: str
    role: Literal['branchSummary'] = 'branchSummary'
    summary: str
    timestamp: int


class CancelRequestParams(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    id: int


class Capabilities(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    compaction: bool
    errorCodes: dict[str, int]
    fork: bool = True
    images: bool = True
    providers: list[str]
    tree: bool = True


class ClientInfo(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    name: str
    version: str | None = None


class ClientTool(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
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


class CompactParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    customInstructions: str | None = None


class CompactResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    details: Any = None
    firstKeptEntryId: str
    summary: str
    tokensBefore: int


class CompactionEndEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    aborted: bool
    errorMessage: str | None = None
    reason: Literal['manual', 'threshold', 'overflow']
    result: CompactResult | None
    type: Literal['compaction_end'] = 'compaction_end'
    willRetry: bool


class CompactionEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    details: Any = None
    firstKeptEntryId: str
    fromHook: bool | None = None
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    summary: str
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    tokensBefore: int
    type: Literal['compaction'] = 'compaction'


class CompactionHookResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    details: Any = None
    firstKeptEntryId: str
    summary: str
    tokensBefore: int


class CompactionStartEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    reason: Literal['manual', 'threshold', 'overflow']
    type: Literal['compaction_start'] = 'compaction_start'


class CompactionSummaryMessage(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    role: Literal['compactionSummary'] = 'compactionSummary'
    summary: str
    timestamp: int
    tokensBefore: Annotated[
        int | None, Field(description='absent when the compaction entry has none')
    ] = None


class Cost(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    cacheRead: float = 0
    cacheWrite: float = 0
    input: float = 0
    output: float = 0
    total: float = 0


class CustomEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    customType: str
    data: Any = None
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['custom'] = 'custom'


class EntriesResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    entries: Annotated[
        list[dict[str, Any]],
        Field(description='raw session entries in file order (see the entry schemas)'),
    ]
    leafId: str | None


class EntryIdResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    entryId: str | None


class ExportHtmlParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    outputPath: str | None = None


class ExportHtmlResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    path: str


class ForkMessage(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    entryId: str
    text: str


class ForkMessagesResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    messages: list[ForkMessage]


class ForkParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    entryId: Annotated[
        str, Field(description='a user message; the new session ends just before it')
    ]


class ForkResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    cancelled: bool = False
    leafId: str | None
    sessionFile: str | None
    sessionId: str
    text: Annotated[
        str, Field(description="the user message's text, to edit and resubmit")
    ]


class GetEntriesParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    since: Annotated[
        str | None, Field(description='entry id cursor: only entries after it')
    ] = None


class MaxDepth(RootModel[int]):
    root: Annotated[
        int,
        Field(
            description='only nodes at most this many levels below rootId (or the roots)',
            ge=0,
        ),
    ]


class Since(RootModel[int]):
    root: Annotated[
        int,
        Field(
            description='a cursor from an earlier result: only nodes added or relabelled since, and their parents (whose childCount changed), in file order',
            ge=0,
        ),
    ]


class GetTreeParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
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
        MaxDepth | None,
        Field(
            description='only nodes at most this many levels below rootId (or the roots)'
        ),
    ] = None
    rootId: Annotated[
        str | None, Field(description='only this entry and what hangs under it')
    ] = None
    since: Annotated[
        Since | None,
        Field(
            description='a cursor from an earlier result: only nodes added or relabelled since, and their parents (whose childCount changed), in file order'
        ),
    ] = None


class HookCustomMessage(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    content: str | list[dict[str, Any]]
    customType: str
    details: Any = None
    display: bool = True


class HookEvent(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    type: Literal['session_before_tree', 'session_before_compact', 'session_before_switch', 'session_before_fork', 'tool_call', 'tool_result', 'before_agent_start', 'context', 'input']


class HostRequestFailedEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    fallback: Literal['denied', 'no_change', 'tool_error']
    message: str
    method: str
    reason: Literal['timeout', 'aborted', 'error', 'invalid_result', 'closed']
    requestId: int | None = None
    type: Literal['host_request_failed'] = 'host_request_failed'


class ImageBlock(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    data: str
    mimeType: str
    type: Literal['image']


class ImageContent(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    data: Annotated[
        str,
        Field(
            description="base64 data, or a blob reference 'blob:sha256:<hex>' on disk"
        ),
    ]
    mimeType: str
    type: Literal['image'] = 'image'


class InputHandledEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    text: str
    type: Literal['input_handled'] = 'input_handled'


class InputResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    action: Literal['continue', 'transform', 'handled'] = 'continue'
    images: list[dict[str, Any]] | None = None
    text: str | None = None


class LabelEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    label: str | None = None
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    targetId: str
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['label'] = 'label'


class LastAssistantTextResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    text: str | None


class ListSessionsParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    all: Annotated[
        bool, Field(description='every working directory, not only this one')
    ] = False


class McpRestartParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    name: Annotated[
        str | None, Field(description='the server to restart; all when left out')
    ] = None


class McpServerState(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    error: str | None = None
    name: str
    status: Literal['starting', 'ready', 'failed', 'stopped']
    toolCount: int
    transport: Literal['stdio', 'http', 'sse']


class McpServerStatusEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    error: str | None = None
    name: str
    status: Literal['starting', 'ready', 'failed', 'stopped']
    toolCount: int
    transport: Literal['stdio', 'http', 'sse']
    type: Literal['mcp_server_status'] = 'mcp_server_status'


class McpServersResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    servers: list[McpServerState]


class MessageUpdateEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    assistantMessageEvent: AssistantMessageDelta
    type: Literal['message_update'] = 'message_update'


class ModeChangeEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    data: Any = None
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    mode: str = 'none'
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['mode_change'] = 'mode_change'


class ModelChangeEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    model: str | None = None
    modelId: str | None = None
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    provider: str | None = None
    role: str | None = None
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['model_change'] = 'model_change'


class ModelDescription(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    api: str
    contextWindow: int
    cost: dict[str, float]
    id: str
    input: list[str]
    maxTokens: int
    name: str
    provider: str
    reasoning: bool


class ModelsResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    models: list[ModelDescription]


class NameValue(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    name: str
    value: str


class NavigateTreeParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    customInstructions: str | None = None
    label: str | None = None
    replaceInstructions: bool = False
    summarize: bool = False
    targetId: str


class NavigateTreeResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    cancelled: bool
    editorText: Annotated[
        str | None, Field(description='text of the selected user message, to edit')
    ] = None
    leafId: str | None
    summaryEntryId: str | None = None


class Ok(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )


class MaxBudgetUsd(RootModel[float]):
    root: Annotated[
        float, Field(description='stop this run once it cost this much', gt=0.0)
    ]


class MaxTurns(RootModel[int]):
    root: Annotated[int, Field(description='stop this run after N model calls', ge=1)]


class PromptParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    images: list[ImageContent] | None = None
    maxBudgetUsd: Annotated[
        MaxBudgetUsd | None, Field(description='stop this run once it cost this much')
    ] = None
    maxTurns: Annotated[
        MaxTurns | None, Field(description='stop this run after N model calls')
    ] = None
    message: str
    streamingBehavior: Annotated[
        Literal['steer', 'followUp'] | None,
        Field(
            description='required while the agent is streaming: queue as steer or followUp'
        ),
    ] = None


class QueueParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    images: list[ImageContent] | None = None
    message: str


class QueueResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    pendingMessageCount: int


class QueueUpdateEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    followUp: list[str]
    steering: list[str]
    type: Literal['queue_update'] = 'queue_update'


class SendCustomMessageParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    content: str | list[dict[str, Any]]
    customType: str
    details: Any = None
    display: bool = True
    triggerTurn: Annotated[
        bool, Field(description='start a run with it when the agent is idle')
    ] = False


class ServerInfo(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    name: str
    version: str


class SessionBeforeCompactResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    cancel: bool | None = None
    compaction: CompactionHookResult | None = None


class SessionBeforeForkResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    cancel: bool | None = None
    skipConversationRestore: bool | None = None


class SessionBeforeSwitchResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    cancel: bool | None = None


class SessionChangeResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    cancelled: bool = False
    leafId: str | None
    sessionFile: str | None
    sessionId: str


class SessionChangedEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    leafId: str | None
    reason: Literal['new', 'switch', 'fork', 'clone', 'navigate']
    sessionFile: str | None
    sessionId: str
    type: Literal['session_changed'] = 'session_changed'


class SessionCompactEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    compactionEntry: dict[str, Any]
    fromExtension: bool
    type: Literal['session_compact'] = 'session_compact'


class SessionHeader(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    cwd: str = ''
    id: str
    parentSession: str | None = None
    timestamp: str
    type: Literal['session'] = 'session'
    version: Annotated[int | None, Field(description='absent in v1 files')] = None


class SessionInfoEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    name: str | None = None
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['session_info'] = 'session_info'


class SessionInfoModel(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    created: str
    cwd: str
    firstMessage: str
    id: str
    messageCount: int
    modified: str
    name: str | None
    parentSession: str | None
    path: str


class SessionInitEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['session_init'] = 'session_init'


class SessionTreeEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    fromExtension: bool | None = None
    newLeafId: str | None
    oldLeafId: str | None
    summaryEntry: dict[str, Any] | None = None
    type: Literal['session_tree'] = 'session_tree'


class SetClientToolsParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    tools: list[ClientTool]


class SetClientToolsResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    tools: list[str]


class SetEnabledParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    enabled: bool


class SetLabelParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    entryId: str
    label: str | None


class SetLabelResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    labelEntryId: str


class SetModelParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    modelId: str
    provider: str | None = None


class SetQueueModeParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    mode: Literal['all', 'one-at-a-time']


class SetSessionNameParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    name: str


class SetThinkingLevelParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    level: Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh']


class State(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
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
    sessionFile: str | None
    sessionId: str
    sessionName: str | None
    steeringMode: Literal['all', 'one-at-a-time']
    thinkingLevel: Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh']


class TextBlock(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    text: str
    type: Literal['text']


class TextContent(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    text: str
    textSignature: str | None = None
    type: Literal['text'] = 'text'


class ThinkingContent(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    redacted: bool | None = None
    thinking: str
    thinkingSignature: str | None = None
    type: Literal['thinking'] = 'thinking'


class ThinkingLevelChangeEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    thinkingLevel: str
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['thinking_level_change'] = 'thinking_level_change'


class ThinkingLevelResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    level: Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh']


class TokenTotals(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    cacheRead: int
    cacheWrite: int
    input: int
    output: int
    total: int


class ToolCall(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    arguments: dict[str, Any]
    id: str
    name: str
    type: Literal['toolCall'] = 'toolCall'


class ToolCallHookResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    block: bool | None = None
    input: Annotated[
        dict[str, Any] | None,
        Field(
            description="replacement arguments (pi's in-place mutation of event.input)"
        ),
    ] = None
    reason: str | None = None


class ToolCallParams(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    arguments: dict[str, Any]
    name: str
    toolCallId: str


class ToolCallResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    content: list[TextBlock | ImageBlock]
    details: Any = None
    isError: bool = False


class ToolExecutionStartEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    args: dict[str, Any]
    toolCallId: str
    toolName: str
    type: Literal['tool_execution_start'] = 'tool_execution_start'


class ToolResultHookResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    content: list[TextBlock | ImageBlock] | None = None
    details: Any = None
    isError: bool | None = None


class ToolResultMessage(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    content: list[Annotated[TextContent | ImageContent, Field(discriminator='type')]]
    details: Any = None
    isError: bool = False
    role: Literal['toolResult'] = 'toolResult'
    timestamp: int
    toolCallId: str
    toolName: str


class ToolResultPayload(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    content: list[dict[str, Any]]
    details: Any = None


class TreeColumns(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
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


class TreeNode(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
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


class TreeResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
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
    leafId: str | None
    nodes: Annotated[
        list[TreeNode],
        Field(
            description='depth-first, children oldest first; flat, never nested (empty with format columns)'
        ),
    ]


class TreeSummary(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    details: Any = None
    summary: str


class TtsrInjectionEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    injectedRules: list[str] | None = None
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['ttsr_injection'] = 'ttsr_injection'


class TurnStartEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    type: Literal['turn_start'] = 'turn_start'


class Usage(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    cacheRead: int = 0
    cacheWrite: int = 0
    cost: Cost | None = None
    input: int = 0
    output: int = 0
    totalTokens: int = 0


class UserMessage(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    content: str | list[Annotated[TextContent | ImageContent, Field(discriminator='type')]]
    role: Literal['user'] = 'user'
    timestamp: Annotated[int, Field(description='Unix time in milliseconds')]


class AssistantMessage(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    api: str = 'anthropic-messages'
    content: list[
        Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator='type')]
    ]
    errorMessage: str | None = None
    model: str
    provider: str
    role: Literal['assistant'] = 'assistant'
    stopReason: Literal['stop', 'length', 'toolUse', 'error', 'aborted'] = 'stop'
    timestamp: int
    usage: Usage | None = None


class BeforeAgentStartResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    message: HookCustomMessage | None = None
    systemPrompt: str | None = None


class ClientCapabilities(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    approvals: Annotated[
        bool | None, Field(description='the client answers approval/request')
    ] = None
    hooks: Annotated[
        list[str] | None,
        Field(description='hook names the client answers as hook/<name>'),
    ] = None
    tools: Annotated[
        list[ClientTool] | None, Field(description='tools the client runs (tool/call)')
    ] = None


class CustomMessage(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    content: str | list[Annotated[TextContent | ImageContent, Field(discriminator='type')]]
    customType: str
    details: Any = None
    display: Annotated[bool | None, Field(description='absent means shown (true)')] = (
        None
    )
    role: Literal['custom'] = 'custom'
    timestamp: int


class CustomMessageEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    content: str | list[Annotated[TextContent | ImageContent, Field(discriminator='type')]]
    customType: str
    details: Any = None
    display: Annotated[bool | None, Field(description='absent means shown (true)')] = (
        None
    )
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['custom_message'] = 'custom_message'


class CycleModelResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    model: ModelDescription
    thinkingLevel: Literal['off', 'minimal', 'low', 'medium', 'high', 'xhigh']


class InitializeResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
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


class ListSessionsResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    sessions: list[SessionInfoModel]


class McpServerHttp(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    headers: list[NameValue] | None = None
    name: Annotated[str, Field(min_length=1)]
    type: Literal['http']
    url: Annotated[str, Field(min_length=1)]


class McpServerStdio(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    args: list[str] | None = None
    command: Annotated[str, Field(min_length=1)]
    env: list[NameValue] | None = None
    name: Annotated[str, Field(min_length=1)]
    type: Literal['stdio'] | None = None


class MessageEndEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    entryId: Annotated[
        str | None, Field(description='the session entry that stores it')
    ] = None
    message: Annotated[
        UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage,
        Field(discriminator='role'),
    ]
    type: Literal['message_end'] = 'message_end'


class MessageEntry(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    id: Annotated[str, Field(description='8 hex characters, unique in the file')]
    message: Annotated[
        UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage,
        Field(discriminator='role'),
    ]
    parentId: Annotated[str | None, Field(description='null for a root entry')]
    timestamp: Annotated[str, Field(description='ISO-8601 with milliseconds and Z')]
    type: Literal['message'] = 'message'


class MessageStartEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    message: Annotated[
        UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage,
        Field(discriminator='role'),
    ]
    type: Literal['message_start'] = 'message_start'


class MessagesResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    messages: list[
        Annotated[
            UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage,
            Field(discriminator='role'),
        ]
    ]


class NewSessionParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    mcpServers: Annotated[
        list[McpServerHttp | McpServerStdio] | None,
        Field(description="replace the client's MCP servers for the new session"),
    ] = None
    parentSession: str | None = None


class PromptResult(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    errorMessage: str | None = None
    messages: Annotated[
        list[Annotated[UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage, Field(discriminator='role')]] | None,
        Field(description='messages the run added'),
    ] = None
    queued: Annotated[
        bool,
        Field(
            description='true when the prompt was queued (streamingBehavior) instead of run'
        ),
    ]
    stopReason: str | None = None


class SessionBeforeTreeResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    cancel: bool | None = None
    customInstructions: str | None = None
    label: str | None = None
    replaceInstructions: bool | None = None
    summary: TreeSummary | None = None


class SessionStats(BaseModel):
    model_config = ConfigDict(
        extra='allow',
        populate_by_name=True,
    )
    assistantMessages: int
    cost: float
    sessionFile: str | None
    sessionId: str
    tokens: TokenTotals
    toolCalls: int
    toolResults: int
    totalMessages: int
    userMessages: int


class SwitchSessionParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    mcpServers: Annotated[
        list[McpServerHttp | McpServerStdio] | None,
        Field(description="replace the client's MCP servers for the opened session"),
    ] = None
    sessionPath: str


class ToolExecutionEndEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    isError: bool
    result: ToolResultPayload
    toolCallId: str
    toolName: str
    type: Literal['tool_execution_end'] = 'tool_execution_end'


class ToolExecutionUpdateEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    args: dict[str, Any]
    partialResult: ToolResultPayload
    toolCallId: str
    toolName: str
    type: Literal['tool_execution_update'] = 'tool_execution_update'


class TurnEndEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    message: Annotated[
        UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage,
        Field(discriminator='role'),
    ]
    toolResults: list[
        Annotated[
            UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage,
            Field(discriminator='role'),
        ]
    ]
    type: Literal['turn_end'] = 'turn_end'


class AgentEndEvent(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
    messages: list[
        Annotated[
            UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage,
            Field(discriminator='role'),
        ]
    ]
    type: Literal['agent_end'] = 'agent_end'


class ContextResult(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
    )
    messages: (
        list[
            Annotated[UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage, Field(discriminator='role')]
        ]
        | None
    ) = None


class InitializeParams(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
        populate_by_name=True,
    )
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
