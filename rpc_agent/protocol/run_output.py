"""The result line of ``rpc-agent -p --output-format json|stream-json``.

A headless run ends with this one JSON object on stdout (after the events, in stream-json);
``rpc-agent batch`` runs each task as such a child and keeps the line as the task's
``result``. It is a command line's output, not a JSON-RPC message, so it is a TypedDict here
(shared by the writer and the reader), not a model of the published schema.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class RunTokens(TypedDict):
    """Tokens of every assistant message of the run, summed."""

    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: int


class Denial(TypedDict):
    """A tool call the approval policy denied (nobody was there to ask)."""

    toolCallId: str
    toolName: str
    reason: str | None


class RunResult(TypedDict):
    type: Literal["result"]
    text: str
    structuredOutput: Any
    stopReason: str | None
    errorMessage: str | None
    isError: bool
    usage: RunTokens
    costUsd: float
    sessionId: str
    sessionFile: str | None
    durationMs: int
    turns: int
    denials: list[Denial]
