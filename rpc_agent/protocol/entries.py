"""The session file format (version 3), as pydantic models.

The shapes follow the pi coding agent's session files so that either program can open the
other's sessions. Every model allows extra fields: a file written by a newer version keeps
what we do not understand when we rewrite it. Entry types we do not know at all are kept as
plain dicts (see ``parse_entry``), never rejected.

Field names are camelCase on the wire, exactly as in the files; the Python attributes use the
same names so that ``model_dump()`` is the line we write, with no alias layer to keep in sync.
"""

from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal, TypeVar, cast, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

from rpc_agent.protocol.shapes import MessageDict

CURRENT_SESSION_VERSION = 3


class _Open(BaseModel):
    """Base of every wire model: unknown fields survive a load/dump round trip."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)


# --- content blocks -----------------------------------------------------------------------


class TextContent(_Open):
    type: Literal["text"] = "text"
    text: str
    textSignature: str | None = None


class ImageContent(_Open):
    type: Literal["image"] = "image"
    data: str = Field(description="base64 data, or a blob reference 'blob:sha256:<hex>' on disk")
    mimeType: str


class ThinkingContent(_Open):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinkingSignature: str | None = None
    redacted: bool | None = None


class ToolCall(_Open):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any]
    thoughtSignature: str | None = None
    namespace: str | None = Field(default=None, description="pi 1.5: a namespaced tool's namespace")
    argumentsError: str | None = Field(
        default=None, description="pi 1.5: why the model's arguments text was not a JSON object"
    )


UserContent = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]


# --- messages -----------------------------------------------------------------------------


def _drop_none(data: Any, names: tuple[str, ...]) -> Any:
    """pi leaves a usage's optional splits out when it has none: so do we, wherever a usage is
    dumped (not only where messages are written with ``exclude_none``)."""
    if isinstance(data, dict):
        for name in names:
            if name in data and data[name] is None:
                del data[name]
    return data


class Cost(_Open):
    input: float = 0
    output: float = 0
    cacheRead: float = 0
    cacheWrite: float = 0
    total: float = 0
    totalFromProvider: bool | None = Field(
        default=None, description="pi 1.5: the total is what the provider billed, not an estimate"
    )

    @model_serializer(mode="wrap")
    def _without_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _drop_none(handler(self), ("totalFromProvider",))


class Usage(_Open):
    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheWrite: int = 0
    totalTokens: int = 0
    cost: Cost = Field(default_factory=Cost)
    cacheWrite1h: int | None = Field(default=None, description="pi 1.5: the part of cacheWrite kept an hour")
    reasoning: int | None = Field(default=None, description="pi 1.5: thinking tokens, a part of output")

    @model_serializer(mode="wrap")
    def _without_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _drop_none(handler(self), ("cacheWrite1h", "reasoning"))


StopReason = Literal["stop", "length", "toolUse", "error", "aborted", "pending", "deferred"]
"""pi 1.5 added ``pending`` and ``deferred`` (a response fetched later)."""

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = get_args(ThinkingLevel)
"""The levels in cycling order, from the one definition above."""


class ToolDeclaration(_Open):
    """A tool as a system message declares it to the model (pi 1.5)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)


class ToolReference(_Open):
    name: str


class SystemMessage(_Open):
    """pi 1.5's record of the system prompt and tools at one point of the conversation.

    The first one holds every prompt section and tool; later ones patch ``sections`` by name
    (null removes one) and list the tools added or removed. A compaction keeps the replayed
    state as its ``systemMessage``.
    """

    role: Literal["system"] = "system"
    content: str | list[TextContent] = Field(
        default="", description="instructions; on the first system message, the base prompt"
    )
    sections: dict[str, str | None] | None = None
    toolsAdded: list[ToolDeclaration] | None = None
    toolsRemoved: list[ToolReference] | None = None
    timestamp: int = 0


class UserMessage(_Open):
    role: Literal["user"] = "user"
    content: str | list[UserContent]
    timestamp: int = Field(description="Unix time in milliseconds")


class AssistantMessage(_Open):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent]
    api: str = "anthropic-messages"
    provider: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    stopReason: StopReason = "stop"
    errorMessage: str | None = None
    timestamp: int
    responseModel: str | None = None
    responseId: str | None = None
    thinkingLevel: ThinkingLevel | None = Field(
        default=None, description="pi 1.5: the thinking level requested for this response"
    )
    providerThinkingLevel: str | None = None
    rawStopReason: str | None = None
    endTurn: bool | None = None
    durationMs: float | None = None


class ToolResultMessage(_Open):
    role: Literal["toolResult"] = "toolResult"
    toolCallId: str
    toolName: str
    content: list[UserContent]
    details: Any = None
    isError: bool = False
    timestamp: int
    usage: Usage | None = Field(default=None, description="pi 1.5: usage of the tool's own model calls")
    nestedCalls: Any = Field(default=None, description="pi 1.5: calls the tool made to other tools")
    durationMs: float | None = None


class BashExecutionMessage(_Open):
    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str
    exitCode: int | None = None
    cancelled: bool = False
    truncated: bool = False
    fullOutputPath: str | None = None
    excludeFromContext: bool | None = None
    timestamp: int


class CustomMessage(_Open):
    role: Literal["custom"] = "custom"
    customType: str
    content: str | list[UserContent]
    display: bool | None = Field(default=None, description="absent means shown (true)")
    details: Any = None
    timestamp: int


class BranchSummaryMessage(_Open):
    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    fromId: str | None
    timestamp: int


class CompactionSummaryMessage(_Open):
    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokensBefore: int | None = Field(default=None, description="absent when the compaction entry has none")
    timestamp: int


AgentMessage = Annotated[
    SystemMessage
    | UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage,
    Field(discriminator="role"),
]

