"""Session store benchmark: load, context, tree and durable appends, next to the reference agent.

Run from the project root::

    .venv/bin/python -m bench.session_store [--sizes 1000,10000,100000] [--baseline/--no-baseline]

What it does:

1. Writes synthetic, realistic v3 session files (``bench/.data/``, git-ignored): user messages,
   assistant messages with thinking, text and tool calls (usage with cost), tool results with
   multi-line output, a few branches (with and without ``branch_summary``), two compactions,
   labels, a model change, a thinking level change, a session name and a few extension
   entries. About 750 bytes per entry, so 100k entries make a 75 MB file. The files are
   deterministic (fixed seed) and reused when already there.
2. Times, median of several runs: ``SessionManager.open(path)`` + ``close()``, and the first
   ``build_session_context()`` and ``get_tree()`` after each open (so a cache in the manager
   does not hide the cost); then durable appends (each one awaited until fsynced), one at a
   time and from 64 concurrent tasks, with the fsync count.
3. With ``--baseline`` (default), and when ``node`` and ``npm`` exist, installs the reference
   implementation (``@mariozechner/pi-coding-agent``) into ``bench/.node/`` once and times its
   read + ``parseSessionEntries`` + ``migrateSessionEntries`` + ``buildSessionContext`` on the
   same files (``bench/pi_baseline.mjs``), then checks that both contexts hold the same
   messages. A baseline that cannot be installed or run is reported, never fatal.

This is a benchmark, not a test: nothing here fails on a slow number. ``--profile`` adds a
cProfile of the largest size's open+load and get_tree.
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import gc
import io
import os
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import orjson

from rpc_agent.session import SessionManager

JsonDict = dict[str, Any]

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = BENCH_DIR / ".data"
NODE_PREFIX = BENCH_DIR / ".node"
PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
"""Pinned, as tests/compat pins it: a baseline that moves would make the ratios meaningless."""
PI_SCRIPT = BENCH_DIR / "pi_baseline.mjs"
GENERATOR_VERSION = 1
"""Part of the data file names: bump it when the generator changes so old files are not reused."""

BRANCH_EVERY = 500
"""Entries per branch in the branchy shape (see ``ensure_session_file``)."""

TARGET_LOAD_RATIO = 0.5
"""Open + build context of the largest session in at most this fraction of pi's time."""
TARGET_CONCURRENT_APPENDS = 30_000
"""Durable appends per second with 64 concurrent appenders."""


# --- synthetic sessions ---------------------------------------------------------------------

_WORD_TEXT = (
    "the a to of and in is it that for on with as this be by not are from or at we can should "
    "will need first then check make sure value error test file path module import config session "
    "entry tree parent leaf branch compaction summary token model context message tool result "
    "output line code change fix update refactor function class return type list dict string "
    "parse load write read append lock fsync durable cache index query handler request response "
    "server client stream event loop task worker thread queue batch retry timeout cancel latency "
    "memory buffer offset length header version migrate schema field option default argument "
    "assert expect failure passing failing coverage lint format build install package depend"
)
_WORDS = _WORD_TEXT.split()
_DIRS = ("core", "session", "rpc", "tools", "agent", "utils", "providers", "compaction", "cli", "tests")
_FILES = ("store", "writer", "context", "entries", "server", "dispatch", "bash", "edit", "read", "models")
_CODE = (
    "def {w}_{v}(self, {w}: str) -> None:",
    "    return self._{w}.get({v!r})",
    "    if not {w}:",
    "        raise ValueError(f'bad {w}: {{{v}}}')",
    "for {w} in self.{v}s:",
    "    {w} = {v}.{w}({v}, timeout=30)",
    "import {w}",
    "from .{w} import {v}",
    "class {W}{V}:",
    "    {w}: list[str] = field(default_factory=list)",
    "# {w} {v} {w}",
    "    await self.{w}.{v}()",
)
_MODELS = (("anthropic", "claude-sonnet-4-5"), ("anthropic", "claude-opus-4-1"))
_TOOLS = ("read", "bash", "edit", "write", "grep")


@dataclass(slots=True)
class _Node:
    id: str
    kind: str
    """"user", "assistant_end" (end of a turn), or another entry/message kind."""


