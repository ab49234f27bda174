"""End-to-end fixtures: the real ``rpc-agent`` server as a subprocess over real pipes, or, for
tests marked ``in_process`` (those about the agent and its sessions rather than the process),
the same command line served in the test's event loop (``inprocess.py``), behind the same client.

Every server runs with ``--provider faux`` (offline, scripted with ``--faux-script``), a private
``$RPC_AGENT_HOME`` and a private ``--cwd``, both under the test's ``tmp_path``. Its stderr goes
to a log file in ``tmp_path`` (shown when a test fails). When a server context ends, the
fixture checks what every test relies on: stdout carried only JSON-RPC lines, every event
validates against the published event union, and the server exited with 0.

No test asserts how fast anything is: timeouts (``WAIT``) only keep a hang from blocking the run.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import orjson
import pytest
from pydantic import TypeAdapter

from e2e.inprocess import RawTask, serve_in_task
from fake_anthropic import FakeAnthropic
from linepipe import LinePipe, reap
from rpc_agent.protocol.events import Event
from rpc_agent_client import RpcAgentClient, RpcCallError

JsonDict = dict[str, Any]

WAIT = 30.0
"""Hang guard for any single wait on the server."""

EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Event)


# --- session files ------------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[JsonDict]:
    """A session file read with plain ``json``: every line must be one complete JSON object."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path} does not end with a newline"
    lines = data.split(b"\n")[:-1]
    parsed = [json.loads(line) for line in lines]
    assert all(isinstance(line, dict) for line in parsed)
    return parsed


def header_and_entries(path: Path) -> tuple[JsonDict, list[JsonDict]]:
    lines = read_jsonl(path)
    assert lines[0]["type"] == "session"
    return lines[0], lines[1:]


def messages_of(entries: list[JsonDict], role: str | None = None) -> list[JsonDict]:
    """Message entries (optionally of one role), in file order."""
    return [
        e
        for e in entries
        if e.get("type") == "message" and (role is None or e["message"].get("role") == role)
    ]


async def current_file(client: RpcAgentClient) -> Path:
    """The file of the server's current session (it has one: the test wrote to it)."""
    state = await client.get_state()
    assert state.sessionFile is not None
    return Path(state.sessionFile)


async def context_of(client: RpcAgentClient, *roles: str) -> list[JsonDict]:
    """The messages of the current context, once checked to have these roles in this order."""
    messages: list[JsonDict] = (await client.call("get_messages"))["messages"]
    assert [m["role"] for m in messages] == list(roles)
    return messages


