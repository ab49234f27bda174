"""``rpc-agent --acp`` against the rules of ACP v1 and JSON-RPC 2.0 (raw lines and the SDK)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from acp.schema import AuthMethodAgent, AvailableCommandsUpdate
from acp_inprocess import Served
from acp_testlib import WAIT, AcpWorld, JsonDict, RecordingClient

from acp import RequestError, text_block

pytestmark = pytest.mark.anyio

INVALID_PARAMS = -32602


class RawAgent:
    """``rpc-agent --acp`` fed plain lines, for what the SDK's client would never send: served in
    the test's event loop over two OS pipes (``AcpWorld.raw``), since what comes back for the
    bytes is the point; a process's end of stdin is ``test_acp_eof.py``'s, regular files as its
    stdin and stdout the last test's here."""

    def __init__(self, served: Served) -> None:
        self.served = served

    async def send(self, line: str) -> None:
        self.served.writer.write(line.encode() + b"\n")
        await self.served.writer.drain()

    async def read(self) -> JsonDict | list[JsonDict]:
        with anyio.fail_after(WAIT):
            line = await self.served.reader.readline()
        assert line, "the agent closed its stdout"
        decoded: JsonDict | list[JsonDict] = json.loads(line)
        return decoded

    async def request(self, request_id: int, method: str, params: JsonDict) -> list[JsonDict]:
        """Send a request; everything read up to and including its answer, in order."""
        await self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        seen: list[JsonDict] = []
        while True:
            message = await self.read()
            assert isinstance(message, dict)
            seen.append(message)
            if message.get("id") == request_id and "method" not in message:
                return seen


def _error(message: JsonDict | list[JsonDict]) -> tuple[object, int]:
    assert isinstance(message, dict)
    return message["id"], message["error"]["code"]


async def test_every_line_gets_its_json_rpc_answer_and_the_server_keeps_serving(world: AcpWorld) -> None:
    async with world.raw() as served:
        agent = RawAgent(served)
        for line in [
            "[]",
            "42",
            '"x"',
            "null",
            "{not json",
            '{"foo": 1}',
            '{"jsonrpc": "2.0", "method": 3, "id": 5}',
        ]:
            await agent.send(line)
        assert _error(await agent.read()) == (None, -32600)  # empty batch: one error, not an array
        for _ in range(3):
            assert _error(await agent.read()) == (None, -32600)  # 42, "x", null
        assert _error(await agent.read()) == (None, -32700)
        assert _error(await agent.read()) == (None, -32600)
        assert _error(await agent.read()) == (5, -32600)

        # A batch: ACP has none, but every request in it gets an answer with its id.
        request = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1}}
        notification = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
        await agent.send(json.dumps([1, request, notification]))
        answers = await agent.read()
        assert isinstance(answers, list)
        assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32600), (7, -32600)]

        (init,) = await agent.request(8, "initialize", {"protocolVersion": 1})
        assert init["result"]["protocolVersion"] == 1
    assert served.code == [0]


async def test_a_new_session_is_answered_before_any_notification_about_it(world: AcpWorld) -> None:
    async with world.raw() as served:
        agent = RawAgent(served)
        await agent.request(1, "initialize", {"protocolVersion": 1})
        seen = await agent.request(2, "session/new", {"cwd": str(world.cwd), "mcpServers": []})
        assert len(seen) == 1  # nothing before the answer
        sid = seen[0]["result"]["sessionId"]
        update = await agent.read()
        assert isinstance(update, dict)
        assert update["method"] == "session/update"
        assert update["params"]["sessionId"] == sid
        assert update["params"]["update"]["sessionUpdate"] == "available_commands_update"
    assert served.code == [0]


async def test_initialize_answers_a_version_it_speaks(world: AcpWorld) -> None:
    async with world.agent(RecordingClient()) as conn:
        with anyio.fail_after(WAIT):
            versions = [(await conn.initialize(protocol_version=v)).protocol_version for v in (0, 1, 7)]
    assert versions == [1, 1, 1]


async def test_relative_or_missing_cwd_is_invalid_params(world: AcpWorld) -> None:
    async with world.agent(RecordingClient()) as conn:
        sid = (await conn.new_session(cwd=str(world.cwd))).session_id
        for call in (
            lambda: conn.new_session(cwd="project"),
            lambda: conn.new_session(cwd=str(world.root / "missing")),
            lambda: conn.load_session(cwd=".", session_id=sid),
            lambda: conn.resume_session(cwd="project", session_id=sid),
            lambda: conn.list_sessions(cwd="project"),
        ):
            with anyio.fail_after(WAIT), pytest.raises(RequestError) as caught:
                await call()
            assert caught.value.code == INVALID_PARAMS


def _pwd_script(call_id: str) -> list[JsonDict]:
    return [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "pwd > where.txt"}, "id": call_id}]},
        {"text": "Noted."},
    ]


@pytest.mark.parametrize("how", ["load", "resume"])
async def test_load_and_resume_run_tools_in_the_cwd_the_client_sends(world: AcpWorld, how: str) -> None:
    async with world.agent(RecordingClient()) as conn:
        with anyio.fail_after(WAIT):
            sid = (await conn.new_session(cwd=str(world.cwd))).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("hello")])

    moved = world.root / "moved-project"
    moved.mkdir()
    client = RecordingClient()
    async with world.agent(client, _pwd_script("pwd_1")) as conn:
        with anyio.fail_after(WAIT):
            if how == "load":
                await conn.load_session(cwd=str(moved), session_id=sid)
            else:
                await conn.resume_session(cwd=str(moved), session_id=sid)
            answer = await conn.prompt(session_id=sid, prompt=[text_block("where are you?")])
    assert answer.stop_reason == "end_turn"
    assert (moved / "where.txt").read_text().strip() == str(moved)
    assert not (world.cwd / "where.txt").exists()
    (call,) = client.tool_calls(sid)
    assert call.tool_call_id == "pwd_1"


