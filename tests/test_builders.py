"""``protocol.builders``: what each builder makes must be what validating the same data makes
(most skip validation), its output must pass its own schema, the flat events are checked at
run time, and mypy must reject a wrong field or type at a call site (the reason the builders
exist instead of ``model_construct(**Any)``)."""

from __future__ import annotations

import ast
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import BaseModel, ValidationError

from rpc_agent.protocol import builders as build
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.base import pruned
from rpc_agent.protocol.entries import Usage, dump_message, parse_message
from rpc_agent.protocol.methods import InitializeParams, PromptResult, State
from rpc_agent.protocol.payload import event_payload
from rpc_agent.protocol.shapes import BlockDict, MessageDict, UsageDict
from rpc_agent.protocol.state_shapes import StateDict
from typecheck import mypy_errors

USAGE: UsageDict = {
    "input": 120,
    "output": 48,
    "cacheRead": 1000,
    "cacheWrite": 30,
    "totalTokens": 1198,
    "cost": {
        "input": 0.00012,
        "output": 0.00024,
        "cacheRead": 0.0001,
        "cacheWrite": 0.0000375,
        "total": 0.0004975,
    },
    "reasoning": 12,
}
CALL: BlockDict = {"type": "toolCall", "id": "toolu_01", "name": "ls", "arguments": {"path": "src"}}
TEXT: BlockDict = {"type": "text", "text": "Here it is."}

# Messages as the store holds them (each is its own validated dump: checked below).
USER: MessageDict = {"role": "user", "content": "list src", "timestamp": 1_700_000_000_000}
USER_BLOCKS: MessageDict = {
    "role": "user",
    "content": [TEXT, {"type": "image", "data": "aGk=", "mimeType": "image/png"}],
    "timestamp": 1_700_000_000_001,
}
ASSISTANT: MessageDict = {
    "role": "assistant",
    "content": [{"type": "thinking", "thinking": "ls it", "thinkingSignature": "sig"}, TEXT, CALL],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-haiku-4-5",
    "usage": USAGE,
    "stopReason": "toolUse",
    "timestamp": 1_700_000_000_002,
    "responseId": "msg_01",
}
FAILED: MessageDict = {
    **ASSISTANT,
    "content": [],
    "stopReason": "error",
    "errorMessage": "overloaded",
    "timestamp": 1_700_000_000_003,
}
TOOL_RESULT: MessageDict = {
    "role": "toolResult",
    "toolCallId": "toolu_01",
    "toolName": "ls",
    "content": [{"type": "text", "text": "a.py\nb.py"}],
    "details": {"entries": 2, "truncated": None},
    "isError": False,
    "timestamp": 1_700_000_000_004,
}
BASH: MessageDict = {
    "role": "bashExecution",
    "command": "make",
    "output": "ok\n",
    "exitCode": 0,
    "cancelled": False,
    "truncated": False,
    "timestamp": 1_700_000_000_005,
}
CUSTOM: MessageDict = {
    "role": "custom",
    "customType": "note",
    "content": "remember",
    "display": False,
    "details": [1, "two"],
    "timestamp": 1_700_000_000_006,
}
BRANCH_SUMMARY: MessageDict = {
    "role": "branchSummary",
    "summary": "tried X",
    "fromId": "a1b2c3d4",
    "timestamp": 7,
}
COMPACTION_SUMMARY: MessageDict = {
    "role": "compactionSummary",
    "summary": "so far",
    "tokensBefore": 50_000,
    "timestamp": 8,
}
SYSTEM: MessageDict = {
    "role": "system",
    "content": "You are terse.",
    "sections": {"tools": "ls", "gone": None},
    "toolsAdded": [{"name": "ls", "description": "list", "parameters": {"type": "object"}}],
    "toolsRemoved": [{"name": "rm"}],
    "timestamp": 9,
}
MESSAGES = [
    USER,
    USER_BLOCKS,
    ASSISTANT,
    FAILED,
    TOOL_RESULT,
    BASH,
    CUSTOM,
    BRANCH_SUMMARY,
    COMPACTION_SUMMARY,
    SYSTEM,
]