# --- file lines ---------------------------------------------------------------------------


class SessionHeader(_Open):
    """First line of every session file; metadata, not a tree node."""

    type: Literal["session"] = "session"
    version: int | None = Field(default=None, description="absent in v1 files")
    id: str
    timestamp: str
    cwd: str = ""
    parentSession: str | None = None


class _EntryBase(_Open):
    id: str = Field(description="8 hex characters, unique in the file")
    parentId: str | None = Field(description="null for a root entry")
    timestamp: str = Field(description="ISO-8601 with milliseconds and Z")


class MessageEntry(_EntryBase):
    type: Literal["message"] = "message"
    message: AgentMessage


class ThinkingLevelChangeEntry(_EntryBase):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinkingLevel: str


class ModelChangeEntry(_EntryBase):
    """Reference dialect: ``provider`` + ``modelId``; the fork dialect writes ``model`` = "p/id"."""

    type: Literal["model_change"] = "model_change"
    provider: str | None = None
    modelId: str | None = None
    model: str | None = None
    role: str | None = None


class CompactionFields(BaseModel):
    """What a compaction decided: ``compact``'s result, and the compaction a hook supplies.

    The entry below stores the same fields but declares them itself, after its ``type``
    (a base's fields come first, and the entry's fields keep the file's order).
    """

    model_config = ConfigDict(defer_build=True)

    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: Any = None


class CompactionEntry(_EntryBase):
    """``firstKeptEntryId`` equal to the entry's own id keeps nothing (pi 1.5's retain-none)."""

    type: Literal["compaction"] = "compaction"
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: Any = None
    fromHook: bool | None = None
    usage: Usage | None = Field(default=None, description="pi 1.5: usage of the summary's model calls")
    systemMessage: SystemMessage | None = Field(
        default=None, description="pi 1.5: the system prompt and tools at this point; it leads the context"
    )


class BranchSummaryEntry(_EntryBase):
    type: Literal["branch_summary"] = "branch_summary"
    fromId: str
    summary: str
    details: Any = None
    fromHook: bool | None = None
    usage: Usage | None = Field(default=None, description="pi 1.5: usage of the summary's model call")


class CustomEntry(_EntryBase):
    type: Literal["custom"] = "custom"
    customType: str
    data: Any = None


class CustomMessageEntry(_EntryBase):
    type: Literal["custom_message"] = "custom_message"
    customType: str
    content: str | list[UserContent]
    display: bool | None = Field(default=None, description="absent means shown (true)")
    details: Any = None


class UsageEntry(_EntryBase):
    """pi 1.5: model usage outside the conversation (cache warming...), counted in the
    session's totals and never part of the context. Unknown ``kind`` values are usage too."""

    type: Literal["usage"] = "usage"
    kind: str
    provider: str
    model: str
    usage: Usage
    note: str | None = None


class ContextReplacement(_Open):
    content: str | list[UserContent | ThinkingContent | ToolCall]


class ContextEditEntry(_EntryBase):
    """pi 1.5: a later change to what an earlier entry gives the model's context: a null
    ``replacement`` leaves it out, else its content is replaced (role and fields kept). The
    latest edit of an entry on the current branch wins; the entry itself never changes."""

    type: Literal["context_edit"] = "context_edit"
    targetId: str
    replacement: ContextReplacement | None


class LabelEntry(_EntryBase):
    type: Literal["label"] = "label"
    targetId: str
    label: str | None = None


class SessionInfoEntry(_EntryBase):
    type: Literal["session_info"] = "session_info"
    name: str | None = None


class TtsrInjectionEntry(_EntryBase):
    type: Literal["ttsr_injection"] = "ttsr_injection"
    injectedRules: list[str] = Field(default_factory=list)


class SessionInitEntry(_EntryBase):
    type: Literal["session_init"] = "session_init"


class ModeChangeEntry(_EntryBase):
    type: Literal["mode_change"] = "mode_change"
    mode: str = "none"
    data: Any = None


KnownEntry = Annotated[
    MessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | UsageEntry
    | ContextEditEntry
    | LabelEntry
    | SessionInfoEntry
    | TtsrInjectionEntry
    | SessionInitEntry
    | ModeChangeEntry,
    Field(discriminator="type"),
]

KNOWN_ENTRY_TYPES: frozenset[str] = frozenset(
    model.model_fields["type"].default for model in get_args(get_args(KnownEntry)[0])
)
"""The ``type`` of every entry in ``KnownEntry``, read from the union itself."""


@cache
def _known_entry_adapter() -> TypeAdapter[KnownEntry]:
    # Built on first use: building every entry schema at import would slow the server's start.
    return TypeAdapter(KnownEntry)


@cache
def _message_adapter() -> TypeAdapter[AgentMessage]:
    return TypeAdapter(AgentMessage)


EntryT = TypeVar("EntryT", bound=Mapping[str, Any])


def parse_entry(raw: EntryT) -> KnownEntry | EntryT:
    """Typed view of one stored entry; an unknown type comes back as the dict it was.

    The store keeps entries as plain dicts (parsing 100k lines into models would triple the
    load time) and validates them here, where a caller actually wants the typed shape.
    """
    if raw.get("type") in KNOWN_ENTRY_TYPES:
        return _known_entry_adapter().validate_python(raw)
    return raw


def parse_message(raw: Mapping[str, Any]) -> AgentMessage:
    return _message_adapter().validate_python(raw)


def dump_message(message: BaseModel) -> MessageDict:
    """The stored dict of a message.

    Fields left at None are omitted, as the reference agent leaves ``undefined`` out of its
    JSON. (Not for entries: an entry's ``parentId`` must stay ``null`` on the wire.)
    """
    return cast("MessageDict", message.model_dump(mode="json", exclude_none=True))