def _copy_session(source: Path, folder: Path, index: int, cwd: str) -> str:
    """Another real session file like ``source``, with its own id and working directory."""
    lines = source.read_text().splitlines()
    header = json.loads(lines[0])
    header["id"] = f"{header['id'][:-6]}{index:06d}"
    header["cwd"] = cwd
    target = folder / f"copy_{header['id']}.jsonl"
    target.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return str(header["id"])


async def test_session_list_honours_the_session_dir_the_cwd_filter_and_the_cursor(world: AcpWorld) -> None:
    folder = world.root / "sessions"
    args = ("--provider", "faux", "--session-dir", str(folder))
    other = world.root / "other"
    other.mkdir()
    async with world.agent(RecordingClient(), provider=args) as conn:
        with anyio.fail_after(WAIT):
            first = (await conn.new_session(cwd=str(world.cwd))).session_id
            await conn.prompt(session_id=first, prompt=[text_block("one")])
            second = (await conn.new_session(cwd=str(other))).session_id
            await conn.prompt(session_id=second, prompt=[text_block("two")])
            everything = await conn.list_sessions()
            here = await conn.list_sessions(cwd=str(world.cwd))
            there = await conn.list_sessions(cwd=str(other))
    assert {info.session_id for info in everything.sessions} == {first, second}
    assert [info.session_id for info in here.sessions] == [first]
    assert [(info.session_id, info.cwd) for info in there.sessions] == [(second, str(other))]
    assert everything.next_cursor is None

    (source,) = [path for path in folder.glob("*.jsonl") if first in path.name]
    copies = {_copy_session(source, folder, index, str(other)) for index in range(60)}
    async with world.agent(RecordingClient(), provider=args) as conn:
        listed: list[str] = []
        cursor: str | None = None
        pages = 0
        with anyio.fail_after(WAIT):
            while True:
                page = await conn.list_sessions(cwd=str(other), cursor=cursor)
                listed += [info.session_id for info in page.sessions]
                pages += 1
                cursor = page.next_cursor
                if cursor is None:
                    break
            for bad in ("not-a-cursor", "eyJvZmZzZXQiOiAtMX0"):
                with pytest.raises(RequestError) as caught:
                    await conn.list_sessions(cursor=bad)
                assert caught.value.code == INVALID_PARAMS
    assert pages > 1
    assert sorted(listed) == sorted(copies | {second})


async def test_without_credentials_prompt_is_auth_required_with_methods_to_fix_it(world: AcpWorld) -> None:
    provider = ("--provider", "anthropic", "--model", "claude-haiku-4-5")
    async with world.agent(RecordingClient(), provider=provider) as conn:
        with anyio.fail_after(WAIT):
            init = await conn.initialize(protocol_version=1)
            (method,) = init.auth_methods or []
            assert isinstance(method, AuthMethodAgent)
            sid = (await conn.new_session(cwd=str(world.cwd))).session_id
            with pytest.raises(RequestError) as caught:
                await conn.prompt(session_id=sid, prompt=[text_block("hello")])
            assert caught.value.code == -32000
            assert "ANTHROPIC_API_KEY" in json.dumps(caught.value.data)
            assert "rpc-agent login" in json.dumps(caught.value.data)
            with pytest.raises(RequestError) as caught:
                await conn.authenticate(method_id="not-advertised")
            assert caught.value.code == INVALID_PARAMS
            with pytest.raises(RequestError) as caught:
                await conn.authenticate(method_id=method.id)
            assert caught.value.code == -32000

    env = {"ANTHROPIC_API_KEY": "sk-test"}
    async with world.agent(RecordingClient(), provider=provider, env=env) as conn:
        with anyio.fail_after(WAIT):
            assert await conn.authenticate(method_id=method.id) is not None


async def test_the_faux_provider_advertises_no_auth_methods(world: AcpWorld) -> None:
    client = RecordingClient()
    async with world.agent(client) as conn:
        with anyio.fail_after(WAIT):
            init = await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(world.cwd))).session_id
        assert init.auth_methods == []
        await client.wait_for(lambda: any(isinstance(u, AvailableCommandsUpdate) for u in client.of(sid)))


def test_regular_files_as_stdin_and_stdout(world: AcpWorld) -> None:
    # A real process: regular files as the process's stdin and stdout are the point.
    requests = world.root / "requests.jsonl"
    requests.write_text(
        '42\n{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}\n'
    )
    replies = world.root / "replies.jsonl"
    env = {"PATH": os.environ.get("PATH", ""), "RPC_AGENT_HOME": str(world.home)}
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "rpc_agent", "--acp", "--provider", "faux"],
            stdin=stdin,
            stdout=stdout,
            env=env,
            cwd=world.cwd,
            timeout=WAIT,
            check=False,
        )
    assert done.returncode == 0
    first, second = (json.loads(line) for line in replies.read_text().splitlines())
    assert first["error"]["code"] == -32600
    assert second["result"]["protocolVersion"] == 1
