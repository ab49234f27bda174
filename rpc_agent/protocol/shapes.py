"""Entries, messages and content blocks as the code holds them: typed dicts, not models.

The session store keeps every entry as the dict it read or wrote (a 100,000-line file parsed
into models would cost more than the rest of the load), and the agent loop, the providers and
the fronts pass those same dicts along. These TypedDicts give that data a checked shape, so
that mypy sees a misspelt key or a wrong value type, at no cost at run time.

Each shape is flat: one ``EntryDict`` carries the fields of every entry type, one
``MessageDict`` those of every role, one ``BlockDict`` those of every content block. The data
really is like that: a file written by another version may hold any mix of fields, an unknown
entry type is kept as it was, and the code mostly asks "does this entry have a summary", not
"is this a compaction". The per-type truth (which fields a ``compaction`` must have, which
roles exist) stays in the pydantic models of ``protocol.entries``, which validate what comes
from outside and generate the schema; a test holds the field names of the two together.

Wire data whose shape is not ours (a tool's arguments, ``details``,
extension data) stays ``JsonDict``; a JSON Schema is a ``protocol.json_schema.JsonSchema``.
"""

from typing import Any, NotRequired, Required, TypedDict

from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.json_schema import JsonSchema


class CostDict(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float
    totalFromProvider: NotRequired[bool]


class UsageDict(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: int
    cost: CostDict
    cacheWrite1h: NotRequired[int]
    reasoning: NotRequired[int]


class BlockDict(TypedDict, total=False):
    """One content block: ``text``, ``image``, ``thinking`` or ``toolCall`` (by ``type``)."""

    type: Required[str]
    # text
    text: str
    textSignature: str
    # image
    data: str
    mimeType: str
    # thinking
    thinking: str
    thinkingSignature: str
    redacted: bool
    # toolCall
    id: str
    name: str
    arguments: JsonDict
    thoughtSignature: str
    namespace: str
    argumentsError: str


Content = str | list[BlockDict]
"""A message's content: plain text, or a list of blocks."""


class ToolDeclarationDict(TypedDict, total=False):
    name: Required[str]
    description: str
    parameters: JsonSchema


class ToolReferenceDict(TypedDict):
    name: str


class MessageDict(TypedDict, total=False):
    """One message of the conversation, of any ``role``: ``user``, ``assistant``,
    ``toolResult``, ``bashExecution``, ``custom``, ``branchSummary``, ``compactionSummary`` or
    ``system`` (pi 1.5)."""

    role: Required[str]
    content: Content
    timestamp: int
    # assistant
    api: str
    provider: str
    model: str
    usage: UsageDict
    stopReason: str
    errorMessage: str
    responseModel: str
    responseId: str
    thinkingLevel: str
    providerThinkingLevel: str
    rawStopReason: str
    endTurn: bool
    durationMs: float
    # toolResult
    toolCallId: str
    toolName: str
    details: Any
    isError: bool
    nestedCalls: Any
    # bashExecution
    command: str
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: str
    excludeFromContext: bool
    # custom
    customType: str
    display: bool
    # branchSummary, compactionSummary
    summary: str
    fromId: str | None
    tokensBefore: int
    # system
    sections: dict[str, str | None]
    toolsAdded: list[ToolDeclarationDict]
    toolsRemoved: list[ToolReferenceDict]


class ReplacementDict(TypedDict):
    content: Content


class EntryDict(TypedDict, total=False):
    """One line of a session file after the header, of any ``type``.

    Every entry has the four required keys; the rest belong to one type or another (the
    comments say which) and are absent elsewhere.
    """

    type: Required[str]
    id: Required[str]
    parentId: Required[str | None]
    timestamp: Required[str]
    # message
    message: MessageDict
    # thinking_level_change
    thinkingLevel: str
    # model_change (``model`` is the fork dialect's "provider/id")
    provider: str | None
    modelId: str | None
    model: str | None
    role: str | None
    # compaction, branch_summary
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    fromId: str
    details: Any
    fromHook: bool
    systemMessage: MessageDict
    # usage (also compaction, branch_summary)
    usage: UsageDict
    kind: str
    note: str
    # custom, custom_message, mode_change
    customType: str
    data: Any
    content: Content
    display: bool
    mode: str
    # label, context_edit
    targetId: str
    label: str | None
    replacement: ReplacementDict | None
    # session_info
    name: str | None
    # ttsr_injection
    injectedRules: list[str]


class HeaderDict(TypedDict, total=False):
    """The first line of a session file (``type`` is ``"session"``)."""

    type: Required[str]
    id: Required[str]
    timestamp: Required[str]
    version: int
    cwd: str
    parentSession: str | None
