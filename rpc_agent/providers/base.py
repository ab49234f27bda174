"""The interface between the agent loop and a model provider.

A provider turns one request (system prompt, stored messages, tool specs, thinking level) into
a stream of ``AssistantEvent`` values, the same deltas the server forwards to clients as
``message_update`` events. It never stores anything and never retries: the agent loop owns
the retry policy, the session and cancellation (an abort cancels the task that iterates the
stream; the loop keeps the last ``partial`` it saw and stores it with stopReason "aborted").

Messages are the stored dicts (``MessageDict`` of ``rpc_agent.protocol.shapes``: user,
assistant, toolResult, bashExecution, custom, branchSummary, compactionSummary); converting them
to the provider's wire format, including repairing tool results whose call is not in the
request, is the provider's job.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

from rpc_agent.errors import ProviderError
from rpc_agent.protocol.builders import assistant_delta
from rpc_agent.protocol.events import AssistantEventType, AssistantMessageDelta
from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.protocol.shapes import BlockDict, MessageDict, UsageDict
from rpc_agent.protocol.state_shapes import ModelDescriptionDict


@dataclass(slots=True)
class AssistantEvent:
    """One streaming step. ``partial`` is the assistant message as it stands after this step.

    ``partial`` is the provider's live dict, not a copy: a consumer that keeps it past the
    next event must copy it. ``done`` carries the final message (stopReason stop, length or
    toolUse); ``error`` carries one with stopReason "error" and errorMessage set.
    """

    type: AssistantEventType
    partial: MessageDict
    contentIndex: int | None = None
    delta: str | None = None
    content: str | None = None
    toolCall: BlockDict | None = None
    reason: str | None = None
    error: ProviderError | None = None
    """On an ``error`` event: the classified failure (retryable, overflow, status,
    retry_after), the same object a failure before any content raises."""

    def step(self) -> AssistantMessageDelta:
        """This step as clients get it in ``message_update``: the same fields, without the
        live message and the error object; a tool call's start names the call (as pi's does)."""
        call_id = tool_name = None
        if self.type == "toolcall_start" and self.contentIndex is not None:
            content = self.partial["content"]
            if isinstance(content, list):  # always, for a partial; a str has no blocks
                block = content[self.contentIndex]
                call_id = block.get("id")
                tool_name = block.get("name")
        return assistant_delta(
            self.type,
            content_index=self.contentIndex,
            delta=self.delta,
            content=self.content,
            tool_call=self.toolCall,
            reason=self.reason,
            tool_call_id=call_id,
            tool_name=tool_name,
        )


def empty_usage() -> UsageDict:
    """The usage of a message that has not reported any (yet): every count zero."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0},
    }


@dataclass(slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: JsonSchema
    """JSON Schema of the arguments object."""


@dataclass(slots=True)
class ModelInfo:
    id: str
    provider: str
    name: str
    contextWindow: int
    maxTokens: int
    reasoning: bool = True
    input: list[str] = field(default_factory=lambda: ["text", "image"])
    cost: dict[str, float] = field(
        default_factory=lambda: {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0}
    )
    """Dollars per million tokens."""
    thinkingLevels: tuple[str, ...] | None = None
    """The thinking levels the model takes (with reasoning); None: every level."""

    def to_json(self) -> ModelDescriptionDict:
        return {
            "id": self.id,
            "name": self.name,
            "api": "anthropic-messages",
            "provider": self.provider,
            "reasoning": self.reasoning,
            "input": list(self.input),
            "contextWindow": self.contextWindow,
            "maxTokens": self.maxTokens,
            "cost": dict(self.cost),
        }


@dataclass(slots=True)
class ProviderRequest:
    model: ModelInfo
    system_prompt: str
    messages: list[MessageDict]
    tools: list[ToolSpec] = field(default_factory=list)
    thinking_level: str = "off"
    max_tokens: int | None = None
    purpose: Literal["turn", "summary"] = "turn"
    """Summaries (compaction, branch summary) use the same call with no tools."""
    tool_choice: str | None = None
    """A tool the model must call in this answer; a provider that cannot force it (or not
    with thinking on) lets the model choose."""


class Provider(Protocol):
    name: str

    def models(self) -> list[ModelInfo]:
        """The models this provider offers, first one the default."""
        ...

    def resolve_model(self, model_id: str) -> ModelInfo:
        """A model by id; unknown ids get sane defaults instead of an error."""
        ...

    def knows_model(self, model_id: str) -> bool:
        """Whether ``set_model`` may choose this id (a session file may still name others)."""
        ...

    def stream(self, request: ProviderRequest) -> AsyncIterator[AssistantEvent]:
        """Stream one assistant message. Raises ProviderError for failures that happen before
        any content; failures mid-stream end with an ``error`` event whose partial keeps what
        arrived (the loop stores it)."""
        ...

    async def aclose(self) -> None:
        """Release connections; the server calls it once, at shutdown."""
        ...
