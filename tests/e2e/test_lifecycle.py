"""How the server ends: EOF, SIGTERM in the middle of a prompt, the ``shutdown`` method.

Over real pipes where the process is the point (its end of stdin, its signals, its exit); the
``shutdown`` method's answers and the tool commands an EOF kills are served in the test's event
loop (``in_process``): a real process stops by ``shutdown`` in ``test_stop_race.py``, and one
by EOF in the middle of a tool call here."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from e2e.conftest import E2E, WAIT, JsonDict, RawServer, messages_of, read_jsonl, start, text_of, wait_event
from proc_table import processes_running
from rpc_agent.server import errors as codes
from rpc_agent_client import RpcAgentClient, RpcCallError, ServerExitedError

pytestmark = pytest.mark.anyio


SLOW: JsonDict = {"text": " ".join(f"w{i}" for i in range(60)), "delayMs": 400}

EXIT_BOUND = 2.0
"""Seconds the server may take to exit once its host is gone (a stated requirement)."""


async def send_prompt_p(server: RawServer, text: str) -> None:
    await server.send({"jsonrpc": "2.0", "id": "p", "method": "prompt", "params": {"message": text}})


async def read_events_until(server: RawServer, done: Callable[[JsonDict], bool]) -> None:
    """Read event lines into ``server.events`` until one of them makes ``done`` true."""
    while not any(done(event) for event in server.events):
        line = await server.recv_line()
        assert line is not None
        message = orjson.loads(line)
        assert message.get("method") == "event", message
        server.events.append(message["params"])


async def wait_for_text(server: RawServer) -> None:
    """Read events until the first text delta of a streaming answer."""
    await read_events_until(
        server, lambda event: (event.get("assistantMessageEvent") or {}).get("type") == "text_delta"
    )


async def wait_for_processes(marker: str, count: int = 1) -> None:
    """Until ``count`` processes whose command line holds ``marker`` run (another process's
    doing: there is nothing to wait on but the process table)."""
    with anyio.fail_after(WAIT):
        while len(processes_running(marker)) < count:  # noqa: ASYNC110
            await anyio.sleep(0.02)


def stored_messages(e2e: E2E) -> tuple[Path, list[JsonDict]]:
    """The one session file, and the messages it holds."""
    (session_file,) = e2e.session_files()
    return session_file, [e["message"] for e in messages_of(read_jsonl(session_file)[1:])]


def assert_tool_call_stored_as_aborted(e2e: E2E) -> None:
    _, stored = stored_messages(e2e)
    assert [m["role"] for m in stored] == ["user", "assistant", "toolResult"]
    assert stored[-1]["isError"] is True
    assert "aborted" in text_of(stored[-1])


async def rest(server: RawServer) -> list[JsonDict]:
    """Every remaining stdout message until the server closes it."""
    messages = []
    while (line := await server.recv_line()) is not None:
        messages.append(orjson.loads(line))
    return messages


async def test_eof_during_a_slow_prompt_aborts_it_and_exits(e2e: E2E) -> None:
    async with e2e.raw(script=[SLOW]) as server:
        await send_prompt_p(server, "talk")
        await wait_for_text(server)
        # The host goes away: the run stops as on SIGTERM, it does not stream on to its end.
        assert server.process.stdin is not None
        await server.process.stdin.aclose()
        with anyio.fail_after(EXIT_BOUND):
            remaining = await rest(server)
            assert await server.process.wait() == 0
    session_file, _stored = assert_prompt_p_aborted(e2e, remaining)
    assert not session_file.with_name(session_file.name + ".lock").exists()


async def test_requests_read_from_a_file_run_to_their_end(e2e: E2E) -> None:
    # A file on stdin has no host that could leave: its EOF only ends the input.
    requests = e2e.root / "requests.jsonl"
    requests.write_bytes(
        orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "prompt", "params": {"message": "hello"}}) + b"\n"
    )
    with requests.open("rb") as stdin:
        result = await anyio.run_process(
            [sys.executable, "-m", "rpc_agent", *e2e.argv()],
            stdin=stdin,
            cwd=e2e.cwd,
            env={**os.environ, **e2e.env()},
            check=False,
        )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    answers = [m for m in map(orjson.loads, result.stdout.splitlines()) if "id" in m]
    assert [a["id"] for a in answers] == [1]
    assert answers[0]["result"]["stopReason"] == "stop"
    (session_file,) = e2e.session_files()
    entries = read_jsonl(session_file)[1:]
    assert [text_of(e["message"]) for e in messages_of(entries)] == ["hello", "Echo: hello"]


async def test_sigterm_during_a_slow_prompt_keeps_the_partial(e2e: E2E) -> None:
    async with e2e.raw(script=[SLOW]) as server:
        await send_prompt_p(server, "talk")
        await wait_for_text(server)
        server.terminate()
        remaining = await rest(server)
        assert await server.process.wait() == 0
    session_file, stored = assert_prompt_p_aborted(e2e, remaining)
    assert text_of(stored[1]).startswith("w0")
    assert not session_file.with_name(session_file.name + ".lock").exists()


@pytest.mark.in_process  # the method's answers and serve's exit code, not the process
async def test_shutdown_answers_then_exits_zero(e2e: E2E) -> None:
    async with e2e.raw() as server:
        answer = await server.call("prompt", {"message": "hello"})
        assert answer["result"]["stopReason"] == "stop"
        answer = await server.call("shutdown", request_id="bye")
        assert answer["result"] == {}
        assert await rest(server) == []
        assert await server.process.wait() == 0
    (session_file,) = e2e.session_files()
    assert len(messages_of(read_jsonl(session_file)[1:])) == 2


@pytest.mark.in_process
async def test_shutdown_during_a_prompt_answers_both(e2e: E2E) -> None:
    async with e2e.raw(script=[SLOW]) as server:
        await send_prompt_p(server, "talk")
        await wait_for_text(server)
        await server.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"})
        remaining = await rest(server)
        assert await server.process.wait() == 0
    answers = {m["id"]: m for m in remaining if "id" in m}
    assert answers["bye"]["result"] == {}
    assert answers["p"].get("result", {}).get("stopReason") == "aborted" or (
        answers["p"]["error"]["code"] == codes.CANCELLED
    )
    _, stored = stored_messages(e2e)
    assert stored[-1]["stopReason"] == "aborted"


async def test_sigterm_during_a_tool_call_kills_the_command_and_stores_the_result(e2e: E2E) -> None:
    marker = f"sleep 31.{os.getpid()}"
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": {"command": marker}}]}]
    async with e2e.raw(script=script) as server:
        await send_prompt_p(server, "wait")
        await read_events_until(server, lambda event: event["type"] == "tool_execution_start")
        await wait_for_processes(marker)
        server.terminate()
        remaining = await rest(server)
        assert await server.process.wait() == 0
    assert [m for m in remaining if m.get("id") == "p"]
    assert processes_running(marker) == []
    assert_tool_call_stored_as_aborted(e2e)


TOOL_COMMANDS = {
    "sleep": "sleep {marker}",
    "ignores-sigterm": "trap '' TERM; sleep {marker}; sleep {marker}",
    "background-children": "sleep {marker} & sleep {marker} & wait",
}


@pytest.mark.parametrize(
    "kind",
    # The process's EOF on its pipe once; what the other kinds change is the tool's command.
    [
        kind if kind == "sleep" else pytest.param(kind, marks=pytest.mark.in_process)
        for kind in sorted(TOOL_COMMANDS)
    ],
)
async def test_eof_during_a_tool_call_kills_the_command_and_exits(e2e: E2E, kind: str) -> None:
    marker = f"32.{os.getpid()}{len(kind)}"
    command = TOOL_COMMANDS[kind].format(marker=marker)
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}]
    async with e2e.raw(script=script) as server:
        await send_prompt_p(server, "wait")
        await wait_for_processes(f"sleep {marker}")
        assert server.process.stdin is not None
        await server.process.stdin.aclose()
        with anyio.fail_after(EXIT_BOUND):
            remaining = await rest(server)
            assert await server.process.wait() == 0
    assert [m for m in remaining if m.get("id") == "p"]
    assert processes_running(f"sleep {marker}") == []
    assert_tool_call_stored_as_aborted(e2e)


async def test_client_close_during_a_prompt_stores_it_as_aborted(e2e: E2E) -> None:
    # An editor that closes the agent: the turn it was running is kept, marked aborted.
    async with e2e.server(script=[SLOW]) as client, anyio.create_task_group() as group:
        prompt = start(group, lambda: client.prompt("talk"))
        await wait_event(client, "message_update")
        # Time enough to finish the whole reply: the server must not use it, EOF is an abort.
        began = anyio.current_time()
        assert await client.close(timeout=WAIT) == 0
        assert anyio.current_time() - began < EXIT_BOUND
        try:
            answer = await prompt.result()
        except (RpcCallError, ServerExitedError):
            pass  # answered "cancelled", or not at all: the host had stopped listening
        else:
            assert answer.stopReason == "aborted"
    _, stored = stored_messages(e2e)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[1]["stopReason"] == "aborted"


async def test_client_close_terminates_a_server_that_outlives_its_stdin() -> None:
    # SIGTERM (which the server takes as an abort) comes before SIGKILL.
    command = ["bash", "-c", "trap 'exit 7' TERM; while :; do sleep 0.05; done"]
    async with RpcAgentClient.spawn(command=command) as client:
        assert await client.close(timeout=0.2, grace=WAIT) == 7


async def test_tool_processes_do_not_outlive_a_killed_server(e2e: E2E) -> None:
    # SIGKILL leaves the server no chance to clean up; its tool's process group goes all the same
    # (a grandchild that ignores SIGTERM, a background job), a little later.
    marker = f"sleep 35.{os.getpid()}"
    command = f"echo started; trap '' TERM; {marker} & {marker}; true"
    script: list[JsonDict] = [{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}]
    async with e2e.raw(script=script) as server:
        await send_prompt_p(server, "wait")
        # The first output update: the server is watching the command by then.
        await read_events_until(server, lambda event: event["type"] == "tool_execution_update")
        await wait_for_processes(marker, 2)
        server.process.kill()
        await server.process.wait()
    try:
        with anyio.fail_after(WAIT):
            while processes_running(marker):  # noqa: ASYNC110 (other processes to go)
                await anyio.sleep(0.05)
    finally:
        for pid in processes_running(marker):  # only when the test fails: leave nothing behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def assert_prompt_p_aborted(e2e: E2E, remaining: list[Any]) -> tuple[Path, list[JsonDict]]:
    """Prompt ``p`` ended as aborted (or cancelled), its events closed with ``agent_end``, and
    the file holds the prompt and the partial answer stored as aborted."""
    (answer,) = [m for m in remaining if m.get("id") == "p"]
    if "result" in answer:
        assert answer["result"]["stopReason"] == "aborted"
    else:
        assert answer["error"]["code"] == codes.CANCELLED
    kinds = [m["params"]["type"] for m in remaining if m.get("method") == "event"]
    assert kinds[-2:] == ["agent_end", "agent_settled"]
    session_file, stored = stored_messages(e2e)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[1]["stopReason"] == "aborted"
    return session_file, stored
