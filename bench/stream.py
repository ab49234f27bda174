"""What the server adds on top of the model's stream: per streamed delta and per tool call.

    .venv/bin/python -m bench.stream [--small 200] [--large 4000] [--tools 20] [--runs 5] [--tuning both]

A local fake Messages API (tests/fake_anthropic/) streams a reply of N text deltas. The same
reply is consumed twice:

* baseline: the anthropic SDK alone (``messages.create(stream=True)``), in the process of the
  last server before that server starts (the one without checkpoints, untuned unless
  ``--tuning on``: it would import the SDK at its first prompt anyway, so the SDK's import is
  paid once for both);
* server: ``rpc-agent --provider anthropic`` over stdio, from writing ``prompt`` to reading its
  response (every delta becomes a ``message_update`` line on stdout; the answer is fsynced).

Fixed costs (the HTTP round trip, the session's first write) cancel out by taking the slope
between a small and a large N: overhead per delta = server slope - SDK slope. The same trick
with 1 and K tool calls (``ls`` of an empty folder) gives the cost of one tool call: its
events, argument validation, execution and fsynced toolResult; and with 1 and K ``write`` calls
(a new small file each), a tool that may change files, so the cost includes the checkpoint
taken after it (and waited for by the next one).

Every row is measured with checkpoints on (the default) and off (``--no-checkpoints``) in the
same run, so what checkpoints cost a tool call is said: ``ls`` is read-only and takes none; and,
unless ``--tuning`` names one, with the command's process-wide measures on and off.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from bench.options import parse_counts
from bench.tuning import server_env, tunings
from fake_anthropic import Block, FakeAnthropic, Reply, Text, ToolUse, tool_round

MODEL = "claude-haiku-4-5"


def text_reply(deltas: int) -> Reply:
    return Reply([Text("w" * (deltas * 4), chunks=["word"] * deltas)])


def tool_reply(calls: int, name: str = "ls", round_no: int = 0) -> list[Reply]:
    uses: list[Block] = [
        ToolUse(f"toolu_{i:04d}", "ls", {"path": "."})
        if name == "ls"
        else ToolUse(f"toolu_{i:04d}", "write", {"path": f"out/{round_no}-{i}.txt", "content": f"{i}\n"})
        for i in range(calls)
    ]
    return tool_round(*uses, answer="done")


SDK_THEN_SERVE = """
import asyncio, runpy, sys, time, anthropic
async def sdk_alone(base_url, requests, model):
    client = anthropic.AsyncAnthropic(base_url=base_url, api_key="sk-bench", max_retries=0)
    for _ in range(requests):
        started = time.perf_counter()
        stream = await client.messages.create(
            model=model, max_tokens=1024, messages=[{"role": "user", "content": "hi"}], stream=True
        )
        async for _event in stream:
            pass
        print(time.perf_counter() - started, flush=True)
    await client.close()
