"""Durable appends timed: each awaited until fsynced, one appender or many, on each event loop."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.store import SessionManager


def _append_payload() -> MessageDict:
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


async def concurrent_run(folder: Path, tasks: int, per_task: int) -> tuple[float, int]:
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
        (f"concurrent ({tasks} appenders)", tasks * per_task, lambda d: concurrent_run(d, tasks, per_task)),
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
