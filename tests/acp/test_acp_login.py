"""Logging in from an editor: the ``terminal`` auth method runs ``rpc-agent login``, the stored
key serves every front, and ``logout`` forgets it.

The login itself is a real process, run as an editor runs it: its own command line for the
agent with the method's ``args`` appended, the key typed on stdin.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import select
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.schema import AuthCapabilities, AuthMethodAgent, ClientCapabilities, TerminalAuthMethod
from acp_schema import SchemaCheck
from acp_testlib import WAIT, AcpWorld, RecordingClient, prompt

from acp import RequestError, text_block
from e2e.conftest import RawServer
from e2e.inprocess import RawTask, serve_in_task
from fake_anthropic import FakeAnthropic, Reply, Text
from rpc_agent import cli

pytestmark = pytest.mark.anyio

AUTH_REQUIRED = -32000
PROVIDER = ("--provider", "anthropic", "--model", "claude-haiku-4-5")
TERMINAL_AUTH = ClientCapabilities(auth=AuthCapabilities(terminal=True))


def run_cli(world: AcpWorld, args: list[str], stdin: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``rpc-agent ARGS`` as a process with a private home and no key in its environment."""
    base = {"PATH": os.environ.get("PATH", ""), "RPC_AGENT_HOME": str(world.home)}
    return subprocess.run(
        [sys.executable, "-m", "rpc_agent", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=world.cwd,
        env={**base, **env},
        timeout=WAIT,
        check=False,
    )


async def test_terminal_login_then_the_stored_key_serves_the_editor_until_logout(world: AcpWorld) -> None:
    check = SchemaCheck()
    async with world.agent(RecordingClient(), provider=PROVIDER, capabilities=TERMINAL_AUTH) as conn:
        check.watch(conn)
        with anyio.fail_after(WAIT):
            init = await conn.initialize(protocol_version=1, client_capabilities=TERMINAL_AUTH)
            terminal, agent = init.auth_methods or []
            assert isinstance(terminal, TerminalAuthMethod)
            assert isinstance(agent, AuthMethodAgent)
            assert init.agent_capabilities is not None
            assert init.agent_capabilities.auth is not None
            assert init.agent_capabilities.auth.logout is not None
            sid = (await conn.new_session(cwd=str(world.cwd))).session_id
            with pytest.raises(RequestError) as caught:
                await conn.prompt(session_id=sid, prompt=[text_block("hello")])
            assert caught.value.code == AUTH_REQUIRED
            assert "rpc-agent login" in json.dumps(caught.value.data)
            for method in (terminal.id, agent.id):
                with pytest.raises(RequestError) as caught:
                    await conn.authenticate(method_id=method)
                assert caught.value.code == AUTH_REQUIRED
    assert check.problems == []

    # What the editor does with the terminal method: its command line plus the method's args,
    # in a terminal where the user types the key.
    login = run_cli(
        world, ["--acp", *PROVIDER, *(terminal.args or [])], "sk-stored-key\n", **terminal.env or {}
    )
    assert login.returncode == 0, login.stderr
    auth_file = world.home / "auth.json"
    assert stat.S_IMODE(auth_file.stat().st_mode) == 0o600
    assert "sk-stored-key" not in login.stdout + login.stderr

    with FakeAnthropic() as fake:
        fake.enqueue(Reply([Text("Hello from the stored key.")]))
        client = RecordingClient()
        env = {"ANTHROPIC_BASE_URL": fake.base_url}
        async with world.agent(client, provider=PROVIDER, env=env, capabilities=TERMINAL_AUTH) as conn:
            check = SchemaCheck()
            check.watch(conn)
            with anyio.fail_after(WAIT):
                assert await conn.authenticate(method_id=terminal.id) is not None
                assert await conn.authenticate(method_id=agent.id) is not None
                sid = (await conn.new_session(cwd=str(world.cwd))).session_id
            answer = await prompt(conn, sid, "hello")
            assert answer.stop_reason == "end_turn"
            assert client.agent_text(sid) == "Hello from the stored key."
            assert fake.requests[0].headers.get("authorization") == "Bearer sk-stored-key"

            # ``logout``: a current client's request (the 0.12.1 SDK has no method for it).
            check.asked[10_000] = "logout"
            with anyio.fail_after(WAIT):
                left: Any = await conn._conn.send_request("logout", {})
                assert left["_meta"]["rpc-agent"] == {"removedStoredKey": True, "keyInEnvironment": False}
                assert not auth_file.exists()
                with pytest.raises(RequestError) as caught:
                    await conn.authenticate(method_id=agent.id)
                assert caught.value.code == AUTH_REQUIRED
                with pytest.raises(RequestError) as caught:
                    await conn.prompt(session_id=sid, prompt=[text_block("again")])
                assert caught.value.code == AUTH_REQUIRED
                assert (await conn._conn.send_request("logout", {}))["_meta"]["rpc-agent"][
                    "removedStoredKey"
                ] is False
        assert "LogoutResponse" in check.checked
        assert check.problems == []


async def test_a_client_without_terminal_auth_is_offered_only_the_agent_method(world: AcpWorld) -> None:
    async with world.agent(RecordingClient(), provider=PROVIDER) as conn:
        with anyio.fail_after(WAIT):
            init = await conn.initialize(protocol_version=1)
    (method,) = init.auth_methods or []
    assert isinstance(method, AuthMethodAgent)
    assert "rpc-agent login" in (method.description or "")


def test_login_refuses_an_empty_key_and_logout_without_a_key_is_fine(world: AcpWorld) -> None:
    empty = run_cli(world, ["login"], "\n")
    assert empty.returncode == 1
    assert "empty" in empty.stderr
    assert not (world.home / "auth.json").exists()
    spaced = run_cli(world, ["login"], "sk one\n")
    assert spaced.returncode == 1
    assert not (world.home / "auth.json").exists()
    assert run_cli(world, ["logout"], "").returncode == 0


def test_print_mode_and_the_json_rpc_front_use_the_stored_key(
    world: AcpWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli(world, ["login"], "  sk-for-scripts  \n").returncode == 0
    with FakeAnthropic() as fake:
        fake.enqueue(Reply([Text("printed")]), Reply([Text("served")]))
        # Print mode runs the real ``cli.main`` in this process (what it prints and returns is
        # the point, as in tests/e2e/test_headless.py), with the environment ``run_cli`` gives
        # a process: this home, this folder, no key but the stored one.
        for name in [name for name in os.environ if name.startswith("ANTHROPIC_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("RPC_AGENT_HOME", str(world.home))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.chdir(world.cwd)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert cli.main(["-p", "hi", *PROVIDER]) == 0
        assert printed.getvalue() == "printed\n"
        # The JSON-RPC front served in this event loop as ``rpc-agent`` with these flags would
        # serve it, in the same environment: the key it sends is the point, not its process.
        answer = anyio.run(_prompt_over_json_rpc, world.root / "served.stderr")
        assert "error" not in answer, answer
        assert [r.headers.get("authorization") for r in fake.requests] == ["Bearer sk-for-scripts"] * 2


async def _prompt_over_json_rpc(log: Path) -> dict[str, Any]:
    """``initialize`` and one prompt sent to the JSON-RPC front; the prompt's answer."""
    async with serve_in_task(list(PROVIDER), log, kind=RawTask) as task:
        server = RawServer(task)
        with anyio.fail_after(WAIT):
            await server.call("initialize", {})
            answer = await server.call("prompt", {"message": "hi"})
            await task.stdin.aclose()
    return answer


def test_login_on_a_terminal_asks_for_the_key_without_echoing_it(world: AcpWorld) -> None:
    """A real terminal (a pty that is the process's controlling terminal), as in an editor."""
    env = {"PATH": os.environ.get("PATH", ""), "RPC_AGENT_HOME": str(world.home)}
    pid, fd = pty.fork()
    if pid == 0:  # the child: only exec (the test process may hold threads)
        os.chdir(world.cwd)
        os.execve(sys.executable, [sys.executable, "-m", "rpc_agent", "login"], env)
    seen = bytearray()
    try:
        while b"API key" not in seen:
            ready, _, _ = select.select([fd], [], [], WAIT)
            assert ready, seen.decode(errors="replace")
            seen += os.read(fd, 4096)
        os.write(fd, b"sk-typed-secret\n")
        while True:
            ready, _, _ = select.select([fd], [], [], WAIT)
            assert ready, seen.decode(errors="replace")
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, seen.decode(errors="replace")
    assert b"sk-typed-secret" not in seen
    assert b"logged in" in seen
    stored = json.loads((world.home / "auth.json").read_text())
    assert stored["anthropic"]["key"] == "sk-typed-secret"
