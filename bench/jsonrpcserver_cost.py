"""What jsonrpcserver would cost in the server's hot path, and what it costs the client.

    .venv/bin/python -m bench.jsonrpcserver_cost [--runs 5] [--requests 20000]

The server's router answers JSON-RPC itself; the Python client answers the server's requests
to the host (approvals, hooks, client tools) through jsonrpcserver (``rpc_agent_client._serving``).
Printed: the import of jsonrpcserver in a fresh interpreter (over a bare one), and dispatches
per second of one small request: jsonrpcserver with its default (jsonschema) validator, with a
validator that checks nothing, and the client's own path (params checked by the generated
types). Compare with ``bench.rpc``'s pipelined get_state, which is end to end over pipes.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Any

import anyio
import orjson

from bench.options import parse_counts


def import_ms(statement: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def dispatches_per_second(requests: int) -> dict[str, float]:
    from jsonrpcserver import Result, Success, async_dispatch

    from rpc_agent_client._serving import answer

    async def ping(**params: Any) -> Result:
        return Success(params)

    text = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"n": 1}}).decode()
    message = orjson.loads(text)
    approval = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "approval/request",
        "params": {"toolName": "bash", "toolCallId": "c", "arguments": {"command": "ls"}},
    }
    handlers = {"approval/request": lambda params: {"decision": "allow"}}

    async def default() -> None:
        await async_dispatch(text, methods={"ping": ping})

    async def unchecked() -> None:
        await async_dispatch(text, methods={"ping": ping}, validator=lambda request: request)

    async def parsed() -> None:
        await async_dispatch(text, methods={"ping": ping}, deserializer=lambda _text: message)

    async def client() -> None:
        await answer(approval, handlers)

    rates = {}
    for name, call in (
        ("jsonrpcserver, jsonschema validator", default),
        ("jsonrpcserver, no validator", unchecked),
        ("jsonrpcserver, request already parsed", parsed),
        ("rpc_agent_client answering approval/request", client),
    ):
        await call()
        started = time.perf_counter()
        for _ in range(requests):
            await call()
        rates[name] = requests / (time.perf_counter() - started)
    return rates


def main(argv: list[str] | None = None) -> int:
    args = parse_counts(__doc__, argv, runs=5, requests=20_000)
    bare = import_ms("pass", args.runs)
    loaded = import_ms("import jsonrpcserver", args.runs)
    print(f"import jsonrpcserver          {loaded - bare:8.1f} ms  over a bare interpreter ({bare:.0f} ms)")
    for name, rate in anyio.run(dispatches_per_second, args.requests).items():
        print(f"{name:44} {rate:10,.0f} dispatches/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