def text_of(message: JsonDict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def validate_events(events: list[JsonDict]) -> None:
    """Every event fits the published union, and the stream is well nested: runs, turns,
    messages, tool executions and compactions each end once for every start."""
    for event in events:
        EVENT_ADAPTER.validate_python(event)
    open_counts: dict[str, int] = {}
    for event in events:
        kind = str(event["type"])
        for start, end in PAIRS:
            if kind == start:
                open_counts[start] = open_counts.get(start, 0) + 1
            elif kind == end:
                open_counts[start] = open_counts.get(start, 0) - 1
                assert open_counts[start] >= 0, f"{end} without {start}"
    assert all(count == 0 for count in open_counts.values()), open_counts


PAIRS = [
    ("agent_start", "agent_end"),
    ("turn_start", "turn_end"),
    ("message_start", "message_end"),
    ("tool_execution_start", "tool_execution_end"),
    ("compaction_start", "compaction_end"),
    ("auto_retry_start", "auto_retry_end"),
]


CHECKPOINT_EVENTS = {"checkpoint", "checkpoint_failed", "checkpoint_skipped"}
"""Snapshots are stored in the background while a run goes on: their events come whenever one
is done, so the sequences other tests check leave them out."""


def event_types(events: list[JsonDict]) -> list[str]:
    return [str(e["type"]) for e in events if e["type"] not in CHECKPOINT_EVENTS]


# --- the environment ------------------------------------------------------------------------------


@dataclass
class E2E:
    """One test's world: agent home, working directory, scripts and server logs."""

    root: Path
    home: Path
    cwd: Path
    logs: list[Path] = field(default_factory=list)
    in_process: bool = False
    """Serve ``server()`` in the test's event loop (see ``inprocess.py``) instead of a subprocess."""
    _counter: itertools.count[int] = field(default_factory=itertools.count)

    def script(self, replies: list[JsonDict]) -> Path:
        """A faux script file (one reply per call, consumed in order; then echo replies)."""
        path = self.root / f"script-{next(self._counter)}.json"
        path.write_text(json.dumps(replies))
        return path

    @property
    def session_root(self) -> Path:
        return self.home / "sessions"

    def session_files(self) -> list[Path]:
        return sorted(self.session_root.rglob("*.jsonl"))

    def argv(self, *args: str, script: list[JsonDict] | None = None) -> list[str]:
        argv = ["--provider", "faux", "--cwd", str(self.cwd), *args]
        if script is not None:
            argv += ["--faux-script", str(self.script(script))]
        return argv

    def env(self) -> dict[str, str]:
        return {"RPC_AGENT_HOME": str(self.home)}

    def new_log(self) -> Path:
        path = self.root / f"server-{len(self.logs)}.stderr"
        self.logs.append(path)
        return path

    @asynccontextmanager
    async def server(
        self,
        *args: str,
        script: list[JsonDict] | None = None,
        expect_exit: int | None = 0,
        in_this_process: bool = False,
    ) -> AsyncIterator[RpcAgentClient]:
        """A running server; on the way out: stdin closed, exit code and output checked.

        ``in_this_process``: served in the test's event loop also in a test of processes, for
        one side of what is between two processes (a lock's holder, when the one refused is a
        process of its own)."""
        log = self.new_log()
        with log.open("wb") as stderr:
            argv = self.argv(*args, script=script)
            connect = self._here(argv, log) if in_this_process else self._connect(argv, log, stderr.fileno())
            async with connect as client:
                yield client
                with anyio.fail_after(WAIT):
                    code = await client.close()
        assert client.protocol_errors == [], client.protocol_errors
        validate_events(client.events_seen)
        if expect_exit is not None:
            assert code == expect_exit, log.read_text(errors="replace")[-4000:]
        assert_no_internal_errors(log)

    def _connect(
        self, argv: list[str], log: Path, stderr: int
    ) -> AbstractAsyncContextManager[RpcAgentClient]:
        if self.in_process:
            return _in_process_client(argv, log)
        return RpcAgentClient.spawn(*argv, env=self.env(), cwd=self.cwd, stderr=stderr)

    @asynccontextmanager
    async def _here(self, argv: list[str], log: Path) -> AsyncIterator[RpcAgentClient]:
        """A server in this event loop with what a process of it would get from ``env()`` and
        ``cwd`` (an ``in_process`` test has them already)."""
        with pytest.MonkeyPatch.context() as patch:
            if not self.in_process:
                for name, value in self.env().items():
                    patch.setenv(name, value)
                patch.chdir(self.cwd)
            async with _in_process_client(argv, log) as client:
                yield client

    @asynccontextmanager
    async def raw(
        self,
        *args: str,
        script: list[JsonDict] | None = None,
        python_args: tuple[str, ...] = ("-m", "rpc_agent"),
    ) -> AsyncIterator[RawServer]:
        """A server driven over raw pipes (for malformed input); ``python_args`` start it. In a
        test marked ``in_process`` (its bytes, not the pipes, are the point) it is a task read and
        written over a socket by the same line reader and writer."""
        log = self.new_log()
        async with AsyncExitStack() as stack:
            if self.in_process:
                assert python_args == ("-m", "rpc_agent"), "only a process runs other arguments"
                process: anyio.abc.Process = await stack.enter_async_context(
                    serve_in_task(self.argv(*args, script=script), log, kind=RawTask)
                )
            else:
                with log.open("wb") as stderr:
                    process = await anyio.open_process(
                        [sys.executable, *python_args, *self.argv(*args, script=script)],
                        cwd=self.cwd,
                        env={**_base_env(), **self.env()},
                        stderr=stderr.fileno(),
                    )
            server = RawServer(process)
            try:
                yield server
            finally:
                await reap(process)
        assert_no_internal_errors(log)
        # Every line read was one JSON-RPC message (or batch); every event fits its schema.
        for line in server.lines:
            message = orjson.loads(line)
            for item in message if isinstance(message, list) else [message]:
                assert item.get("jsonrpc") == "2.0", line
                if item.get("method") == "event":
                    EVENT_ADAPTER.validate_python(item["params"])


@asynccontextmanager
async def _in_process_client(argv: list[str], log: Path) -> AsyncIterator[RpcAgentClient]:
    """What ``RpcAgentClient.spawn`` does, with the server task in place of the process."""
    async with serve_in_task(argv, log) as task, RpcAgentClient.connect(task) as client:
        yield client


def assert_no_internal_errors(log: Path) -> None:
    """No test here provokes an internal error: a traceback on stderr is a bug."""
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]
    assert "internal error" not in text.lower(), text[-4000:]