class SessionGenerator:
    """Writes one synthetic session as v3 JSONL; entries always extend the current path.

    Planned events happen at fixed fractions of the requested size, so every size holds the
    same mix: branches back a few turns (a sibling path is left behind), with a
    ``branch_summary`` or without (as a plain ``branch()`` followed by an append writes it),
    compactions keeping the last few turns, labels, a model and a thinking level change.
    The last line is the last entry of the current path: the leaf for both implementations.
    """

    def __init__(self, entries: int, seed: int = 20261121, *, branchy: bool = False) -> None:
        self.target = entries
        self.branchy = branchy
        self.fork_point = -1
        self.rng = random.Random(seed + entries)
        self.ids: set[str] = set()
        self.path: list[_Node] = []
        self.lines: list[bytes] = []
        self.count = 0
        self.clock = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
        self.model = _MODELS[0]
        self.events = self._plan()

    def _plan(self) -> dict[int, str]:
        fractions = {
            0.15: "branch_summary",
            0.30: "branch",
            0.35: "thinking_level_change",
            0.45: "branch_summary",
            0.50: "compaction",
            0.60: "branch",
            0.65: "custom_message",
            0.70: "model_change",
            0.80: "branch_summary",
            0.90: "compaction",
            0.93: "label_clear",
        }
        if self.branchy:
            del fractions[0.50], fractions[0.90]
        plan = {max(4, int(self.target * f)): name for f, name in fractions.items()}
        if self.branchy:
            # Every BRANCH_EVERY entries the path alternately marks a fork point and goes back
            # to it, so each block of that many entries is a branch and about half of the file
            # is on the current path.
            for block, at in enumerate(range(BRANCH_EVERY, self.target, BRANCH_EVERY)):
                plan[at] = "fork_back" if block % 2 else "fork_mark"
        step = max(self.target // 20, 8)
        for at in range(step // 2, self.target, step):
            plan.setdefault(at, "label" if (at // step) % 2 else "custom")
        return plan

    # -- small pieces

    def _id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def _tick(self, low: float = 0.3, high: float = 20.0) -> str:
        self.clock += timedelta(milliseconds=int(self.rng.uniform(low, high) * 1000))
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def _ms(self) -> int:
        return int(self.clock.timestamp() * 1000)

    def _prose(self, low: int, high: int) -> str:
        words = self.rng.choices(_WORDS, k=self.rng.randint(low, high))
        out: list[str] = []
        for start in range(0, len(words), 14):
            sentence = " ".join(words[start : start + 14])
            out.append(sentence[:1].upper() + sentence[1:] + ".")
        return " ".join(out)

    def _path(self) -> str:
        return f"src/{self.rng.choice(_DIRS)}/{self.rng.choice(_FILES)}.py"

    def _code_line(self) -> str:
        w, v = self.rng.choice(_WORDS), self.rng.choice(_WORDS)
        return self.rng.choice(_CODE).format(w=w, v=v, W=w.capitalize(), V=v.capitalize())

    def _output(self, low: int, high: int) -> str:
        lines: list[str] = []
        start = self.rng.randint(1, 400)
        style = self.rng.randrange(3)
        for number in range(start, start + self.rng.randint(low, high)):
            if style == 0:
                lines.append(f"{number:>6}\t{self._code_line()}")
            elif style == 1:
                lines.append(f"{self._path()}:{number}: {self._code_line().strip()}")
            else:
                status = self.rng.choice(("PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"))
                lines.append(
                    f"tests/test_{self.rng.choice(_FILES)}.py::test_{self.rng.choice(_WORDS)} {status}"
                )
        return "\n".join(lines)

    def _signature(self) -> str:
        return base64.b64encode(self.rng.randbytes(self.rng.randint(48, 96))).decode("ascii")

    def _usage(self) -> JsonDict:
        rng = self.rng
        tokens_in, tokens_out = rng.randint(1, 40), rng.randint(40, 1800)
        cache_read, cache_write = rng.randint(5_000, 120_000), rng.randint(0, 4_000)
        cost = {
            "input": round(tokens_in * 3e-6, 8),
            "output": round(tokens_out * 15e-6, 8),
            "cacheRead": round(cache_read * 0.3e-6, 8),
            "cacheWrite": round(cache_write * 3.75e-6, 8),
        }
        cost["total"] = round(sum(cost.values()), 8)
        return {
            "input": tokens_in,
            "output": tokens_out,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": tokens_in + tokens_out + cache_read + cache_write,
            "cost": cost,
        }

    def _tool_call(self) -> JsonDict:
        rng = self.rng
        name = rng.choice(_TOOLS)
        arguments: JsonDict
        if name == "read":
            arguments = {"path": self._path()}
        elif name == "bash":
            arguments = {
                "command": f"cd /work/project && .venv/bin/pytest -q tests/test_{rng.choice(_FILES)}.py"
            }
        elif name == "edit":
            arguments = {
                "path": self._path(),
                "oldText": "\n".join(self._code_line() for _ in range(rng.randint(1, 4))),
                "newText": "\n".join(self._code_line() for _ in range(rng.randint(1, 4))),
            }
        elif name == "write":
            arguments = {
                "path": self._path(),
                "content": "\n".join(self._code_line() for _ in range(rng.randint(2, 6))),
            }
        else:
            arguments = {"pattern": rng.choice(_WORDS), "path": "src"}
        tool_id = "toolu_" + base64.b32encode(rng.randbytes(15)).decode("ascii").lower()
        return {"type": "toolCall", "id": tool_id, "name": name, "arguments": arguments}

    # -- entries

    def _emit(self, fields: JsonDict, kind: str, *, parent: str | None = None, low: float = 0.3) -> str:
        entry_id = self._id()
        entry: JsonDict = {
            "type": fields.pop("type"),
            "id": entry_id,
            "parentId": parent if parent is not None else (self.path[-1].id if self.path else None),
            "timestamp": self._tick(low),
        }
        entry.update(fields)
        self.lines.append(orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))
        self.path.append(_Node(entry_id, kind))
        self.count += 1
        return entry_id

    def _message(self, message: JsonDict, kind: str) -> str:
        message["timestamp"] = self._ms()
        return self._emit({"type": "message", "message": message}, kind)

    def _user(self) -> None:
        rng = self.rng
        text = self._prose(6, 60)
        if rng.random() < 0.25:
            text += "\n\n```\n" + self._output(2, 8) + "\n```"
        content: Any = text if rng.random() < 0.3 else [{"type": "text", "text": text}]
        self._message({"role": "user", "content": content}, "user")

    def _assistant(self, *, final: bool) -> list[JsonDict]:
        rng = self.rng
        content: list[JsonDict] = [
            {"type": "thinking", "thinking": self._prose(5, 30), "thinkingSignature": self._signature()}
        ]
        if final or rng.random() < 0.5:
            content.append({"type": "text", "text": self._prose(5, 70 if final else 20)})
        calls = [] if final else [self._tool_call() for _ in range(1 if rng.random() < 0.85 else 2)]
        content.extend(calls)
        provider, model = self.model
        message: JsonDict = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": provider,
            "model": model,
            "usage": self._usage(),
            "stopReason": "stop" if final else "toolUse",
        }
        self._message(message, "assistant_end" if final else "assistant")
        return calls

    def _tool_result(self, call: JsonDict) -> None:
        rng = self.rng
        name = call["name"]
        if name == "edit":
            text = f"Successfully replaced text in {call['arguments']['path']}."
        elif name == "write":
            text = f"Wrote {len(call['arguments']['content'])} bytes to {call['arguments']['path']}"
        else:
            text = self._output(2, 19)
        message: JsonDict = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": rng.random() < 0.05,
        }
        if name == "bash":
            message["details"] = {"exitCode": 0 if not message["isError"] else 1, "truncated": False}
        self._message(message, "toolResult")

    def _turn(self) -> None:
        self._user()
        for _ in range(self.rng.randint(0, 6)):
            calls = self._assistant(final=False)
            for call in calls:
                self._tool_result(call)
        self._assistant(final=True)

    # -- planned events

    def _turn_end_back(self, turns_back: int) -> int:
        """Index in the path of the end of the turn ``turns_back`` turns ago (-1: none)."""
        seen = 0
        for index in range(len(self.path) - 2, 0, -1):
            if self.path[index].kind == "assistant_end":
                seen += 1
                if seen >= turns_back:
                    return index
        return -1

    def _user_back(self, turns_back: int) -> str | None:
        seen = 0
        for node in reversed(self.path):
            if node.kind == "user":
                seen += 1
                if seen >= turns_back:
                    return node.id
        return None

    def _event(self, name: str) -> None:
        rng = self.rng
        if name == "fork_mark":
            self.fork_point = len(self.path) - 1  # events come between turns: a turn's end
        elif name == "fork_back":
            if 0 <= self.fork_point < len(self.path):
                del self.path[self.fork_point + 1 :]
            self.fork_point = -1
        elif name in ("branch", "branch_summary"):
            index = self._turn_end_back(rng.randint(2, 5))
            if index < 0:
                return
            point = self.path[index].id
            del self.path[index + 1 :]
            if name == "branch_summary":
                self._emit(
                    {
                        "type": "branch_summary",
                        "fromId": point,
                        "summary": "The user explored an alternative approach: " + self._prose(60, 160),
                        "details": {
                            "readFiles": [self._path() for _ in range(3)],
                            "modifiedFiles": [self._path()],
                        },
                    },
                    "branch_summary",
                    parent=point,
                )
        elif name == "compaction":
            first_kept = self._user_back(rng.randint(3, 6))
            if first_kept is None:
                return
            self._emit(
                {
                    "type": "compaction",
                    "summary": "## Goal\n"
                    + self._prose(30, 60)
                    + "\n\n## Progress\n"
                    + "\n".join("- " + self._prose(8, 20) for _ in range(12))
                    + "\n\n## Next steps\n"
                    + self._prose(20, 50),
                    "firstKeptEntryId": first_kept,
                    "tokensBefore": rng.randint(150_000, 190_000),
                    "details": {
                        "readFiles": sorted({self._path() for _ in range(8)}),
                        "modifiedFiles": sorted({self._path() for _ in range(4)}),
                    },
                },
                "compaction",
            )
        elif name == "model_change":
            self.model = _MODELS[1]
            self._emit({"type": "model_change", "provider": self.model[0], "modelId": self.model[1]}, "model")
        elif name == "thinking_level_change":
            self._emit({"type": "thinking_level_change", "thinkingLevel": "high"}, "thinking")
        elif name in ("label", "label_clear"):
            target = self._user_back(rng.randint(1, 3))
            if target is None:
                return
            fields: JsonDict = {"type": "label", "targetId": target}
            if name == "label":
                fields["label"] = f"checkpoint-{self.count}"
            self._emit(fields, "label")
        elif name == "custom":
            self._emit({"type": "custom", "customType": "bench-ext", "data": {"count": self.count}}, "custom")
        elif name == "custom_message":
            self._emit(
                {
                    "type": "custom_message",
                    "customType": "bench-ext",
                    "content": "Injected by an extension: " + self._prose(10, 30),
                    "display": True,
                    "details": {"source": "bench"},
                },
                "custom_message",
            )

    # -- the file

    def build(self) -> bytes:
        header = {
            "type": "session",
            "version": 3,
            "id": "0195f3a2-7c4e-7000-8000-" + f"{self.rng.getrandbits(48):012x}",
            "timestamp": self._tick(),
            "cwd": "/work/project",
        }
        self.lines.append(orjson.dumps(header, option=orjson.OPT_APPEND_NEWLINE))
        self._emit({"type": "model_change", "provider": self.model[0], "modelId": self.model[1]}, "model")
        self._emit({"type": "thinking_level_change", "thinkingLevel": "medium"}, "thinking")
        self._emit({"type": "session_info", "name": f"Synthetic session ({self.target} entries)"}, "info")
        pending = sorted(self.events)
        while self.count < self.target:
            while pending and pending[0] <= self.count:
                self._event(self.events[pending.pop(0)])
            self._turn()
        return b"".join(self.lines)


def ensure_session_file(folder: Path, entries: int, *, branchy: bool = False) -> Path:
    """The synthetic session of ``entries`` entries (about; a turn is never cut), made once.

    ``branchy``: the long-session shape of issue 13 (a branch every ``BRANCH_EVERY`` entries,
    about half of the entries on the current path, no compaction) instead of the default mix.
    """
    folder.mkdir(parents=True, exist_ok=True)
    shape = "-branchy" if branchy else ""
    path = folder / f"session-{entries}{shape}-g{GENERATOR_VERSION}.jsonl"
    if not path.exists():
        data = SessionGenerator(entries, branchy=branchy).build()
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    return path


# --- measuring ------------------------------------------------------------------------------


def _open_and_close(path: Path) -> None:
    manager = SessionManager.open(path)
    manager.close()


@dataclass(slots=True)
class SizeRow:
    entries: int
    lines: int
    file_mb: float
    open_ms: float
    context_ms: float
    tree_ms: float
    context_messages: int
    tree_nodes: int
    pi: PiResult | None = None
    match: MatchResult | None = None

    @property
    def open_context_ms(self) -> float:
        return self.open_ms + self.context_ms


@dataclass(slots=True)
class PiResult:
    load_ms: float
    """read + parseSessionEntries + migrateSessionEntries"""
    context_ms: float
    total_ms: float
    """median of the read + parse + migrate + buildSessionContext runs (not the sum of medians)"""
    open_ms: float
    """SessionManager.open + buildSessionContext() (for reference)"""
    tree_ms: float
    messages: int
    thinking_level: str
    model: JsonDict | None
    dump: Path | None


@dataclass(slots=True)
class MatchResult:
    count_equal: bool
    messages_equal: bool
    settings_equal: bool

    @property
    def ok(self) -> bool:
        return self.count_equal and self.messages_equal and self.settings_equal


def measure_size(path: Path, entries: int, runs: int) -> tuple[SizeRow, SessionManager]:
    """Times for one file; returns the row and an open manager (for the baseline check).

    Each run opens the file, builds the context, builds the tree and closes: context and tree
    are timed on their first call after the open (the manager may cache them; a cached answer
    is not what is measured here), and open+load is the open plus the close.
    """
    open_samples: list[float] = []
    context_samples: list[float] = []
    tree_samples: list[float] = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        manager = SessionManager.open(path)
        opened = time.perf_counter()
        manager.build_session_context()
        built = time.perf_counter()
        manager.get_tree()
        treed = time.perf_counter()
        manager.close()
        closed = time.perf_counter()
        open_samples.append((opened - start + closed - treed) * 1000)
        context_samples.append((built - opened) * 1000)
        tree_samples.append((treed - built) * 1000)
    manager = SessionManager.open(path)
    row = SizeRow(
        entries=entries,
        lines=len(manager.entries) + 1,
        file_mb=path.stat().st_size / 1e6,
        open_ms=statistics.median(open_samples),
        context_ms=statistics.median(context_samples),
        tree_ms=statistics.median(tree_samples),
        context_messages=len(manager.build_session_context().messages),
        tree_nodes=len(manager.get_tree()),
    )
    return row, manager


def _append_payload() -> JsonDict:
    """A tool result of about 750 bytes on disk, the average entry of the synthetic files."""
    output = "\n".join(f"{n:>6}\t    value = self._cache.get(key, default)  # line {n}" for n in range(1, 11))
    return {
        "role": "toolResult",
        "toolCallId": "toolu_0123456789abcdefghijklmn",
        "toolName": "read",
        "content": [{"type": "text", "text": output}],
        "isError": False,
        "timestamp": 1_772_000_000_000,
    }


@dataclass(slots=True)
class AppendResult:
    label: str
    appends: int
    per_second: float
    fsyncs: int


async def _fresh_on_disk_session(folder: Path) -> SessionManager:
    """A new session past its deferred first write, so every append below is one line."""
    manager = SessionManager.create("/work/project", folder)
    await manager.append_message({"role": "user", "content": "start", "timestamp": 1_772_000_000_000})
    await manager.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "timestamp": 1_772_000_000_001,
        }
    )
    return manager


