"""Session-file lines written by hand, as pi writes them: the clock and usage block every test
file uses, and the pieces of files that pi's v1 and v2 writers left behind (no ids, or ids but
no version 3), shared by the store's, the server's and the pi compatibility tests.

Every hand-written session starts at ``BASE``; a line's time is given in seconds after it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from child_python import run_child
from rpc_agent.protocol.shapes import MessageDict, UsageDict

JsonDict = dict[str, Any]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BASE = datetime(2024, 12, 3, 14, 0, 0, tzinfo=UTC)
BASE_MS = (BASE - EPOCH) // timedelta(milliseconds=1)


def usage(tokens_in: int, tokens_out: int, cost: float) -> UsageDict:
    """An assistant message's usage as pi 0.73 writes it, the cost split evenly between input
    and output."""
    return {
        "input": tokens_in,
        "output": tokens_out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": tokens_in + tokens_out,
        "cost": {"input": cost / 2, "output": cost / 2, "cacheRead": 0.0, "cacheWrite": 0.0, "total": cost},
    }


USAGE: UsageDict = usage(10, 5, 0.0)

OLD_SESSION_ID = "0c0ffee0-1111-4222-8333-444455556666"


def iso(seconds: float) -> str:
    """An ISO-8601 ms Z timestamp ``seconds`` after ``BASE``."""
    moment = BASE + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def ms_at(seconds: float) -> int:
    """The epoch milliseconds of ``iso(seconds)``: a message's own ``timestamp``."""
    return BASE_MS + round(seconds * 1000)


# --- files ------------------------------------------------------------------------------------


def encode(lines: Sequence[Mapping[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def write_jsonl(path: Path, lines: Sequence[Mapping[str, Any]]) -> bytes:
    data = encode(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


# --- messages ---------------------------------------------------------------------------------


def message(role: str, content: str | list[JsonDict], at: float, **fields: Any) -> JsonDict:
    """A message of ``role`` sent ``at`` seconds after ``BASE``."""
    return {"role": role, "content": content, **fields, "timestamp": ms_at(at)}


def user_message(content: str | list[JsonDict], at: float, **fields: Any) -> JsonDict:
    return message("user", content, at, **fields)


def assistant_message(content: list[JsonDict], at: float, stop: str = "stop", **fields: Any) -> JsonDict:
    """An Anthropic assistant message."""
    return message(
        "assistant",
        content,
        at,
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        usage=USAGE,
        stopReason=stop,
        **fields,
    )


def read_call(partial_json: str, **fields: Any) -> JsonDict:
    """An old tool call ``call_1`` of ``read`` on a.txt, with the ``partialJson`` it streamed."""
    return {
        "type": "toolCall",
        "id": "call_1",
        "name": "read",
        "arguments": {"path": "a.txt"},
        "partialJson": partial_json,
        **fields,
    }


def read_result_message(text: str, at: float, **fields: Any) -> JsonDict:
    """The result of the ``read`` tool call ``call_1``."""
    text_block = {"type": "text", "text": text}
    return message(
        "toolResult", [text_block], at, toolCallId="call_1", toolName="read", isError=False, **fields
    )


# --- lines of v1 and v2 files -------------------------------------------------------------------


def old_header(*, version: int | None = None, cwd: str = "/project", **fields: Any) -> JsonDict:
    """The header of an old file (a v1 file has no ``version``)."""
    header: JsonDict = {"type": "session", "id": OLD_SESSION_ID, "timestamp": iso(0), "cwd": cwd, **fields}
    if version is not None:
        header["version"] = version
    return header


def old_line(kind: str, at: float, **fields: Any) -> JsonDict:
    """A line without id and parent, as a v1 writer put it."""
    return {"type": kind, "timestamp": iso(at), **fields}


def old_message(at: float, message: JsonDict, **fields: Any) -> JsonDict:
    return old_line("message", at, message=message, **fields)


def old_user(content: str | list[JsonDict], at: float) -> JsonDict:
    """A user message line; the message was sent when the line was written."""
    return old_message(at, user_message(content, at))


def old_hook_message(at: float) -> JsonDict:
    """A message of the role that v3 renamed to ``custom``."""
    return old_message(at, message("hookMessage", "hook says hi", at, customType="my-hook", display=True))


def old_compaction(
    at: float, summary: str, first_kept_index: Any, tokens_before: int, **fields: Any
) -> JsonDict:
    """A compaction that names its first kept entry by its index in the file (the header is 0)."""
    return old_line(
        "compaction",
        at,
        summary=summary,
        firstKeptEntryIndex=first_kept_index,
        tokensBefore=tokens_before,
        **fields,
    )


def as_v2(lines: list[JsonDict]) -> list[JsonDict]:
    """``lines`` (a header and v1 lines) as a v2 writer has them: each entry gets an id and the
    entry before it as parent, a compaction names its first kept entry by id."""
    previous = None
    for number, line in enumerate(lines[1:], start=1):
        line["id"] = f"{number:08x}"
        line["parentId"] = previous
        previous = line["id"]
        if line["type"] == "compaction":
            line["firstKeptEntryId"] = lines[line.pop("firstKeptEntryIndex")]["id"]
    return lines


def tool_result(call_id: str, text: str, timestamp: int = 0) -> MessageDict:
    """A ``read`` tool's successful result message carrying ``text``."""
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": timestamp,
    }


def run_node_lines(
    node: str, folder: Path, script: str, *args: str, env: Mapping[str, str] | None = None, timeout: float
) -> list[JsonDict]:
    """Every JSON line a pi script in ``folder`` printed, the script run there by ``node`` (the
    0.73.1 and the 1.5.2 compatibility tests drive pi's own code this way)."""
    done = run_child([node, folder / script, *args], cwd=folder, env=env, timeout=timeout)
    assert done.returncode == 0, f"{script} failed ({done.returncode}):\n{done.stderr}"
    return [json.loads(line) for line in done.stdout.split("\n") if line]
