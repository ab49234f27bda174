"""Server-to-client notifications: method ``"event"``, params = one of these (with ``type``).

``message_update`` does not repeat the partial message on every delta (that would make a long
answer cost quadratic bytes): apply each delta to the message from ``message_start``;
``message_end`` carries the final message.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.checkpoints import (
    CheckpointEvent,
    CheckpointFailedEvent,
    CheckpointSkippedEvent,
    FilesRestoredEvent,
)
from rpc_agent.protocol.entries import ThinkingLevel
from rpc_agent.protocol.loose import Loose
from rpc_agent.protocol.methods import CompactResult, McpStatus
from rpc_agent.protocol.shapes import BlockDict, EntryDict
from rpc_agent.protocol.stored import StoredMessage, StoredUsage

AssistantEventType = Literal[
    "start",
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "toolcall_start",
    "toolcall_delta",
    "toolcall_end",
    "done",
    "error",
]
"""What a streamed ``message_update`` says happened (pi's assistant message events)."""


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class AgentStartEvent(_Event):
    type: Literal["agent_start"] = "agent_start"


class AgentEndEvent(_Event):
    type: Literal["agent_end"] = "agent_end"
    messages: list[StoredMessage]
    willRetry: bool = Field(
        default=False,
        description="whether another agent_start follows on its own (pi retries after agent_end; this "
        "server retries and recovers from overflow inside the run, so it is false here)",
    )


class AgentSettledEvent(_Event):
    """The run is over and nothing more follows on its own (no retry, compaction or queued
    message): the moment a client waits for after a prompt."""

    type: Literal["agent_settled"] = "agent_settled"
    aborted: bool = Field(description="the run ended because it was aborted")


class TurnStartEvent(_Event):
    type: Literal["turn_start"] = "turn_start"


class TurnEndEvent(_Event):
    type: Literal["turn_end"] = "turn_end"
    message: StoredMessage
    toolResults: list[StoredMessage]


class MessageStartEvent(_Event):
    type: Literal["message_start"] = "message_start"
    message: StoredMessage


class AssistantMessageDelta(_Event):
    """One streaming step: apply it to the message from message_start (contentIndex names the block)."""

    type: AssistantEventType
    contentIndex: int | None = None
    delta: str | None = None
    content: str | None = None
    toolCall: Loose[BlockDict] | None = None
    reason: str | None = None
    id: str | None = Field(default=None, description="toolcall_start: the tool call's id")
    toolName: str | None = Field(default=None, description="toolcall_start: the tool's name")


class MessageUpdateEvent(_Event):
    type: Literal["message_update"] = "message_update"
    assistantMessageEvent: AssistantMessageDelta
    usage: StoredUsage | None = Field(
        default=None,
        description="the answer's usage so far, as the provider last reported it (may stay zero until the end)",
    )


class MessageEndEvent(_Event):
    type: Literal["message_end"] = "message_end"
    message: StoredMessage
    entryId: str | None = Field(default=None, description="the session entry that stores it")


class ToolResultPayload(_Event):
    content: list[Loose[BlockDict]]
    details: Any = None


class _TaggedEvent(_Event):
    """A base of events that share fields. Its ``type`` (each event narrows it to its own
    literal) stands here so that it stays the first field: a base's fields come first."""

    type: str


class _ToolExecutionEvent(_TaggedEvent):
    """The start, updates and end of one tool call name the call."""

    toolCallId: str
    toolName: str


class ToolExecutionStartEvent(_ToolExecutionEvent):
    type: Literal["tool_execution_start"] = "tool_execution_start"
    args: JsonDict


class ToolExecutionUpdateEvent(_ToolExecutionEvent):
    type: Literal["tool_execution_update"] = "tool_execution_update"
    args: JsonDict
    partialResult: ToolResultPayload


class ToolExecutionEndEvent(_ToolExecutionEvent):
    type: Literal["tool_execution_end"] = "tool_execution_end"
    result: ToolResultPayload
    isError: bool
    durationMs: int | None = Field(
        default=None, description="how long the tool ran (monotonic clock); absent when it did not run"
    )


class QueueUpdateEvent(_Event):
    type: Literal["queue_update"] = "queue_update"
    steering: list[str]
    followUp: list[str]


CompactionReason = Literal["manual", "threshold", "overflow"]


class _CompactionEvent(_TaggedEvent):
    """A compaction's start and end say why it ran."""

    reason: CompactionReason


class CompactionStartEvent(_CompactionEvent):
    type: Literal["compaction_start"] = "compaction_start"


class CompactionEndEvent(_CompactionEvent):
    type: Literal["compaction_end"] = "compaction_end"
    result: CompactResult | None
    aborted: bool
    willRetry: bool
    errorMessage: str | None = None


class _RetryScheduledEvent(_TaggedEvent):
    """A model call failed transiently and is sent again after ``delayMs``: a turn's call, or
    a compaction's or branch summary's (with the same retry settings)."""

    attempt: int
    maxAttempts: int
    delayMs: int
    errorMessage: str


class AutoRetryStartEvent(_RetryScheduledEvent):
    type: Literal["auto_retry_start"] = "auto_retry_start"


class AutoRetryEndEvent(_Event):
    type: Literal["auto_retry_end"] = "auto_retry_end"
    success: bool
    attempt: int
    finalError: str | None = None


class SummarizationRetryScheduledEvent(_RetryScheduledEvent):
    """A compaction's or branch summary's model call failed transiently: it is retried after
    ``delayMs`` (the same retry settings as a turn's)."""

    type: Literal["summarization_retry_scheduled"] = "summarization_retry_scheduled"


class SummarizationRetryAttemptStartEvent(_Event):
    """The wait is over: the summary call is sent again."""

    type: Literal["summarization_retry_attempt_start"] = "summarization_retry_attempt_start"
    source: Literal["compaction", "branchSummary"]
    reason: CompactionReason | None = Field(default=None, description="a compaction's reason")


class SummarizationRetryFinishedEvent(_Event):
    """The summary call that was retried ended (answered, failed for good, or aborted)."""

    type: Literal["summarization_retry_finished"] = "summarization_retry_finished"


class BashExecutionUpdateEvent(_Event):
    """Output of the user's ``bash`` command as it is read, every byte of it (the result may
    keep only the tail)."""

    type: Literal["bash_execution_update"] = "bash_execution_update"
    id: str | int | float | None = Field(default=None, description="the id of the bash request")
    delta: str


class ThinkingLevelChangedEvent(_Event):
    type: Literal["thinking_level_changed"] = "thinking_level_changed"
    level: ThinkingLevel


class SessionInfoChangedEvent(_Event):
    """The session's display name changed."""

    type: Literal["session_info_changed"] = "session_info_changed"
    name: str | None = Field(default=None, description="absent when the name was cleared")


class EntryAppendedEvent(_Event):
    """The host stored an entry that no other event announces (``append_custom_entry``)."""

    type: Literal["entry_appended"] = "entry_appended"
    entry: Loose[EntryDict]


class SessionChangedEvent(_Event):
    type: Literal["session_changed"] = "session_changed"
    reason: Literal["new", "switch", "fork", "clone", "navigate"]
    sessionId: str
    sessionFile: str | None
    leafId: str | None


class ApprovalEvent(_Event):
    """How a tool call that the approval policy looked at was decided, and why."""

    type: Literal["approval"] = "approval"
    toolCallId: str
    toolName: str
    decision: Literal["allow", "deny"]
    source: Literal["policy", "rule", "session", "client", "no_answer"]
    reason: str | None = None


class HostRequestFailedEvent(_Event):
    """A request to the client gave no usable answer: the server went on without it."""

    type: Literal["host_request_failed"] = "host_request_failed"
    method: str
    requestId: int | None = None
    reason: Literal["timeout", "aborted", "error", "invalid_result", "closed"]
    message: str
    fallback: Literal["denied", "no_change", "tool_error", "declined"]


class SessionTreeEvent(_Event):
    """After a navigation in the tree (pi's session_tree)."""

    type: Literal["session_tree"] = "session_tree"
    newLeafId: str | None
    oldLeafId: str | None
    summaryEntry: Loose[EntryDict] | None = None
    fromExtension: bool | None = None


class SessionCompactEvent(_Event):
    """After a compaction was stored (pi's session_compact)."""

    type: Literal["session_compact"] = "session_compact"
    compactionEntry: Loose[EntryDict]
    fromExtension: bool


class InputHandledEvent(_Event):
    """The client's input hook handled a prompt itself: no run took place."""

    type: Literal["input_handled"] = "input_handled"
    text: str


class McpServerStatusEvent(_Event):
    """An MCP server started, failed to start, died, or was stopped."""

    type: Literal["mcp_server_status"] = "mcp_server_status"
    name: str
    transport: Literal["stdio", "http", "sse"]
    status: McpStatus
    toolCount: int
    error: str | None = None


Event = Annotated[
    AgentStartEvent
    | AgentEndEvent
    | AgentSettledEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | QueueUpdateEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | SessionChangedEvent
    | ApprovalEvent
    | HostRequestFailedEvent
    | SessionTreeEvent
    | SessionCompactEvent
    | InputHandledEvent
    | McpServerStatusEvent
    | SummarizationRetryScheduledEvent
    | SummarizationRetryAttemptStartEvent
    | SummarizationRetryFinishedEvent
    | BashExecutionUpdateEvent
    | ThinkingLevelChangedEvent
    | SessionInfoChangedEvent
    | EntryAppendedEvent
    | CheckpointEvent
    | CheckpointFailedEvent
    | CheckpointSkippedEvent
    | FilesRestoredEvent,
    Field(discriminator="type"),
]