async def _sequential_run(folder: Path, count: int) -> tuple[float, int]:
    manager = await _fresh_on_disk_session(folder)
    payload = _append_payload()
    chain = manager.write_chain
    assert chain is not None
    before = chain.fsyncs
    start = time.perf_counter()
    for _ in range(count):
        await manager.append_message(payload)
    elapsed = time.perf_counter() - start
    fsyncs = chain.fsyncs - before
    await manager.aclose()
    return elapsed, fsyncs


async def _concurrent_run(folder: Path, tasks: int, per_task: int) -> tuple[float, int]:
    manager = await _fresh_on_disk_session(folder)
    payload = _append_payload()
    chain = manager.write_chain
    assert chain is not None

    async def appender() -> None:
        for _ in range(per_task):
            await manager.append_message(payload)

    before = chain.fsyncs
    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(tasks):
            group.start_soon(appender)
    elapsed = time.perf_counter() - start
    fsyncs = chain.fsyncs - before
    await manager.aclose()
    return elapsed, fsyncs


def _event_loops() -> list[tuple[str, dict[str, Any]]]:
    """The standard asyncio loop, and uvloop (what the server runs on) when it is installed."""
    loops: list[tuple[str, dict[str, Any]]] = [("asyncio", {})]
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return loops
    return [*loops, ("uvloop, the server's loop", {"use_uvloop": True})]


