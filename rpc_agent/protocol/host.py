"""The host's side of the protocol: capabilities, and the requests the server sends the client.

An editor extension or a script takes part in the agent's decisions by declaring, in
``initialize``, what it answers: approvals, hooks (pi 0.73.1's extension events, one to one)
and tools of its own. The server then sends it the requests below (server to client), and
gives up on one with the notification ``$/cancelRequest {id}`` (the LSP convention) when the
run is aborted or the answer takes longer than its timeout.
"""

from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from rpc_agent.protocol.base import JsonDict, Params, Result
from rpc_agent.protocol.entries import AgentMessage, CompactionFields
from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.protocol.loose import Loose
from rpc_agent.protocol.shapes import BlockDict

HookName = Literal[
    "session_before_tree",
    "session_before_compact",
    "session_before_switch",
    "session_before_fork",
    "tool_call",
    "tool_result",
    "before_agent_start",
    "context",
    "input",
]


class _Answer(BaseModel):
    """A client's answer: extra fields are ignored, wrong types make it unusable (no change)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)


# --- capabilities ----------------------------------------------------------------------------


def _no_arguments() -> JsonSchema:
    return {"type": "object", "properties": {}}


class ClientTool(Params):
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str = ""
    parameters: Loose[JsonSchema] = Field(
        default_factory=_no_arguments,
        description="JSON Schema of the arguments; calls are validated against it before the client sees them",
    )
    readOnly: bool = Field(
        default=False,
        description="true: the tool changes nothing (the 'writes' approval policy does not ask)",
    )


class ClientCapabilities(Params):
    approvals: bool | None = Field(default=None, description="the client answers approval/request")
    hooks: list[str] | None = Field(default=None, description="hook names the client answers as hook/<name>")
    tools: list[ClientTool] | None = Field(default=None, description="tools the client runs (tool/call)")
    elicitation: bool | None = Field(
        default=None,
        description="the client answers elicitation/request (an MCP server asking the user for input)",
    )


class AcceptedCapabilities(Result):
    approvals: bool
    approvalPolicy: Literal["never", "writes", "all"]
    hooks: list[str]
    tools: list[str]
    elicitation: bool = Field(default=False, description="MCP servers' questions go to the client")
    rejected: list[str] = Field(
        default_factory=list, description="declared items the server did not accept, and why"
    )


class SetClientToolsParams(Params):
    tools: list[ClientTool]


class SetClientToolsResult(Result):
    tools: list[str]


class CustomMessageFields(BaseModel):
    """A custom message as a client gives it: to ``send_custom_message``, or from a hook."""

    model_config = ConfigDict(defer_build=True)

    customType: str
    content: str | list[Loose[BlockDict]]
    display: bool = True
    details: Any = None


class SendCustomMessageParams(CustomMessageFields, Params):
    triggerTurn: bool = Field(default=False, description="start a run with it when the agent is idle")


class AppendCustomEntryParams(Params):
    customType: str
    data: Any = None


class EntryIdResult(Result):
    entryId: str | None


# --- approval/request ---------------------------------------------------------------------


class ApprovalPreview(TypedDict, total=False):
    """What the host is shown of a call before it decides (``ApprovalRequestParams.preview``):
    edit and write give the file's ``path`` and the ``diff`` (None with a ``note`` when the
    edit cannot apply; ``newFile`` when there is no file yet); bash its ``command`` and
    ``cwd``, and the ``sandbox`` it would leave when it asks to run outside it."""

    path: str
    diff: str | None
    note: str
    newFile: bool
    command: Any
    cwd: str
    sandbox: str


class ApprovalRequestParams(Result):
    toolCallId: str
    toolName: str
    arguments: JsonDict
    preview: Loose[ApprovalPreview] | None = Field(
        default=None, description="edit/write: {path, diff} (nothing is written yet); bash: {command, cwd}"
    )
    sandbox: Literal["escape"] | None = Field(
        default=None,
        description='"escape": the sandbox refused this bash command; allow runs it once outside the sandbox',
    )


class ApprovalResult(_Answer):
    decision: Literal["allow", "allow_always", "deny"]
    message: str | None = None


# --- elicitation/request ----------------------------------------------------------------------


class ElicitationRequestParams(Result):
    server: str = Field(description="the MCP server that asks")
    mode: Literal["form", "url"]
    message: str
    requestedSchema: Loose[JsonSchema] | None = Field(
        default=None, description="form: a flat JSON Schema object of primitive properties"
    )
    url: str | None = Field(default=None, description="url: where the user goes, outside the agent's sight")
    elicitationId: str | None = Field(default=None, description="url: the server's id of this request")
    toolCallId: str | None = Field(default=None, description="the tool call during which the server asked")


class ElicitationResult(_Answer):
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str] | None] | None = Field(
        default=None, description="accept in form mode: the values, as the schema asks"
    )


# --- tool/call --------------------------------------------------------------------------------


class ToolCallParams(Result):
    toolCallId: str
    name: str
    arguments: JsonDict


class TextBlock(_Answer):
    type: Literal["text"]
    text: str


class ImageBlock(_Answer):
    type: Literal["image"]
    data: str
    mimeType: str


class ToolCallResult(_Answer):
    content: list[TextBlock | ImageBlock]
    isError: bool = False
    details: Any = None


# --- hooks: event params are pi's event objects; results are pi's result objects ------------


class HookEvent(Result):
    """``hook/<name>`` params: the pi event of that name as JSON (``type`` is the hook name)."""

    type: HookName


class TreeSummary(_Answer):
    summary: str
    details: Any = None


class SessionBeforeResult(_Answer):
    """Every ``session_before_*`` hook may cancel the change it is told about (pi's shape)."""

    cancel: bool | None = None


class SessionBeforeTreeResult(SessionBeforeResult):
    summary: TreeSummary | None = None
    customInstructions: str | None = None
    replaceInstructions: bool | None = None
    label: str | None = None


class CompactionHookResult(CompactionFields, _Answer):
    pass


class SessionBeforeCompactResult(SessionBeforeResult):
    compaction: CompactionHookResult | None = None


class SessionBeforeSwitchResult(SessionBeforeResult):
    pass


class SessionBeforeForkResult(SessionBeforeResult):
    skipConversationRestore: bool | None = None


class ToolCallHookResult(_Answer):
    block: bool | None = None
    reason: str | None = None
    input: JsonDict | None = Field(
        default=None, description="replacement arguments (pi's in-place mutation of event.input)"
    )


class ToolResultHookResult(_Answer):
    content: list[TextBlock | ImageBlock] | None = None
    details: Any = None
    isError: bool | None = None


class HookCustomMessage(CustomMessageFields, _Answer):
    pass


class BeforeAgentStartResult(_Answer):
    message: HookCustomMessage | None = None
    systemPrompt: str | None = None


class ContextResult(_Answer):
    messages: list[AgentMessage] | None = None


class InputResult(_Answer):
    action: Literal["continue", "transform", "handled"] = "continue"
    text: str | None = None
    images: list[Loose[BlockDict]] | None = None


HOOK_RESULTS: dict[str, type[_Answer]] = {
    "session_before_tree": SessionBeforeTreeResult,
    "session_before_compact": SessionBeforeCompactResult,
    "session_before_switch": SessionBeforeSwitchResult,
    "session_before_fork": SessionBeforeForkResult,
    "tool_call": ToolCallHookResult,
    "tool_result": ToolResultHookResult,
    "before_agent_start": BeforeAgentStartResult,
    "context": ContextResult,
    "input": InputResult,
}


class CancelRequestParams(Result):
    id: int


HOOK_EVENTS: dict[str, str] = {
    "session_before_tree": "{preparation: {targetId, oldLeafId, commonAncestorId, entriesToSummarize, "
    "userWantsSummary, customInstructions?, replaceInstructions?, label?}}. cancel: the navigation does "
    "nothing; summary (when a summary was asked for): stored as the branch_summary with fromHook, no "
    "model call; customInstructions/replaceInstructions/label override the request's.",
    "session_before_compact": "{preparation: {firstKeptEntryId, messagesToSummarize, turnPrefixMessages, "
    "isSplitTurn, tokensBefore, previousSummary}, branchEntries, customInstructions?}. cancel: nothing is "
    "appended; compaction: stored as that compaction (fromHook), no model call.",
    "session_before_switch": "{reason: new|resume, targetSessionFile?}. cancel: the session stays.",
    "session_before_fork": "{entryId, position: before|at}. cancel: no fork; skipConversationRestore: "
    "the result's text is empty.",
    "tool_call": "{toolCallId, toolName, input}. block (+reason): the tool does not run and the reason "
    "is its error result; input: replacement arguments.",
    "tool_result": "{toolCallId, toolName, input, content, isError, details}. content/details/isError "
    "replace the result's.",
    "before_agent_start": "{prompt, images?, systemPrompt, systemPromptOptions}. message: a custom_message "
    "stored after the prompt; systemPrompt: the system prompt for this run.",
    "context": "{messages}. messages: what the model gets for this one call (nothing is stored).",
    "input": "{text, images?, source}. action continue; transform (text, images); handled (no run).",
}
"""Each hook's event fields and how its result is applied (pi 0.73.1's semantics)."""


CLIENT_REQUESTS: list[tuple[str, type[BaseModel], type[BaseModel], str]] = [
    (
        "approval/request",
        ApprovalRequestParams,
        ApprovalResult,
        "Sent when the approval policy asks about a tool call; deny becomes the tool's error result.",
    ),
    (
        "tool/call",
        ToolCallParams,
        ToolCallResult,
        "Run a tool the client declared; the result is the toolResult.",
    ),
    (
        "elicitation/request",
        ElicitationRequestParams,
        ElicitationResult,
        "An MCP server asks the user for input (MCP elicitation/create, form or url mode); the answer "
        "goes back to the server. Without the capability, or with no usable answer, the server hears "
        "decline.",
    ),
    *[
        (
            f"hook/{name}",
            HookEvent,
            model,
            f"pi's {name} extension event: {HOOK_EVENTS[name]}",
        )
        for name, model in HOOK_RESULTS.items()
    ],
]
"""Requests the server sends to a client that declared them (name, params, result, description)."""
