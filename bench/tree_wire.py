"""The client side of ``bench.tree_speed``: a spawned server (ours or pi's RPC mode) over real pipes.

Our client is a thread reading the server's stdout that parses each line with orjson, a line
of a megabyte or more with the cyclic collector paused (as ``rpc_agent_client`` does: the
collections that millions of new objects set off would otherwise double the parse).
"""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from bench.tuning import server_env

SERVER = [sys.executable, "-m", "rpc_agent", "--provider", "faux"]


class Wire:
    """A spawned server and a reader thread that parses each line and stamps its arrival."""

    def __init__(self, command: list[str], env: dict[str, str], key: str) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self._key = key
        self._arrived: dict[Any, tuple[float, Any]] = {}
        self.lines: dict[Any, tuple[float, int]] = {}
        """When each response's line was read, before the client's parse, and its size."""
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            read_at = time.perf_counter()
            # The client's parse is part of every timing; a big line is parsed with the
            # collector paused, as rpc_agent_client does (see its _connection._parse).
            paused = len(line) >= 1 << 20 and gc.isenabled()
            if paused:
                gc.disable()
            message = orjson.loads(line)
            if paused:
                gc.enable()
            at = time.perf_counter()
            if isinstance(message, dict) and self._key in message:
                with self._cond:
                    self.lines[message[self._key]] = (read_at, len(line))
                    self._arrived[message[self._key]] = (at, message)
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def send(self, *lines: bytes) -> float:
        """Write the lines; the time before writing (the reader may parse the answer before
        this thread gets the GIL back, so a time taken after could come after the answer)."""
        assert self.proc.stdin is not None
        at = time.perf_counter()
        self.proc.stdin.write(b"".join(lines))
        self.proc.stdin.flush()
        return at

    def wait(self, req_id: Any, timeout: float = 600) -> tuple[float, Any]:
        deadline = time.perf_counter() + timeout
        with self._cond:
            while req_id not in self._arrived:
                if self.proc.poll() is not None or time.perf_counter() > deadline:
                    raise RuntimeError(f"no response to {req_id!r}")
                self._cond.wait(0.5)
            return self._arrived.pop(req_id)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def ours(home: Path, *extra: str, tuned: bool = True) -> Wire:
    return Wire([*SERVER, "--no-session", *extra], server_env(home, tuned), "id")


def rpc(req_id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "method": method}
    if params is not None:
        body["params"] = params
    return orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE)


def pi_wire(package: Path, home: Path, cwd: Path) -> Wire:
    env = dict(os.environ)
    env["HOME"] = str(home)
    node = shutil.which("node") or "node"
    command = [node, str(package / "dist" / "cli.js"), "--mode", "rpc", "--no-session"]
    wire = Wire(command, env, "id")
    return wire


def pi_cmd(req_id: str, kind: str, **fields: Any) -> bytes:
    return orjson.dumps({"id": req_id, "type": kind, **fields}, option=orjson.OPT_APPEND_NEWLINE)