def measure_appends(
    folder: Path, sequential: int, tasks: int, per_task: int, runs: int
) -> list[AppendResult]:
    """Median appends/s over ``runs`` fresh sessions; the fsync count is that of the median run."""
    results: list[AppendResult] = []
    setups: list[tuple[str, int, Callable[[Path], Any]]] = [
        ("sequential (1 appender)", sequential, lambda d: _sequential_run(d, sequential)),
        (f"concurrent ({tasks} appenders)", tasks * per_task, lambda d: _concurrent_run(d, tasks, per_task)),
    ]
    for loop_name, options in _event_loops():
        for label, total, run in setups:
            samples: list[tuple[float, int]] = []
            for _ in range(runs):
                with tempfile.TemporaryDirectory(dir=folder, prefix="appends-") as tmp:
                    elapsed, fsyncs = anyio.run(run, Path(tmp), backend_options=options)
                samples.append((total / elapsed, fsyncs))
            samples.sort()
            rate, fsyncs = samples[len(samples) // 2]
            results.append(
                AppendResult(label=f"{label}, {loop_name}", appends=total, per_second=rate, fsyncs=fsyncs)
            )
    return results


# --- the reference implementation ------------------------------------------------------------


def _pi_package_dir() -> Path:
    return NODE_PREFIX / "node_modules" / PI_PACKAGE


def ensure_pi(log: Callable[[str], None]) -> Path | None:
    """The installed reference package, installing it once; None (and a note) when not possible."""
    package = _pi_package_dir()
    if (package / "package.json").exists():
        return package
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        log("baseline: node/npm not found, showing our numbers alone")
        return None
    log(f"baseline: installing {PI_PACKAGE} into {NODE_PREFIX} (once) ...")
    NODE_PREFIX.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(NODE_PREFIX),
                "--no-audit",
                "--no-fund",
                f"{PI_PACKAGE}@{PI_VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log(f"baseline: npm install failed ({exc}), showing our numbers alone")
        return None
    if done.returncode != 0 or not (package / "package.json").exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        log(f"baseline: npm install failed (exit {done.returncode}): {' | '.join(tail)}")
        log("baseline: showing our numbers alone")
        return None
    return package


def run_pi(package: Path, path: Path, runs: int, dump: Path, log: Callable[[str], None]) -> PiResult | None:
    node = shutil.which("node")
    if node is None:
        return None
    command = [
        node,
        "--expose-gc",
        str(PI_SCRIPT),
        "--package",
        str(package),
        "--file",
        str(path),
        "--runs",
        str(runs),
    ]
    command += ["--dump", str(dump)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log(f"baseline: node run failed for {path.name}: {exc}")
        return None
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        log(f"baseline: node exited {done.returncode} for {path.name}: {' | '.join(tail)}")
        return None
    try:
        data = orjson.loads(done.stdout.strip().splitlines()[-1])
        return PiResult(
            load_ms=float(data["loadMs"]),
            context_ms=float(data["contextMs"]),
            total_ms=float(data["totalMs"]),
            open_ms=float(data["managerOpenContextMs"]),
            tree_ms=float(data["treeMs"]),
            messages=int(data["messages"]),
            thinking_level=str(data["thinkingLevel"]),
            model=data["model"],
            dump=dump if dump.exists() else None,
        )
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, ValueError) as exc:
        log(f"baseline: unreadable output from node for {path.name}: {exc}")
        return None


def compare_contexts(manager: SessionManager, pi: PiResult) -> MatchResult:
    ours = manager.build_session_context()
    messages_equal = False
    if pi.dump is not None:
        theirs = orjson.loads(pi.dump.read_bytes())
        messages_equal = theirs.get("messages") == ours.messages
    our_model = {"provider": ours.model.provider, "modelId": ours.model.modelId} if ours.model else None
    return MatchResult(
        count_equal=len(ours.messages) == pi.messages,
        messages_equal=messages_equal,
        settings_equal=pi.thinking_level == ours.thinkingLevel and pi.model == our_model,
    )


# --- report ---------------------------------------------------------------------------------


@dataclass(slots=True)
class BenchReport:
    rows: list[SizeRow] = field(default_factory=list)
    appends: list[AppendResult] = field(default_factory=list)
    baseline_note: str | None = None
    pi_version: str | None = None
    load_average: float | None = None


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def join(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))])

    line = join(headers)
    rule = "  ".join("-" * w for w in widths)
    body = [join(r) for r in rows]
    return "\n".join([line, rule, *body])