MODEL = "claude-haiku-4-5"
"""The model the tests against the fake Messages-API server ask for."""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake Anthropic server; the server's ANTHROPIC_* variables point at it."""
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-e2e")
        yield server


def anthropic(*extra: str) -> tuple[str, ...]:
    """The server's arguments for the Anthropic provider (short retry waits), then ``extra``."""
    return ("--provider", "anthropic", "--model", MODEL, "--retry-base-delay-ms", "20", *extra)


def _base_env() -> dict[str, str]:
    return dict(os.environ)


@pytest.fixture
def e2e(tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[E2E]:
    """A test's world; its servers are subprocesses, or tasks where the test is marked ``in_process``."""
    home = tmp_path / "home"
    cwd = tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    in_process = request.node.get_closest_marker("in_process") is not None
    world = E2E(root=tmp_path, home=home, cwd=cwd, in_process=in_process)
    if in_process:
        # What the subprocess would get from ``env()`` and ``cwd``, for the server in this process.
        for name, value in world.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(cwd)
    yield world
    # pytest shows this only for a failing test: the servers' own account of what happened.
    for log in world.logs:
        if log.exists():
            sys.stderr.write(f"--- {log.name} ---\n{log.read_text(errors='replace')[-6000:]}\n")


# --- raw pipes ------------------------------------------------------------------------------------


class RawServer(LinePipe):
    """Send bytes, read every stdout line; events are kept apart from responses."""

    def __init__(self, process: anyio.abc.Process) -> None:
        super().__init__(process)
        self.events: list[JsonDict] = []
        self._ids = itertools.count(1)

    async def recv(self) -> Any:
        """The next response (or batch); event notifications on the way are collected."""
        while True:
            message = await self.recv_message()
            if isinstance(message, dict) and message.get("method") == "event" and "id" not in message:
                self.events.append(message["params"])
                continue
            return message

    async def call(self, method: str, params: Any = None, *, request_id: Any = None) -> JsonDict:
        if request_id is None:
            request_id = f"r{next(self._ids)}"
        message: JsonDict = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        answer = await self.recv()
        assert isinstance(answer, dict)
        assert answer["id"] == request_id, answer
        return answer


# --- helpers for calls that run while the test does other things -----------------------------------


class Background:
    """A call running in a task: ``await bg.result()`` gets its value or raises its error."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.value: Any = None
        self.error: BaseException | None = None

    async def result(self) -> Any:
        with anyio.fail_after(WAIT):
            await self.done.wait()
        if self.error is not None:
            raise self.error
        return self.value


def start(group: anyio.abc.TaskGroup, call: Callable[[], Awaitable[Any]]) -> Background:
    bg = Background()

    async def run() -> None:
        try:
            bg.value = await call()
        except Exception as exc:
            bg.error = exc
        finally:
            bg.done.set()

    group.start_soon(run)
    return bg


async def wait_event(
    client: RpcAgentClient,
    event_type: str,
    predicate: Callable[[JsonDict], bool] | None = None,
    *,
    after: int = 0,
) -> JsonDict:
    with anyio.fail_after(WAIT):
        return await client.wait_for_event(event_type, predicate, after=after)


async def expect_error(call: Awaitable[Any], code: int) -> RpcCallError:
    with anyio.fail_after(WAIT), pytest.raises(RpcCallError) as caught:
        await call
    assert caught.value.code == code, (caught.value.code, caught.value.message, caught.value.data)
    return caught.value


def long_text(tag: str, chars: int) -> str:
    """One word of ``chars`` characters (a single streamed delta, however long)."""
    return tag + "-" + "x" * chars
