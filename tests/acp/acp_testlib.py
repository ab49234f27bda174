"""Helpers for the ACP tests: ``rpc-agent --acp`` spawned through the SDK's own client side.

Every agent runs with ``--provider faux`` (scripted), a private ``$RPC_AGENT_HOME`` and a
private working directory under the test's ``tmp_path``; its stderr goes to a log file there.
No test asserts how fast anything is: ``WAIT`` only keeps a hang from blocking the run.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.client.connection import ClientSideConnection
from acp.interfaces import Agent
from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    InitializeResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    SessionInfoUpdate,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)
from acp.stdio import spawn_agent_process
from acp_inprocess import Served, serve_in_task, serve_on_pipes

from acp import PROTOCOL_VERSION, RequestError, text_block

JsonDict = dict[str, Any]

WAIT = 30.0
"""Hang guard for any single wait on the agent."""

SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AgentPlanContentUpdate
    | AgentPlanRemovedUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)


def _not_offered(method: str) -> Any:
    """A client method that answers "method not found" (typed ``Any``: it stands for each of the
    protocol's signatures)."""

    async def refuse(self: object, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found(method)

    return refuse


@dataclass
class RecordingClient:
    """An ACP client that records every update and answers permission requests from a list."""

    answers: list[str] = field(default_factory=list)
    """Option ids to pick, in order, for the permission requests to come (default allow_once)."""
    updates: list[tuple[str, SessionUpdate]] = field(default_factory=list)
    permission_requests: list[tuple[str, ToolCallUpdate]] = field(default_factory=list)
    _changed: anyio.Event = field(default_factory=anyio.Event)

    def _note_change(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((session_id, tool_call))
        self._note_change()
        choice = self.answers.pop(0) if self.answers else "allow_once"
        assert choice in {option.option_id for option in options}
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=choice))

    async def session_update(self, session_id: str, update: SessionUpdate, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self._note_change()

    # What a client without the ``fs`` and ``terminal`` capabilities (and without elicitation)
    # answers when asked anyway.
    write_text_file = _not_offered("fs/write_text_file")
    read_text_file = _not_offered("fs/read_text_file")
    create_terminal = _not_offered("terminal/create")
    terminal_output = _not_offered("terminal/output")
    release_terminal = _not_offered("terminal/release")
    wait_for_terminal_exit = _not_offered("terminal/wait_for_exit")
    kill_terminal = _not_offered("terminal/kill")
    create_elicitation = _not_offered("elicitation/create")

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Agent) -> None:
        return None

    # --- reading what arrived ------------------------------------------------------------------

    def of(self, session_id: str) -> list[SessionUpdate]:
        return [update for sid, update in self.updates if sid == session_id]

    def agent_text(self, session_id: str) -> str:
        return "".join(
            u.content.text
            for u in self.of(session_id)
            if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def user_text(self, session_id: str) -> str:
        return "".join(
            u.content.text
            for u in self.of(session_id)
            if isinstance(u, UserMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def thought_text(self, session_id: str) -> str:
        return "".join(
            u.content.text
            for u in self.of(session_id)
            if isinstance(u, AgentThoughtChunk) and isinstance(u.content, TextContentBlock)
        )

    def tool_calls(self, session_id: str) -> list[ToolCallStart]:
        return [u for u in self.of(session_id) if isinstance(u, ToolCallStart)]

    def tool_updates(self, session_id: str, call_id: str) -> list[ToolCallProgress]:
        return [
            u for u in self.of(session_id) if isinstance(u, ToolCallProgress) and u.tool_call_id == call_id
        ]

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait until something that arrived makes ``predicate`` true."""
        with anyio.fail_after(WAIT):
            while not predicate():
                await self._changed.wait()


def tool_call(name: str, call_id: str, **arguments: Any) -> JsonDict:
    """A faux reply that calls one tool."""
    return {"toolCalls": [{"name": name, "arguments": arguments, "id": call_id}]}


def content_text(update: ToolCallProgress) -> str:
    return "".join(
        c.content.text
        for c in update.content or []
        if c.type == "content" and isinstance(c.content, TextContentBlock)
    )


@dataclass
class AcpWorld:
    """A private home, working directory and log folder for agents spawned by one test."""

    root: Path
    logs: list[Path] = field(default_factory=list)
    in_process: bool = False
    """Serve ``agent()`` in the test's event loop (``acp_inprocess.py``) instead of a subprocess."""

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def cwd(self) -> Path:
        path = self.root / "project"
        path.mkdir(exist_ok=True)
        return path

    def script(self, replies: list[JsonDict]) -> Path:
        path = self.root / f"script-{len(self.logs)}.json"
        path.write_text(json.dumps(replies))
        return path

    @asynccontextmanager
    async def agent(
        self,
        client: RecordingClient,
        script: list[JsonDict] | None = None,
        *,
        provider: tuple[str, ...] = ("--provider", "faux"),
        env: dict[str, str] | None = None,
        capabilities: ClientCapabilities | None = None,
    ) -> AsyncIterator[ClientSideConnection]:
        """Start ``rpc-agent --acp`` (a process, or a task when ``in_process``), initialize it,
        and hand back the client connection."""
        args = ["--acp", *provider]
        if script is not None:
            args += ["--faux-script", str(self.script(script))]
        log = self.root / f"agent-{len(self.logs)}.stderr"
        self.logs.append(log)
        env = {"RPC_AGENT_HOME": str(self.home), **(env or {})}
        connect = self._in_task if self.in_process else self._in_process_of_its_own
        async with connect(client, args, env, log) as conn:
            with anyio.fail_after(WAIT):
                init = await conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=capabilities or ClientCapabilities(),
                )
            assert isinstance(init, InitializeResponse)
            yield conn

    @asynccontextmanager
    async def session(
        self, client: RecordingClient, script: list[JsonDict] | None = None, **options: Any
    ) -> AsyncIterator[tuple[ClientSideConnection, str]]:
        """An agent as ``agent()`` gives it, with a new session open in the working directory:
        the connection and the session's id."""
        async with self.agent(client, script, **options) as conn:
            with anyio.fail_after(WAIT):
                sid = (await conn.new_session(cwd=str(self.cwd))).session_id
            yield conn, sid

    @asynccontextmanager
    async def _in_process_of_its_own(
        self, client: RecordingClient, args: list[str], env: dict[str, str], log: Path
    ) -> AsyncIterator[ClientSideConnection]:
        with log.open("wb") as stderr:
            async with spawn_agent_process(
                client,
                sys.executable,
                "-m",
                "rpc_agent",
                *args,
                env=env,
                cwd=self.cwd,
                transport_kwargs={"stderr": stderr.fileno()},
                use_unstable_protocol=True,
            ) as (conn, process):
                yield conn
        assert process.returncode == 0, log.read_text()

    @contextmanager
    def _as_a_process(self, env: dict[str, str]) -> Iterator[None]:
        """What the process would have had: the variables given (and none of the others the
        agent reads), and the working directory."""
        with pytest.MonkeyPatch.context() as patch:
            for name in list(os.environ):
                if name.startswith(("ANTHROPIC_", "RPC_AGENT_")) and name not in env:
                    patch.delenv(name)
            for name, value in env.items():
                patch.setenv(name, value)
            patch.chdir(self.cwd)
            yield

    @asynccontextmanager
    async def _in_task(
        self, client: RecordingClient, args: list[str], env: dict[str, str], log: Path
    ) -> AsyncIterator[ClientSideConnection]:
        with self._as_a_process(env):
            log.touch()
            async with serve_in_task(client, args, log, use_unstable_protocol=True) as (conn, code):
                yield conn
        assert code == [0], log.read_text()

    @asynccontextmanager
    async def raw(self, *args: str) -> AsyncIterator[Served]:
        """``rpc-agent --acp --provider faux ARGS`` served in the test's event loop with no
        client in front: the test writes the lines and reads what comes back."""
        log = self.root / f"agent-{len(self.logs)}.stderr"
        self.logs.append(log)
        with self._as_a_process({"RPC_AGENT_HOME": str(self.home)}):
            log.touch()
            async with serve_on_pipes(["--acp", "--provider", "faux", *args], log) as served:
                yield served


@pytest.fixture
def world(tmp_path: Path) -> AcpWorld:
    """Agents run in the test's event loop (``acp_inprocess.py``): the tests are about what the
    agent says, stores and starts, not about its process. Every module gets it through
    ``conftest.py``; one about the process itself (``test_acp_eof.py``) overrides it with a world
    of real processes."""
    return AcpWorld(tmp_path, in_process=True)


async def prompt(conn: ClientSideConnection, sid: str, text: str) -> PromptResponse:
    """Prompt ``text`` in session ``sid`` and wait for the answer (hang-guarded)."""
    with anyio.fail_after(WAIT):
        return await conn.prompt(session_id=sid, prompt=[text_block(text)])


async def cancelled_midway(
    conn: ClientSideConnection, client: RecordingClient, sid: str, cancel: Callable[[], Awaitable[None]]
) -> list[str]:
    """Prompt "talk slowly", ``cancel()`` once the first words arrived; the stop reasons."""
    stop_reasons: list[str] = []

    async def run_prompt() -> None:
        answer = await conn.prompt(session_id=sid, prompt=[text_block("talk slowly")])
        stop_reasons.append(answer.stop_reason)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(run_prompt)
            await client.wait_for(lambda: bool(client.agent_text(sid)))
            await cancel()
    return stop_reasons
