"""``write`` and ``edit`` never touch a session file: the live one under any name, anything in the
session store, or any file whose first line is a session header. The model gets a tool error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rpc_agent.store import SessionManager
from rpc_agent.tools.base import ToolContext, ToolError
from rpc_agent.tools.edit import EditArgs, EditTool
from rpc_agent.tools.write import WriteArgs, WriteTool

pytestmark = pytest.mark.anyio

USAGE: Any = {
    "input": 1,
    "output": 1,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 2,
}  # no cost, as some files


def written_session(folder: Path) -> Path:
    manager = SessionManager.create("/p", folder)
    manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
    manager.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "hello"}],
            "provider": "faux",
            "model": "faux-1",
            "usage": USAGE,
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    manager.close()
    assert manager.session_file is not None
    return manager.session_file


def context(cwd: Path, live: Path | None, folders: tuple[Path, ...] | None = ()) -> ToolContext:
    return ToolContext(cwd=cwd, tool_call_id="c1", session_file=live, session_folders=folders)


async def test_write_and_edit_refuse_the_live_session_under_every_name(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    live = written_session(cwd / "sessions")
    manager = SessionManager.open(live)  # live: its lock is there too
    before = live.read_bytes()
    (cwd / "alias.jsonl").symlink_to(live)
    os.link(live, cwd / "hard.jsonl")
    ctx = context(cwd, live)
    names = [str(live), "alias.jsonl", "hard.jsonl", f"sessions/../sessions/{live.name}", f"{live}.lock"]
    for name in names:
        with pytest.raises(ToolError, match="Refusing to write") as caught:
            await WriteTool().execute(WriteArgs(path=name, content="<html></html>"), ctx)
        assert "session" in str(caught.value)
        with pytest.raises(ToolError, match="Refusing to write"):
            await EditTool().execute(EditArgs(path=name, oldText='"hello"', newText='"bye"'), ctx)
    assert live.read_bytes() == before
    assert (cwd / "alias.jsonl").is_symlink()
    await manager.append_message({"role": "user", "content": "still mine", "timestamp": 3})
    manager.close()


async def test_the_live_session_is_refused_before_it_is_on_disk(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path / "sessions")
    live = manager.session_file
    assert live is not None
    assert not live.exists()  # no answer yet: nothing written
    with pytest.raises(ToolError, match="this session's own file"):
        await WriteTool().execute(WriteArgs(path=str(live), content="x"), context(tmp_path, live))
    assert not live.exists()
    manager.close()


async def test_any_file_that_starts_with_a_session_header_is_refused(tmp_path: Path) -> None:
    other = written_session(tmp_path / "elsewhere")  # another session, not the live one
    before = other.read_bytes()
    ctx = context(tmp_path, None)
    with pytest.raises(ToolError, match="first line is a session header"):
        await WriteTool().execute(WriteArgs(path=str(other), content="x"), ctx)
    with pytest.raises(ToolError, match="first line is a session header"):
        await EditTool().execute(EditArgs(path=str(other), oldText='"hello"', newText='"bye"'), ctx)
    assert other.read_bytes() == before


async def test_the_session_store_is_refused(tmp_path: Path, agent_home: Path) -> None:
    custom = tmp_path / "custom-store"
    ctx = context(tmp_path, None, (agent_home / "sessions", agent_home / "blobs", custom))
    for target in [
        agent_home / "sessions" / "--p--" / "notes.txt",
        agent_home / "blobs" / "x",
        custom / "a.jsonl",
    ]:
        with pytest.raises(ToolError, match="inside the session store"):
            await WriteTool().execute(WriteArgs(path=str(target), content="x"), ctx)
        assert not target.exists()
    # Without an explicit list, the store of $RPC_AGENT_HOME is closed all the same.
    with pytest.raises(ToolError, match="inside the session store"):
        await WriteTool().execute(
            WriteArgs(path=str(agent_home / "sessions" / "n.txt"), content="x"), context(tmp_path, None, None)
        )


async def test_ordinary_files_are_written_as_before(tmp_path: Path) -> None:
    live = written_session(tmp_path / "sessions")
    ctx = context(tmp_path, live, (tmp_path / "sessions",))
    await WriteTool().execute(WriteArgs(path="data.jsonl", content='{"type":"message"}\n'), ctx)
    await EditTool().execute(EditArgs(path="data.jsonl", oldText="message", newText="other"), ctx)
    assert (tmp_path / "data.jsonl").read_text() == '{"type":"other"}\n'
    await WriteTool().execute(WriteArgs(path="page.html", content="<p>"), ctx)
    assert (tmp_path / "page.html").read_text() == "<p>"