asyncio.run(sdk_alone(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
sys.argv = ["rpc_agent", *sys.argv[4:]]
runpy.run_module("rpc_agent", run_name="__main__", alter_sys=True)
"""
"""Times the SDK alone (one line per request), then serves as ``python -m rpc_agent`` would.
In a process of its own like the server (the fake server's threads live in the bench's process
and would otherwise compete with it for the GIL), and before the server so nothing of the
server's runs beside it."""


def sdk_replies(fake: FakeAnthropic, sizes: tuple[int, ...], runs: int) -> int:
    """Queue the SDK's replies: a first request, untimed like the server's warm-up prompt, opens
    the connection the rest reuse; then ``runs`` of each size. The number of requests."""
    fake.enqueue(text_reply(10))
    for deltas in sizes:
        for _ in range(runs):
            fake.enqueue(text_reply(deltas))
    return 1 + runs * len(sizes)


class Server:
    def __init__(
        self, fake: FakeAnthropic, workdir: Path, tuned: bool, checkpoints: bool, sdk_requests: int = 0
    ) -> None:
        """``sdk_requests``: so many SDK requests are timed in the process first (see
        ``SDK_THEN_SERVE``); their seconds are in ``sdk_times``, the first (untimed) left out."""
        env = {
            **server_env(workdir / "home", tuned),
            "ANTHROPIC_BASE_URL": fake.base_url,
            "ANTHROPIC_API_KEY": "sk-bench",
        }
        self.proc = subprocess.Popen(
            [
                sys.executable,
                *(
                    ["-c", SDK_THEN_SERVE, fake.base_url, str(sdk_requests), MODEL]
                    if sdk_requests
                    else ["-m", "rpc_agent"]
                ),
                "--provider",
                "anthropic",
                "--model",
                MODEL,
                "--cwd",
                str(workdir),
                *([] if checkpoints else ["--no-checkpoints"]),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 0
        self.lines_read = 0
        assert self.proc.stdout is not None
        self.sdk_times = [self._sdk_time() for _ in range(sdk_requests)][1:]

    def _sdk_time(self) -> float:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the SDK's run in the server's process failed (exit status {self.proc.wait()})"
            )
        return float(line)

    def call(self, method: str, params: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        started = time.perf_counter()
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server exited")
            self.lines_read += 1
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return time.perf_counter() - started, message

    def close(self) -> None:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait()
        self.proc.stdout.close()


def median(values: list[float]) -> float:
    return statistics.median(values)


def measured_settings(tuning: str) -> list[tuple[bool, bool]]:
    """(tuned, checkpoints) of each server, in the order they run: the SDK's baseline is timed
    in the last one's process."""
    return [(tuned, checkpoints) for tuned in tunings(tuning) for checkpoints in (True, False)]


def main(argv: list[str] | None = None) -> int:
    args = parse_counts(__doc__, argv, tuning=True, small=200, large=4000, tools=20, runs=5)
    settings = measured_settings(args.tuning)
    measured: list[Measured] = []
    with FakeAnthropic(strict=False) as fake:
        for tuned, checkpoints in settings:  # the command's process-wide measures on, then off
            last = (tuned, checkpoints) == settings[-1]
            sdk_requests = sdk_replies(fake, (args.small, args.large), args.runs) if last else 0
            measured.append(measure(args, fake, tuned, checkpoints, sdk_requests))
    sdk_times = measured[-1].sdk_times
    sdk = {
        n: median(sdk_times[i * args.runs : (i + 1) * args.runs])
        for i, n in enumerate((args.small, args.large))
    }
    for (tuned, checkpoints), one in zip(settings, measured, strict=True):
        print(f"tuning {'on' if tuned else 'off'}, checkpoints {'on' if checkpoints else 'off'}:")
        report(args, sdk, one)
    return 0


def timed_prompts(
    server: Server,
    fake: FakeAnthropic,
    runs: int,
    sizes: tuple[int, int],
    replies: Callable[[int, int], list[Reply]],
    what: str,
) -> dict[int, list[float]]:
    """Each run prompts once per size, the model answering ``replies(size, run)``: the seconds
    each prompt took, by size (the sizes alternate, so a drift of the machine hits both)."""
    took: dict[int, list[float]] = {size: [] for size in sizes}
    for run in range(runs):
        for size in sizes:
            fake.enqueue(*replies(size, run))
            elapsed, response = server.call("prompt", {"message": f"{size} {what}"})
            assert response["result"]["stopReason"] == "stop", response
            took[size].append(elapsed)
    return took


@dataclass
class Measured:
    """The seconds of one server's prompts, by size; ``sdk_times``: the SDK's, if it ran there."""

    ours: dict[int, list[float]]
    tools: dict[int, list[float]]
    writes: dict[int, list[float]]
    sdk_times: list[float]


def measure(
    args: argparse.Namespace, fake: FakeAnthropic, tuned: bool, checkpoints: bool, sdk_requests: int
) -> Measured:
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        server = Server(fake, workdir, tuned, checkpoints, sdk_requests)
        server.call("initialize")
        fake.enqueue(text_reply(10))
        server.call("prompt", {"message": "warm up"})  # first write, SDK import, model build
        ours = timed_prompts(
            server, fake, args.runs, (args.small, args.large), lambda n, _: [text_reply(n)], "deltas"
        )
        tools = timed_prompts(
            server, fake, args.runs, (1, args.tools), lambda k, _: tool_reply(k), "tool calls"
        )
        writes = timed_prompts(
            server,
            fake,
            args.runs,
            (1, args.tools),
            lambda k, run: tool_reply(k, "write", run * 1000 + k),
            "writes",
        )
        server.close()
    return Measured(ours, tools, writes, server.sdk_times)


def report(args: argparse.Namespace, sdk: dict[int, float], measured: Measured) -> None:
    ours, tools, writes = measured.ours, measured.tools, measured.writes
    span = args.large - args.small
    sdk_slope = (sdk[args.large] - sdk[args.small]) / span
    server_slope = (median(ours[args.large]) - median(ours[args.small])) / span
    per_tool = (median(tools[args.tools]) - median(tools[1])) / (args.tools - 1)
    print(f"deltas: {args.small} and {args.large} per reply, median of {args.runs} runs")
    print(
        f"  SDK alone          {sdk[args.small] * 1000:8.1f} ms / {sdk[args.large] * 1000:8.1f} ms  ->"
        f" {sdk_slope * 1e6:6.1f} us per delta"
    )
    print(
        f"  through the server {median(ours[args.small]) * 1000:8.1f} ms / {median(ours[args.large]) * 1000:8.1f} ms  ->"
        f" {server_slope * 1e6:6.1f} us per delta"
    )
    print(f"  overhead of the server: {(server_slope - sdk_slope) * 1e6:.1f} us per streamed delta")
    print(f"tool calls: 1 and {args.tools} ls calls in one turn, median of {args.runs} runs")
    print(
        f"  {median(tools[1]) * 1000:.1f} ms / {median(tools[args.tools]) * 1000:.1f} ms  ->"
        f" {per_tool * 1000:.2f} ms per tool call (events, validation, ls itself, fsynced result)"
    )
    per_write = (median(writes[args.tools]) - median(writes[1])) / (args.tools - 1)
    print(f"tool calls: 1 and {args.tools} write calls in one turn, median of {args.runs} runs")
    print(
        f"  {median(writes[1]) * 1000:.1f} ms / {median(writes[args.tools]) * 1000:.1f} ms  ->"
        f" {per_write * 1000:.2f} ms per write call (the above, the file, and its checkpoint when on)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
