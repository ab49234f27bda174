"""Only a session's own write chain writes its file, and only regular files are sessions,
checked on the real server: start-up flags, ``switch_session``, ``export_html`` and the model's
``write`` tool; over real pipes where the process is the point (its exit code, its lock seen by
another server), served in the test's event loop where the answers are (``in_process``)."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.conftest import E2E, JsonDict, current_file, expect_error, header_and_entries, messages_of, text_of
from rpc_agent.server import errors as codes
from rpc_agent_client import RpcAgentClient

START_UP_WAIT = 30


def _limit_memory() -> None:
    # A server that reads /dev/zero would otherwise eat the machine before it fails.
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def start_server(e2e: E2E, *args: str) -> subprocess.CompletedProcess[str]:
    """The server with these flags and an open stdin that never sends anything."""
    return subprocess.run(
        [sys.executable, "-m", "rpc_agent", "--provider", "faux", *args],
        input="",
        capture_output=True,
        text=True,
        timeout=START_UP_WAIT,
        check=False,
        cwd=e2e.cwd,
        env={**os.environ, **e2e.env()},
        preexec_fn=_limit_memory,
    )


@pytest.fixture
def not_regular(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """A FIFO, a unix socket (bound and listening), a directory and a character device."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock.jsonl"))
        sock.listen()
        yield {
            "a FIFO": fifo,
            "a socket": tmp_path / "sock.jsonl",
            "a directory": folder,
            "a character device": Path("/dev/zero"),
        }


@pytest.mark.parametrize("kind", ["a FIFO", "a socket", "a directory", "a character device"])
def test_a_session_that_is_not_a_regular_file_is_refused_at_start_up(
    e2e: E2E, not_regular: dict[str, Path], kind: str
) -> None:
    path = not_regular[kind]
    done = start_server(e2e, "--cwd", str(e2e.cwd), "--session", str(path))
    assert done.returncode != 0
    assert done.stdout == ""  # it answered nothing: it never started serving
    assert f"it is {kind}" in done.stderr
    assert str(path) in done.stderr
    assert "Traceback" not in done.stderr
    assert not Path(f"{path}.lock").exists()


@pytest.mark.parametrize("what", ["missing", "file"])
def test_a_cwd_that_is_not_a_folder_is_refused_at_start_up(e2e: E2E, what: str) -> None:
    cwd = e2e.root / "no-such-folder"
    if what == "file":
        cwd = e2e.root / "plain-file"
        cwd.write_text("x")
    done = start_server(e2e, "--cwd", str(cwd))
    assert done.returncode == 2
    assert done.stdout == ""
    reason = "does not exist" if what == "missing" else "is not a directory"
    assert f"--cwd {cwd} {reason}" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.anyio
@pytest.mark.in_process  # what switch_session answers and keeps is the point, not the process
async def test_switch_session_to_a_file_that_is_not_regular_is_an_error(
    e2e: E2E, not_regular: dict[str, Path]
) -> None:
    async with e2e.raw() as server:
        for kind, path in not_regular.items():
            answer = await server.call("switch_session", {"sessionPath": str(path)}, request_id=f"sw-{kind}")
            error = answer["error"]
            assert error["code"] == codes.INVALID_SESSION_FILE, answer
            assert f"it is {kind}" in error["message"]
        state = await server.call("get_state")
        assert state["result"]["sessionFile"] is not None
        assert Path(state["result"]["sessionFile"]).parent.parent == e2e.session_root
        assert await server.close_and_wait() == 0


async def first_turn(client: RpcAgentClient) -> tuple[Path, bytes]:
    """Prompt "first": the session's file, and what it holds then."""
    await client.call("prompt", {"message": "first"})
    live = await current_file(client)
    return live, live.read_bytes()


@pytest.mark.anyio
@pytest.mark.in_process
async def test_export_html_never_replaces_the_session_file(e2e: E2E) -> None:
    async with e2e.server() as client:
        live, before = await first_turn(client)
        (e2e.cwd / "alias.jsonl").symlink_to(live)
        os.link(live, e2e.cwd / "hard.jsonl")
        relative = os.path.relpath(live, e2e.cwd)  # the server runs in e2e.cwd
        for target in [str(live), str(e2e.cwd / "alias.jsonl"), str(e2e.cwd / "hard.jsonl"), relative]:
            error = await expect_error(
                client.call("export_html", {"outputPath": target}), codes.INVALID_PARAMS
            )
            assert "refusing to write" in error.message
            assert "session" in error.message
        assert live.read_bytes() == before
        assert (e2e.cwd / "alias.jsonl").is_symlink()

        # The session goes on in its own file, and an export elsewhere still works.
        await client.call("prompt", {"message": "second"})
        page = e2e.cwd / "export.html"
        result = await client.call("export_html", {"outputPath": str(page)})
        assert result["path"] == str(page)
        assert page.read_text().startswith("<!doctype html>")
    _, entries = header_and_entries(live)
    assert [text_of(e["message"]) for e in messages_of(entries, "user")] == ["first", "second"]


@pytest.mark.anyio
@pytest.mark.in_process
async def test_the_model_cannot_write_the_session_file(e2e: E2E) -> None:
    async with e2e.server() as client:
        live, before = await first_turn(client)
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "write", "arguments": {"path": str(live), "content": "<html></html>"}}]},
        {"text": "I could not."},
    ]
    async with e2e.server("--session", str(live), script=script) as client:
        result = await client.call("prompt", {"message": "overwrite the session"})
        tool_result = result["messages"][2]
        assert tool_result["role"] == "toolResult"
        assert tool_result["isError"] is True
        assert "Refusing to write" in text_of(tool_result)
        assert "this session's own file" in text_of(tool_result)
        assert text_of(result["messages"][-1]) == "I could not."
    data = live.read_bytes()
    assert data.startswith(before)  # the history is there, and the turn was appended after it
    _, entries = header_and_entries(live)
    assert [text_of(e["message"]) for e in messages_of(entries, "user")] == ["first", "overwrite the session"]


@pytest.mark.anyio
async def test_switch_session_follows_the_file_not_its_name(e2e: E2E) -> None:
    """A symlink or hard link to a session another server holds is locked by that server's pid;
    one to the server's own session is that session. The holder is served in this process, the
    server it keeps out is a process of its own."""
    async with e2e.server(in_this_process=True) as holder:
        await holder.call("prompt", {"message": "held elsewhere"})
        held = await current_file(holder)
        pid = holder.process.pid
        (e2e.root / "sym.jsonl").symlink_to(held)
        os.link(held, e2e.root / "hard.jsonl")
        async with e2e.server() as client:
            await client.call("prompt", {"message": "mine"})
            mine = await client.get_state()
            assert mine.sessionFile is not None
            for alias in ["sym.jsonl", "hard.jsonl"]:
                error = await expect_error(client.switch_session(str(e2e.root / alias)), codes.SESSION_LOCKED)
                assert f"is locked by pid {pid}" in error.message
            (e2e.root / "own.jsonl").symlink_to(mine.sessionFile)
            same = await client.switch_session(str(e2e.root / "own.jsonl"))
            assert same.sessionFile == mine.sessionFile
            await client.call("prompt", {"message": "still mine"})
        await holder.call("prompt", {"message": "still held"})
    _, entries = header_and_entries(held)
    assert [text_of(e["message"]) for e in messages_of(entries, "user")] == ["held elsewhere", "still held"]
