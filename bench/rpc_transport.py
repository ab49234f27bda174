"""Throughput of the JSON-RPC transport + router alone, through real pipes.

Spawns a tiny server built from ``rpc_agent.server`` (one inline ``ping`` method returning a
small pydantic model, like ``get_state``), writes N pipelined requests from a writer thread,
reads every response, and prints requests/s. Also prints the time from spawn to the first
response and what importing the server package costs, next to importing jsonrpcserver (which the
router does not use, for that cost; see the README).

    .venv/bin/python -m bench.rpc_transport [-n 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from typing import IO

import orjson


def serve() -> None:
    """The server side: run with ``--serve``."""
    import anyio
    from pydantic import BaseModel

    from rpc_agent.server import MethodRegistry, Router, open_stdio

    class PingResult(BaseModel):
        sessionId: str
        isStreaming: bool
        messageCount: int
        model: str | None

    result = PingResult(
        sessionId="0192f5a0-7c1e-7d4e-9f0a-3b2c1d0e9f8a", isStreaming=False, messageCount=42, model=None
    )
    registry = MethodRegistry()
    registry.add("ping", lambda _p: result, params=None, result=PingResult, inline=True)

    async def run() -> None:
        reader, writer = open_stdio()
        async with writer:
            await Router(registry, writer).serve(reader)

    anyio.run(run)


def _spawn() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
    )


def _read_lines(stream: IO[bytes], count: int) -> bytes:
    """Read until ``count`` LF-terminated lines have arrived; returns the last chunk read."""
    fd = stream.fileno()
    seen = 0
    last = b""
    while seen < count:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise RuntimeError(f"server closed stdout after {seen} of {count} responses")
        seen += chunk.count(b"\n")
        last = chunk
    return last


def pipelined(n: int) -> tuple[float, bytes]:
    """Requests/s for n pipelined pings, and the final bytes read (to check the last answer)."""
    proc = _spawn()
    assert proc.stdin is not None
    assert proc.stdout is not None
    # Warm up (imports, first thread hops) so that spawn time is not counted.
    proc.stdin.write(b'{"jsonrpc":"2.0","id":0,"method":"ping"}\n')
    _read_lines(proc.stdout, 1)
    payload = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i for i in range(1, n + 1))
    stdin = proc.stdin

    def write_all() -> None:
        view = memoryview(payload)
        for start in range(0, len(view), 1 << 16):
            stdin.write(view[start : start + (1 << 16)])

    writer = threading.Thread(target=write_all)
    started = time.perf_counter()
    writer.start()
    last = _read_lines(proc.stdout, n)
    elapsed = time.perf_counter() - started
    writer.join()
    stdin.close()
    if proc.wait(timeout=30) != 0:
        raise RuntimeError(f"server exited with {proc.returncode}")
    return n / elapsed, last


def first_response_ms() -> float:
    started = time.perf_counter()
    proc = _spawn()
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    _read_lines(proc.stdout, 1)
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed * 1000


def import_ms(statement: str) -> float:
    """Median wall time of ``statement`` in a fresh interpreter that already has the server's deps."""
    code = (
        "import time, warnings, importlib.util, anyio, anyio.to_thread, orjson\n"
        "from pydantic import BaseModel\n"
        "warnings.simplefilter('ignore')\n"
        "t = time.perf_counter()\n"
        f"{statement}\n"
        "print(time.perf_counter() - t)"
    )
    runs = [
        float(subprocess.check_output([sys.executable, "-c", code], stderr=subprocess.DEVNULL)) * 1000
        for _ in range(5)
    ]
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=100_000, help="pipelined requests per run")
    parser.add_argument("--repeat", type=int, default=3, help="runs (the best and the median are printed)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return

    rates = []
    last = b""
    for _ in range(args.repeat):
        rate, last = pipelined(args.n)
        rates.append(rate)
    final = orjson.loads(last.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    assert final["id"] == args.n, final
    assert final["result"]["messageCount"] == 42, final
    print(
        f"pipelined inline ping, {args.n} requests: best {max(rates):,.0f} req/s, "
        f"median {statistics.median(rates):,.0f} req/s"
    )
    spawn = [first_response_ms() for _ in range(3)]
    print(f"spawn -> first response (this bench's server): median {statistics.median(spawn):.0f} ms")
    server = import_ms("import rpc_agent.server")
    print(f"import time on top of anyio/pydantic/orjson (median of 5): rpc_agent.server {server:.0f} ms")
    try:
        full = import_ms("import jsonrpcserver")
    except subprocess.CalledProcessError:
        return  # not installed: nothing to compare with
    print(f"  and the jsonrpcserver package, for comparison: {full:.0f} ms")


if __name__ == "__main__":
    main()
