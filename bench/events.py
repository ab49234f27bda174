"""What building one event costs, in process, three ways: as ``protocol.builders`` builds it;
every model of it by ``model_construct`` (unchecked, as the agent built them all before the
builders); every model of it validated (``Model.model_validate`` of the same data). The
builder and the validated event are also dumped as the fronts send them (``event_payload``).

    .venv/bin/python -m bench.events [--count 2000] [--repeats 51]

The agent builds a ``message_update`` per streamed delta, from the provider's step, and a
``message_start``/``message_end`` per message, carrying the stored message: validating that
message again is what the unchecked builders save. A flat event (a delta, a tool call's end)
costs less to validate than to ``model_construct``, so its builder validates.
Each figure is the best of ``--repeats`` rounds of ``--count`` builds (the round least
disturbed by other processes), in microseconds per event.
"""

from __future__ import annotations

import timeit
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel

from bench.options import parse_counts
from rpc_agent.protocol import builders as build
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.payload import event_payload
from rpc_agent.protocol.shapes import BlockDict, MessageDict
from rpc_agent.providers.base import AssistantEvent, empty_usage

USAGE = empty_usage()
ANSWER: MessageDict = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "t" * 200, "thinkingSignature": "s" * 64},
        {"type": "text", "text": "w" * 2000},
        {"type": "toolCall", "id": "toolu_01", "name": "read", "arguments": {"path": "src/main.py"}},
    ],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-haiku-4-5",
    "usage": USAGE,
    "stopReason": "toolUse",
    "timestamp": 1_700_000_000_000,
}
STEP = AssistantEvent("text_delta", ANSWER, contentIndex=1, delta="word")


@dataclass
class Row:
    event: str
    built_us: float
    unchecked_us: float
    validated_us: float
    built_sent_us: float
    validated_sent_us: float


def _best_us(make: Callable[[], object], count: int, repeats: int) -> float:
    return min(timeit.repeat(make, number=count, repeat=repeats)) / count * 1e6


def _row(
    event: str,
    built: Callable[[], BaseModel],
    unchecked: Callable[[], BaseModel],
    validated: Callable[[], BaseModel],
    count: int,
    repeats: int,
) -> Row:
    return Row(
        event,
        _best_us(built, count, repeats),
        _best_us(unchecked, count, repeats),
        _best_us(validated, count, repeats),
        _best_us(lambda: event_payload(built()), count, repeats),
        _best_us(lambda: event_payload(validated()), count, repeats),
    )


def measure(count: int, repeats: int) -> list[Row]:
    def step_fields() -> dict[str, Any]:
        """The step's fields, read as the builder reads them."""
        return {
            "type": STEP.type,
            "contentIndex": STEP.contentIndex,
            "delta": STEP.delta,
            "content": STEP.content,
            "toolCall": STEP.toolCall,
            "reason": STEP.reason,
        }

    def update_data() -> dict[str, object]:
        return {"assistantMessageEvent": step_fields(), "usage": USAGE}

    result: list[BlockDict] = [{"type": "text", "text": "a.py\nb.py"}]
    return [
        _row(
            "message_update",
            lambda: build.message_update(STEP.step(), USAGE),
            lambda: ev.MessageUpdateEvent.model_construct(
                assistantMessageEvent=ev.AssistantMessageDelta.model_construct(**step_fields()),
                usage=cast(Any, USAGE),
            ),
            lambda: ev.MessageUpdateEvent.model_validate(update_data()),
            count,
            repeats,
        ),
        _row(
            "message_end",
            lambda: build.message_end(ANSWER, "a1b2c3d4"),
            lambda: ev.MessageEndEvent.model_construct(message=cast(Any, ANSWER), entryId="a1b2c3d4"),
            lambda: ev.MessageEndEvent.model_validate({"message": ANSWER, "entryId": "a1b2c3d4"}),
            count,
            repeats,
        ),
        _row(
            "tool_execution_end",
            lambda: build.tool_execution_end("toolu_01", "ls", build.tool_result(result), False, 3),
            lambda: ev.ToolExecutionEndEvent.model_construct(
                toolCallId="toolu_01",
                toolName="ls",
                result=ev.ToolResultPayload.model_construct(content=result),
                isError=False,
                durationMs=3,
            ),
            lambda: ev.ToolExecutionEndEvent.model_validate(
                {
                    "toolCallId": "toolu_01",
                    "toolName": "ls",
                    "result": {"content": result},
                    "isError": False,
                    "durationMs": 3,
                }
            ),
            count,
            repeats,
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    args = parse_counts(__doc__, argv, count=2000, repeats=51)
    print(f"us per event, best of {args.repeats} rounds of {args.count}:")
    print(
        f"  {'event':<20} {'builder':>8} {'unchecked':>10} {'validated':>10}"
        f" {'builder+sent':>13} {'validated+sent':>15}"
    )
    for row in measure(args.count, args.repeats):
        print(
            f"  {row.event:<20} {row.built_us:8.2f} {row.unchecked_us:10.2f} {row.validated_us:10.2f}"
            f" {row.built_sent_us:13.2f} {row.validated_sent_us:15.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
