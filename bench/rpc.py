"""The real server over real pipes: startup, pipelined throughput, get_tree on a big session.

    .venv/bin/python -m bench.rpc [--requests 100000] [--tree-entries 100000]

1. spawn -> ``initialize`` response (median of several spawns), and, for scale, spawn -> exit
   of a bare ``python -c pass``;
2. pipelined ``get_state``: N requests written back to back by a writer thread while the
   responses are read, requests/s end to end;
3. ``get_tree`` latency (median) on a synthetic session of ``--tree-entries`` entries, opened
   with ``--session``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from bench.options import parse_counts
from bench.synthetic import ensure_session_file
from bench.tuning import server_env

SERVER = [sys.executable, "-m", "rpc_agent", "--provider", "faux"]


def spawn(extra: list[str], home: Path, tuned: bool) -> subprocess.Popen[bytes]:
    # Without PYTHONDONTWRITEBYTECODE (set on some CI machines) the byte code is cached after
    # the first start, as on a user's machine; with it, every start recompiles the package.
    env = server_env(home, tuned)
    return subprocess.Popen(
        [*SERVER, *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )


def request(req_id: int, method: str, params: dict[str, object] | None = None) -> bytes:
    body: dict[str, object] = {"jsonrpc": "2.0", "id": req_id, "method": method}
    if params is not None:
        body["params"] = params
    return orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE)


def read_response(proc: subprocess.Popen[bytes], req_id: int) -> dict[str, object]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server exited")
        message = orjson.loads(line)
        if isinstance(message, dict) and message.get("id") == req_id:
            return message


def time_to_initialize(home: Path, runs: int, tuned: bool) -> tuple[float, float]:
    samples = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        proc = spawn(["--no-session"], home, tuned)
        assert proc.stdin is not None
        proc.stdin.write(request(1, "initialize"))
        proc.stdin.flush()
        read_response(proc, 1)
        samples.append((time.perf_counter() - started) * 1000)
        proc.stdin.close()
        proc.wait()
    samples = samples[1:]  # the first start may still be writing the byte-code cache
    bare = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from pydantic import BaseModel"], check=True)
        bare.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), statistics.median(bare)


def pipelined_get_state(home: Path, count: int, tuned: bool) -> float:
    proc = spawn(["--no-session"], home, tuned)
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(request(0, "initialize"))
    proc.stdin.flush()
    read_response(proc, 0)
    payload = b"".join(request(i, "get_state") for i in range(1, count + 1))

    def write_all() -> None:
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.flush()

    started = time.perf_counter()
    writer = threading.Thread(target=write_all)
    writer.start()
    seen = 0
    while seen < count:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server exited early")
        seen += 1
    elapsed = time.perf_counter() - started
    writer.join()
    proc.stdin.close()
    proc.wait()
    return count / elapsed


def get_tree_latency(home: Path, entries: int, runs: int, tuned: bool) -> tuple[float, int, float]:
    folder = Path(tempfile.mkdtemp(prefix="rpc-bench-tree-"))
    source = ensure_session_file(Path(__file__).resolve().parent / ".data", entries)
    path = folder / source.name
    path.write_bytes(source.read_bytes())
    proc = spawn(["--session", str(path)], home, tuned)
    assert proc.stdin is not None
    started = time.perf_counter()
    proc.stdin.write(request(0, "initialize"))
    proc.stdin.flush()
    read_response(proc, 0)
    open_ms = (time.perf_counter() - started) * 1000
    samples = []
    nodes = 0
    for i in range(1, runs + 1):
        started = time.perf_counter()
        proc.stdin.write(request(i, "get_tree"))
        proc.stdin.flush()
        response = read_response(proc, i)
        samples.append((time.perf_counter() - started) * 1000)
        result = response["result"]
        assert isinstance(result, dict)
        nodes = len(result["nodes"])
    proc.stdin.close()
    proc.wait()
    return statistics.median(samples), nodes, open_ms


def main(argv: list[str] | None = None) -> int:
    args = parse_counts(__doc__, argv, requests=100_000, tree_entries=100_000, runs=5)
    home = Path(tempfile.mkdtemp(prefix="rpc-bench-home-"))
    settings = (True, False)  # each row with the command's measures (on) and without (off)

    def each(label: str, measure: Callable[[bool], str]) -> None:
        for tuned in settings:
            print(f"{label:32} {'on ' if tuned else 'off'} {measure(tuned)}")

    each(
        "spawn -> initialize response",
        lambda tuned: (
            f"{time_to_initialize(home, args.runs, tuned)[0]:8.1f} ms  (median of {args.runs}; target <= 200 ms)"
        ),
    )
    _, bare_ms = time_to_initialize(home, 1, True)
    print(
        f"python -c 'from pydantic import BaseModel'  {bare_ms:7.1f} ms  (interpreter + pydantic, for scale)"
    )
    each(
        "pipelined get_state",
        lambda tuned: (
            f"{pipelined_get_state(home, args.requests, tuned):8.0f} requests/s  "
            f"({args.requests} requests; reference ~50,000/s)"
        ),
    )
    for tuned in settings:
        tree_ms, nodes, open_ms = get_tree_latency(home, args.tree_entries, args.runs, tuned)
        setting = "on " if tuned else "off"
        print(
            f"{'spawn -> initialize, ' + str(args.tree_entries) + ' entries':32} {setting} {open_ms:8.1f} ms  (opening the session included)"
        )
        print(
            f"{'get_tree, ' + str(args.tree_entries) + ' entries':32} {setting} {tree_ms:8.1f} ms  median, {nodes} nodes in the response"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
