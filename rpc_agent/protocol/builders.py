"""The events and results the agent builds on its busy paths, with typed signatures.

The agent emits a ``message_update`` per streamed delta and a ``message_start``/``message_end``
per message, each carrying the message as the store holds it (a ``MessageDict``, checked when
it was appended). Validating a stored message again would turn every dict into models and cost
more than the rest of the event's path, and a ``message_update`` validated would turn the usage
it carries into models that cost more to send (``bench.events``). So the builders of the events
and results that carry stored messages or a streamed usage take the data as it is, and so do
the state that answers ``initialize`` and the defaults of a request without params (built on
the start-up path, where no validator is built yet). Those fields are annotated with the typed
dicts they hold (``Annotated[MessageDict, CheckedAs(AgentMessage)]``: validated against the
models, which the schema publishes, and held as the dicts), so what these builders make holds
what the annotations say and dumps as it is. ``_unchecked`` is the only place where a protocol
model is built without validation.

The other builders validate: pydantic's validation of a few plain fields (a delta, a tool
call's start, update and end) costs less than ``model_construct`` (``bench.events``), and a
compaction's usage is built once per compaction.

Each builder takes the typed shapes the code holds (``MessageDict``, ``UsageDict``,
``StateDict``) and the model's own field types, so mypy rejects a misspelt field, a missing one
or a wrong type at every call site (``model_construct`` itself checks no argument). What an unchecked builder produces equals what validation
makes of the same data (tests/test_builders.py).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from rpc_agent.protocol import events as ev
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.entries import Usage
from rpc_agent.protocol.methods import PromptResult, State
from rpc_agent.protocol.shapes import BlockDict, MessageDict, UsageDict
from rpc_agent.protocol.state_shapes import StateDict

_ModelT = TypeVar("_ModelT", bound=BaseModel)


def _unchecked(cls: type[_ModelT], /, **fields: Any) -> _ModelT:
    """The model holding ``fields`` as given: the builders' signatures are the only check."""
    return cls.model_construct(**fields)


# --- carrying stored messages, a streamed usage or the state: unchecked -------------------


def agent_end(messages: list[MessageDict]) -> ev.AgentEndEvent:
    return _unchecked(ev.AgentEndEvent, messages=messages, willRetry=False)


def turn_end(message: MessageDict, tool_results: list[MessageDict]) -> ev.TurnEndEvent:
    return _unchecked(ev.TurnEndEvent, message=message, toolResults=tool_results)


def message_start(message: MessageDict) -> ev.MessageStartEvent:
    return _unchecked(ev.MessageStartEvent, message=message)


def message_end(message: MessageDict, entry_id: str | None = None) -> ev.MessageEndEvent:
    """``entry_id`` is None when the message was not stored (a dropped or failed stream)."""
    return _unchecked(ev.MessageEndEvent, message=message, entryId=entry_id)


def message_update(delta: ev.AssistantMessageDelta, usage: UsageDict | None) -> ev.MessageUpdateEvent:
    return _unchecked(ev.MessageUpdateEvent, assistantMessageEvent=delta, usage=usage)


def prompt_result(
    stop_reason: str | None, messages: list[MessageDict], error_message: str | None, structured_output: Any
) -> PromptResult:
    """The result of a prompt that ran (not one that was queued or handled by a hook)."""
    return _unchecked(
        PromptResult,
        queued=False,
        stopReason=stop_reason,
        messages=messages,
        errorMessage=error_message,
        structuredOutput=structured_output,
    )


def state(fields: StateDict) -> State:
    return _unchecked(State, **fields)


def defaults(model: type[_ModelT]) -> _ModelT:
    """The params of a request without a params member, for a model whose every field has a
    default: the defaults, as validating ``{}`` gives them, without building the model's
    validator. The protocol's params models have no validators of their own (a test holds the
    two equal for every method of the table), and a start's first request is often such a
    request (``initialize``): no validator built means no pydantic schema machinery loaded
    before the first answer."""
    return _unchecked(model)


# --- validated ------------------------------------------------------------------------------


def assistant_delta(
    type: ev.AssistantEventType,
    *,
    content_index: int | None = None,
    delta: str | None = None,
    content: str | None = None,
    tool_call: BlockDict | None = None,
    reason: str | None = None,
    tool_call_id: str | None = None,
    tool_name: str | None = None,
) -> ev.AssistantMessageDelta:
    return ev.AssistantMessageDelta(
        type=type,
        contentIndex=content_index,
        delta=delta,
        content=content,
        toolCall=tool_call,
        reason=reason,
        id=tool_call_id,
        toolName=tool_name,
    )


def tool_result(content: list[BlockDict], details: Any = None) -> ev.ToolResultPayload:
    return ev.ToolResultPayload(content=content, details=details)


def tool_execution_start(call_id: str, name: str, args: JsonDict) -> ev.ToolExecutionStartEvent:
    return ev.ToolExecutionStartEvent(toolCallId=call_id, toolName=name, args=args)


def tool_execution_update(
    call_id: str, name: str, args: JsonDict, partial: ev.ToolResultPayload
) -> ev.ToolExecutionUpdateEvent:
    return ev.ToolExecutionUpdateEvent(toolCallId=call_id, toolName=name, args=args, partialResult=partial)


def tool_execution_end(
    call_id: str, name: str, result: ev.ToolResultPayload, is_error: bool, duration_ms: int | None = None
) -> ev.ToolExecutionEndEvent:
    """``duration_ms`` is None when the tool did not run."""
    return ev.ToolExecutionEndEvent(
        toolCallId=call_id,
        toolName=name,
        result=result,
        isError=is_error,
        durationMs=duration_ms,
    )


def usage(counts: UsageDict) -> Usage:
    return Usage.model_validate(counts)