STATE: StateDict = {
    "sessionId": "0b0e6a4c-7d0f-4c2e-9d8e-0c1f2a3b4c5d",
    "sessionFile": None,
    "sessionName": "demo",
    "cwd": "/work",
    "leafId": "a1b2c3d4",
    "model": {
        "id": "claude-haiku-4-5",
        "name": "Claude Haiku 4.5",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "reasoning": True,
        "input": ["text", "image"],
        "contextWindow": 200_000,
        "maxTokens": 64_000,
        "cost": {"input": 1.0, "output": 5.0},
    },
    "thinkingLevel": "medium",
    "isStreaming": False,
    "isCompacting": False,
    "autoCompaction": True,
    "autoRetry": True,
    "steeringMode": "one-at-a-time",
    "followUpMode": "all",
    "messageCount": 4,
    "pendingMessageCount": 0,
    "mcpServers": [
        {"name": "files", "transport": "stdio", "status": "ready", "toolCount": 3},
        {"name": "web", "transport": "http", "status": "failed", "toolCount": 0, "error": "refused"},
    ],
    "sandbox": {"mode": "off", "network": "allow", "hideCredentials": True, "mechanism": None},
}


@dataclass
class Case:
    builder: str
    built: Callable[[], BaseModel]
    model: type[BaseModel]
    data: dict[str, Any]
    """The same data in the model's field names, as a client would validate it."""


def _delta() -> ev.AssistantMessageDelta:
    return build.assistant_delta("text_delta", content_index=1, delta="Here")


CASES = [
    Case("agent_end", lambda: build.agent_end(MESSAGES), ev.AgentEndEvent, {"messages": MESSAGES}),
    Case(
        "turn_end",
        lambda: build.turn_end(ASSISTANT, [TOOL_RESULT]),
        ev.TurnEndEvent,
        {"message": ASSISTANT, "toolResults": [TOOL_RESULT]},
    ),
    Case(
        "message_start", lambda: build.message_start(ASSISTANT), ev.MessageStartEvent, {"message": ASSISTANT}
    ),
    Case(
        "message_end",
        lambda: build.message_end(TOOL_RESULT, "e1f2a3b4"),
        ev.MessageEndEvent,
        {"message": TOOL_RESULT, "entryId": "e1f2a3b4"},
    ),
    Case(
        "message_end (not stored)", lambda: build.message_end(FAILED), ev.MessageEndEvent, {"message": FAILED}
    ),
    Case(
        "assistant_delta",
        lambda: build.assistant_delta(
            "toolcall_start", content_index=2, tool_call=CALL, tool_call_id="toolu_01", tool_name="ls"
        ),
        ev.AssistantMessageDelta,
        {"type": "toolcall_start", "contentIndex": 2, "toolCall": CALL, "id": "toolu_01", "toolName": "ls"},
    ),
    Case(
        "assistant_delta (end)",
        lambda: build.assistant_delta("done", reason="toolUse"),
        ev.AssistantMessageDelta,
        {"type": "done", "reason": "toolUse"},
    ),
    Case(
        "message_update",
        lambda: build.message_update(_delta(), USAGE),
        ev.MessageUpdateEvent,
        {"assistantMessageEvent": {"type": "text_delta", "contentIndex": 1, "delta": "Here"}, "usage": USAGE},
    ),
    Case(
        "message_update (no usage yet)",
        lambda: build.message_update(_delta(), None),
        ev.MessageUpdateEvent,
        {"assistantMessageEvent": {"type": "text_delta", "contentIndex": 1, "delta": "Here"}},
    ),
    Case(
        "tool_result",
        lambda: build.tool_result([TEXT], {"lines": 1}),
        ev.ToolResultPayload,
        {"content": [TEXT], "details": {"lines": 1}},
    ),
    Case(
        "tool_execution_start",
        lambda: build.tool_execution_start("toolu_01", "ls", {"path": "src"}),
        ev.ToolExecutionStartEvent,
        {"toolCallId": "toolu_01", "toolName": "ls", "args": {"path": "src"}},
    ),
    Case(
        "tool_execution_update",
        lambda: build.tool_execution_update("toolu_01", "ls", {"path": "src"}, build.tool_result([TEXT])),
        ev.ToolExecutionUpdateEvent,
        {
            "toolCallId": "toolu_01",
            "toolName": "ls",
            "args": {"path": "src"},
            "partialResult": {"content": [TEXT]},
        },
    ),
    Case(
        "tool_execution_end",
        lambda: build.tool_execution_end("toolu_01", "ls", build.tool_result([TEXT], [3]), False, 41),
        ev.ToolExecutionEndEvent,
        {
            "toolCallId": "toolu_01",
            "toolName": "ls",
            "result": {"content": [TEXT], "details": [3]},
            "isError": False,
            "durationMs": 41,
        },
    ),
    Case(
        "tool_execution_end (did not run)",
        lambda: build.tool_execution_end("toolu_02", "nope", build.tool_result([TEXT]), is_error=True),
        ev.ToolExecutionEndEvent,
        {"toolCallId": "toolu_02", "toolName": "nope", "result": {"content": [TEXT]}, "isError": True},
    ),
    Case(
        "prompt_result",
        lambda: build.prompt_result("stop", [USER, ASSISTANT], None, {"answer": 42}),
        PromptResult,
        {
            "queued": False,
            "stopReason": "stop",
            "messages": [USER, ASSISTANT],
            "structuredOutput": {"answer": 42},
        },
    ),
    Case(
        "prompt_result (failed)",
        lambda: build.prompt_result("error", [FAILED], "overloaded", None),
        PromptResult,
        {"queued": False, "stopReason": "error", "messages": [FAILED], "errorMessage": "overloaded"},
    ),
    Case("usage", lambda: build.usage(USAGE), Usage, dict(USAGE)),
    Case("state", lambda: build.state(STATE), State, dict(STATE)),
    Case("defaults", lambda: build.defaults(InitializeParams), InitializeParams, {}),
]


