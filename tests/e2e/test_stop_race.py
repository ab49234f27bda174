"""SIGTERM, EOF and ``shutdown`` at every moment of a prompt's start keep its aborted answer.

``abort`` right after a prompt always leaves the turn's assistant message in the file with
``stopReason: "aborted"``; the other ways of stopping the server must take the same path, at
whatever moment they arrive: right after the prompt is written (before its run starts), after
``agent_start``, after the first delta. Each kind is tried in a loop of real server processes
(several at a time, so that the loop stays short); a race shows as a file that ends with the
user's message.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from e2e.conftest import WAIT, RawServer, messages_of, read_jsonl
from rpc_agent.server import errors as codes

pytestmark = pytest.mark.anyio

JsonDict = dict[str, Any]

RUNS_PER_KIND = {"sigterm": 30, "eof": 30, "shutdown": 30, "abort": 15}
"""Runs of each way of stopping, spread over the moments (the issue saw 1-6 of 30 fail);
``abort`` is the yardstick the others are held to."""

AT_ONCE = 8
"""Servers running together: the loop's wall time, not what is tested."""

MOMENTS = ("prompt", "agent_start", "delta")

SLOW: JsonDict = {"text": " ".join(f"w{i}" for i in range(40)), "delayMs": 150}


async def _read_until(server: RawServer, want: str) -> None:
    """Read stdout until an event of this kind (or the first text delta, for ``delta``)."""
    while True:
        line = await server.recv_line()
        assert line is not None, "the server closed stdout before the moment to stop"
        message = orjson.loads(line)
        if message.get("method") != "event":
            continue
        event = message["params"]
        if want == "delta" and (event.get("assistantMessageEvent") or {}).get("type") == "text_delta":
            return
        if event["type"] == want:
            return


async def _stop(server: RawServer, kind: str, moment: str) -> list[JsonDict]:
    """Stop the prompt at ``moment`` in the way ``kind`` names; the messages read on the way
    that matter afterwards (the prompt's answer, for ``abort``)."""
    prompt = orjson.dumps({"jsonrpc": "2.0", "id": "p", "method": "prompt", "params": {"message": "talk"}})
    if kind == "shutdown" and moment == "prompt":
        # Both in one write: the server reads the shutdown right behind the prompt.
        shutdown = orjson.dumps({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"})
        await server.send_raw(prompt + b"\n" + shutdown + b"\n")
        return []
    await server.send_raw(prompt + b"\n")
    if moment != "prompt":
        await _read_until(server, moment)
    if kind == "sigterm":
        server.terminate()
    elif kind == "eof":
        await server.close_stdin()
    elif kind == "shutdown":
        await server.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"})
    else:
        # The yardstick: an abort, then (once the prompt is answered) EOF to end the server.
        await server.send({"jsonrpc": "2.0", "id": "a", "method": "abort"})
        while True:
            line = await server.recv_line()
            assert line is not None, "the server closed stdout before answering the prompt"
            message = orjson.loads(line)
            if message.get("id") == "p":
                await server.close_stdin()
                return [message]
    return []


async def _one_run(root: Path, script: Path, kind: str, moment: str, index: int) -> str | None:
    """One server stopped at one moment; what went wrong, or None."""
    home, cwd = root / f"home-{index}", root / f"work-{index}"
    home.mkdir()
    cwd.mkdir()
    log = root / f"server-{index}.stderr"
    argv = ["--provider", "faux", "--cwd", str(cwd), "--faux-script", str(script)]
    with log.open("wb") as stderr:
        process = await anyio.open_process(
            [sys.executable, "-m", "rpc_agent", *argv],
            cwd=cwd,
            env={**os.environ, "RPC_AGENT_HOME": str(home)},
            stderr=stderr.fileno(),
        )
    server = RawServer(process)
    try:
        with anyio.fail_after(WAIT):
            # Serving (its signal handler is in place): the moments below are the prompt's own.
            assert (await server.call("get_state"))["result"]["isStreaming"] is False
            remaining = await _stop(server, kind, moment)
            remaining += await server.rest()
            code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()
    where = f"{kind} at {moment} (run {index})"
    if code != 0:
        return f"{where}: exit code {code}: {log.read_text(errors='replace')[-2000:]}"
    if "Traceback" in log.read_text(errors="replace"):
        return f"{where}: a traceback on stderr: {log.read_text(errors='replace')[-2000:]}"
    answers = [m for m in remaining if isinstance(m, dict) and m.get("id") == "p"]
    files = sorted((home / "sessions").rglob("*.jsonl"))
    if not files:
        # SIGTERM may come before the prompt's line is read: then nothing ran at all.
        if kind == "sigterm" and moment == "prompt" and not answers:
            return None
        return f"{where}: no session file"
    stored = [e["message"] for e in messages_of(read_jsonl(files[0])[1:])]
    roles = [m["role"] for m in stored]
    if roles != ["user", "assistant"] or stored[-1].get("stopReason") != "aborted":
        tail = [(m["role"], m.get("stopReason")) for m in stored]
        return f"{where}: the file holds {tail}"
    if len(answers) != 1:
        return f"{where}: the prompt was answered {len(answers)} times"
    (answer,) = answers
    if "result" in answer:
        if answer["result"]["stopReason"] != "aborted":
            return f"{where}: the prompt answered {answer['result']['stopReason']}"
    elif answer["error"]["code"] != codes.CANCELLED:
        return f"{where}: the prompt failed with {answer['error']}"
    return None


@pytest.mark.parametrize("kind", ["abort", "sigterm", "eof", "shutdown"])
async def test_stopping_the_server_keeps_the_aborted_answer(tmp_path: Path, kind: str) -> None:
    script = tmp_path / "script.json"
    script.write_text(orjson.dumps([SLOW]).decode())
    failures: list[str] = []
    limiter = anyio.CapacityLimiter(AT_ONCE)

    async def run(index: int) -> None:
        async with limiter:
            failure = await _one_run(tmp_path, script, kind, MOMENTS[index % len(MOMENTS)], index)
        if failure is not None:
            failures.append(failure)

    async with anyio.create_task_group() as group:
        for index in range(RUNS_PER_KIND[kind]):
            group.start_soon(run, index)
    assert failures == [], f"{len(failures)} of {RUNS_PER_KIND[kind]} runs lost the answer:\n" + "\n".join(
        failures
    )