def format_report(report: BenchReport, runs: int) -> str:
    out: list[str] = []
    out.append(f"Session store benchmark (Python {sys.version.split()[0]}, median of {runs} runs)")
    if report.load_average is not None:
        out.append(
            f"{os.cpu_count()} CPUs; load average at start {report.load_average:.2f} "
            "(other work on the machine skews wall-clock numbers)"
        )
    out.append("")
    out.append("(context and tree: their first call on a freshly opened session)")
    out.append("")
    out.append(
        _table(
            [
                "entries",
                "lines",
                "file MB",
                "open+load ms",
                "context ms",
                "tree ms",
                "open+ctx ms",
                "ctx msgs",
                "tree nodes",
            ],
            [
                [
                    f"{r.entries:,}",
                    f"{r.lines:,}",
                    f"{r.file_mb:.1f}",
                    f"{r.open_ms:.1f}",
                    f"{r.context_ms:.2f}",
                    f"{r.tree_ms:.1f}",
                    f"{r.open_context_ms:.1f}",
                    f"{r.context_messages:,}",
                    f"{r.tree_nodes:,}",
                ]
                for r in report.rows
            ],
        )
    )
    with_pi = [r for r in report.rows if r.pi is not None]
    out.append("")
    if with_pi:
        out.append(f"Reference: pi coding agent {report.pi_version or '?'} on node {_node_version()}")
        out.append("  pi = readFileSync + parseSessionEntries + migrateSessionEntries + buildSessionContext")
        out.append("  (pi SessionManager.open+ctx and pi getTree shown for information only)")
        out.append("")
        table_rows: list[list[str]] = []
        for r in with_pi:
            assert r.pi is not None
            match = r.match
            table_rows.append(
                [
                    f"{r.entries:,}",
                    f"{r.open_context_ms:.1f}",
                    f"{r.pi.total_ms:.1f}",
                    f"{r.open_context_ms / r.pi.total_ms:.2f}" if r.pi.total_ms > 0 else "-",
                    f"{r.pi.load_ms:.1f}",
                    f"{r.pi.context_ms:.2f}",
                    f"{r.pi.open_ms:.1f}",
                    f"{r.pi.tree_ms:.1f}",
                    f"{r.context_messages:,}/{r.pi.messages:,}",
                    "-" if match is None else ("yes" if match.ok else _mismatch(match)),
                ]
            )
        out.append(
            _table(
                [
                    "entries",
                    "ours ms",
                    "pi ms",
                    "ours/pi",
                    "pi load ms",
                    "pi ctx ms",
                    "pi SM.open+ctx",
                    "pi tree ms",
                    "msgs ours/pi",
                    "match",
                ],
                table_rows,
            )
        )
    else:
        out.append(f"Reference: {report.baseline_note or 'not run'}")
    out.append("")
    out.append("Durable appends (each awaited until fdatasync'ed; ~750-byte toolResult line)")
    out.append("")
    out.append(
        _table(
            ["mode", "appends", "appends/s", "fsyncs", "appends/fsync"],
            [
                [
                    a.label,
                    f"{a.appends:,}",
                    f"{a.per_second:,.0f}",
                    f"{a.fsyncs:,}",
                    f"{a.appends / a.fsyncs:.1f}" if a.fsyncs else "-",
                ]
                for a in report.appends
            ],
        )
    )
    out.append("")
    out.append("Targets")
    largest = max(report.rows, key=lambda r: r.entries) if report.rows else None
    if largest is not None and largest.pi is not None and largest.pi.total_ms > 0:
        ratio = largest.open_context_ms / largest.pi.total_ms
        verdict = "MET" if ratio <= TARGET_LOAD_RATIO else "NOT MET"
        out.append(
            f"  open+build context of {largest.entries:,} entries <= {TARGET_LOAD_RATIO:.0%} of pi: "
            f"{largest.open_context_ms:.1f} ms vs {largest.pi.total_ms:.1f} ms = {ratio:.0%} -> {verdict}"
        )
    elif largest is not None:
        out.append(
            f"  open+build context of {largest.entries:,} entries <= {TARGET_LOAD_RATIO:.0%} of pi: "
            f"{largest.open_context_ms:.1f} ms, no baseline to compare with"
        )
    concurrent = [a for a in report.appends if a.label.startswith("concurrent")]
    for a in concurrent:
        verdict = "MET" if a.per_second >= TARGET_CONCURRENT_APPENDS else "NOT MET"
        out.append(
            f"  >= {TARGET_CONCURRENT_APPENDS:,} durable appends/s, {a.label}: {a.per_second:,.0f}/s -> {verdict}"
        )
    return "\n".join(out)