def _wire(model: BaseModel) -> dict[str, Any]:
    """As the fronts send it (events; results are dumped the same way, keeping None)."""
    return event_payload(model)


def _is_none(_key: str, value: Any) -> bool:
    return value is None


def _content(model: BaseModel) -> Any:
    """What the model says, with None and absent taken as one (optional fields; the stored
    dicts leave them out, validated models hold None), in the dicts as in the models."""
    return pruned(model.model_dump(mode="json"), _is_none)


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: str(m["role"]))
def test_the_sample_messages_are_as_the_store_holds_them(message: MessageDict) -> None:
    assert dump_message(parse_message(message)) == message


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.builder)
def test_a_builder_makes_what_validation_makes_of_the_same_data(case: Case) -> None:
    built = case.built()
    validated = case.model.model_validate(case.data)
    assert type(built) is case.model
    assert _content(built) == _content(validated)
    # What goes out passes its own schema, and validating it says the same again.
    assert _content(case.model.model_validate(_wire(built))) == _content(validated)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.builder)
def test_what_a_builder_makes_holds_what_its_fields_are_annotated_with(case: Case) -> None:
    """Built without validation, a field holds the typed dict its annotation names (not a dict
    where a model is declared), so dumping it for the wire has nothing to warn about."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        case.built().model_dump(mode="json")
        case.model.model_validate(case.data).model_dump(mode="json")


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: str(m["role"]))
def test_every_message_role_travels_in_events_as_validation_would_have_it(message: MessageDict) -> None:
    carriers: list[
        tuple[ev.MessageStartEvent | ev.MessageEndEvent | ev.TurnEndEvent, type[BaseModel], Any]
    ] = [
        (build.message_start(message), ev.MessageStartEvent, {"message": message}),
        (build.message_end(message, "e1"), ev.MessageEndEvent, {"message": message, "entryId": "e1"}),
        (build.turn_end(message, [message]), ev.TurnEndEvent, {"message": message, "toolResults": [message]}),
    ]
    for built, model, data in carriers:
        assert _content(built) == _content(model.model_validate(data))
        # The stored dict goes out as it is: the same keys, no defaults added, no copy made.
        assert _wire(built)["message"] == message
        carried: object = built.message  # annotated as the model, holds the stored dict
        assert carried is message


@pytest.mark.parametrize(
    "bad",
    [
        lambda: build.assistant_delta(cast(Any, "text_deltaa")),
        lambda: build.assistant_delta("text_delta", delta=cast(Any, 3)),
        lambda: build.tool_result(cast(Any, ["not a block"])),
        lambda: build.tool_execution_start("t1", "ls", cast(Any, ["path"])),
        lambda: build.tool_execution_update("t1", "ls", {}, cast(Any, "partial")),
        lambda: build.tool_execution_end("t1", "ls", build.tool_result([]), cast(Any, "maybe")),
    ],
    ids=["delta type", "delta text", "result block", "start args", "update partial", "end isError"],
)
def test_the_flat_events_are_validated_at_run_time_too(bad: Callable[[], BaseModel]) -> None:
    """What mypy would reject, coming through ``Any``, is refused where the event is built."""
    with pytest.raises(ValidationError):
        bad()


class _Construct(ast.NodeVisitor):
    """Notes ``<file>:<function>`` for each ``.model_construct`` (or v1 ``.construct``) in it."""

    def __init__(self, where: str, found: list[str]) -> None:
        self.where, self.found, self.function = where, found, "<module>"

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer, self.function = self.function, node.name
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in ("model_construct", "construct"):
            self.found.append(f"{self.where}:{self.function}")
        self.generic_visit(node)


def test_model_construct_is_called_in_one_place() -> None:
    """Unchecked construction stays in ``builders._unchecked``: anywhere else in the package it
    would take ``**Any`` again (or a model where the code holds dicts) and go out unvalidated."""
    package = Path(build.__file__).parents[1]
    callers: list[str] = []
    for path in sorted(package.rglob("*.py")):
        _Construct(f"{path.relative_to(package)}", callers).visit(ast.parse(path.read_text(), str(path)))
    assert callers == ["protocol/builders.py:_unchecked"]


def test_the_cases_cover_every_builder() -> None:
    builders = {
        name
        for name, value in vars(build).items()
        if inspect.isfunction(value) and value.__module__ == build.__name__ and not name.startswith("_")
    }
    assert builders == {case.builder.split(" ")[0] for case in CASES}


def test_mypy_rejects_a_wrong_field_or_type_at_a_builder_call(tmp_path: Path) -> None:
    """What the builders are for: with ``trusted(cls, **fields: Any)`` each of these went out
    unchecked; ``Model.model_construct`` types its fields as the models, not the dicts we hold."""
    errors = mypy_errors(
        tmp_path,
        "events.py",
        "from rpc_agent.protocol import builders as build\n"
        "from rpc_agent.protocol.shapes import MessageDict, UsageDict\n"
        'message: MessageDict = {"role": "user", "content": "hi", "timestamp": 1}\n'
        "usage: UsageDict\n"
        'build.message_end(message, entry_id="e1")\n'
        "build.message_update(build.assistant_delta('text_delta', delta='x'), usage)\n"
        'build.message_end(message, entryId="e1")\n'
        'build.message_start({"role": "user", "contnt": "hi"})\n'
        "build.turn_end(message, message)\n"
        'build.tool_execution_end("t1", "ls", build.tool_result([]), is_error="no")\n'
        'build.assistant_delta("text_deltaa")\n'
        'build.usage({"input": 1})\n',
    )
    assert sorted({int(line.split(":")[1]) for line in errors}) == [7, 8, 9, 10, 11, 12], errors
    assert any('Unexpected keyword argument "entryId"' in line for line in errors), errors
    assert any('Extra key "contnt"' in line for line in errors), errors
