"""The Python client: a typed call for every published method, its own generated types, and no
server code behind it (an editor extension in Python installs the client alone)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import orjson
import pytest

from child_python import modules_loaded_by
from e2e.inprocess import serve_in_task
from pi15_lines import CONTEXT_ROLES, pi15_session
from pi_lines import write_jsonl
from rpc_agent_client import RpcAgentClient, RpcCallError, types

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "protocol" / "schema.json"
GENERATOR = ROOT / "clients" / "python" / "scripts" / "generate_types.py"


def test_every_method_in_the_schema_has_a_typed_call() -> None:
    methods = orjson.loads(SCHEMA.read_bytes())["methods"]
    missing = [
        name for name in methods if not inspect.iscoroutinefunction(getattr(RpcAgentClient, name, None))
    ]
    assert missing == [], f"RpcAgentClient has no typed call for {missing}"


def test_the_client_loads_no_server_code() -> None:
    loaded = modules_loaded_by("import rpc_agent_client, rpc_agent_client.demo, rpc_agent_client.types")
    heavy = ("rpc_agent", "anthropic", "uvloop", "acp", "jsonrpcserver")
    assert [m for m in loaded if m.split(".")[0] in heavy] == []


def test_the_generated_types_match_the_schema() -> None:
    done = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


@asynccontextmanager
async def served(cwd: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> AsyncIterator[RpcAgentClient]:
    """The client connected to ``rpc-agent ARGV`` as ``RpcAgentClient.spawn(*argv, cwd=cwd)``
    would start it, served in the test's event loop (``e2e/inprocess.py``): these tests are
    about the typed calls, not the process (every e2e test without ``in_process`` spawns)."""
    monkeypatch.chdir(cwd)
    async with (
        serve_in_task(list(argv), cwd / "server.stderr") as task,
        RpcAgentClient.connect(task) as client,
    ):
        yield client


@pytest.mark.anyio
async def test_the_settings_calls_reach_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with served(tmp_path, monkeypatch, "--provider", "faux", "--no-session") as client:
        models = await client.get_available_models()
        assert [model.id for model in models.models][:2] == ["faux-1", "faux-mini"]
        chosen = await client.set_model("faux-mini")
        assert chosen.id == "faux-mini"
        assert (await client.cycle_model()).model.id == "faux-1"
        await client.set_thinking_level("high")
        assert (await client.get_state()).thinkingLevel == "high"
        assert (await client.cycle_thinking_level()).level != "high"
        await client.set_steering_mode("all")
        await client.set_follow_up_mode("all")
        await client.set_auto_compaction(False)
        await client.set_auto_retry(False)
        state = await client.get_state()
        assert (state.steeringMode, state.followUpMode) == ("all", "all")
        assert (state.autoCompaction, state.autoRetry) == (False, False)
        assert (await client.abort_bash()).aborted is False
        assert (await client.abort_retry()).aborted is False
        with pytest.raises(RpcCallError):
            await client.compact()  # nothing to compact in an empty session
        await client.prompt("hello")
        page = Path(await client.export_html(str(tmp_path / "out.html")))
        assert page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


CHUNKED_SERVER = r"""
import os, sys, time
def event(n, text=""):
    return ('{"jsonrpc":"2.0","method":"event","params":{"type":"x","n":%d,"text":"%s"}}\n' % (n, text)).encode()
big = event(3, "y" * (2 << 20))
out = event(1) + event(2)[:10]  # a line cut in two writes
pieces = [out, event(2)[10:] + big[:5], *[big[i:i + 65536] for i in range(5, len(big), 65536)]]
pieces += [b"not json\n" + event(4)[:-1], b"\n", b'{"unterminated"']
for piece in pieces:
    os.write(1, piece)
    time.sleep(0.002)
sys.stdin.read()
"""


@pytest.mark.anyio
async def test_lines_cut_anywhere_by_the_pipe_arrive_whole_and_in_order() -> None:
    import anyio

    process = await anyio.open_process([sys.executable, "-c", CHUNKED_SERVER])
    async with RpcAgentClient.connect(process) as client:
        events = client.events()
        with anyio.fail_after(30):
            received = [await events.receive() for _ in range(4)]
        assert process.stdin is not None
        await process.stdin.aclose()
    assert [event["n"] for event in received] == [1, 2, 3, 4]
    assert received[2]["text"] == "y" * (2 << 20)
    assert client.protocol_errors == [b"not json", b'{"unterminated"']


@pytest.mark.anyio
async def test_the_typed_client_reads_a_pi_1_5_session(
    tmp_path: Path, agent_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pi 1.5.2's files hold system messages, usage and context_edit entries and thinking level
    # max: every typed call that returns them validates.
    path = tmp_path / "pi15.jsonl"
    write_jsonl(path, pi15_session(str(tmp_path)))
    async with served(tmp_path, monkeypatch, "--provider", "faux", "--session", str(path)) as client:
        assert (await client.initialize()).state.thinkingLevel == "max"
        assert (await client.get_state()).thinkingLevel == "max"
        messages = (await client.get_messages()).messages
        assert [message.role for message in messages] == CONTEXT_ROLES
        assert isinstance(messages[0], types.SystemMessage)
        assert messages[0].sections == {
            "preamble": "You are an expert coding assistant.",
            "cwd": f"Current directory: {tmp_path}/sub",
        }
        entries = (await client.get_entries()).entries
        assert {entry["type"] for entry in entries} >= {"usage", "context_edit", "compaction"}
        await client.set_thinking_level("off")
        await client.set_thinking_level("max")
        assert (await client.get_state()).thinkingLevel == "max"
