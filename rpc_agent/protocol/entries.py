"""The session file format (version 3), as pydantic models.

The shapes follow the pi coding agent's session files so that either program can open the
other's sessions. Every model allows extra fields: a file written by a newer version keeps
what we do not understand when we rewrite it. Entry types we do not know at all are kept as
plain dicts (see ``parse_entry``), never rejected.

Field names are camelCase on the wire, exactly as in the files; the Python attributes use the
same names so that ``model_dump()`` is the line we write, with no alias layer to keep in sync.
"""

from functools import cache
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from rpc_agent.protocol.base import JsonDict

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


UserContent = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]


# --- messages -----------------------------------------------------------------------------


class Cost(_Open):
    input: float = 0
    output: float = 0
    cacheRead: float = 0
    cacheWrite: float = 0
    total: float = 0


class Usage(_Open):
    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheWrite: int = 0
    totalTokens: int = 0
    cost: Cost = Field(default_factory=Cost)


StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]


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


class ToolResultMessage(_Open):
    role: Literal["toolResult"] = "toolResult"
    toolCallId: str
    toolName: str
    content: list[UserContent]
    details: Any = None
    isError: bool = False
    timestamp: int


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
    fromId: str
    timestamp: int


class CompactionSummaryMessage(_Open):
    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokensBefore: int | None = Field(default=None, description="absent when the compaction entry has none")
    timestamp: int


AgentMessage = Annotated[
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage,
    Field(discriminator="role"),
]

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = get_args(ThinkingLevel)
"""The levels in cycling order, from the one definition above."""


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
    type: Literal["compaction"] = "compaction"
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: Any = None
    fromHook: bool | None = None


class BranchSummaryEntry(_EntryBase):
    type: Literal["branch_summary"] = "branch_summary"
    fromId: str
    summary: str
    details: Any = None
    fromHook: bool | None = None


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


def parse_entry(raw: JsonDict) -> KnownEntry | JsonDict:
    """Typed view of one stored entry; an unknown type comes back as the dict it was.

    The store keeps entries as plain dicts (parsing 100k lines into models would triple the
    load time) and validates them here, where a caller actually wants the typed shape.
    """
    if raw.get("type") in KNOWN_ENTRY_TYPES:
        return _known_entry_adapter().validate_python(raw)
    return raw


def parse_message(raw: JsonDict) -> AgentMessage:
    return _message_adapter().validate_python(raw)


def dump_message(message: BaseModel) -> JsonDict:
    """The stored dict of a message or content block.

    Fields left at None are omitted, as the reference agent leaves ``undefined`` out of its
    JSON. (Not for entries: an entry's ``parentId`` must stay ``null`` on the wire.)
    """
    return message.model_dump(mode="json", exclude_none=True)
