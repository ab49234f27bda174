"""Throughput of the JSON-RPC transport + router alone, through real pipes.

Spawns a tiny server built from ``rpc_agent.server`` (one inline ``ping`` method returning a
small pydantic model, like ``get_state``), writes N pipelined requests from a writer thread,
reads every response, and prints requests/s. Also prints what jsonrpcserver costs: per request
(the response-building step the router delegates to it, next to the alternatives) and at import,
and the time from spawn to the first response.

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
import timeit
import warnings
from collections.abc import Callable
from typing import IO, Any

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))


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


def response_step_us() -> dict[str, float]:
    """µs per request to build one success response object: the router's way and alternatives."""
    from rpc_agent.server._jsonrpcserver import SuccessResponse, serialize_success

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from jsonrpcserver.dispatcher import to_response
        from jsonrpcserver.request import Request
        from jsonrpcserver.response import to_serializable_one
        from jsonrpcserver.result import Success

    payload: Any = {"sessionId": "x", "isStreaming": False, "messageCount": 42, "model": None}
    candidates: dict[str, Callable[[], object]] = {
        "router: SuccessResponse + serialize_success": lambda: serialize_success(SuccessResponse(payload, 7)),
        "the same dict by hand": lambda: {"jsonrpc": "2.0", "result": payload, "id": 7},
        "Success + to_response + to_serializable_one": lambda: to_serializable_one(
            to_response(Request("ping", [], 7), Success(payload))
        ),
    }
    number = 200_000
    return {
        label: min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6
        for label, fn in candidates.items()
    }


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
    runs = [float(subprocess.check_output([sys.executable, "-c", code])) * 1000 for _ in range(5)]
    return statistics.median(runs)


def load_file_statement(path: str) -> str:
    """Python that executes one module file without running its package's ``__init__``."""
    return (
        f"spec = importlib.util.spec_from_file_location('_measured', {path!r})\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))"
    )


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
    print("building one success response object, µs/request:")
    for label, micros in response_step_us().items():
        print(f"  {label}: {micros:.2f}")
    submodules = os.path.normpath(os.path.join(HERE, os.pardir, "rpc_agent", "server", "_jsonrpcserver.py"))
    full = import_ms("import jsonrpcserver")
    light = import_ms(load_file_statement(submodules))
    server = import_ms("import rpc_agent.server")
    print(
        "import time on top of anyio/pydantic/orjson (median of 5): "
        f"the jsonrpcserver package {full:.0f} ms, the jsonrpcserver submodules the router loads "
        f"{light:.0f} ms, all of rpc_agent.server {server:.0f} ms"
    )


if __name__ == "__main__":
    main()
