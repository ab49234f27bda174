"""A session file shaped as pi 1.5.2 writes it, by hand: every entry type and field that pi
added since 0.73.1 (system messages, usage entries, context edits, a compaction with its
system checkpoint and usage, usage on tool results and branch summaries, thinking level
``max``, a UUIDv7 session id). Shared by the store, client, server and compatibility tests.
"""

from __future__ import annotations

from typing import Any

from pi_lines import USAGE, iso, ms_at

JsonDict = dict[str, Any]

SESSION_ID = "019a7c52-5e1c-7d3e-9c1a-2b3c4d5e6f70"
"""A UUIDv7, as pi 1.5 names its sessions."""


def usage(input_tokens: int, output_tokens: int, cost: float) -> JsonDict:
    return {
        "input": input_tokens,
        "output": output_tokens,
        "cacheRead": 0,
        "cacheWrite": 0,
        "cacheWrite1h": 0,
        "reasoning": 0,
        "totalTokens": input_tokens + output_tokens,
        "cost": {
            "input": cost,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": cost,
            "totalFromProvider": False,
        },
    }


TOOLS = [
    {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {}}},
    {"name": "bash", "description": "Run a command", "parameters": {"type": "object", "properties": {}}},
]


def line(entry_type: str, entry_id: str, parent: str | None, at: int, /, **fields: Any) -> JsonDict:
    entry: JsonDict = {"type": entry_type, "id": entry_id, "parentId": parent, "timestamp": iso(at)}
    entry.update(fields)
    return entry


def message(entry_id: str, parent: str | None, at: int, **fields: Any) -> JsonDict:
    return line("message", entry_id, parent, at, message={**fields, "timestamp": ms_at(at)})


def assistant(entry_id: str, parent: str, at: int, text: str, **extra: Any) -> JsonDict:
    fields: JsonDict = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": USAGE,
        "stopReason": "stop",
        "thinkingLevel": "max",
        "responseId": "msg_1",
        "durationMs": 1200,
    }
    fields.update(extra)
    return message(entry_id, parent, at, **fields)


def pi15_session(cwd: str = "/project") -> list[JsonDict]:
    """Header and entries; the leaf (last line) is ``a5`` after a compaction."""
    system_first = {
        "role": "system",
        "content": "",
        "sections": {"preamble": "You are an expert coding assistant.", "cwd": f"Current directory: {cwd}"},
        "toolsAdded": TOOLS,
    }
    return [
        {"type": "session", "version": 3, "id": SESSION_ID, "timestamp": iso(0), "cwd": cwd},
        line("model_change", "00000e01", None, 1, provider="anthropic", modelId="claude-sonnet-4-5"),
        line("thinking_level_change", "00000e02", "00000e01", 1, thinkingLevel="max"),
        message("00000001", "00000e02", 2, **system_first),
        message("00000002", "00000001", 3, role="user", content="Read the README"),
        message(
            "00000003",
            "00000002",
            4,
            role="assistant",
            content=[
                {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "README.md"}}
            ],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            usage=usage(100, 20, 0.003),
            stopReason="toolUse",
            thinkingLevel="max",
        ),
        message(
            "00000004",
            "00000003",
            5,
            role="toolResult",
            toolCallId="toolu_1",
            toolName="read",
            content=[{"type": "text", "text": "# README (huge)"}],
            isError=False,
            usage=usage(200, 10, 0.005),
            durationMs=12,
        ),
        assistant(
            "00000005", "00000004", 6, "A failed attempt", stopReason="error", errorMessage="overloaded"
        ),
        line("context_edit", "00000006", "00000005", 7, targetId="00000005", replacement=None),
        line(
            "context_edit",
            "00000007",
            "00000006",
            7,
            targetId="00000004",
            replacement={"content": [{"type": "text", "text": "# README"}]},
        ),
        assistant("00000008", "00000007", 8, "The README has a title."),
        line(
            "usage",
            "00000009",
            "00000008",
            9,
            kind="cache_warm",
            provider="anthropic",
            model="claude-sonnet-4-5",
            usage=usage(300, 0, 0.01),
        ),
        message(
            "0000000a",
            "00000009",
            10,
            role="system",
            content="",
            sections={"cwd": f"Current directory: {cwd}/sub"},
            toolsRemoved=[{"name": "bash"}],
        ),
        message("0000000b", "0000000a", 11, role="user", content="Now summarise"),
        assistant("0000000c", "0000000b", 12, "Summary."),
        line(
            "compaction",
            "0000000d",
            "0000000c",
            13,
            summary="The user asked about the README.",
            firstKeptEntryId="0000000a",
            tokensBefore=4000,
            usage=usage(250, 40, 0.02),
            systemMessage={
                "role": "system",
                "content": "",
                "sections": {
                    "preamble": "You are an expert coding assistant.",
                    "cwd": f"Current directory: {cwd}/sub",
                },
                "toolsAdded": TOOLS[:1],
                "timestamp": ms_at(13),
            },
        ),
        message("0000000e", "0000000d", 14, role="user", content="And now?"),
        assistant("0000000f", "0000000e", 15, "Now we go on."),
    ]


LEAF = "0000000f"
CONTEXT_ROLES = ["system", "compactionSummary", "user", "assistant", "user", "assistant"]
"""The roles pi 1.5.2 builds at ``LEAF``: the checkpoint, the summary, the kept range without
its system message (0b, 0c), then what follows the compaction."""
