"""Headless mode: one prompt from the command line, the answer on stdout, an exit code.

Nobody is there to ask: the approval policy still applies, and a call it would ask about is
denied, with the reason in the output (the model reads it too and can go on without). Exit
codes: 0 the model finished; 1 the run failed (provider error, or the run was aborted, or
with --output-schema it never gave an answer matching the schema); 3 a limit (--max-turns,
--max-budget-usd) stopped it; 2 bad usage (from argparse, settings, or an invalid schema).

With an output schema, the answer is the validated JSON value: ``structuredOutput`` in the JSON
result, and the whole text output (one JSON document) in text mode.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import anyio
import anyio.to_thread
import orjson
from pydantic import BaseModel

from rpc_agent.agent.structured import INVALID_OUTPUT
from rpc_agent.protocol.content import message_text
from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.protocol.payload import event_payload
from rpc_agent.protocol.run_output import Denial, RunResult, RunTokens
from rpc_agent.runtime import Runtime, ServerConfig, event_loop_options

OUTPUT_FORMATS = ("text", "json", "stream-json")
LIMIT_STOPS = ("max_turns", "max_budget")
_TOKEN_KEYS: tuple[Literal["input", "output", "cacheRead", "cacheWrite", "totalTokens"], ...] = (
    "input",
    "output",
    "cacheRead",
    "cacheWrite",
    "totalTokens",
)


def _write_line(data: Mapping[str, Any]) -> None:
    sys.stdout.buffer.write(orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE))
    sys.stdout.buffer.flush()


def _exit_code(stop_reason: str | None) -> int:
    if stop_reason in LIMIT_STOPS:
        return 3
    if stop_reason in ("error", "aborted", INVALID_OUTPUT):
        return 1
    return 0


def _usage(messages: Iterable[Mapping[str, Any]]) -> tuple[RunTokens, float, int]:
    totals: RunTokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    cost = 0.0
    turns = 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        turns += 1
        usage = message.get("usage") or {}
        for key in _TOKEN_KEYS:
            totals[key] += int(usage.get(key) or 0)
        cost += float((usage.get("cost") or {}).get("total") or 0)
    return totals, round(cost, 6), turns


async def run_prompt(
    config: ServerConfig, prompt: str, output_format: str, output_schema: JsonSchema | None = None
) -> int:
    started = time.monotonic()
    runtime = Runtime(config)
    runtime.tools()  # an unknown --tools name fails here, before the session is opened
    manager = await anyio.to_thread.run_sync(runtime.open_session)
    denials: list[Denial] = []

    def emit(event: BaseModel) -> None:
        payload = event_payload(event)
        if payload.get("type") == "approval" and payload.get("decision") == "deny":
            denials.append(
                {
                    "toolCallId": payload["toolCallId"],
                    "toolName": payload["toolName"],
                    "reason": payload["reason"],
                }
            )
            if output_format == "text":
                print(f"rpc-agent: denied {payload['toolName']}: {payload['reason']}", file=sys.stderr)
        if output_format == "stream-json":
            _write_line(payload)

    agent = runtime.agent(manager, emit)
    try:
        result = await agent.prompt(prompt, output_schema=output_schema)
    finally:
        await agent.shutdown()
        runtime.close()
    messages = [dict(m) for m in result.messages]
    final = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    text = message_text(final.get("content")) if final else ""
    code = _exit_code(result.stopReason)
    usage, cost, turns = _usage(messages)
    if output_format == "text":
        if output_schema is not None:
            text = orjson.dumps(result.structuredOutput).decode() if code == 0 else ""
        if text:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            sys.stdout.flush()
        if code:
            print(
                f"rpc-agent: {result.stopReason}: {result.errorMessage or 'the run failed'}", file=sys.stderr
            )
        return code
    line: RunResult = {
        "type": "result",
        "text": text,
        "structuredOutput": result.structuredOutput,
        "stopReason": result.stopReason,
        "errorMessage": result.errorMessage,
        "isError": code != 0,
        "usage": usage,
        "costUsd": cost,
        "sessionId": agent.manager.session_id,
        "sessionFile": str(agent.manager.session_file) if agent.manager.session_file else None,
        "durationMs": int((time.monotonic() - started) * 1000),
        "turns": turns,
        "denials": denials,
    }
    _write_line(line)
    return code


def run(
    config: ServerConfig, prompt: str, output_format: str, output_schema: JsonSchema | None = None
) -> int:
    return anyio.run(
        run_prompt, config, prompt, output_format, output_schema, backend_options=event_loop_options()
    )
