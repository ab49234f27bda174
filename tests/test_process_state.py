"""The library leaves the process alone; only the ``rpc-agent`` command tunes its own.

An embedding program imports ``rpc_agent`` and uses it: the cyclic collector, the environment
and ``sys`` are as it left them, and no thread or process it did not ask for is running. Checked in a
child interpreter, which nothing else has touched.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import sys
import threading
from pathlib import Path

import pytest

from child_python import run_python
from rpc_agent import cli
from rpc_agent.runtime import Runtime, ServerConfig
from rpc_agent.server import app
from rpc_agent.store.manager import SessionManager

EMBEDDING = r"""
import gc, json, os, sys, threading

def children():  # processes whose parent is this one: a command left behind, a helper
    me, found = str(os.getpid()), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                line = stat.read()
        except OSError:
            continue
        if line[line.rfind(")") + 2 :].split()[1] == me:
            found.append(line[: line.rfind(")") + 1])
    return sorted(found)

def state():
    return {
        "children": children(),
        "collector": [gc.isenabled(), list(gc.get_threshold()), gc.get_freeze_count()],
        "environ": dict(os.environ),
        "sys": [sys.getswitchinterval(), sys.getrecursionlimit(), repr(sys.stdout), repr(sys.stderr),
                sys.path[:], sys.flags.optimize],
        "threads": sorted(t.name for t in threading.enumerate()),
    }

before = state()
started = []
start = threading.Thread.start

def recording_start(thread):
    started.append(thread.name)
    start(thread)

threading.Thread.start = recording_start  # every thread, also one that has ended by the check
from pathlib import Path
import anyio
from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.providers.faux import FauxProvider
from rpc_agent.store.manager import SessionManager
from rpc_agent.tools import default_tools

folder = Path(sys.argv[1])
USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

async def use() -> None:
    big = SessionManager.create(str(folder), folder / "sessions")
    for n in range(200):  # longer than a tree the server would build in the background
        text = [{"type": "text", "text": f"message {n}"}]
        big.append_message({"role": "user", "content": text, "timestamp": n})
        big.append_message({"role": "assistant", "content": text, "api": "faux", "provider": "faux",
                            "model": "faux-1", "usage": USAGE, "stopReason": "stop", "timestamp": n})
    await big.aclose()
    manager = SessionManager.create(str(folder), folder / "sessions")
    events = []
    calls = [{"name": "ls", "arguments": {"path": "."}}, {"name": "bash", "arguments": {"command": "echo hi"}}]
    script = [{"toolCalls": calls}, {"text": "done"}]
    agent = AgentSession(manager=manager, provider=FauxProvider(script), emit=events.append,
                         tools=default_tools())
    await agent.prompt("list the folder")
    await agent.switch_session(str(big.session_file))  # opens, warms up, leaves the first one
    agent.tree()
    await agent.new_session(None)
    await agent.shutdown()

anyio.run(use)
# The loop's worker threads were told to stop when it ended; they may still be on their way out.
for thread in threading.enumerate():
    if thread.name == "AnyIO worker thread":
        thread.join(timeout=30)
gc.collect()
after = state()
print(json.dumps({"before": before, "after": after, "started": sorted(set(started))}))
"""


def test_importing_and_using_the_library_leaves_the_process_alone(tmp_path: Path) -> None:
    done = run_python(EMBEDDING, tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["after"] == seen["before"]
    # The event loop's worker threads (``anyio.to_thread``) are the caller's loop's own.
    assert seen["started"] == ["AnyIO worker thread"]


def test_the_command_takes_its_measures_and_gives_the_collector_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Start-up runs with the collector paused; the front runs with CPython's own collector,
    start-up's objects frozen; no thread of ours runs beside it. A session opened is
    collected, then frozen too."""
    seen: list[tuple[bool, int, list[str]]] = []
    opened: list[int] = []
    threads = {t.name for t in threading.enumerate()}

    def run(config: ServerConfig) -> int:
        new = sorted(t.name for t in threading.enumerate() if t.name not in threads)
        seen.append((gc.isenabled(), gc.get_freeze_count(), new))
        assert config.on_session_opened is not None
        session = [{"id": f"e{n}", "message": {"content": [{"text": str(n)}]}} for n in range(1000)]
        config.on_session_opened()
        opened.append(gc.get_freeze_count())
        del session
        return 0

    monkeypatch.setattr(app, "run", run)
    monkeypatch.setattr(
        sys, "argv", ["rpc-agent", "--provider", "faux", "--no-session", "--cwd", str(tmp_path)]
    )
    monkeypatch.setenv("RPC_AGENT_HOME", str(tmp_path))
    monkeypatch.delenv("RPC_AGENT_NO_TUNING", raising=False)
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    frozen_before = gc.get_freeze_count()
    exits: list[int] = []
    monkeypatch.setattr(os, "_exit", exits.append)  # the command ends its process at once,
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: None)  # after the exit functions
    try:
        cli.command()
    finally:
        gc.unfreeze()  # what start-up froze is this test process's: give it back to the collector
    ((enabled, frozen, new),) = seen
    assert (enabled, new) == (True, [])
    assert frozen > frozen_before
    assert opened[0] >= frozen + 3000  # the session's entries, messages and blocks
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ  # that measure is gone: inside the noise
    assert exits == [0]


def test_no_tuning_leaves_the_command_s_process_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[bool, int]] = []

    def run(config: ServerConfig) -> int:
        if config.on_session_opened is not None:
            config.on_session_opened()
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        return 0

    monkeypatch.setattr(app, "run", run)
    monkeypatch.setattr(
        sys, "argv", ["rpc-agent", "--provider", "faux", "--no-session", "--cwd", str(tmp_path)]
    )
    monkeypatch.setenv("RPC_AGENT_HOME", str(tmp_path))
    monkeypatch.setenv("RPC_AGENT_NO_TUNING", "1")
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    frozen_before = gc.get_freeze_count()
    exits: list[int] = []
    monkeypatch.setattr(os, "_exit", exits.append)
    assert cli.command() == 0
    assert seen == [(True, frozen_before)]
    assert exits == []  # the usual exit, teardown and all
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ


@pytest.mark.anyio
async def test_the_runtime_tells_its_owner_of_every_session_its_agent_opens(tmp_path: Path) -> None:
    """The hook the command's tuning hangs on: the session an agent starts with, and each one
    it switches to."""
    other = SessionManager.create(str(tmp_path), tmp_path / "sessions")
    other.append_message({"role": "user", "content": "hi", "timestamp": 1})
    other.append_message(  # a file is written once it holds an answer, as pi's
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "hello"}],
            "api": "faux",
            "provider": "faux",
            "model": "faux-1",
            "usage": {
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    await other.aclose()
    calls: list[str] = []
    config = ServerConfig(cwd=tmp_path, provider="faux", session_dir=tmp_path / "sessions", home=tmp_path)
    config.on_session_opened = lambda: calls.append("opened")
    runtime = Runtime(config)
    agent = runtime.agent(runtime.open_session(), lambda _event: None)
    assert calls == ["opened"]
    assert other.session_file is not None
    await agent.switch_session(str(other.session_file))
    assert calls == ["opened", "opened"]
    await agent.shutdown()
    runtime.close()