def _mismatch(match: MatchResult) -> str:
    parts = []
    if not match.count_equal:
        parts.append("count")
    if not match.messages_equal:
        parts.append("messages")
    if not match.settings_equal:
        parts.append("model/thinking")
    return "NO (" + ",".join(parts) + ")"


def _node_version() -> str:
    node = shutil.which("node")
    if node is None:
        return "?"
    try:
        return subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def _pi_version(package: Path) -> str | None:
    try:
        version = orjson.loads((package / "package.json").read_bytes()).get("version")
    except (OSError, orjson.JSONDecodeError):
        return None
    return str(version) if version else None


def _profile(path: Path, log: Callable[[str], None]) -> None:
    for label, setup in (("open+load", False), ("get_tree", True)):
        manager = SessionManager.open(path) if setup else None
        profiler = cProfile.Profile()
        gc.collect()
        if manager is not None:
            profiler.runcall(manager.get_tree)
            manager.close()
        else:
            profiler.runcall(_open_and_close, path)
        stream = io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.sort_stats("tottime").print_stats(14)
        log(f"\n--- cProfile: {label} of {path.name} (sorted by own time) ---")
        log(stream.getvalue().strip())


# --- entry point ----------------------------------------------------------------------------


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of sizes: {text!r}") from None
    if not sizes or any(size < 10 for size in sizes):
        raise argparse.ArgumentTypeError("sizes must be at least 10 entries")
    return sizes


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=_sizes, default=[1000, 10000, 100000], help="entries per session")
    parser.add_argument(
        "--baseline",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="compare with the reference agent (node); installs it into bench/.node once",
    )
    parser.add_argument("--runs", type=int, default=7, help="timed runs per measurement (median)")
    parser.add_argument("--append-runs", type=int, default=3, help="sessions per append measurement (median)")
    parser.add_argument("--sequential", type=int, default=500, help="appends in the sequential measurement")
    parser.add_argument("--tasks", type=int, default=64, help="concurrent appenders")
    parser.add_argument("--per-task", type=int, default=200, help="appends per concurrent appender")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="where session files go")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile open+load and get_tree of the largest size"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None, *, log: Callable[[str], None] = print) -> BenchReport:
    args = parse_args(argv)
    data_dir: Path = args.data_dir
    report = BenchReport(load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None)
    package: Path | None = None
    if args.baseline:
        package = ensure_pi(log)
        if package is None:
            report.baseline_note = "not available (see above)"
        else:
            report.pi_version = _pi_version(package)
    else:
        report.baseline_note = "skipped (--no-baseline)"

    for entries in args.sizes:
        started = time.perf_counter()
        path = ensure_session_file(data_dir, entries)
        log(
            f"{path.name}: {path.stat().st_size / 1e6:.1f} MB ready in {time.perf_counter() - started:.1f} s; timing ..."
        )
        row, manager = measure_size(path, entries, args.runs)
        try:
            if package is not None:
                dump = data_dir / f"pi-context-{entries}.json"
                dump.unlink(missing_ok=True)
                row.pi = run_pi(package, path, args.runs, dump, log)
                if row.pi is not None:
                    row.match = compare_contexts(manager, row.pi)
                    dump.unlink(missing_ok=True)
        finally:
            manager.close()
        report.rows.append(row)

    log("durable appends ...")
    report.appends = measure_appends(data_dir, args.sequential, args.tasks, args.per_task, args.append_runs)
    if package is not None and all(r.pi is None for r in report.rows):
        report.baseline_note = "the node baseline failed for every size (see above)"
    log("")
    log(format_report(report, args.runs))
    if args.profile and args.sizes:
        _profile(ensure_session_file(data_dir, max(args.sizes)), log)
    return report


if __name__ == "__main__":
    main()
