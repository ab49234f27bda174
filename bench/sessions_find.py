"""Finding sessions among many: list_sessions next to search_sessions, on 10,000 sessions.

    .venv/bin/python -m bench.sessions_find [--sessions 10000] [--runs 3] [--wire/--no-wire]

Writes (once; ``bench/.data/``, git-ignored) a folder of sessions in the shape of a busy user's
history: each a header, a few prompts, assistant answers with text and a tool call, tool results
with many lines of output (most of the bytes), some with a name and a label; sizes vary around
14 KB so that 10,000 of them are about 138 MB, the size issue 23 measured. A rare phrase is
planted in 10 sessions, spread over the folder.

Then, in one run, medians of ``--runs`` (the files in the page cache, as a second listing
finds them):

- ``list_sessions``: every session's listing (the function the server calls);
- ``search_sessions`` with queries hitting few sessions (the rare phrase: every file is read),
  many (a common word: the first page of 50 is found early), the same walked to the last page
  (1,000 a page), none, and one with no ASCII letter to look for (every message line decoded);
- with ``--wire`` (default), the same over the JSON-RPC server's pipes (``--session-dir`` on
  the folder), until the client has the parsed answer.

The issue's bar: a search within twice the listing's time. A benchmark, not a test: nothing
fails on a slow number.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import orjson

from bench.synthetic import DEFAULT_DATA_DIR
from rpc_agent.store.listing import list_sessions
from rpc_agent.store.search import search_sessions
from rpc_agent_client import RpcAgentClient

JsonDict = dict[str, Any]
R = TypeVar("R")

GENERATOR_VERSION = 1
RARE = "zanzibar quokka"
RARE_COUNT = 10
COMMON = "session"
NONE = "no such phrase anywhere"
NO_ASCII = "日本語の文"
_WORDS = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "as",
    "this",
    "be",
    "by",
    "not",
    "are",
    "from",
    "or",
    "at",
    "we",
    "can",
    "should",
    "will",
    "need",
    "first",
    "then",
    "check",
    "make",
    "sure",
    "value",
    "error",
    "test",
    "file",
    "path",
    "module",
    "import",
    "config",
    "session",
    "entry",
    "tree",
    "parent",
    "leaf",
    "branch",
    "summary",
    "token",
    "model",
    "context",
    "message",
    "tool",
    "result",
    "output",
    "line",
    "code",
    "change",
    "fix",
    "update",
    "refactor",
    "function",
    "class",
    "return",
    "type",
    "list",
    "dict",
    "string",
    "parse",
    "load",
    "write",
    "read",
]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _session_lines(rng: random.Random, number: int, base_ms: int, planted: bool) -> list[JsonDict]:
    session_id = f"00000000-0000-4000-8000-{number:012d}"
    stamp = base_ms + number * 60_000
    lines: list[JsonDict] = [
        {
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(stamp / 1000)),
            "cwd": "/home/user/project",
        }
    ]
    parent: str | None = None
    counter = 0

    def add(kind: str, **fields: Any) -> str:
        nonlocal parent, counter
        counter += 1
        entry_id = f"{number % 65536:04x}{counter:04x}"
        at = stamp + counter * 1000
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at / 1000)) + f".{at % 1000:03d}Z"
        lines.append({"type": kind, "id": entry_id, "parentId": parent, "timestamp": iso, **fields})
        parent = entry_id
        return entry_id

    turns = rng.randint(1, 5)
    output_lines = rng.randint(20, 90)
    for turn in range(turns):
        at = stamp + turn * 10_000
        prompt = _text(rng, rng.randint(6, 30))
        if planted and turn == 0:
            prompt += f" about the {RARE} issue"
        first_user = add("message", message={"role": "user", "content": prompt, "timestamp": at})
        call = f"toolu_{number:06d}{turn}"
        add(
            "message",
            message={
                "role": "assistant",
                "content": [
                    {"type": "text", "text": _text(rng, rng.randint(10, 60))},
                    {
                        "type": "toolCall",
                        "id": call,
                        "name": "bash",
                        "arguments": {"command": "grep -rn error src"},
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": {"input": 1200, "output": 300, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1500},
                "stopReason": "toolUse",
                "timestamp": at + 1000,
            },
        )
        output = "\n".join(f"src/{rng.choice(_WORDS)}.py:{i}: {_text(rng, 8)}" for i in range(output_lines))
        add(
            "message",
            message={
                "role": "toolResult",
                "toolCallId": call,
                "toolName": "bash",
                "content": [{"type": "text", "text": output}],
                "isError": False,
                "timestamp": at + 2000,
            },
        )
        if turn == 0 and rng.random() < 0.2:
            add("label", targetId=first_user, label=_text(rng, 2))
    if rng.random() < 0.3:
        add("session_info", name=_text(rng, 3))
    return lines


def ensure_sessions(count: int) -> Path:
    """The folder of ``count`` generated sessions (written once, reused)."""
    folder = DEFAULT_DATA_DIR / f"find-{count}-v{GENERATOR_VERSION}" / "sessions" / "--home-user-project--"
    done = folder.parent.parent / "complete"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(23)
    base_ms = 1_767_225_600_000  # 2026-01-01
    planted = set(range(0, count, max(1, count // RARE_COUNT)))
    for number in range(count):
        lines = _session_lines(rng, number, base_ms, number in planted)
        path = folder / f"{lines[0]['timestamp'].replace(':', '-').replace('.', '-')}_{lines[0]['id']}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        mtime = (base_ms + number * 60_000) / 1000
        os.utime(path, (mtime, mtime))
    done.touch()
    return folder


def _median_ms(run: Callable[[], R], runs: int) -> tuple[float, R]:
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        result = run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def _walk_pages(folder: Path, query: str) -> int:
    total, cursor = 0, None
    while True:
        page = search_sessions([folder], query, 1000, cursor)
        total += len(page.sessions)
        cursor = page.nextCursor
        if cursor is None:
            return total


QUERIES: list[tuple[str, str, int | None]] = [
    ("search, few hits", RARE, 50),
    ("search, many hits (first page)", COMMON, 50),
    ("search, many hits (every page)", COMMON, None),
    ("search, no hit", NONE, 50),
    ("search, no ASCII to look for", NO_ASCII, 50),
]


def in_process(folder: Path, runs: int) -> list[tuple[str, float, int]]:
    rows: list[tuple[str, float, int]] = []
    listing_ms, infos = _median_ms(lambda: list_sessions(folder), runs)
    rows.append(("list_sessions", listing_ms, len(infos)))
    for label, query, limit in QUERIES:
        if limit is None:
            ms, total = _median_ms(partial(_walk_pages, folder, query), runs)
            rows.append((label, ms, total))
        else:
            ms, page = _median_ms(partial(search_sessions, [folder], query, limit, None), runs)
            rows.append((label, ms, len(page.sessions)))
    return rows


async def over_the_wire(folder: Path, runs: int) -> list[tuple[str, float, int]]:
    rows: list[tuple[str, float, int]] = []
    home = folder.parent.parent
    async with RpcAgentClient.spawn(
        "--provider", "faux", "--session-dir", str(folder), "--no-session", env={"RPC_AGENT_HOME": str(home)}
    ) as client:
        await client.initialize()

        async def timed(call: Callable[[], Any]) -> tuple[float, Any]:
            times: list[float] = []
            result = None
            for _ in range(runs):
                start = time.perf_counter()
                result = await call()
                times.append((time.perf_counter() - start) * 1000)
            return statistics.median(times), result

        ms, listed = await timed(client.list_sessions)
        rows.append(("list_sessions", ms, len(listed.sessions)))
        for label, query, limit in QUERIES:
            if limit is None:
                continue
            ms, found = await timed(partial(client.search_sessions, query, limit=limit))
            rows.append((label, ms, len(found.sessions)))
    return rows


def _table(title: str, rows: list[tuple[str, float, int]]) -> None:
    listing = rows[0][1]
    print(f"\n{title}")
    print(f"{'':34} {'median ms':>10} {'x listing':>10} {'sessions':>9}")
    for label, ms, count in rows:
        print(f"{label:34} {ms:10.1f} {ms / listing:10.2f} {count:9d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--wire", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    folder = ensure_sessions(args.sessions)
    files = list(folder.glob("*.jsonl"))
    size = sum(path.stat().st_size for path in files)
    print(f"{len(files)} sessions, {size / 1e6:.0f} MB in {folder}")
    list_sessions(folder)  # the files into the page cache
    _table("in process (the functions the server calls)", in_process(folder, args.runs))
    if args.wire:
        _table("over the JSON-RPC server's pipes", anyio.run(over_the_wire, folder, args.runs))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
